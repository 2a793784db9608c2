// The mails the e2e servers sent, as the test SMTP server received them (scripts/e2e-server.mjs
// writes one JSON line per mail to E2E_DATA_DIR.mail).
import { readFileSync } from "node:fs";
import { expect } from "@playwright/test";

export interface SentMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

const file = () => `${process.env.E2E_DATA_DIR ?? ""}.mail`;

/** Every mail to `address` so far. */
export function mailsTo(address: string): SentMail[] {
  let text = "";
  try {
    text = readFileSync(file(), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as SentMail)
    .filter((mail) => mail.to.includes(address));
}

/** Waits (the sender looks at the outbox every second) until `address` has a mail with `subject`. */
export async function waitForMail(address: string, subject: string): Promise<SentMail> {
  let found: SentMail | undefined;
  await expect
    .poll(
      () => {
        found = mailsTo(address).find((m) => m.subject === subject);
        return found !== undefined;
      },
      { timeout: 20_000, message: `a mail "${subject}" to ${address}` },
    )
    .toBe(true);
  if (!found) throw new Error("no mail");
  return found;
}

/** The path and query of the first link in a mail's text that starts with the e2e server's PUBLIC_URL. */
export function linkIn(mail: SentMail, path: string): string {
  const match = new RegExp(
    `https?://[^\\s]+${path.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}[^\\s]*`,
    "u",
  ).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in the mail`);
  const url = new URL(match[0]);
  return `${url.pathname}${url.search}`;
}
