// lynx, the text browser, for the end-to-end specs (record 043): what a reader without CSS or
// scripts gets of a page, and what no such page may show. Used by text-browser.spec.ts and
// console.spec.ts.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext } from "@playwright/test";
import { expect } from "./fixtures.ts";

const LYNX = process.env.LYNX_PATH ?? "/usr/bin/lynx";

/** A lynx of its own: a folder with its configuration and the cookies it sends. */
export class Lynx {
  private readonly origin: string;
  private readonly dir = mkdtempSync(path.join(tmpdir(), "coinkeep-lynx-"));
  private readonly cfg = path.join(this.dir, "lynx.cfg");
  private readonly cookies = path.join(this.dir, "cookies.txt");

  constructor(origin: string | undefined) {
    if (!origin) throw new Error("no baseURL");
    this.origin = origin;
    writeFileSync(
      this.cfg,
      [
        "PERSISTENT_COOKIES:TRUE",
        `COOKIE_FILE:${this.cookies}`,
        `COOKIE_SAVE_FILE:${path.join(this.dir, "saved-cookies.txt")}`,
        "ACCEPT_ALL_COOKIES:TRUE",
        "CHARACTER_SET:utf-8",
        "",
      ].join("\n"),
    );
    writeFileSync(this.cookies, "");
  }

  /** Hands lynx the cookies a browser context holds (its session, its CSRF cookie). */
  async takeCookies(context: BrowserContext) {
    const host = new URL(this.origin).hostname;
    const lines = (await context.cookies()).map((c) =>
      // Netscape cookie file: domain, subdomains, path, secure, expiry, name, value.
      [host, "FALSE", c.path, c.secure ? "TRUE" : "FALSE", "2000000000", c.name, c.value].join("\t"),
    );
    writeFileSync(this.cookies, `${lines.join("\n")}\n`);
  }

  /** What a person reads: `lynx -dump` of a page (GET), or of the answer to a posted form. */
  dump(pathname: string, post?: Record<string, string>): string {
    const args = [`-cfg=${this.cfg}`, "-dump", "-width=100", "-display_charset=utf-8"];
    const url = `${this.origin}${pathname}`;
    if (!post) return execFileSync(LYNX, [...args, url], { encoding: "utf8" });
    const data = `${new URLSearchParams(post).toString()}\n---\n`;
    return execFileSync(LYNX, [...args, "-post_data", url], {
      input: data,
      encoding: "utf8",
    });
  }
}

/** The text of a dump without its list of link addresses. */
export function body(dump: string): string {
  return dump.split(/^References$/mu)[0] ?? dump;
}

/**
 * Words that run together where markup put no space between them: a lower-case
 * letter followed by a capital, a digit or a currency sign, a letter followed by
 * a currency sign, or a link right after a word ("EthereumETH", "address0x…",
 * "balance$6329.60", "Log In[6]Restore Wallet"). Long
 * tokens (addresses, hashes, links), shortened ones ("0x1234…abcdef"), e-mail
 * addresses and a few real words are left out.
 */
export function gluedWords(dump: string): string[] {
  const text = body(dump)
    .replace(/\S{20,}/gu, " ")
    .replace(/\S+@\S+|\S*…\S*/gu, " ")
    .replace(/\b(?:argon2id|CoinGecko|HttpOnly|JavaScript|SameSite|0x\w+)\b/gu, " ");
  return text.match(/\S*(?:[a-z][A-Z\d]|[A-Za-z][$€£]|[^\s[]\[\d+\])\S*/gu) ?? [];
}

/**
 * What no page may show a reader without CSS (defects 2, 3). `words: false` leaves out the
 * run-together check on a page whose text is mostly other people's data (other tests' messages
 * and audit rows), which the check cannot tell from markup.
 */
export function expectReadable(dump: string, where: string, { words = true }: { words?: boolean } = {}) {
  const text = body(dump);
  expect(text, `${where}: honeypot label`).not.toContain("Please leave this field blank");
  // A control lynx can only name by its internal value, or a link with no text ("Hidden links").
  // (lynx shows a button as "(value) its text", or "(BUTTON) its text" when it has no value.)
  const unnamed = text.match(/^[ \t]*\([\w-]+\)[ \t]*$|^.*\(BUTTON\)[ \t]*(?:$|\().*$/gmu) ?? [];
  expect(unnamed, `${where}: a button with no text`).toEqual([]);
  expect(dump, `${where}: links with no text`).not.toContain("Hidden links:");
  if (words) expect(gluedWords(dump), `${where}: words run together`).toEqual([]);
}
