// Issuing deposit addresses without an operator (issue 16, record 039). A requested wallet
// gets its address in the transaction that creates it: derived from the coin's configured
// account key at the next index of its counter, or the oldest free address of the coin's
// pool. A coin set to 'manual', an 'issuing' pause (of the coin or the user), or a coin with
// neither key nor free pool address leaves the wallet requested for `ops issue-address`;
// `issueWaiting` catches such requests up once the coin can issue again.
//
// Index order: custody_index_counters' row is taken with INSERT … ON CONFLICT DO UPDATE, so
// its row lock orders concurrent requests of every server process, and a request that rolls
// back gives its index back with it: the indexes handed out are consecutive.
//
// These are rules of the domain (they read pauses, write audit rows, lock wallets), so they
// live here; custody/ below holds only the keys and their derivation, and imports no rule.
import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import type { UsdtNetwork } from "../../../common/addresses.ts";
import type { Ticker } from "../../../common/coins.ts";
import { log } from "../../../common/log.ts";
import type { AppDb } from "../db/index.ts";
import {
  addressPool,
  auditLog,
  custodyIndexCounters,
  custodySettings,
  wallets,
  type Wallet,
} from "../db/schema.ts";
import { activePause, type ActivePause } from "./controls.ts";
import {
  deriveAddress,
  KEYED_COINS,
  MAX_ADDRESS_INDEX,
  type ConfiguredKeys,
  type KeyedCoin,
} from "../custody/derive.ts";

/** What issuing needs to know of the configuration. */
export interface IssuingPolicy {
  /** ACCOUNT_KEY_<COIN>, parsed. */
  keys: ConfiguredKeys;
  usdtNetwork: UsdtNetwork;
  /** Fewer free pool addresses than this is "low" (POOL_LOW_WATER). */
  poolLowWater: number;
}

/** No keys: every coin issues from its pool, if it has one. */
export const NO_KEYS: IssuingPolicy = { keys: {}, usdtNetwork: "erc20", poolLowWater: 20 };

/** The audit actor of automatic issues. */
export const SYSTEM_ACTOR = "system";

/** How a coin issues now, before any user's pause. */
export type CoinIssuing =
  | { mode: "derived"; fingerprint: string; nextIndex: number }
  | { mode: "pool"; free: number }
  | { mode: "manual"; by: string; since: Date }
  | { mode: "none" };

export type IssueOutcome =
  | {
      issued: true;
      wallet: Wallet;
      source: "derived" | "pool";
      /** Derived: the key's fingerprint and the index. */
      keyId?: string;
      index?: number;
      /** Pool: the free addresses left after this one. */
      poolLeft?: number;
    }
  | { issued: false; why: "manual" | "paused" | "no-source"; pause?: ActivePause };

export function isKeyedCoin(coin: Ticker): coin is KeyedCoin {
  return (KEYED_COINS as readonly Ticker[]).includes(coin);
}

/** The coin's configured key, or undefined. */
export function keyOf(policy: IssuingPolicy, coin: Ticker) {
  return isKeyedCoin(coin) ? policy.keys[coin] : undefined;
}

/** The coin's policy row ('manual' with who set it), or undefined for 'auto' (the default). */
export async function manualSetting(db: AppDb, coin: Ticker) {
  const [row] = await db.select().from(custodySettings).where(eq(custodySettings.coin, coin));
  return row && row.issuing === "manual" ? { by: row.updatedBy, since: row.updatedAt } : undefined;
}

/** Free (untaken) pool addresses of a coin. */
export async function freePoolCount(db: AppDb, coin: Ticker): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(addressPool)
    .where(and(eq(addressPool.coin, coin), isNull(addressPool.walletId)));
  return Number(row?.n ?? 0);
}

/** The next index the coin's key would hand out (0 before its first). */
export async function nextIndexOf(db: AppDb, coin: Ticker, keyId: string): Promise<number> {
  const [row] = await db
    .select({ next: custodyIndexCounters.nextIndex })
    .from(custodyIndexCounters)
    .where(and(eq(custodyIndexCounters.coin, coin), eq(custodyIndexCounters.keyId, keyId)));
  return Number(row?.next ?? 0);
}

/** How the coin issues now (a key wins over a pool; 'manual' over both). */
export async function coinIssuing(db: AppDb, coin: Ticker, policy: IssuingPolicy): Promise<CoinIssuing> {
  const manual = await manualSetting(db, coin);
  if (manual) return { mode: "manual", ...manual };
  const key = keyOf(policy, coin);
  if (key)
    return {
      mode: "derived",
      fingerprint: key.fingerprint,
      nextIndex: await nextIndexOf(db, coin, key.fingerprint),
    };
  const free = await freePoolCount(db, coin);
  return free > 0 ? { mode: "pool", free } : { mode: "none" };
}

/** An address some wallet of the coin already has, or a pool row of the coin holds. */
async function addressInUse(tx: AppDb, coin: Ticker, address: string): Promise<boolean> {
  const [wallet] = await tx
    .select({ id: wallets.id })
    .from(wallets)
    .where(and(eq(wallets.coin, coin), eq(wallets.address, address)))
    .limit(1);
  if (wallet) return true;
  const [pooled] = await tx
    .select({ id: addressPool.id })
    .from(addressPool)
    .where(and(eq(addressPool.coin, coin), eq(addressPool.address, address)))
    .limit(1);
  return pooled !== undefined;
}

/** The next index of the key: the counter row's lock orders concurrent takers. */
async function takeIndex(tx: AppDb, coin: Ticker, keyId: string): Promise<number> {
  const [row] = await tx
    .insert(custodyIndexCounters)
    .values({ coin, keyId, nextIndex: 1 })
    .onConflictDoUpdate({
      target: [custodyIndexCounters.coin, custodyIndexCounters.keyId],
      set: { nextIndex: sql`${custodyIndexCounters.nextIndex} + 1`, updatedAt: sql`now()` },
    })
    .returning({ next: custodyIndexCounters.nextIndex });
  const index = Number(row?.next) - 1;
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_ADDRESS_INDEX) {
    throw new Error(
      `The ${coin} account key has no address index left (all ${MAX_ADDRESS_INDEX + 1} are used).`,
    );
  }
  return index;
}

// An address already in use (an operator issued it by hand, say, from the same account
// before the key was configured) is skipped: its index is spent, and the next one tried.
const MAX_SKIPS = 1000;

async function setAddress(
  tx: AppDb,
  walletId: string,
  values: Pick<Wallet, "address" | "addressSource" | "derivationKey" | "derivationIndex">,
): Promise<Wallet> {
  const [updated] = await tx
    .update(wallets)
    .set({ ...values, issuedAt: sql`now()` })
    .where(and(eq(wallets.id, walletId), isNull(wallets.address)))
    .returning();
  // The caller holds the wallet's row (just inserted, or locked), so it is still requested.
  if (!updated) throw new Error(`wallet ${walletId} was not waiting for an address`);
  return updated;
}

/**
 * Issues a requested wallet its address if its coin issues automatically, inside the
 * caller's transaction `tx` (which must hold the wallet's row: it created or locked it),
 * with its audit_log row (actor 'system'). `trigger` says what set it off, for the audit.
 */
export async function issueAutomatically(
  tx: AppDb,
  wallet: { id: string; userId: string; coin: Ticker },
  policy: IssuingPolicy,
  trigger: string,
): Promise<IssueOutcome> {
  if (await manualSetting(tx, wallet.coin)) return { issued: false, why: "manual" };
  const pause = await activePause(tx, "issuing", { coin: wallet.coin, userId: wallet.userId });
  if (pause) return { issued: false, why: "paused", pause };

  const key = keyOf(policy, wallet.coin);
  if (key) {
    for (let skips = 0; ; skips++) {
      const index = await takeIndex(tx, wallet.coin, key.fingerprint);
      const address = deriveAddress(wallet.coin, key.key, index, { usdtNetwork: policy.usdtNetwork });
      if (await addressInUse(tx, wallet.coin, address)) {
        if (skips >= MAX_SKIPS)
          throw new Error(`${MAX_SKIPS} derived ${wallet.coin} addresses in a row are in use`);
        log.warn("derived address already in use; skipping its index", { coin: wallet.coin, index });
        continue;
      }
      const issued = await setAddress(tx, wallet.id, {
        address,
        addressSource: "derived",
        derivationKey: key.fingerprint,
        derivationIndex: index,
      });
      await tx.insert(auditLog).values({
        actor: SYSTEM_ACTOR,
        action: "wallet.issue-derived",
        subject: wallet.id,
        details: {
          userId: wallet.userId,
          coin: wallet.coin,
          address,
          keyId: key.fingerprint,
          index,
          trigger,
        },
      });
      return { issued: true, wallet: issued, source: "derived", keyId: key.fingerprint, index };
    }
  }

  // The oldest free address; one another transaction is taking is skipped, not waited for.
  const [free] = await tx
    .select({ id: addressPool.id, address: addressPool.address })
    .from(addressPool)
    .where(
      and(
        eq(addressPool.coin, wallet.coin),
        isNull(addressPool.walletId),
        sql`NOT EXISTS (SELECT 1 FROM ${wallets} WHERE ${wallets.coin} = ${addressPool.coin} AND ${wallets.address} = ${addressPool.address})`,
      ),
    )
    .orderBy(asc(addressPool.addedAt), asc(addressPool.id))
    .limit(1)
    .for("update", { skipLocked: true });
  if (!free) return { issued: false, why: "no-source" };
  await tx
    .update(addressPool)
    .set({ walletId: wallet.id, takenAt: sql`now()` })
    .where(eq(addressPool.id, free.id));
  const issued = await setAddress(tx, wallet.id, {
    address: free.address,
    addressSource: "pool",
    derivationKey: null,
    derivationIndex: null,
  });
  const poolLeft = await freePoolCount(tx, wallet.coin);
  await tx.insert(auditLog).values({
    actor: SYSTEM_ACTOR,
    action: "wallet.issue-pool",
    subject: wallet.id,
    details: {
      userId: wallet.userId,
      coin: wallet.coin,
      address: free.address,
      poolId: free.id,
      poolLeft,
      trigger,
    },
  });
  return { issued: true, wallet: issued, source: "pool", poolLeft };
}

/** The warning of a pool left below its low-water mark (logged once the take has committed). */
export function poolLowMessage(coin: Ticker, left: number): string {
  return `the ${coin} address pool is low: ${left} left`;
}

/** Logs the low-pool warning when a take left fewer free addresses than POOL_LOW_WATER. */
export function warnIfPoolLow(outcome: IssueOutcome, policy: IssuingPolicy): void {
  if (outcome.issued && outcome.poolLeft !== undefined && outcome.poolLeft < policy.poolLowWater) {
    log.warn(poolLowMessage(outcome.wallet.coin as Ticker, outcome.poolLeft), {
      coin: outcome.wallet.coin,
      left: outcome.poolLeft,
      lowWater: policy.poolLowWater,
    });
  }
}

export interface CatchUp {
  /** The wallets issued, oldest request first. */
  issued: { walletId: string; userId: string; address: string; source: "derived" | "pool"; index?: number }[];
  /** Requests of the coin still waiting (paused users, or the pool ran out). */
  waiting: number;
  /** Free pool addresses left, when a pool was drawn on. */
  poolLeft?: number;
}

/**
 * Issues the coin's waiting requests, oldest first, inside the caller's transaction
 * (the command that made the coin able to issue: pool add, issuing auto), each with its
 * audit row. Requests of paused users stay waiting; so do the rest once a pool runs out.
 */
export async function issueWaiting(
  tx: AppDb,
  coin: Ticker,
  policy: IssuingPolicy,
  trigger: string,
): Promise<CatchUp> {
  const waiting = await tx
    .select({ id: wallets.id, userId: wallets.userId })
    .from(wallets)
    .where(and(eq(wallets.coin, coin), isNull(wallets.address)))
    .orderBy(asc(wallets.requestedAt), asc(wallets.id))
    .for("update", { skipLocked: true });
  const result: CatchUp = { issued: [], waiting: 0 };
  let exhausted = false;
  for (const w of waiting) {
    if (exhausted) {
      result.waiting++;
      continue;
    }
    const outcome = await issueAutomatically(tx, { ...w, coin }, policy, trigger);
    if (outcome.issued) {
      result.issued.push({
        walletId: w.id,
        userId: w.userId,
        address: outcome.wallet.address ?? "",
        source: outcome.source,
        ...(outcome.index === undefined ? {} : { index: outcome.index }),
      });
      if (outcome.poolLeft !== undefined) result.poolLeft = outcome.poolLeft;
      continue;
    }
    result.waiting++;
    // The coin itself cannot issue (manual, paused, nothing left): the rest wait too.
    if (outcome.why !== "paused" || outcome.pause?.coin) exhausted = true;
  }
  return result;
}
