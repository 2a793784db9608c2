// E-mail (issue 28, record 049) against a real SMTP server in this process, on every database:
// the verification link, each kind of alert arriving once with its facts and nothing secret,
// a rolled-back or refused change mailing nothing, a server that is down, refuses, hangs or
// drops the connection (the mail waits and goes once the server is back), and two senders
// on one PostgreSQL delivering each mail once.
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ANSWERS, REFUSALS } from "../../common/contract/refusals.ts";
import { createBackend, type Backend } from "../../server/backend/api/handler.ts";
import { openDatabase, type AppDb } from "../../server/backend/db/index.ts";
import { creditDeposit, postWithdrawal, voidWithdrawal } from "../../server/backend/domain/ledger.ts";
import { recordSecurityEvent } from "../../server/backend/domain/security-audit.ts";
import { storeSupportMessage, replyToSupportMessage } from "../../server/backend/domain/messages.ts";
import {
  mailKeys,
  queueAlert,
  retryNow,
  listOutbox,
  outboxCounts,
} from "../../server/backend/mail/outbox.ts";
import { createMailSender, type MailSender } from "../../server/backend/mail/sender.ts";
import { parseSmtpUrl, type SmtpSettings } from "../../server/backend/mail/smtp-url.ts";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "../support/smtp-sink.ts";
import { callApi, describeEachDatabase, type ApiAccount } from "./api-suite.ts";
import {
  BACKEND_SECRET,
  PLATFORM,
  TEST_USD_PRICES,
  fundedWallet,
  phrasePairsIn,
  uniqueEmail,
} from "./helpers.ts";

const PUBLIC_URL = "https://wallet.coinkeep.test";
const FROM = "Coinkeep <no-reply@coinkeep.test>";

function smtpOf(sink: SmtpSink): SmtpSettings {
  const parsed = parseSmtpUrl(sink.url);
  if (typeof parsed === "string") throw new Error(parsed);
  return parsed;
}

function sender(
  db: AppDb,
  sink: SmtpSink,
  timeouts = { connect: 2000, greeting: 1000, socket: 1000 },
): MailSender {
  return createMailSender({
    db,
    smtp: smtpOf(sink),
    from: FROM,
    publicUrl: PUBLIC_URL,
    product: "Coinkeep",
    keys: mailKeys(BACKEND_SECRET),
    timeouts,
  });
}

function backendOn(db: AppDb, sink: SmtpSink): Backend {
  return createBackend({
    db,
    platform: PLATFORM,
    backendSecret: BACKEND_SECRET,
    usdPrice: (coin) => Promise.resolve(TEST_USD_PRICES[coin]),
    rateLimits: "off",
    mail: { smtp: smtpOf(sink), from: FROM, publicUrl: PUBLIC_URL, product: "Coinkeep" },
  });
}

/** The mails to one address. */
const to = (mails: ReceivedMail[], address: string) => mails.filter((m) => m.to.includes(address));

/** The token of the verification link in a mail's text. */
function tokenIn(mail: ReceivedMail): string {
  const match = /\/verify-email\?token=([A-Za-z0-9_-]+)/u.exec(mail.text);
  if (!match?.[1]) throw new Error("no verification link in the mail");
  return match[1];
}

/** Nothing a mail may never hold: the password, any of the words, a balance's figure. */
function expectNoSecrets(mail: ReceivedMail, account: { password: string; twelveWords: string }) {
  for (const body of [mail.text, mail.html, mail.subject]) {
    expect(body).not.toContain(account.password);
    expect(body).not.toContain(account.twelveWords);
    // Single words are everyday English ("change"): no two of the phrase in a row.
    expect(phrasePairsIn(body, account.twelveWords)).toEqual([]);
  }
}

async function queuedCount(db: AppDb, address: string): Promise<number> {
  const result = await db.execute(
    sql`SELECT count(*)::int AS n FROM mail_outbox WHERE to_address = ${address}`,
  );
  return Number((result as unknown as { rows: { n: number }[] }).rows[0]?.n ?? 0);
}

describeEachDatabase("e-mail (issue 28) on $name", (getDatabase, name) => {
  let sink: SmtpSink;
  let backend: Backend;
  let db: AppDb;
  const call = (path: string, body: Record<string, unknown>) => callApi(backend.handler, path, body);
  const PASSWORD = "a password long enough";

  async function newAccount(label: string): Promise<ApiAccount & { password: string }> {
    const email = uniqueEmail(label);
    const created = await call("/aml-authentication", {
      email,
      password: PASSWORD,
      passwordConfirmed: PASSWORD,
    });
    expect(created.status).toBe(200);
    return {
      email,
      twelveWords: (created.body.twelveWords as string[]).join(" "),
      userId: created.body.newUserId as string,
      password: PASSWORD,
    };
  }

  /** The account, verified through the link the sink received. */
  async function verified(label: string) {
    const account = await newAccount(label);
    const asked = await call("/email/verify", { email: account.email, twelveWords: account.twelveWords });
    expect(asked).toMatchObject({ status: 200, body: { success: true, message: ANSWERS.verificationSent } });
    await backend.mail.runOnce();
    const [mail] = to(await sink.waitFor((m) => to(m, account.email).length === 1), account.email);
    if (!mail) throw new Error("no mail");
    const confirmed = await call("/email/confirm", { token: tokenIn(mail) });
    expect(confirmed).toMatchObject({ status: 200, body: { success: true, email: account.email } });
    sink.mails.splice(0, sink.mails.length);
    return account;
  }

  beforeAll(async () => {
    db = getDatabase().database.db;
    sink = await startSmtpSink();
    backend = backendOn(db, sink);
  });
  afterAll(async () => {
    await backend.stop();
    await sink.close();
  });

  test("an unverified address gets no alerts; 'Verify your e-mail' mails a link that works once, for 24 hours", async () => {
    const account = await newAccount("verify");
    const words = { email: account.email, twelveWords: account.twelveWords };
    expect((await call("/email", words)).body).toEqual({
      success: true,
      email: account.email,
      verified_at: null,
      link_expires_at: null,
    });
    // Unverified: a security change queues nothing.
    expect((await call("/allowlist/set", { ...words, password: PASSWORD, on: true })).status).toBe(200);
    expect(await queuedCount(db, account.email)).toBe(0);

    expect((await call("/email/verify", words)).status).toBe(200);
    // A second click within the minute makes no second link.
    expect(await call("/email/verify", words)).toMatchObject({
      status: 429,
      body: { code: "verification_too_soon", message: REFUSALS.verification_too_soon.message },
    });
    const status = await call("/email", words);
    expect(status.body.verified_at).toBeNull();
    const expires = new Date(String(status.body.link_expires_at)).getTime();
    expect(Math.abs(expires - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);

    expect(await backend.mail.runOnce()).toBeGreaterThanOrEqual(1);
    const [mail] = to(await sink.waitFor((m) => to(m, account.email).length === 1), account.email);
    if (!mail) throw new Error("no mail");
    expect(mail.subject).toBe("Verify your e-mail for Coinkeep");
    expect(mail.from).toBe("no-reply@coinkeep.test");
    expect(mail.text).toContain(`${PUBLIC_URL}/verify-email?token=`);
    expect(mail.html).toContain(`href="${PUBLIC_URL}/verify-email?token=`);
    expect(mail.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/u);
    expectNoSecrets(mail, account);
    // The token is in the mail only: the database keeps its hash and a sealed copy.
    const token = tokenIn(mail);
    const stored = await db.execute(
      sql`SELECT data::text AS data FROM mail_outbox WHERE to_address = ${account.email}`,
    );
    expect(JSON.stringify((stored as unknown as { rows: unknown[] }).rows)).not.toContain(token);

    // Two characters changed, at the start (where every bit counts), never to themselves.
    const altered = `${token.startsWith("xx") ? "yy" : "xx"}${token.slice(2)}`;
    expect(await call("/email/confirm", { token: altered })).toMatchObject({
      status: 400,
      body: { code: "verification_link_invalid" },
    });
    expect(await call("/email/confirm", { token })).toEqual(
      expect.objectContaining({
        status: 200,
        body: { success: true, message: ANSWERS.emailVerified, email: account.email },
      }),
    );
    expect(await call("/email/confirm", { token })).toMatchObject({
      status: 410,
      body: { code: "verification_link_expired" },
    });
    expect((await call("/email", words)).body.verified_at).toEqual(expect.any(String));
    expect(await call("/email/verify", words)).toMatchObject({
      status: 409,
      body: { code: "email_already_verified" },
    });
  });

  test("each alert arrives once with its facts, the time in UTC and a PUBLIC_URL link, never a secret", async () => {
    const account = await verified("alerts");
    const words = { email: account.email, twelveWords: account.twelveWords };
    const { walletId, address: own } = await fundedWallet(db, account.userId, "ETH", { deposit: "2.5" });
    const receiver = `0x${randomBytes(20).toString("hex")}`;
    // A sign-in: the first browser is remembered quietly; another one is mailed, once.
    const browserA = randomBytes(24).toString("base64url");
    const browserB = randomBytes(24).toString("base64url");
    const seen = (browser_id: string) =>
      call("/sign-in-seen", { ...words, browser_id, browser_name: "Firefox 128 on Linux" });
    expect((await seen(browserA)).body).toEqual({ success: true, new_browser: false, mailed: false });
    expect((await seen(browserB)).body).toEqual({ success: true, new_browser: true, mailed: true });
    expect((await seen(browserB)).body).toEqual({ success: true, new_browser: false, mailed: false });
    // A send requested, then declined; another confirmed.
    const send = (amount: string) =>
      call("/request-transaction", {
        ...words,
        amount,
        receiver_wallet_address: receiver,
        wallet_id: walletId,
      });
    const first = await send("0.5");
    expect(first.status).toBe(200);
    const second = await send("0.25");
    const id = (answer: typeof first) => (answer.body.transaction as { id: string }).id;
    expect((await voidWithdrawal(db, id(first), "test decline")).ok).toBe(true);
    expect((await postWithdrawal(db, id(second))).ok).toBe(true);
    // A deposit credited.
    expect(
      (
        await creditDeposit(db, {
          walletId,
          units: 10n ** 17n,
          externalTxId: `tx-${randomBytes(6).toString("hex")}`,
        })
      ).ok,
    ).toBe(true);
    // Security changes: the allowlist on, sessions ended, the password changed.
    expect((await call("/allowlist/set", { ...words, password: PASSWORD, on: true })).status).toBe(200);
    expect((await call("/sessions-ended", { ...words, count: 2 })).status).toBe(200);
    const newPassword = "another password, long enough";
    expect(
      (
        await call("/change-password", {
          ...words,
          current_password: PASSWORD,
          password: newPassword,
          confirm_password: newPassword,
        })
      ).status,
    ).toBe(200);
    // A support reply.
    const asked = await storeSupportMessage(
      db,
      {
        kind: "support",
        email: account.email,
        fullName: "Ada Holder",
        phone: "+442079460000",
        comment: "Where is my send, please?",
      },
      { ip: null, userId: account.userId },
    );
    if (!asked.ok) throw new Error("support message not stored");
    const supportId = asked.message.id;
    await db.transaction((tx) =>
      replyToSupportMessage(tx, {
        supportMessageId: supportId,
        author: "agent@coinkeep.test",
        text: "It is on its way.",
      }),
    );

    await backend.mail.runOnce();
    const expected = [
      "New sign-in to Coinkeep",
      "Send requested: 0.5 ETH",
      "Send requested: 0.25 ETH",
      "Send declined: 0.5 ETH",
      "Send confirmed: 0.25 ETH",
      "Deposit received: 2.5 ETH",
      "Deposit received: 0.1 ETH",
      "Security change on your Coinkeep account",
      "Security change on your Coinkeep account",
      "Security change on your Coinkeep account",
      "Coinkeep support replied",
    ];
    const mails = to(
      await sink.waitFor((m) => to(m, account.email).length >= expected.length),
      account.email,
    );
    // Once each: one more pass sends nothing new.
    await backend.mail.runOnce();
    expect(
      to(sink.mails, account.email)
        .map((m) => m.subject)
        .toSorted(),
    ).toEqual(expected.toSorted());
    const subject = (s: string) => mails.filter((m) => m.subject === s);
    const signIn = subject("New sign-in to Coinkeep")[0];
    expect(signIn?.text).toContain("Browser: Firefox 128 on Linux");
    expect(signIn?.text).toContain(`${PUBLIC_URL}/security/sessions`);
    const declined = subject("Send declined: 0.5 ETH")[0];
    // The address as stored (EIP-55 mixed case), cut short: recognisable, not copyable.
    expect(declined?.text.toLowerCase()).toContain(`to: ${receiver.slice(0, 6)}…${receiver.slice(-4)}`);
    expect(declined?.text.toLowerCase()).not.toContain(receiver);
    expect(declined?.text).toContain(`${PUBLIC_URL}/history`);
    expect(subject("Deposit received: 0.1 ETH")[0]?.text).toContain(`${PUBLIC_URL}/wallet/eth`);
    const security = subject("Security change on your Coinkeep account").map((m) => m.text);
    expect(security.some((t) => t.includes("“Only send to saved addresses” was turned on."))).toBe(true);
    expect(
      security.some((t) => t.includes("Signed-in sessions were ended") && t.includes("Detail: 2 sessions")),
    ).toBe(true);
    expect(security.some((t) => t.includes("Your password was changed."))).toBe(true);
    expect(subject("Coinkeep support replied")[0]?.text).toContain(`${PUBLIC_URL}/notifications`);
    for (const mail of mails) {
      expectNoSecrets(mail, account);
      expectNoSecrets(mail, { ...account, password: newPassword });
      expect(mail.text).toMatch(/Time: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/u);
      expect(mail.html).toContain("<html>");
      // No balance: the wallet's figure after all of this (2.35 ETH) is in no mail.
      expect(mail.text).not.toContain("2.35");
      expect(mail.messageId).toMatch(/^<outbox-\d+@wallet\.coinkeep\.test>$/u);
    }
    expect(own).not.toBe(receiver);
  });

  test("a change that rolls back, or a send that is refused, mails nothing", async () => {
    const account = await verified("rollback");
    const before = await queuedCount(db, account.email);
    await expect(
      db.transaction(async (tx) => {
        await recordSecurityEvent(
          tx,
          { action: "auth.password.changed", email: account.email, userId: account.userId },
          { ip: null },
        );
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const { walletId } = await fundedWallet(db, account.userId, "ETH", { deposit: "0.1" });
    const refused = await call("/request-transaction", {
      email: account.email,
      twelveWords: account.twelveWords,
      amount: "5",
      receiver_wallet_address: `0x${randomBytes(20).toString("hex")}`,
      wallet_id: walletId,
    });
    expect(refused.status).toBe(422);
    // Only the deposit's mail was queued.
    expect(await queuedCount(db, account.email)).toBe(before + 1);
  });

  test("the server down, refusing, hanging or dropping the connection: the mail waits, then goes once", async () => {
    const account = await verified("faults");
    const quick = sender(db, sink);
    const alert = async () => {
      const queued = await queueAlert(db, account.userId, "security_change", { change: "password_changed" });
      expect(queued).toBe(true);
    };
    const mine = async () => (await listOutbox(db, { limit: 200 })).filter((r) => r.to === account.email);
    const retryAll = async () => {
      for (const row of await mine()) if (row.status !== "sent") await retryNow(db, row.id);
    };
    for (const mode of ["down", "refuse", "hang", "drop"] as const) {
      await alert();
      if (mode === "down") await sink.down();
      else sink.mode = mode;
      const started = Date.now();
      expect(await quick.runOnce()).toBe(0);
      // A hung server costs this sender its timeouts, nothing else.
      expect(Date.now() - started).toBeLessThan(10_000);
      const failing = (await mine()).filter((r) => r.status === "failing");
      expect({ mode, failing: failing.length >= 1 }).toEqual({ mode, failing: true });
      expect({ mode, error: Boolean(failing[0]?.lastError) }).toEqual({ mode, error: true });
      expect((await outboxCounts(db)).failing).toBeGreaterThanOrEqual(1);
      if (mode === "down") await sink.up();
      sink.mode = "accept";
    }
    expect(to(sink.mails, account.email)).toHaveLength(0);
    await retryAll();
    expect(await quick.runOnce()).toBe(4);
    await sink.waitFor((m) => to(m, account.email).length === 4);
    await retryAll();
    expect(await quick.runOnce()).toBe(0);
    expect(to(sink.mails, account.email)).toHaveLength(4);
    expect((await mine()).every((r) => r.status === "sent" && r.sentAt !== null)).toBe(true);
    // A sent mail cannot be sent again.
    const [row] = await mine();
    expect(await retryNow(db, row?.id ?? 0)).toBe("sent");
    expect(await retryNow(db, 987_654_321)).toBe("missing");
    await quick.stop();
  }, 60_000);

  test.runIf(name === "postgres")(
    "two servers on one PostgreSQL deliver each mail once",
    async () => {
      const url = getDatabase().databaseUrl;
      if (!url) throw new Error("no url");
      const account = await verified("two-servers");
      const other = await openDatabase({ databaseUrl: url, dataDir: "/tmp" });
      try {
        for (let i = 0; i < 40; i += 1)
          await queueAlert(db, account.userId, "deposit_credited", { coin: "BTC", amount: `0.0${i + 1}` });
        const a = sender(db, sink);
        const b = sender(other.db, sink);
        const sent = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
        expect(sent.reduce((x, y) => x + y, 0)).toBe(40);
        const mails = to(await sink.waitFor((m) => to(m, account.email).length >= 40), account.email);
        expect(new Set(mails.map((m) => m.messageId)).size).toBe(40);
        expect(mails).toHaveLength(40);
        await Promise.all([a.stop(), b.stop()]);
      } finally {
        await other.close();
      }
    },
    60_000,
  );
});

describe("SMTP_URL", () => {
  test("parses smtp and smtps URLs; a malformed one says what is wrong without the password", () => {
    expect(parseSmtpUrl("smtp://mail.example.com")).toEqual({
      host: "mail.example.com",
      port: 587,
      secure: false,
    });
    expect(parseSmtpUrl("smtps://u%40x:p%3Ass@mail.example.com")).toEqual({
      host: "mail.example.com",
      port: 465,
      secure: true,
      user: "u@x",
      pass: "p:ss",
    });
    for (const bad of ["mail.example.com", "http://mail.example.com", "smtp://", "smtp://h/path"]) {
      expect(typeof parseSmtpUrl(bad)).toBe("string");
    }
    expect(String(parseSmtpUrl("https://user:hunter2@mail.example.com"))).not.toContain("hunter2");
  });
});
