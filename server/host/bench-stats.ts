// The bench's figures of each server process (issue 29): what tells a slow server from a slow
// machine. Off by default: only BENCH_STATS=1 creates any of it, and even then the figures
// leave the process only over the IPC channel of the process that started the server (the
// bench forks it); there is no HTTP path and no socket, so nothing a client can reach, and a
// server started without an IPC parent (npm start, systemd) has nobody to answer.
//
// Each process keeps, from the last reset: its event loop's delay (perf_hooks), its GC pauses,
// its waits for the database (a pool connection, or PGlite's queue: db/index.ts onWait), and
// every answered request's time from arrival to its last byte (event streams left out: they
// last as long as the page). Asked, it answers them and optionally starts afresh.
// With WORKERS > 1 the primary asks every worker over node:cluster's channel and answers
// the bench with all of them; one process answers for itself.
import cluster, { type Worker } from "node:cluster";
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import type { DatabaseWait } from "../backend/db/index.ts";

export const BENCH_STATS_ASK = "coinkeep:bench-stats";
export const BENCH_STATS_ANSWER = "coinkeep:bench-stats-answer";

/** The bench asks: every process's figures since the last reset; `reset` starts them afresh. */
export interface BenchStatsAsk {
  type: typeof BENCH_STATS_ASK;
  id: number;
  reset: boolean;
}

export interface BenchStatsAnswer {
  type: typeof BENCH_STATS_ANSWER;
  id: number;
  processes: ProcessStats[];
  /** Workers that did not answer within 5 s (a cluster's primary only). */
  missing: number;
}

/** One server process's figures since its last reset; times in ms. */
export interface ProcessStats {
  pid: number;
  /** How long the figures cover. */
  ms: number;
  loopDelay: { p50: number; p99: number; max: number };
  gc: { count: number; totalMs: number; maxMs: number };
  database: {
    driver: "postgres" | "pglite";
    /** Queries (or transactions) that asked for the database, and those that had to queue. */
    asked: number;
    queued: number;
    /** The most waiting ahead of one ask. */
    maxAhead: number;
    /** Each ask's wait, in ms, rounded to 0.01 ms (for the level's percentiles). */
    waits: number[];
  };
  /** Each answered request's time from arrival to its last byte, ms (0.01), event streams left out. */
  requests: number[];
  rssKiB: number;
}

export interface BenchStats {
  /** A request answered in `ms` (finish). */
  request(ms: number): void;
  /** A wait for the database (openDatabase's onWait). */
  wait(wait: DatabaseWait): void;
  snapshot(reset: boolean): ProcessStats;
}

/** Values kept per figure and process between two resets; beyond it the rest are dropped. */
const KEEP = 500_000;
const hundredths = (ms: number) => Math.round(ms * 100) / 100;
/** A delay histogram's nanoseconds as ms (0.01); 0 when it recorded nothing. */
const ns = (value: number) => (Number.isFinite(value) ? Math.round(value / 10_000) / 100 : 0);

export function createBenchStats(driver: "postgres" | "pglite"): BenchStats {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let since = performance.now();
  let gc = { count: 0, totalMs: 0, maxMs: 0 };
  let db = { asked: 0, queued: 0, maxAhead: 0, waits: [] as number[] };
  let requests: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as PerformanceEntry[]) {
      gc.count++;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    request(ms) {
      if (requests.length < KEEP) requests.push(hundredths(ms));
    },
    wait(wait) {
      db.asked++;
      if (wait.queued) db.queued++;
      db.maxAhead = Math.max(db.maxAhead, wait.ahead);
      if (db.waits.length < KEEP) db.waits.push(hundredths(wait.ms));
    },
    snapshot(reset) {
      const stats: ProcessStats = {
        pid: process.pid,
        ms: Math.round(performance.now() - since),
        loopDelay: {
          p50: ns(loop.percentile(50)),
          p99: ns(loop.percentile(99)),
          max: ns(loop.max),
        },
        gc: { count: gc.count, totalMs: hundredths(gc.totalMs), maxMs: hundredths(gc.maxMs) },
        database: { driver, ...db },
        requests,
        rssKiB: Math.round(process.memoryUsage.rss() / 1024),
      };
      if (reset) {
        loop.reset();
        since = performance.now();
        gc = { count: 0, totalMs: 0, maxMs: 0 };
        db = { asked: 0, queued: 0, maxAhead: 0, waits: [] };
        requests = [];
      }
      return stats;
    },
  };
}

function isAsk(message: unknown): message is BenchStatsAsk {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { type?: unknown }).type === BENCH_STATS_ASK &&
    typeof (message as { id?: unknown }).id === "number"
  );
}

/**
 * A serving process (one alone, or a cluster's worker): answers its parent's asks (the bench,
 * or the primary) with its own figures. Without an IPC parent it never hears one.
 */
export function answerBenchStats(stats: BenchStats): void {
  process.on("message", (message: unknown) => {
    if (!isAsk(message)) return;
    const answer: BenchStatsAnswer = {
      type: BENCH_STATS_ANSWER,
      id: message.id,
      processes: [stats.snapshot(message.reset)],
      missing: 0,
    };
    process.send?.(answer);
  });
}

/** A cluster's primary: passes each ask of the bench to every worker and answers with all their figures. */
export function relayBenchStats(): void {
  const waiting = new Map<number, (worker: Worker, answer: BenchStatsAnswer) => void>();
  cluster.on("message", (worker, message: unknown) => {
    const answer = message as Partial<BenchStatsAnswer> | null;
    if (answer?.type === BENCH_STATS_ANSWER && typeof answer.id === "number") {
      waiting.get(answer.id)?.(worker, answer as BenchStatsAnswer);
    }
  });
  let next = 0;
  process.on("message", (message: unknown) => {
    if (!isAsk(message)) return;
    const id = next++;
    const asked = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w?.isConnected());
    const processes: ProcessStats[] = [];
    const pending = new Set(asked.map((w) => w.id));
    const finish = () => {
      clearTimeout(timer);
      waiting.delete(id);
      const answer: BenchStatsAnswer = {
        type: BENCH_STATS_ANSWER,
        id: message.id,
        processes,
        missing: pending.size,
      };
      process.send?.(answer);
    };
    const timer = setTimeout(finish, 5_000);
    waiting.set(id, (worker, answer) => {
      if (!pending.delete(worker.id)) return;
      processes.push(...answer.processes);
      if (pending.size === 0) finish();
    });
    if (pending.size === 0) return finish();
    for (const worker of asked) worker.send({ type: BENCH_STATS_ASK, id, reset: message.reset });
  });
}
