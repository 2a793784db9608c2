// What the backend does of its own accord, beside answering calls (record 045):
//
// - at start, issuing's catch-up (record 039): each configured account key is logged with
//   its fingerprint and index-0 address, then requests left waiting (a key configured since,
//   say) are issued, before the process serves;
// - sender addresses of support and contact messages are kept 90 days (record 011), then
//   cleared: at start and daily;
// - staff sessions past their idle or absolute deadline (an abandoned sign-in's password
//   step, a tab closed without signing out) are dropped hourly (record 047);
// - an embedded database (PGlite, which has no autovacuum) is vacuumed and analyzed a second
//   after start and hourly (record 036).
//
// `start()` runs them; `stop()` ends them all and waits for one that is running, so the
// database can be closed and the process exits by itself.
import { TICKERS, isTicker } from "../../common/coins.ts";
import { log } from "../../common/log.ts";
import { deriveAddress } from "./custody/derive.ts";
import type { AppDb } from "./db/index.ts";
import { issueWaiting, poolLowMessage, type IssuingPolicy } from "./domain/issuing.ts";
import { forgetSenderAddresses } from "./domain/messages.ts";
import { purgeStaffSessions } from "./domain/staff.ts";

/** How long the sender address of a support or contact message is kept (record 011). */
const IP_RETENTION_MS = 90 * 24 * 3600_000;

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

export interface JobsOptions {
  db: AppDb;
  /** The account keys, USDT's network and the pool's low-water mark: what catch-up issues with. */
  issuing: IssuingPolicy;
  /** PGlite's VACUUM (ANALYZE) (Database.maintain); absent with PostgreSQL, whose autovacuum does it. */
  maintain?: (() => Promise<void>) | undefined;
}

export interface Jobs {
  /** Issues the waiting requests (resolves once done), then starts the repeating jobs. */
  start(): Promise<void>;
  /** Ends the repeating jobs and waits for a run in progress; call it before closing the database. */
  stop(): Promise<void>;
}

/** A job run now or after `first` ms, then every `every` ms, until stopped. */
export interface Repeating {
  stop(): Promise<void>;
}

export function createJobs(opts: JobsOptions): Jobs {
  let repeating: Repeating[] = [];
  return {
    async start() {
      await catchUpIssuing(opts.db, opts.issuing);
      repeating = [
        repeat(() => forgetOldSenderAddresses(opts.db), { first: 0, every: DAY_MS }),
        repeat(() => dropEndedStaffSessions(opts.db), { first: 0, every: HOUR_MS }),
        ...(opts.maintain ? [maintainDatabase(opts.maintain)] : []),
      ];
    },
    async stop() {
      await Promise.all(repeating.splice(0).map((job) => job.stop()));
    },
  };
}

/**
 * Keeps an embedded database vacuumed: `maintain` a second from now and hourly, each run
 * logged with its duration. The backend does it for its database; a process that fronts a
 * remote backend still holds a database of its own (web sessions) and runs this for it.
 */
export function maintainDatabase(maintain: () => Promise<void>): Repeating {
  return repeat(
    async () => {
      const started = performance.now();
      try {
        await maintain();
        log.info("database maintained", { ms: Math.round(performance.now() - started) });
      } catch (error) {
        log.warn("database maintenance failed", { error: error instanceof Error ? error.name : "unknown" });
      }
    },
    { first: 1_000, every: HOUR_MS },
  );
}

/**
 * Record 039. An xpub carries no coin, so each configured key is logged with its
 * fingerprint and its index-0 address: the operator checks that address against the
 * wallet the key came from. Then requests left waiting (a key configured since, say)
 * are issued. Only public facts are logged.
 */
async function catchUpIssuing(db: AppDb, policy: IssuingPolicy): Promise<void> {
  for (const [coin, configured] of Object.entries(policy.keys)) {
    if (!configured || !isTicker(coin)) continue;
    log.info("account key", {
      coin,
      ...(coin === "USDT" ? { network: policy.usdtNetwork } : {}),
      fingerprint: configured.fingerprint,
      index0: deriveAddress(coin, configured.key, 0, { usdtNetwork: policy.usdtNetwork }),
    });
  }
  for (const coin of TICKERS) {
    try {
      const caught = await db.transaction((tx) => issueWaiting(tx, coin, policy, "start"));
      if (caught.issued.length > 0)
        log.info("issued waiting requests", { coin, issued: caught.issued.length, waiting: caught.waiting });
      if (caught.poolLeft !== undefined && caught.poolLeft < policy.poolLowWater) {
        log.warn(poolLowMessage(coin, caught.poolLeft), {
          coin,
          left: caught.poolLeft,
          lowWater: policy.poolLowWater,
        });
      }
    } catch (error) {
      log.warn("could not issue waiting requests", {
        coin,
        error: error instanceof Error ? error.name : "unknown",
      });
    }
  }
}

/** Record 011: clears the sender addresses older than IP_RETENTION_MS. */
async function forgetOldSenderAddresses(db: AppDb): Promise<void> {
  try {
    const cleared = await forgetSenderAddresses(db, new Date(Date.now() - IP_RETENTION_MS));
    if (cleared > 0) log.info("cleared sender addresses", { cleared });
  } catch (error) {
    log.warn("could not clear sender addresses", {
      error: error instanceof Error ? error.name : "unknown",
    });
  }
}

/** Record 047: staff sessions no read will find live again. */
async function dropEndedStaffSessions(db: AppDb): Promise<void> {
  try {
    const dropped = await purgeStaffSessions(db);
    if (dropped > 0) log.info("dropped ended staff sessions", { dropped });
  } catch (error) {
    log.warn("could not drop ended staff sessions", {
      error: error instanceof Error ? error.name : "unknown",
    });
  }
}

/**
 * Runs `run` now (`first` 0) or after `first` ms, and every `every` ms from now. Its timers
 * never keep the process alive; `stop` clears them and waits for runs in progress. `run`
 * handles its own errors.
 */
function repeat(run: () => Promise<void>, when: { first: number; every: number }): Repeating {
  const inFlight = new Set<Promise<void>>();
  const go = () => {
    const running = run().finally(() => inFlight.delete(running));
    inFlight.add(running);
  };
  const timers: NodeJS.Timeout[] = [setInterval(go, when.every)];
  if (when.first === 0) go();
  else timers.push(setTimeout(go, when.first));
  for (const timer of timers) timer.unref();
  return {
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}
