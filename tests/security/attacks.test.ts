// The attacks people actually try against a custodial wallet like this one,
// each as an HTTP-level test named after the attack: against the API handler
// on every test database, and against the real host (server/host/host.ts with the
// built web app) where that is cheap. What each attack must get:
//   - never a 5xx, and the JSON error shape for every refusal;
//   - nothing changed in the tables that hold accounts, money and messages;
//   - no answer that tells the attacker more than the spec forces us to
//     (record 016 lists what the spec forces and how we offset it).
// Each attacker comes from an address of its own (the handler's second
// argument, as the host passes the connection's address), so per-IP limits
// earned by one test do not spill into the next.
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import { supportMessages, users, wallets, withdrawals } from "../../server/backend/db/schema.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import {
  PLATFORM,
  ROUTES,
  createTestHandler,
  phrasePairsIn,
  randomAddress,
  uniqueEmail,
} from "../backend/helpers.ts";
import { describeEachDatabase } from "../backend/api-suite.ts";
import {
  answerOf,
  changedTables,
  createHolder,
  rawRequest,
  snapshot,
  type Answer,
  type Holder,
} from "./fuzz-support.ts";
import { callApi } from "../backend/api-suite.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

const LIMITED = 429;
let nextAttacker = 1;

/** A handler bound to one attacker's connection address (TEST-NET-2, never loopback). */
function attackerHandler(api: ApiHandler): ApiHandler {
  const address = `198.51.100.${nextAttacker++ % 250}`;
  return (request) => api(request, { address });
}

function message(answer: Pick<Answer, "body">): unknown {
  return (answer.body as { message?: unknown } | undefined)?.message;
}

/** The refusal we expect, unless a rate limit answered first (then nothing else is asserted). */
function expectRefusal(answer: Pick<Answer, "status" | "body">, status: number, text?: string) {
  if (answer.status === LIMITED) return;
  expect(answer.status).toBe(status);
  if (text !== undefined) expect(message(answer)).toBe(text);
}

function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const creds = (h: Holder) => ({ email: h.email, twelveWords: h.words });

const ETH_DESTINATION = "0x52908400098527886e0f7030069857d2e4169ee7";

/** Call 6 from the holder's own wallet, with the holder's credentials; the fields say the rest. */
const sendFrom = (handler: ApiHandler, holder: Holder, fields: Record<string, unknown>) =>
  callApi(handler, "/request-transaction", { ...creds(holder), wallet_id: holder.walletId, ...fields });

describeEachDatabase("attacks on the API ($name)", (getDatabase) => {
  let db: AppDb;
  let api: ApiHandler;
  /** A bystander: the account attackers aim at. */
  let victim: Holder;
  let setup: ApiHandler;

  beforeAll(async () => {
    db = getDatabase().database.db;
    // The production limits (record 013): attackers meet them too.
    api = createTestHandler(db, { rateLimits: DEFAULT_RATE_LIMITS });
    setup = attackerHandler(api);
    victim = await createHolder(db, { label: "victim" });
  });

  /** Runs the attack and asserts the watched tables did not change. */
  async function unchanged(attack: () => Promise<void>) {
    const before = await snapshot(db);
    await attack();
    expect(changedTables(before, await snapshot(db))).toEqual([]);
  }

  describe("account enumeration", () => {
    test("login (call 2) tells a known e-mail from an unknown one — spec-forced, record 016", async () => {
      const h = attackerHandler(api);
      const unknown = await callApi(h, "/aml-authorization", {
        email: uniqueEmail("nobody"),
        password: "guess",
      });
      const known = await callApi(h, "/aml-authorization", {
        email: victim.email,
        password: "guess",
      });
      // Spec section 8 shows 'User doesn't exist' and 'Incorrect password' from these two server messages.
      expectRefusal(unknown, 404, "User not found with this email address.");
      expectRefusal(known, 401, "Password is inccorect");
    });

    test("login timing does not tell a known e-mail from an unknown one (dummy argon2id hash)", async () => {
      const h = attackerHandler(api);
      const sample = async (email: string) => {
        const started = performance.now();
        const answer = await callApi(h, "/aml-authorization", {
          email,
          password: "guess",
        });
        return { ms: performance.now() - started, limited: answer.status === LIMITED };
      };
      // Fresh accounts, so no account collects more than one failure (per-account backoff).
      const accounts = [];
      for (let i = 0; i < 5; i++) accounts.push(await createHolder(db, { label: "timing" }));
      const knownMs: number[] = [];
      const unknownMs: number[] = [];
      for (const account of accounts) {
        const a = await sample(account.email);
        const b = await sample(uniqueEmail("timing-nobody"));
        if (!a.limited) knownMs.push(a.ms);
        if (!b.limited) unknownMs.push(b.ms);
      }
      if (knownMs.length < 3 || unknownMs.length < 3) return; // rate-limited: nothing to compare
      const ratio = median(knownMs) / median(unknownMs);
      // Both paths run one argon2id verification (tens of ms); a missing dummy hash would be ~100× faster.
      expect(ratio).toBeGreaterThan(0.4);
      expect(ratio).toBeLessThan(2.5);
    });

    test("phrase calls (3, 4, 5, 7, 10, 11) answer an unknown e-mail exactly like a wrong phrase", async () => {
      const h = attackerHandler(api);
      const wrongWords =
        "abandon ability able about above absent absorb abstract absurd abuse access accident";
      const cases: [string, Record<string, unknown>][] = [
        ["/check-if-logged-in", {}],
        ["/aml-client-balances", {}],
        ["/request-nonbtc-wallet", { request_text: "btc" }],
        ["/request-change-password", {}],
        ["/aml-client-change-password", { password: "new-pw", confirmPassword: "new-pw" }],
      ];
      await unchanged(async () => {
        for (const [route, extra] of cases) {
          const unknown = await callApi(h, route, {
            email: uniqueEmail("nobody"),
            twelveWords: wrongWords,
            ...extra,
          });
          const wrong = await callApi(h, route, {
            email: victim.email,
            twelveWords: wrongWords,
            ...extra,
          });
          if (unknown.status === LIMITED || wrong.status === LIMITED) continue;
          expect(unknown.status).toBe(401);
          expect(wrong.text).toBe(unknown.text);
        }
        const unknown7 = await callApi(h, "/aml-new-messages-count", {
          email: uniqueEmail("nobody"),
          twelvewords: wrongWords,
        });
        const wrong7 = await callApi(h, "/aml-new-messages-count", {
          email: victim.email,
          twelvewords: wrongWords,
        });
        if (unknown7.status !== LIMITED && wrong7.status !== LIMITED) expect(wrong7.text).toBe(unknown7.text);
      });
    });

    test("registering an existing e-mail in another case or with spaces creates no second account", async () => {
      const h = attackerHandler(api);
      await unchanged(async () => {
        for (const email of [
          victim.email.toUpperCase(),
          ` ${victim.email}\t`,
          `\n${victim.email.toUpperCase()} `,
        ]) {
          const answer = await callApi(h, "/aml-authentication", {
            email,
            password: "attacker",
            passwordConfirmed: "attacker",
          });
          // 409 says the address is registered: inherent to sign-up (record 016).
          expectRefusal(answer, 409, "An account with this email address already exists.");
        }
      });
    });

    test("a homoglyph of the victim's e-mail never reaches the victim's account", async () => {
      const h = attackerHandler(api);
      const lookalike = victim.email.replace("a", "\u0430").replace("e", "\u0435"); // Cyrillic а, е
      const created = await callApi(h, "/aml-authentication", {
        email: lookalike,
        password: "attacker",
        passwordConfirmed: "attacker",
      });
      if (created.status === 200) {
        expect((created.body as { newUserId: string }).newUserId).not.toBe(victim.userId);
      } else {
        expect(created.status).toBeGreaterThanOrEqual(400);
      }
      const login = await callApi(h, "/aml-authorization", {
        email: lookalike,
        password: victim.password,
      });
      expect(login.status).not.toBe(200);
    });
  });

  describe("someone else's things (IDOR)", () => {
    test("sending from the victim's wallet_id (call 6): 404 like an unknown id, nothing changed", async () => {
      const attacker = await createHolder(db, { label: "attacker" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const body = {
          ...creds(attacker),
          amount: "1",
          amount_in_usd: "3000",
          receiver_wallet_address: ETH_DESTINATION,
        };
        const theirs = await callApi(h, "/request-transaction", { ...body, wallet_id: victim.walletId });
        const unknown = await callApi(h, "/request-transaction", {
          ...body,
          wallet_id: "00000000-0000-4000-8000-000000000000",
        });
        expectRefusal(theirs, 404, "Wallet not found.");
        if (theirs.status !== LIMITED && unknown.status !== LIMITED) expect(theirs.text).toBe(unknown.text);
      });
    });

    test("opening the victim's message (call 8): 404 like an unknown id, it stays unread", async () => {
      const attacker = await createHolder(db, { label: "attacker" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const theirs = await callApi(h, "/aml-message-open-status", {
          ...creds(attacker),
          messageId: victim.messageId,
        });
        const unknown = await callApi(h, "/aml-message-open-status", {
          ...creds(attacker),
          messageId: "00000000-0000-4000-8000-000000000000",
        });
        expectRefusal(theirs, 404, "Message not found.");
        if (theirs.status !== LIMITED && unknown.status !== LIMITED) expect(theirs.text).toBe(unknown.text);
      });
      const count = await callApi(setup, "/aml-new-messages-count", {
        email: victim.email,
        twelvewords: victim.words,
      });
      if (count.status !== LIMITED) expect(count.body).toEqual({ newMessagesCount: 1 });
    });

    test("changing the victim's password with their e-mail and a guessed phrase (call 11): 401, nothing changed", async () => {
      const attacker = await createHolder(db, { label: "attacker" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const answer = await callApi(h, "/aml-client-change-password", {
          email: victim.email,
          // A valid phrase, but the attacker's own.
          twelveWords: attacker.words,
          password: "owned",
          confirmPassword: "owned",
        });
        expectRefusal(answer, 401, "Wrong 12 word phrase");
      });
    });
  });

  describe("sends (call 6)", () => {
    test("replaying a send with a changed amount under the same idempotency key: 409, one withdrawal", async () => {
      const holder = await createHolder(db, { label: "replay", deposit: "10" });
      const h = attackerHandler(api);
      const body = {
        ...creds(holder),
        amount: "0.5",
        amount_in_usd: "1500",
        receiver_wallet_address: ETH_DESTINATION,
        wallet_id: holder.walletId,
        idempotency_key: "replay-attack-key-0001",
      };
      const first = await callApi(h, "/request-transaction", body);
      expect(first.status).toBe(200);
      await unchanged(async () => {
        const again = await callApi(h, "/request-transaction", body);
        if (again.status !== LIMITED) {
          expect(again.status).toBe(200);
          expect(again.headers.get("idempotent-replayed")).toBe("true");
          expect(again.body).toEqual(first.body);
        }
        const changed = await callApi(h, "/request-transaction", { ...body, amount: "5" });
        expectRefusal(changed, 409, "This idempotency key was already used for a different transaction.");
        const redirected = await callApi(h, "/request-transaction", {
          ...body,
          receiver_wallet_address: randomAddress("ETH"),
        });
        expectRefusal(redirected, 409);
      });
      const rows = await db.select().from(withdrawals).where(eq(withdrawals.walletId, holder.walletId));
      expect(rows).toHaveLength(1);
      expect(rows[0]?.amount).toBe(5n * 10n ** 17n);
    });

    test.each([
      ["negative", "-1"],
      ["negative zero", "-0"],
      ["zero", "0"],
      ["exponent", "1e3"],
      ["overflow 1e309", "1e309"],
      ["NaN", "NaN"],
      ["Infinity", "Infinity"],
      ["hex", "0x10"],
      ["grouped", "1,000"],
      ["31 digits", "9".repeat(31)],
      ["uint256 + 1", "115792089237316195423570985008687907853269984665640564039457584007913129639936"],
      ["a fifth decimal", "0.00001"],
      ["spaces", " 1 "],
      ["Arabic-Indic digits", "١"],
      ["full-width digits", "１"],
      ["JSON number -1", -1],
      ["JSON number 1e21", 1e21],
      ["JSON number 5e-324", 5e-324],
      ["null", null],
      ["an object", { value: "1" }],
    ])("a %s amount is refused and moves nothing", async (_name, amount) => {
      const holder = await createHolder(db, { label: "amount", deposit: "1" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const answer = await sendFrom(h, holder, {
          amount,
          amount_in_usd: "1",
          receiver_wallet_address: ETH_DESTINATION,
        });
        expect(answer.status).toBeGreaterThanOrEqual(400);
      });
    });

    test("an amount of 1e309 as raw JSON (Infinity once parsed) is refused", async () => {
      const holder = await createHolder(db, { label: "amount", deposit: "1" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const text = JSON.stringify({
          platform: PLATFORM,
          ...creds(holder),
          amount: "AMOUNT",
          receiver_wallet_address: ETH_DESTINATION,
          wallet_id: holder.walletId,
        }).replace('"AMOUNT"', "1e309");
        const answer = await answerOf(h, rawRequest("/api/request-transaction", { body: text }));
        expect(answer.status).toBeGreaterThanOrEqual(400);
      });
    });

    test("overdrawing (more than the balance): 422, nothing held", async () => {
      const holder = await createHolder(db, { label: "overdraw", deposit: "1" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        const answer = await sendFrom(h, holder, {
          amount: "1.0001",
          amount_in_usd: "1",
          receiver_wallet_address: ETH_DESTINATION,
        });
        expectRefusal(answer, 422, "Insufficient balance.");
      });
    });

    test("sending to the wallet's own address (as stored and lower-cased): 400, nothing held", async () => {
      const holder = await createHolder(db, { label: "own" });
      const h = attackerHandler(api);
      await unchanged(async () => {
        for (const address of [holder.walletAddress, holder.walletAddress.toLowerCase()]) {
          const answer = await sendFrom(h, holder, {
            amount: "1",
            amount_in_usd: "3000",
            receiver_wallet_address: address,
          });
          expectRefusal(answer, 400, "You cannot send to this wallet's own address.");
        }
      });
    });
  });

  describe("injection", () => {
    test.each([
      "' OR '1'='1",
      "' OR 1=1 --",
      "'; DROP TABLE users; --",
      `${"x".repeat(3)}' UNION SELECT password_hash FROM users --`,
    ])("SQL injection in the login e-mail %j: refused, tables intact", async (email) => {
      const h = attackerHandler(api);
      await unchanged(async () => {
        const answer = await callApi(h, "/aml-authorization", { email, password: "x" });
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.text).not.toContain("password_hash");
      });
    });

    test("an e-mail with a quote (valid syntax) is stored and matched literally", async () => {
      const h = attackerHandler(api);
      const email = `o'brien'--${uniqueEmail("sqli")}`;
      const created = await callApi(h, "/aml-authentication", {
        email,
        password: "pw",
        passwordConfirmed: "pw",
      });
      if (created.status === LIMITED) return;
      if (created.status === 200) {
        const rows = await db
          .select({ email: users.email })
          .from(users)
          .where(eq(users.email, email.toLowerCase()));
        expect(rows).toHaveLength(1);
        const login = await callApi(h, "/aml-authorization", { email, password: "pw" });
        if (login.status !== LIMITED) expect(login.status).toBe(200);
      } else {
        expect(created.status).toBe(400);
      }
      // The victim is untouched and still signs in.
      const victimLogin = await callApi(setup, "/aml-authorization", {
        email: victim.email,
        password: victim.password,
      });
      if (victimLogin.status !== LIMITED) expect(victimLogin.status).toBe(200);
    });

    test("SQL and script in a support comment are stored byte for byte, not run", async () => {
      const h = attackerHandler(api);
      const comment = `'; DROP TABLE users; -- <script>alert(1)</script> \${jndi:ldap://x.invalid/a} %s%n`;
      const answer = await callApi(h, "/request-message", {
        email: uniqueEmail("sqli"),
        comment,
      });
      if (answer.status === LIMITED) return;
      expect(answer.status).toBe(200);
      const rows = await db
        .select({ comment: supportMessages.comment })
        .from(supportMessages)
        .where(eq(supportMessages.comment, comment));
      expect(rows).toHaveLength(1);
      expect((await db.select({ id: users.id }).from(users)).length).toBeGreaterThan(0);
    });
  });

  describe("prototype pollution", () => {
    const polluting = [
      '{"__proto__":{"isAdmin":true,"polluted":1}}',
      '{"constructor":{"prototype":{"isAdmin":true,"polluted":1}}}',
      '{"__proto__":{"__proto__":{"polluted":1}}}',
    ];

    test.each(polluting)("%s on every route pollutes nothing", async (payload) => {
      const h = attackerHandler(api);
      const extra = payload.slice(1, -1);
      for (const route of ROUTES) {
        const text = `{"platform":"CK","email":"${uniqueEmail("proto")}","password":"pw",${extra}}`;
        await unchanged(async () => {
          const answer = await answerOf(h, rawRequest(route, { body: text }));
          expect(answer.status).toBeGreaterThanOrEqual(400);
        });
      }
      const fresh: Record<string, unknown> = {};
      expect(fresh.isAdmin).toBeUndefined();
      expect(fresh.polluted).toBeUndefined();
      expect(Object.keys(Object.prototype)).toEqual([]);
    });

    test("__proto__.email cannot stand in for the e-mail (no login as the victim)", async () => {
      const h = attackerHandler(api);
      const text = `{"platform":"CK","password":${JSON.stringify(victim.password)},"__proto__":{"email":${JSON.stringify(victim.email)}}}`;
      const answer = await answerOf(h, rawRequest("/api/aml-authorization", { body: text }));
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(phrasePairsIn(answer.text, victim.words)).toEqual([]);
    });
  });

  describe("oversized and endless bodies", () => {
    test("a declared 100 MB body: 413 without reading a byte of it", async () => {
      const h = attackerHandler(api);
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 1;
          controller.enqueue(new Uint8Array(65_536));
        },
      });
      const started = performance.now();
      const answer = await answerOf(
        h,
        rawRequest("/api/aml-authentication", {
          headers: { "content-type": "application/json", "content-length": String(100 * 1024 * 1024) },
          body,
        }),
      );
      expect(answer.status).toBe(413);
      expect(pulled).toBeLessThanOrEqual(1);
      expect(performance.now() - started).toBeLessThan(1000);
    });

    test("an undeclared 100 MB body that would take minutes to send: 413 after the first 16 KiB", async () => {
      const h = attackerHandler(api);
      let sent = 0;
      // 64 KiB every 100 ms: 100 MB would take 160 s.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          if (sent >= 100 * 1024 * 1024) return controller.close();
          sent += 65_536;
          controller.enqueue(new TextEncoder().encode(" ".repeat(65_536)));
        },
      });
      const started = performance.now();
      const answer = await answerOf(h, rawRequest("/api/aml-authentication", { body }));
      expect(answer.status).toBe(413);
      expect(sent).toBeLessThanOrEqual(2 * 65_536);
      expect(performance.now() - started).toBeLessThan(2000);
    });
  });

  describe("mass assignment", () => {
    test("call 1 with id, userId, twelveWords, balance, isAdmin, role: never applied", async () => {
      const h = attackerHandler(api);
      const email = uniqueEmail("mass");
      const forcedId = "11111111-1111-4111-8111-111111111111";
      const answer = await callApi(h, "/aml-authentication", {
        email,
        password: "pw",
        passwordConfirmed: "pw",
        id: forcedId,
        userId: forcedId,
        newUserId: forcedId,
        twelveWords: victim.words,
        balance: "1000000",
        isAdmin: true,
        role: "operator",
      });
      expect(answer.status).toBeLessThan(500);
      if (answer.status === 200) {
        const created = answer.body as { newUserId: string; twelveWords: string[] };
        expect(created.newUserId).not.toBe(forcedId);
        expect(created.twelveWords.join(" ")).not.toBe(victim.words);
        const mine = await db
          .select({ id: wallets.id })
          .from(wallets)
          .where(eq(wallets.userId, created.newUserId));
        expect(mine).toEqual([]);
      } else {
        expect((await db.select().from(users).where(eq(users.email, email))).length).toBe(0);
      }
      expect((await db.select().from(users).where(eq(users.id, forcedId))).length).toBe(0);
    });

    test("call 6 with status, user_id, a tiny amount_in_usd and another coin: never applied", async () => {
      const holder = await createHolder(db, { label: "mass", deposit: "10" });
      const h = attackerHandler(api);
      const answer = await sendFrom(h, holder, {
        amount: "0.5",
        amount_in_usd: "0.000001",
        receiver_wallet_address: ETH_DESTINATION,
        status: "Confirmed",
        user_id: victim.userId,
        userId: victim.userId,
        transaction_crypto: "BTC",
        coin: "BTC",
      });
      expect(answer.status).toBeLessThan(500);
      const rows = await db.select().from(withdrawals).where(eq(withdrawals.walletId, holder.walletId));
      if (answer.status === 200) {
        expect(rows).toHaveLength(1);
        expect(rows[0]?.status).toBe("pending");
        // The server prices the send itself: 0.5 ETH at the test price 3000.5.
        expect(rows[0]?.amountUsd).toBe("1500.25");
      } else {
        expect(rows).toHaveLength(0);
      }
      const victimsSends = await db
        .select()
        .from(withdrawals)
        .where(eq(withdrawals.walletId, victim.walletId));
      expect(victimsSends).toHaveLength(0);
    });

    test("call 5 with an address and the victim's user_id: the wallet is the caller's and has no address", async () => {
      const holder = await createHolder(db, { label: "mass" });
      const h = attackerHandler(api);
      const answer = await callApi(h, "/request-nonbtc-wallet", {
        ...creds(holder),
        request_text: "btc",
        address: randomAddress("BTC"),
        user_id: victim.userId,
        userId: victim.userId,
      });
      expect(answer.status).toBeLessThan(500);
      const victimBtc = await db.select().from(wallets).where(eq(wallets.userId, victim.userId));
      expect(victimBtc.map((w) => w.coin)).toEqual(["ETH"]);
      const mine = (await db.select().from(wallets).where(eq(wallets.userId, holder.userId))).find(
        (w) => w.coin === "BTC",
      );
      if (answer.status === 200) expect(mine?.address).toBeNull();
      else expect(mine).toBeUndefined();
    });

    test("call 8 with the victim's userId: never opens the victim's message", async () => {
      const attacker = await createHolder(db, { label: "mass" });
      const h = attackerHandler(api);
      const attempt = await callApi(h, "/aml-message-open-status", {
        ...creds(attacker),
        messageId: victim.messageId,
        userId: victim.userId,
        user_id: victim.userId,
      });
      expect(attempt.status).toBeGreaterThanOrEqual(400);
      const count = await callApi(setup, "/aml-new-messages-count", {
        email: victim.email,
        twelvewords: victim.words,
      });
      if (count.status !== LIMITED) expect(count.body).toEqual({ newMessagesCount: 1 });
    });
  });

  describe("request tricks", () => {
    test("a spoofed X-Coinkeep-Client-Ip from an internet connection is not believed", async () => {
      const email = uniqueEmail("spoof");
      const answer = await answerOf(
        (request) => api(request, { address: "203.0.113.77" }),
        rawRequest("/api/request-message", {
          headers: {
            "content-type": "application/json",
            "x-coinkeep-client-ip": "127.0.0.1",
            "x-forwarded-for": "10.0.0.1",
          },
          body: JSON.stringify({ platform: PLATFORM, email, comment: "Spoofed sender address." }),
        }),
      );
      if (answer.status === LIMITED) return;
      expect(answer.status).toBe(200);
      const rows = await db
        .select({ ip: supportMessages.ip })
        .from(supportMessages)
        .where(eq(supportMessages.email, email));
      expect(rows).toEqual([{ ip: "203.0.113.77" }]);
    });

    test.each([
      "/api/../api/nope",
      "/api/aml-authorization/..",
      "/api/aml-authorization%2f..%2f..%2fetc%2fpasswd",
      "/api/%2e%2e/%2e%2e/etc/passwd",
      "/api//aml-authorization",
      "/api/aml-authorization;x=1",
      "/api/aml-authorization%00",
    ])("path trick %s: a plain 404 or the route itself, never a 5xx", async (pathname) => {
      const h = attackerHandler(api);
      await unchanged(async () => {
        const answer = await answerOf(
          h,
          rawRequest(pathname, { body: JSON.stringify({ platform: PLATFORM }) }),
        );
        expect(answer.status).toBeLessThan(500);
      });
    });

    test("X-HTTP-Method-Override cannot turn a GET into a POST", async () => {
      const h = attackerHandler(api);
      const answer = await answerOf(
        h,
        rawRequest("/api/aml-authentication", {
          method: "GET",
          headers: { "x-http-method-override": "POST" },
        }),
      );
      expect(answer.status).toBe(405);
    });
  });
});

// ---------------------------------------------------------------------------
// The real host: the API and the web tier behind one Node HTTP server.

if (!built) {
  console.warn(
    "tests/security/attacks.test.ts: no build in build/server; run `npx react-router build` for the web-tier attacks",
  );
}

/** How long a stalled request may hold a connection; nginx's client_body_timeout is 60 s, ours should be far less. */
const STALL_LIMIT_MS = 15_000;

/** Resolves with what the server did with a stalled connection, or "open" after ms. */
function waitForClose(socket: Socket, ms: number): Promise<"closed" | "open"> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("open"), ms);
    socket.on("data", () => {});
    socket.once("close", () => {
      clearTimeout(timer);
      resolve("closed");
    });
  });
}

describe.skipIf(!built)("attacks on the host (server/host/host.ts with the built app)", () => {
  let host: RunningHost;

  beforeAll(async () => {
    host = await startHost();
  });
  afterAll(async () => {
    await host?.close();
  });

  function rawSocket(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect(host.port, "127.0.0.1", () => resolve(socket));
      socket.once("error", reject);
    });
  }

  test("a 100 MB upload to the API is answered 413 long before it is sent", async () => {
    const total = 100 * 1024 * 1024;
    let written = 0;
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port: host.port,
        method: "POST",
        path: "/api/aml-authentication",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        // The server may close the connection once it has answered: that is fine.
        if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error);
      });
      req.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        req.destroy();
      });
      const chunk = Buffer.alloc(65_536, 0x20);
      const pump = () => {
        while (written < total && !req.destroyed) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        if (!req.destroyed) req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(written).toBeLessThan(total);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  // Node's defaults would keep such a connection for up to 5 minutes (requestTimeout 300 s,
  // headersTimeout 60 s, checked every 30 s); server/host/host.ts sets 10 s / 5 s, checked every second.
  test(
    `slowloris: a stalled body and stalled headers are cut within ${STALL_LIMIT_MS / 1000} s`,
    async () => {
      const body = await rawSocket();
      body.write(
        "POST /api/aml-authorization HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
      );
      const headers = await rawSocket();
      headers.write("GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      try {
        const [a, b] = await Promise.all([
          waitForClose(body, STALL_LIMIT_MS),
          waitForClose(headers, STALL_LIMIT_MS),
        ]);
        expect({ body: a, headers: b }).toEqual({ body: "closed", headers: "closed" });
      } finally {
        body.destroy();
        headers.destroy();
      }
    },
    STALL_LIMIT_MS + 10_000,
  );

  test("fast login: credentials in the query are redirected away at once, not cached, not referred", async () => {
    const response = await fetch(
      `http://127.0.0.1:${host.port}/fast-login?email=${encodeURIComponent("nobody@example.com")}&password=hunter2-secret`,
      { redirect: "manual" },
    );
    expect(response.status).toBeGreaterThanOrEqual(300);
    expect(response.status).toBeLessThan(400);
    expect(response.headers.get("location") ?? "").not.toContain("hunter2-secret");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control") ?? "").toContain("no-store");
    expect(response.headers.get("x-powered-by")).toBeNull();
  });
});
