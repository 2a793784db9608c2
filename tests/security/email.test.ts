// Attacks on e-mail (issue 28, record 049): mailing a stranger, flooding a mailbox with links,
// someone else's words, markup and line breaks through a browser's name, a guessed or
// reused link. Each against the backend on every database, the mails read from a real SMTP
// server.
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createBackend, type Backend } from "../../server/backend/api/handler.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { parseSmtpUrl, type SmtpSettings } from "../../server/backend/mail/smtp-url.ts";
import { callApi, describeEachDatabase } from "../backend/api-suite.ts";
import { BACKEND_SECRET, PLATFORM, TEST_USD_PRICES, uniqueEmail } from "../backend/helpers.ts";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts";

const PASSWORD = "a password long enough";

async function outboxRows(db: AppDb, address: string): Promise<number> {
  const result = await db.execute(
    sql`SELECT count(*)::int AS n FROM mail_outbox WHERE to_address = ${address}`,
  );
  return Number((result as unknown as { rows: { n: number }[] }).rows[0]?.n ?? 0);
}

describeEachDatabase("e-mail under attack on $name", (getDatabase) => {
  let sink: SmtpSink;
  let backend: Backend;
  let db: AppDb;
  let now = Date.now();
  const call = (path: string, body: Record<string, unknown>) => callApi(backend.handler, path, body);

  beforeAll(async () => {
    db = getDatabase().database.db;
    sink = await startSmtpSink();
    const smtp = parseSmtpUrl(sink.url) as SmtpSettings;
    backend = createBackend({
      db,
      platform: PLATFORM,
      backendSecret: BACKEND_SECRET,
      usdPrice: (coin) => Promise.resolve(TEST_USD_PRICES[coin]),
      rateLimits: "off",
      now: () => new Date(now),
      mail: { smtp, from: "no-reply@coinkeep.test", publicUrl: "https://w.test", product: "Coinkeep" },
    });
  });
  afterAll(async () => {
    await backend.stop();
    await sink.close();
  });

  async function account(label: string) {
    const email = uniqueEmail(label);
    const created = await call("/aml-authentication", {
      email,
      password: PASSWORD,
      passwordConfirmed: PASSWORD,
    });
    return { email, twelveWords: (created.body.twelveWords as string[]).join(" ") };
  }

  test("an account made with a stranger's address mails them at most the links its owner asks for: one a minute, five a day", async () => {
    const victim = await account("stranger");
    const ask = () => call("/email/verify", victim);
    expect((await ask()).status).toBe(200);
    expect(await ask()).toMatchObject({ status: 429, body: { code: "verification_too_soon" } });
    for (let i = 0; i < 4; i += 1) {
      now += 61_000;
      expect((await ask()).status).toBe(200);
    }
    now += 61_000;
    expect(await ask()).toMatchObject({
      status: 429,
      body: {
        code: "verification_limit",
        message: "You asked for 5 links in the last 24 hours. Try again tomorrow.",
      },
    });
    // And no alert of any kind while the address is unverified.
    expect((await call("/sessions-ended", { ...victim, count: 3 })).status).toBe(200);
    const seen = (browser_id: string) =>
      call("/sign-in-seen", { ...victim, browser_id, browser_name: "Evil 1 on Linux" });
    await seen(randomBytes(24).toString("base64url"));
    expect((await seen(randomBytes(24).toString("base64url"))).body).toEqual({
      success: true,
      new_browser: true,
      mailed: false,
    });
    expect(await outboxRows(db, victim.email)).toBe(5);
    now += 24 * 3_600_000;
    expect((await ask()).status).toBe(200);
  });

  test("someone else's words: every e-mail call refuses, nothing is queued", async () => {
    const holder = await account("holder");
    const other = await account("other");
    const wrong = { email: holder.email, twelveWords: other.twelveWords };
    for (const [path, extra] of [
      ["/email", {}],
      ["/email/verify", {}],
      ["/sessions-ended", { count: 1 }],
      ["/sign-in-seen", { browser_id: "x".repeat(43), browser_name: "X" }],
    ] as const) {
      expect(await call(path, { ...wrong, ...extra })).toMatchObject({
        status: 401,
        body: { code: "invalid_credentials" },
      });
    }
    expect(await outboxRows(db, holder.email)).toBe(0);
  });

  test("a guessed, altered or malformed token verifies nothing and is never a 500", async () => {
    for (const token of [
      "a".repeat(43),
      `${"A".repeat(42)}_`,
      "short",
      "../../etc/passwd",
      "%00",
      "x".repeat(129),
    ]) {
      const answer = await call("/email/confirm", { token });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
    expect((await call("/email/confirm", { token: 42 })).status).toBe(400);
  });

  test("markup and line breaks in a browser's name stay text in the mail; the headers are ours", async () => {
    const holder = await account("markup");
    await call("/email/verify", holder);
    await backend.mail.runOnce();
    const [link] = sink.mails.filter((m) => m.to.includes(holder.email));
    const token = /token=([A-Za-z0-9_-]+)/u.exec(link?.text ?? "")?.[1] ?? "";
    expect((await call("/email/confirm", { token })).status).toBe(200);
    await call("/sign-in-seen", { ...holder, browser_id: "a".repeat(43), browser_name: "First" });
    const evil =
      '<img src=x onerror=alert(1)>\r\nBcc: victim@example.com\r\n\r\n<a href="https://evil.test">';
    await call("/sign-in-seen", { ...holder, browser_id: "b".repeat(43), browser_name: evil });
    await backend.mail.runOnce();
    const [alert] = (
      await sink.waitFor((m) => m.some((x) => x.to.includes(holder.email) && x.subject.startsWith("New")))
    ).filter((m) => m.to.includes(holder.email) && m.subject.startsWith("New"));
    expect(alert?.to).toEqual([holder.email]);
    expect(alert?.html).not.toContain("<img");
    expect(alert?.html).not.toContain('<a href="https://evil.test">');
    expect(alert?.html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    // The name is one line of the body: no header of its own, no line that starts a new one.
    const headers = (alert?.raw ?? "").split("\r\n\r\n")[0] ?? "";
    expect(headers).not.toMatch(/^Bcc:/imu);
    expect(alert?.text).toContain("Browser: <img src=x onerror=alert(1)> Bcc: victim@example.com <a href=");
    expect(alert?.text).not.toMatch(/^Bcc:/mu);
    expect(alert?.subject).toBe("New sign-in to Coinkeep");
  });
});
