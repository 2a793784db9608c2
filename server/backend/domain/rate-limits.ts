// Abuse limits, kept in the database so every process (node cluster, several
// hosts) agrees (record 013). Each counter is one row of rate_limits and every
// change to one is a single atomic statement (INSERT … ON CONFLICT DO UPDATE …
// RETURNING), so concurrent requests on any number of processes are counted
// exactly once each.
//
// Three kinds of counter:
//   backoff  consecutive failures of one account from one IP address: the
//            first `freeFailures` are free, then each attempt waits
//            backoffBaseMs · 2^(n − freeFailures), at most backoffMaxMs.
//   cap      consecutive failures of one account from anywhere: at
//            `accountLockFailures` its password login is locked until a
//            restore by phrase (or an operator) resets it.
//   window   attempts per IP address in a fixed window.
//
// Password attempts are reserved before the password is checked (the slot is
// taken first and handed back on success), so 50 parallel guesses get exactly
// the allowed number checked.
import { createHmac, createSecretKey, hkdfSync } from "node:crypto";
import { and, eq, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import type { AppDb } from "../db/index.ts";
import { rateLimits } from "../db/schema.ts";
import { normaliseEmail } from "./accounts.ts";

export interface WindowLimit {
  limit: number;
  windowMs: number;
}

export interface RateLimitPolicy {
  /** Consecutive failures of one account from one address before the backoff starts. */
  freeFailures: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Consecutive failures of one account, from anywhere, that lock its password login (NIST: at most 100). */
  accountLockFailures: number;
  /** A quiet (account, address) counter starts again after this long. */
  forgetAfterMs: number;
  /** Failed credential checks (password or phrase) per address. */
  ipFailures: WindowLimit;
  /** Account creations (call 1) per address. */
  ipCreations: WindowLimit;
  /** Support and contact messages (call 12) per address. */
  ipMessages: WindowLimit;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The production policy; record 013 says why each number. */
export const DEFAULT_RATE_LIMITS: RateLimitPolicy = {
  freeFailures: 5,
  backoffBaseMs: 1_000,
  backoffMaxMs: 15 * MINUTE,
  accountLockFailures: 100,
  forgetAfterMs: 24 * HOUR,
  ipFailures: { limit: 100, windowMs: 15 * MINUTE },
  ipCreations: { limit: 100, windowMs: HOUR },
  ipMessages: { limit: 30, windowMs: HOUR },
};

/** Why a request is not even looked at. */
export type Limited =
  /** Try again in this many whole seconds (at least 1). */
  | { kind: "wait"; retryAfterSeconds: number }
  /** The account's password login is locked: restore by phrase. */
  | { kind: "locked" };

export type Scope =
  "login-account" | "login-account-ip" | "words-account-ip" | "ip-failures" | "ip-creations" | "ip-messages";

/** Stands for "no address known" (an in-process call without a forwarded one). */
const NO_ADDRESS = "-";

function iso(date: Date): SQL {
  return sql`${date.toISOString()}::timestamptz`;
}

function waitUntil(until: Date, now: Date): Limited {
  return {
    kind: "wait",
    retryAfterSeconds: Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)),
  };
}

function windowFull(row: { hits: number; windowStartedAt: Date } | undefined, limit: WindowLimit, at: Date) {
  return (
    row !== undefined &&
    row.hits >= limit.limit &&
    row.windowStartedAt.getTime() + limit.windowMs > at.getTime()
  );
}

export interface RateLimiterOptions {
  db: AppDb;
  /** The backend secret: counter keys are HMACs under a key derived from it. */
  secret: string;
  policy: RateLimitPolicy;
  /** Default: the system clock. Tests move time with it. */
  now?: () => Date;
}

export interface Reservation {
  /** The checked attempt succeeded: its failure counters are reset, its slot handed back. */
  succeeded(): Promise<void>;
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** A counter's row as beforeWordsCheck weighs it. */
export interface RateLimitRow {
  key: string;
  hits: number;
  windowStartedAt: Date;
  blockedUntil: Date | null;
}

export function createRateLimiter(opts: RateLimiterOptions) {
  const { db, policy } = opts;
  const now = opts.now ?? (() => new Date());
  // A KeyObject, made once: createHmac with raw bytes would import the key again on every call.
  const hmacKey = createSecretKey(
    Buffer.from(
      hkdfSync(
        "sha256",
        Buffer.from(opts.secret, "utf8"),
        Buffer.alloc(0),
        "coinkeep rate-limit keys v1",
        32,
      ),
    ),
  );

  function keyOf(scope: Scope, ...parts: string[]): string {
    return createHmac("sha256", hmacKey)
      .update([scope, ...parts].join("\n"), "utf8")
      .digest("hex");
  }

  /**
   * One more failure of a backoff counter, unless it is blocked now. Returns
   * null when blocked (nothing changed), else the counter after the failure.
   */
  async function takeBackoff(scope: Scope, key: string, at: Date) {
    const forgetBefore = new Date(at.getTime() - policy.forgetAfterMs);
    const next = sql`(CASE WHEN ${rateLimits.updatedAt} < ${iso(forgetBefore)} THEN 1 ELSE ${rateLimits.hits} + 1 END)`;
    const blockFor = (n: SQL) =>
      sql`(CASE WHEN ${n} >= ${policy.freeFailures} THEN ${iso(at)} + least(${policy.backoffBaseMs}::float8 * power(2::float8, (${n} - ${policy.freeFailures})::float8), ${policy.backoffMaxMs}::float8) * interval '1 millisecond' ELSE NULL END)`;
    const rows = await db
      .insert(rateLimits)
      .values({
        key,
        scope,
        hits: 1,
        windowStartedAt: at,
        blockedUntil: 1 >= policy.freeFailures ? new Date(at.getTime() + policy.backoffBaseMs) : null,
        updatedAt: at,
      })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: { hits: next, blockedUntil: blockFor(next), updatedAt: iso(at) },
        setWhere: or(isNull(rateLimits.blockedUntil), sql`${rateLimits.blockedUntil} <= ${iso(at)}`),
      })
      .returning({ hits: rateLimits.hits, blockedUntil: rateLimits.blockedUntil });
    return rows[0] ?? null;
  }

  /** One more consecutive failure of a capped counter, unless it is at the cap (null). */
  async function takeCapped(scope: Scope, key: string, cap: number, at: Date) {
    const rows = await db
      .insert(rateLimits)
      .values({ key, scope, hits: 1, windowStartedAt: at, updatedAt: at })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: { hits: sql`${rateLimits.hits} + 1`, updatedAt: iso(at) },
        setWhere: lt(rateLimits.hits, cap),
      })
      .returning({ hits: rateLimits.hits });
    return rows[0] ?? null;
  }

  /** One more attempt in a window counter, unless the window is full (null, nothing changed). */
  async function takeWindow(scope: Scope, key: string, limit: WindowLimit, at: Date) {
    const startedBefore = iso(new Date(at.getTime() - limit.windowMs));
    const expired = sql`${rateLimits.windowStartedAt} <= ${startedBefore}`;
    const rows = await db
      .insert(rateLimits)
      .values({ key, scope, hits: 1, windowStartedAt: at, updatedAt: at })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: {
          hits: sql`CASE WHEN ${expired} THEN 1 ELSE ${rateLimits.hits} + 1 END`,
          windowStartedAt: sql`CASE WHEN ${expired} THEN ${iso(at)} ELSE ${rateLimits.windowStartedAt} END`,
          updatedAt: iso(at),
        },
        setWhere: or(expired, lt(rateLimits.hits, limit.limit)),
      })
      .returning({ hits: rateLimits.hits });
    return rows[0] ?? null;
  }

  /** Hands a window slot back (a reserved attempt that turned out not to count). */
  async function giveBack(key: string) {
    await db
      .update(rateLimits)
      .set({ hits: sql`greatest(${rateLimits.hits} - 1, 0)` })
      .where(eq(rateLimits.key, key));
  }

  async function reset(keys: string[]) {
    if (keys.length > 0) await db.delete(rateLimits).where(inArray(rateLimits.key, keys));
  }

  // beforeWordsCheck's read runs on every signed-in call (pages poll): prepared once, so it is
  // built once and planned once per connection. Without an address, both keys are the pair's.
  const readWordsCheckRows = db
    .select()
    .from(rateLimits)
    .where(or(eq(rateLimits.key, sql.placeholder("pairKey")), eq(rateLimits.key, sql.placeholder("ipKey"))))
    .prepare("coinkeep_rate_limits_words_check");

  async function readRows(keys: string[]) {
    const found = await db.select().from(rateLimits).where(inArray(rateLimits.key, keys));
    return new Map(found.map((row) => [row.key, row]));
  }

  /** How long until a full window frees a slot. */
  async function windowWait(key: string, limit: WindowLimit, at: Date): Promise<Limited> {
    const row = (await readRows([key])).get(key);
    const ends = row ? new Date(row.windowStartedAt.getTime() + limit.windowMs) : at;
    return waitUntil(ends, at);
  }

  async function backoffWait(key: string, at: Date): Promise<Limited> {
    const row = (await readRows([key])).get(key);
    return waitUntil(row?.blockedUntil ?? at, at);
  }

  const keys = {
    account: (email: string) => keyOf("login-account", normaliseEmail(email)),
    loginAccountIp: (email: string, ip: string | null) =>
      keyOf("login-account-ip", normaliseEmail(email), ip ?? NO_ADDRESS),
    wordsAccountIp: (email: string, ip: string | null) =>
      keyOf("words-account-ip", normaliseEmail(email), ip ?? NO_ADDRESS),
    ipFailures: (ip: string) => keyOf("ip-failures", ip),
  };

  /** The rows beforeWordsCheck reads: the (account, address) backoff and the address's failure window. */
  function wordsCheckKeys(email: string, ip: string | null): { pairKey: string; ipKey: string | null } {
    return { pairKey: keys.wordsAccountIp(email, ip), ipKey: ip === null ? null : keys.ipFailures(ip) };
  }

  /**
   * beforeWordsCheck's answer over its rows (wordsCheckKeys) as read: by itself, or
   * within a signed-in page's one statement (record 051), which reads them beside the credentials.
   */
  async function wordsCheckVerdict(
    email: string,
    ip: string | null,
    rows: readonly RateLimitRow[],
  ): Promise<Limited | { hadFailures: boolean }> {
    const at = now();
    const { pairKey, ipKey } = wordsCheckKeys(email, ip);
    const found = new Map(rows.map((row) => [row.key, row]));
    const pair = found.get(pairKey);
    if (pair?.blockedUntil && pair.blockedUntil > at) return waitUntil(pair.blockedUntil, at);
    if (ipKey !== null && windowFull(found.get(ipKey), policy.ipFailures, at)) {
      return windowWait(ipKey, policy.ipFailures, at);
    }
    return { hadFailures: pair !== undefined };
  }

  return {
    keys,

    /**
     * Before a password is checked (call 2): reserves the attempt in the
     * address's failure window, the (account, address) backoff and the
     * account's cap, in that order; any refusal hands back what was taken.
     * Without an address (an in-process caller that forwarded none) only the
     * account's counters apply.
     */
    async beginPasswordCheck(email: string, ip: string | null): Promise<Limited | Reservation> {
      const at = now();
      const accountKey = keys.account(email);
      const pairKey = keys.loginAccountIp(email, ip);
      const ipKey = ip === null ? null : keys.ipFailures(ip);
      // A locked account is refused without touching any counter.
      const account = (await readRows([accountKey])).get(accountKey);
      if (account && account.hits >= policy.accountLockFailures) return { kind: "locked" };
      if (ipKey !== null && !(await takeWindow("ip-failures", ipKey, policy.ipFailures, at))) {
        return windowWait(ipKey, policy.ipFailures, at);
      }
      if (!(await takeBackoff("login-account-ip", pairKey, at))) {
        if (ipKey !== null) await giveBack(ipKey);
        return backoffWait(pairKey, at);
      }
      if (!(await takeCapped("login-account", accountKey, policy.accountLockFailures, at))) {
        if (ipKey !== null) await giveBack(ipKey);
        return { kind: "locked" };
      }
      return {
        async succeeded() {
          // NIST SP 800-63B §5.2.2: a success clears the account's failures from this address.
          await reset([accountKey, pairKey]);
          if (ipKey !== null) await giveBack(ipKey);
        },
      };
    },

    /**
     * Before an e-mail + words check (calls 3–8, 10, 11): refused while the
     * (account, address) backoff runs or the address's failure window is full.
     * A read only: a correct phrase costs no write (signed-in pages poll).
     */
    async beforeWordsCheck(email: string, ip: string | null): Promise<Limited | { hadFailures: boolean }> {
      const { pairKey, ipKey } = wordsCheckKeys(email, ip);
      const rows = await readWordsCheckRows.execute({ pairKey, ipKey: ipKey ?? pairKey });
      return wordsCheckVerdict(email, ip, rows);
    },

    wordsCheckKeys,
    wordsCheckVerdict,

    /** A words check failed: counted for the (account, address) pair and the address. */
    async wordsCheckFailed(email: string, ip: string | null): Promise<Limited | null> {
      const at = now();
      const pairKey = keys.wordsAccountIp(email, ip);
      const pair = await takeBackoff("words-account-ip", pairKey, at);
      if (!pair) return backoffWait(pairKey, at);
      if (ip !== null) {
        const ipKey = keys.ipFailures(ip);
        if (!(await takeWindow("ip-failures", ipKey, policy.ipFailures, at))) {
          return windowWait(ipKey, policy.ipFailures, at);
        }
      }
      return null;
    },

    /** A words check succeeded after failures from this address: they are forgotten. */
    async wordsCheckSucceeded(email: string, ip: string | null): Promise<void> {
      await reset([keys.wordsAccountIp(email, ip)]);
    },

    /**
     * A restore by phrase (call 11) succeeded: the account's password failures
     * (the lock included) and this address's counters for it start again.
     */
    async restored(email: string, ip: string | null): Promise<void> {
      await reset([keys.account(email), keys.loginAccountIp(email, ip), keys.wordsAccountIp(email, ip)]);
    },

    /**
     * An operator's unlock: the account-wide counter (the lock) only. Returns
     * the failures it cleared (0: there was nothing to unlock).
     */
    async unlockAccount(email: string): Promise<number> {
      const key = keys.account(email);
      const cleared = await db
        .delete(rateLimits)
        .where(eq(rateLimits.key, key))
        .returning({ hits: rateLimits.hits });
      return cleared[0]?.hits ?? 0;
    },

    /**
     * The account-wide counters of these accounts (for the operator's list of
     * locked accounts): consecutive failures and whether logins are locked.
     */
    async accountStates(
      emails: readonly string[],
    ): Promise<Map<string, { failures: number; locked: boolean }>> {
      const byKey = new Map(emails.map((email) => [keys.account(email), email]));
      const rows = await readRows([...byKey.keys()]);
      const states = new Map<string, { failures: number; locked: boolean }>();
      for (const [key, row] of rows) {
        const email = byKey.get(key);
        if (email === undefined || row.hits <= 0) continue;
        states.set(email, {
          failures: row.hits,
          locked: row.hits >= policy.accountLockFailures,
        });
      }
      return states;
    },

    /** One account creation (call 1) from this address; null address: not limited. */
    async takeCreation(ip: string | null): Promise<Limited | null> {
      return takeIpWindow("ip-creations", ip, policy.ipCreations);
    },

    /** One support or contact message (call 12) from this address. */
    async takeMessage(ip: string | null): Promise<Limited | { giveBack(): Promise<void> } | null> {
      const limited = await takeIpWindow("ip-messages", ip, policy.ipMessages);
      if (limited || ip === null) return limited;
      const key = keyOf("ip-messages", ip);
      return { giveBack: () => giveBack(key) };
    },

    /**
     * Drops counters that no longer hold anything back: windows and backoffs
     * quiet for longer than they matter. The account-wide counters stay (a
     * consecutive count, NIST's limit) until a success or a restore.
     */
    async purge(): Promise<number> {
      const at = now().getTime();
      const longestWindow = Math.max(
        policy.ipFailures.windowMs,
        policy.ipCreations.windowMs,
        policy.ipMessages.windowMs,
      );
      const quiet = new Date(at - Math.max(longestWindow, policy.forgetAfterMs, policy.backoffMaxMs));
      const deleted = await db
        .delete(rateLimits)
        .where(
          and(
            inArray(rateLimits.scope, [
              "login-account-ip",
              "words-account-ip",
              "ip-failures",
              "ip-creations",
              "ip-messages",
            ]),
            lt(rateLimits.updatedAt, quiet),
          ),
        )
        .returning({ key: rateLimits.key });
      return deleted.length;
    },
  };

  async function takeIpWindow(scope: Scope, ip: string | null, limit: WindowLimit): Promise<Limited | null> {
    if (ip === null) return null;
    const at = now();
    const key = keyOf(scope, ip);
    if (await takeWindow(scope, key, limit, at)) return null;
    return windowWait(key, limit, at);
  }
}

export function isLimited(value: unknown): value is Limited {
  return (
    typeof value === "object" &&
    value !== null &&
    "kind" in value &&
    (value.kind === "wait" || value.kind === "locked")
  );
}
