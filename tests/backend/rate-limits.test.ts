// The abuse limits of record 013, through the API handler, on every database
// (PGlite, and PostgreSQL when TEST_DATABASE_URL is set, where parallel
// requests really run in parallel over a pool of connections). The clock of
// the limits is the test's, so a 15-minute backoff takes no time.
import * as argon2 from "@node-rs/argon2";
import { beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { REFUSALS, tooManyAttempts } from "../../common/contract/refusals.ts";
import { createApiHandler, type ApiHandler } from "../../server/backend/api/handler.ts";
import { ConfigError, loadConfig } from "../../server/config.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { DEFAULT_RATE_LIMITS, type RateLimitPolicy } from "../../server/backend/domain/rate-limits.ts";
import { BACKEND_SECRET, PLATFORM, TEST_USD_PRICES, uniqueEmail } from "./helpers.ts";
import { callApi, describeEachDatabase, type ApiAnswer, type ApiFetch } from "./api-suite.ts";

// Every argon2 verification goes through this spy (timing equalisation below).
vi.mock("@node-rs/argon2", async (importOriginal) => {
  const original = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...original, verify: vi.fn<typeof original.verify>(original.verify) };
});

/** Twelve words that are nobody's phrase. */
const WRONG_WORDS = Array.from({ length: 12 }, () => "abandon").join(" ");

const retryAfter = (answer: ApiAnswer) => answer.headers.get("retry-after");

function expectWait(answer: ApiAnswer, seconds: number) {
  expect(answer.status).toBe(429);
  expect(retryAfter(answer)).toBe(String(seconds));
  expect(answer.body).toEqual({
    success: false,
    code: "too_many_attempts",
    message: tooManyAttempts(seconds).message,
  });
}

describeEachDatabase("rate limits on $name", { openTimeout: 60_000 }, (getDatabase) => {
  let db: AppDb;
  let clock: Date;
  const advance = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  beforeAll(() => {
    db = getDatabase().database.db;
  });
  beforeEach(() => {
    clock = new Date("2026-11-21T12:00:00.000Z");
  });

  function handlerWith(policy: Partial<RateLimitPolicy> = {}): ApiHandler {
    return createApiHandler({
      db,
      platform: PLATFORM,
      backendSecret: BACKEND_SECRET,
      usdPrice: (coin) => Promise.resolve(TEST_USD_PRICES[coin]),
      rateLimits: { ...DEFAULT_RATE_LIMITS, ...policy },
      now: () => clock,
    });
  }

  let handler: ApiHandler;
  beforeAll(() => {
    handler = handlerWith();
  });

  /** A call as our web tier makes it: in-process, with the visitor's address forwarded. */
  const call = (path: string, body: Record<string, unknown>, ip: string, h = handler) =>
    callApi(h, path, body, { ip });

  async function newUser(ip = "198.51.100.1", h = handler) {
    const email = uniqueEmail("limits");
    const password = `pw-${email}`;
    const created = await call(
      "/aml-authentication",
      { email, password, passwordConfirmed: password },
      ip,
      h,
    );
    expect(created.status).toBe(200);
    return { email, password, words: (created.body.twelveWords as string[]).join(" ") };
  }

  const login = (email: string, password: string, ip: string, h = handler) =>
    call("/aml-authorization", { email, password }, ip, h);

  test("5 failures, then 429 with Retry-After; even the right password is not checked until the wait is over", async () => {
    const user = await newUser();
    const ip = "203.0.113.10";
    for (let i = 0; i < 5; i++) expect((await login(user.email, "wrong", ip)).status).toBe(401);
    expectWait(await login(user.email, "wrong", ip), 1);
    expectWait(await login(user.email, user.password, ip), 1);
    // The e-mail is normalised: the same account however it is typed.
    expectWait(await login(`  ${user.email.toUpperCase()} `, user.password, ip), 1);
    advance(1_000);
    expect((await login(user.email, user.password, ip)).status).toBe(200);
    // The success reset the counter: five free failures again.
    for (let i = 0; i < 5; i++) expect((await login(user.email, "wrong", ip)).status).toBe(401);
    expect((await login(user.email, "wrong", ip)).status).toBe(429);
  });

  test("the backoff doubles from 1 s up to 15 minutes", async () => {
    const user = await newUser();
    const ip = "203.0.113.11";
    for (let i = 0; i < 5; i++) await login(user.email, "wrong", ip);
    const waits: number[] = [];
    for (let failure = 6; failure <= 17; failure++) {
      const refused = await login(user.email, "wrong", ip);
      expect(refused.status).toBe(429);
      const seconds = Number(retryAfter(refused));
      waits.push(seconds);
      advance(seconds * 1_000 - 1);
      expect((await login(user.email, "wrong", ip)).status).toBe(429);
      advance(1);
      expect((await login(user.email, "wrong", ip)).status).toBe(401);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
  }, 60_000);

  test("another address is not held back by the first address's limits, nor is the victim", async () => {
    const h = handlerWith({ ipFailures: { limit: 8, windowMs: 15 * 60_000 } });
    const victim = await newUser("198.51.100.2", h);
    const attacker = "203.0.113.66";
    // The attacker's address fills its failure window spraying other e-mails…
    for (let i = 0; i < 8; i++) {
      expect((await login(uniqueEmail("spray"), "guess", attacker, h)).status).toBe(404);
    }
    const blocked = await login(uniqueEmail("spray"), "guess", attacker, h);
    expect(blocked.status).toBe(429);
    expect(Number(retryAfter(blocked))).toBe(15 * 60);
    // …and its phrase checks are refused too (one window for failed credential checks).
    expect(
      (await call("/check-if-logged-in", { email: victim.email, twelveWords: WRONG_WORDS }, attacker, h))
        .status,
    ).toBe(429);
    // The victim, from their own address, is not affected.
    expect((await login(victim.email, victim.password, "198.51.100.2", h)).status).toBe(200);
    // After the window the attacker's address may try again.
    advance(15 * 60_000);
    expect((await login(uniqueEmail("spray"), "guess", attacker, h)).status).toBe(404);
  });

  test("failures on the victim's account from one address leave it usable from another", async () => {
    const victim = await newUser();
    for (let i = 0; i < 5; i++) await login(victim.email, "wrong", "203.0.113.20");
    expect((await login(victim.email, victim.password, "203.0.113.20")).status).toBe(429);
    expect((await login(victim.email, victim.password, "198.51.100.3")).status).toBe(200);
    // The attacker's backoff is its own: the victim's success did not lift it.
    expect((await login(victim.email, "wrong", "203.0.113.20")).status).toBe(429);
  });

  test("100 consecutive failures lock the password login (423); phrases still work and a restore unlocks it", async () => {
    const victim = await newUser();
    // 20 addresses × 5 failures: each address stays within its free failures.
    for (let a = 0; a < 20; a++) {
      for (let i = 0; i < 5; i++) {
        expect((await login(victim.email, `guess-${a}-${i}`, `192.0.2.${a + 1}`)).status).toBe(401);
      }
    }
    const locked = await login(victim.email, victim.password, "198.51.100.4");
    expect(locked.status).toBe(423);
    expect(retryAfter(locked)).toBeNull();
    expect(locked.body).toEqual({
      success: false,
      code: "account_locked",
      message: REFUSALS.account_locked.message,
    });
    // Time alone does not unlock it (NIST: no more than 100 consecutive failures).
    advance(7 * 24 * 3600_000);
    expect((await login(victim.email, victim.password, "198.51.100.4")).status).toBe(423);
    // The signed-in pages (phrase checks) keep working…
    expect(
      (await call("/check-if-logged-in", { email: victim.email, twelveWords: victim.words }, "198.51.100.4"))
        .status,
    ).toBe(200);
    // …and the restore flow: phrase, new password, then login.
    expect(
      (
        await call(
          "/request-change-password",
          { email: victim.email, twelveWords: victim.words },
          "198.51.100.4",
        )
      ).status,
    ).toBe(200);
    const changed = await call(
      "/aml-client-change-password",
      { email: victim.email, twelveWords: victim.words, password: "new-pw", confirmPassword: "new-pw" },
      "198.51.100.4",
    );
    expect(changed.status).toBe(200);
    expect((await login(victim.email, "new-pw", "198.51.100.4")).status).toBe(200);
  }, 120_000);

  test("an unknown e-mail is limited exactly like a known one", async () => {
    const known = await newUser();
    const unknown = uniqueEmail("nobody");
    const ip = "203.0.113.30";
    const statuses = async (email: string) => {
      const seen: number[] = [];
      for (let i = 0; i < 7; i++) seen.push((await login(email, "wrong", ip)).status);
      return seen;
    };
    expect(await statuses(known.email)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(await statuses(unknown)).toEqual([404, 404, 404, 404, 404, 429, 429]);
  });

  test("50 parallel wrong passwords: exactly 5 are checked", async () => {
    const user = await newUser();
    const ip = "203.0.113.40";
    const answers = await Promise.all(Array.from({ length: 50 }, () => login(user.email, "wrong", ip)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
  }, 60_000);

  test("50 parallel wrong passwords from 50 addresses never pass the account's cap", async () => {
    const h = handlerWith({ accountLockFailures: 20 });
    const user = await newUser("198.51.100.5", h);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => login(user.email, "wrong", `192.0.2.${100 + i}`, h)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 423)).toHaveLength(30);
  }, 60_000);

  test("phrase checks: failures back off per address; a correct phrase from elsewhere is never held", async () => {
    const user = await newUser();
    const ip = "203.0.113.50";
    for (let i = 0; i < 5; i++) {
      expect(
        (await call("/check-if-logged-in", { email: user.email, twelveWords: WRONG_WORDS }, ip)).status,
      ).toBe(401);
    }
    expectWait(await call("/aml-client-balances", { email: user.email, twelveWords: WRONG_WORDS }, ip), 1);
    // Every words route counts: the restore's phrase check (call 10) is refused the same way.
    expectWait(
      await call("/request-change-password", { email: user.email, twelveWords: WRONG_WORDS }, ip),
      1,
    );
    expect(
      (await call("/check-if-logged-in", { email: user.email, twelveWords: user.words }, "198.51.100.6"))
        .status,
    ).toBe(200);
    advance(1_000);
    expect(
      (await call("/check-if-logged-in", { email: user.email, twelveWords: user.words }, ip)).status,
    ).toBe(200);
    // The success from that address forgot its failures.
    for (let i = 0; i < 5; i++) {
      expect(
        (await call("/request-change-password", { email: user.email, twelveWords: WRONG_WORDS }, ip)).body
          .message,
      ).toBe(REFUSALS.wrong_phrase.message);
    }
  });

  test("signed-in polling is never limited: half an hour of unread counts and balances", async () => {
    const user = await newUser();
    const ip = "198.51.100.7";
    for (let i = 0; i < 180; i++) {
      advance(10_000);
      const count = await call("/aml-new-messages-count", { email: user.email, twelvewords: user.words }, ip);
      expect(count.status).toBe(200);
      if (i % 6 === 0) {
        const balances = await call(
          "/aml-client-balances",
          { email: user.email, twelveWords: user.words },
          ip,
        );
        expect(balances.status).toBe(200);
      }
    }
  }, 120_000);

  test("account creations per address", async () => {
    const h = handlerWith({ ipCreations: { limit: 3, windowMs: 3600_000 } });
    for (let i = 0; i < 3; i++) await newUser("203.0.113.60", h);
    const email = uniqueEmail("fourth");
    const refused = await call(
      "/aml-authentication",
      { email, password: "p", passwordConfirmed: "p" },
      "203.0.113.60",
      h,
    );
    expectWait(refused, 3600);
    await newUser("198.51.100.8", h);
    advance(3600_000);
    await newUser("203.0.113.60", h);
  });

  test("support and contact messages per address; a refused message does not count", async () => {
    const h = handlerWith({ ipMessages: { limit: 2, windowMs: 3600_000 } });
    const ip = "203.0.113.70";
    const contact = (comment: string, from = ip) =>
      call("/request-message", { email: "someone@example.com", comment }, from, h);
    expect((await contact("short")).status).toBe(400);
    expect((await contact("a first message")).status).toBe(200);
    expect((await contact("a second message")).status).toBe(200);
    const refused = await contact("a third message");
    expectWait(refused, 3600);
    const support = await call(
      "/request-message",
      { email: "someone@example.com", full_name: "Some One", comment: "a support message" },
      ip,
      h,
    );
    expect(support.status).toBe(429);
    expect((await contact("from another address", "198.51.100.9")).status).toBe(200);
  });

  /**
   * A new user's wrong password seven times from a connection at `address`,
   * each naming another forwarded address (192.0.2.<first + i>): the statuses.
   */
  async function forgedRotation(address: string, first: number): Promise<number[]> {
    const user = await newUser();
    const fromConnection: ApiFetch = (request) => handler(request, { address });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const answer = await callApi(
        fromConnection,
        "/aml-authorization",
        { email: user.email, password: "wrong" },
        { ip: `192.0.2.${first + i}` },
      );
      statuses.push(answer.status);
    }
    return statuses;
  }

  test("an address the handler does not believe is not the one counted", async () => {
    // Over a non-loopback connection X-Coinkeep-Client-Ip is ignored: rotating it does not escape the backoff.
    const statuses = await forgedRotation("203.0.113.80", 200);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  test("a loopback connection that is not a configured web tier is counted by its own address (issue 12)", async () => {
    // Any local process can connect over loopback: rotating a forged X-Coinkeep-Client-Ip must not escape.
    const statuses = await forgedRotation("127.0.0.1", 100);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  test("timing: an unknown e-mail and a known one with a wrong password both run one argon2 verification", async () => {
    const user = await newUser();
    const verify = vi.mocked(argon2.verify);
    verify.mockClear();
    expect((await login(uniqueEmail("ghost"), "some password", "198.51.100.10")).status).toBe(404);
    expect(verify).toHaveBeenCalledTimes(1);
    verify.mockClear();
    expect((await login(user.email, "some password", "198.51.100.10")).status).toBe(401);
    expect(verify).toHaveBeenCalledTimes(1);
  });
});

describe("RATE_LIMITS", () => {
  const secrets = { SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) };
  test("default unless set; off only outside production", () => {
    expect(loadConfig({ ...secrets }).rateLimits).toBe("default");
    expect(loadConfig({ ...secrets, RATE_LIMITS: "off", NODE_ENV: "test" }).rateLimits).toBe("off");
    expect(() => loadConfig({ ...secrets, RATE_LIMITS: "off", NODE_ENV: "production" })).toThrow(
      /RATE_LIMITS: must not be off in production/u,
    );
    expect(() => loadConfig({ ...secrets, RATE_LIMITS: "lenient" })).toThrow(ConfigError);
  });
});
