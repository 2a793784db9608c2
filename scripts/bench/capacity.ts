// Section 1, capacity: how many signed-in users (mix.ts) one machine carries
// with p99 latency under the limit and no errors. The user count steps up
// through `levels` until a level fails, then bisects between the last pass and
// the first failure. The load generator runs in its own process (load.ts).
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchStatsAnswer } from "../../server/host/bench-stats.ts";
import {
  classifyLevel,
  cpuShares,
  memoryPerStream,
  serverFigures,
  streamMemoryText,
  verdictText,
  type Classification,
  type CpuShares,
  type ServerFigures,
  type StreamMemory,
} from "./figures.ts";
import {
  cpuSnapshot,
  log,
  machineCpuMs,
  onCleanup,
  percentile,
  processCpuMs,
  processRssKiB,
  round,
  stopChild,
} from "./lib.ts";
import type { EntryStats, LoadCommand, LoadResult } from "./load.ts";
import { perUserPerMinute } from "./mix.ts";
import type { StreamsCommand, StreamsHeld, StreamsRecorded } from "./streams.ts";

export interface CapacitySettings {
  levels: number[];
  warmupSeconds: number;
  seconds: number;
  bisectSteps: number;
  p99LimitMs: number;
  sockets: number;
  maxOutstanding: number;
  /** Pause between levels, for the server to settle. */
  pauseSeconds: number;
  /** Every user holds an event stream for the whole level (record 033); false: the polling client. */
  streams: boolean;
  /** One change (a message to one account, reaching every user of it) every this many seconds. */
  eventEverySeconds: number;
  /** An event delivered later than this after its change started is an error. */
  eventLateMs: number;
}

export interface StreamFigures {
  /** Streams open at the level (one per user), and those the server refused or that dropped. */
  open: number;
  refused: number;
  dropped: number;
  /**
   * Server memory (RSS, all processes) per stream: its growth while the level's new streams
   * opened, over their number; or why there is none (figures.ts memoryPerStream).
   */
  memoryPerStream: StreamMemory;
  events: { delivered: number; late: number; missing: number; p50: number; p99: number; max: number };
}

export interface LevelReport extends Omit<LoadResult, "type"> {
  passed: boolean;
  streams?: StreamFigures;
  /** Share of one core used during the level: the server process, the load generator, the whole machine (of cores × 100). */
  cpu: { serverPct: number; loadGeneratorPct: number; machinePct: number; serverMsPerRequest: number };
  /** The p99 the level was judged by: the requests' and the event-answering count fetches' together, ms. */
  clientP99: number;
  /** The server processes' own figures over the recorded part (BENCH_STATS), or why there are none. */
  server: ServerFigures | { na: string };
  /** The load generator's and the stream holders' worst event-loop delay, ms. */
  generatorLag: { p99: number; max: number };
  /** Who used the machine over the recorded part, shares of all cores (figures.ts cpuShares). */
  machine?: CpuShares | undefined;
  /** Whose failure it was: the server's, its neighbours', or unexplained (figures.ts classifyLevel). */
  verdict: Classification;
}

export interface CapacityReport {
  users: number;
  settings: CapacitySettings;
  mix: Array<{ name: string; perMinute: number }>;
  levels: LevelReport[];
}

export interface CapacityTarget {
  base: string;
  /** The server process (it may be restarted between levels to add sessions). */
  serverPid(): number;
  /** Makes sure `users` sessions exist; returns the cookies added since the last call. */
  ensureSessions(users: number): Promise<string[]>;
  /** Changes something of capacity account `account` that its pages are told about (a message to it). */
  raiseEvent(account: number): Promise<void>;
  accounts: number;
  /** Every server process's own figures since the last reset (BENCH_STATS; lib.ts ServerHandle.stats). */
  serverStats(reset: boolean): Promise<BenchStatsAnswer | undefined>;
}

/** Streams one holder process keeps open (each is a socket; a process may hold 20,000 descriptors). */
const STREAMS_PER_HOLDER = 6_000;

/** A process holding users' event streams (streams.ts). */
class StreamHolder {
  private child: ChildProcess;
  private waiting: ((answer: StreamsHeld | StreamsRecorded) => void) | undefined;
  constructor() {
    this.child = fork(path.join(import.meta.dirname, "streams.ts"), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const forget = onCleanup(() => stopChild(this.child));
    this.child.once("exit", () => forget());
    this.child.on("message", (message: StreamsHeld | StreamsRecorded) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(message);
    });
  }
  get pid(): number {
    return this.child.pid ?? -1;
  }
  send(command: StreamsCommand): void {
    this.child.send(command);
  }
  ask<T extends StreamsHeld | StreamsRecorded>(command: StreamsCommand): Promise<T> {
    const answer = new Promise<T>(
      (resolve) => (this.waiting = resolve as (a: StreamsHeld | StreamsRecorded) => void),
    );
    this.child.send(command);
    return answer;
  }
  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

class LoadGenerator {
  private child: ChildProcess;
  private waiting: ((result: LoadResult | Error) => void) | undefined;

  constructor() {
    this.child = fork(path.join(import.meta.dirname, "load.ts"), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const forget = onCleanup(() => stopChild(this.child));
    this.child.once("exit", (code) => {
      forget();
      this.waiting?.(new Error(`the load generator exited (${code})`));
    });
    this.child.on("message", (message: LoadResult | { type: "error"; message: string }) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(message.type === "result" ? message : new Error(message.message));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  send(command: LoadCommand): void {
    this.child.send(command);
  }

  async run(command: Extract<LoadCommand, { type: "run" }>): Promise<LoadResult> {
    const answer = new Promise<LoadResult | Error>((resolve) => (this.waiting = resolve));
    this.child.send(command);
    const result = await answer;
    if (result instanceof Error) throw result;
    return result;
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/**
 * Waits `pauseSeconds`, then until the server answers a page within 100 ms
 * again (at most 30 s more): after an overloaded level it still has a backlog.
 */
async function settle(base: string, pauseSeconds: number): Promise<void> {
  await sleep(pauseSeconds * 1000);
  const until = performance.now() + 30_000;
  while (performance.now() < until) {
    const started = performance.now();
    try {
      const answer = await fetch(`${base}/login`);
      await answer.arrayBuffer();
      if (performance.now() - started < 100) return;
    } catch {
      // not answering yet
    }
    await sleep(500);
  }
}

export async function runCapacity(
  target: CapacityTarget,
  settings: CapacitySettings,
): Promise<CapacityReport> {
  const generator = new LoadGenerator();
  const holders: StreamHolder[] = [];
  const cookies: string[] = [];
  /** How many of `cookies` each holder has been given. */
  const given: number[] = [];
  const levels: LevelReport[] = [];
  try {
    generator.send({ type: "init", base: target.base, sockets: settings.sockets });

    /** Every user below `users` holds a stream (and only those); the figures of the holding. */
    const holdStreams = async (users: number) => {
      const needed = Math.ceil(users / STREAMS_PER_HOLDER);
      while (holders.length < needed) {
        const holder = new StreamHolder();
        holder.send({ type: "init", base: target.base, accounts: target.accounts });
        holders.push(holder);
        given.push(0);
      }
      const held = await Promise.all(
        holders.map((holder, k) => {
          const from = Math.min(users, k * STREAMS_PER_HOLDER);
          const to = Math.min(users, (k + 1) * STREAMS_PER_HOLDER);
          const fresh: Array<[number, string]> = [];
          for (let user = from + (given[k] ?? 0); user < to; user++) fresh.push([user, cookies[user] ?? ""]);
          if (fresh.length > 0) holder.send({ type: "cookies", entries: fresh });
          given[k] = Math.max(given[k] ?? 0, to - from);
          return holder.ask<StreamsHeld>({ type: "hold", from, to });
        }),
      );
      return {
        open: held.reduce((a, h) => a + h.open, 0),
        opened: held.reduce((a, h) => a + h.opened, 0),
        refused: held.reduce((a, h) => a + h.refused, 0),
        ms: Math.max(...held.map((h) => h.ms)),
      };
    };

    /** One change every eventEverySeconds, from `from` until `until` (performance.now()), to a random account. */
    const raiseEvents = async (from: number, until: number) => {
      await sleep(Math.max(0, from - performance.now()));
      while (performance.now() < until) {
        const account = Math.floor(Math.random() * target.accounts);
        const at = Date.now();
        for (const holder of holders) holder.send({ type: "expect", account, at });
        const next = performance.now() + settings.eventEverySeconds * 1000;
        await target
          .raiseEvent(account)
          .catch((error: unknown) => log(`capacity: a change failed: ${String(error)}`));
        await sleep(Math.max(0, next - performance.now()));
      }
    };

    const measure = async (users: number): Promise<LevelReport> => {
      const added = await target.ensureSessions(users);
      cookies.push(...added);
      if (added.length > 0) generator.send({ type: "cookies", cookies: added });
      const pid = target.serverPid();
      let streams: StreamFigures | undefined;
      let held = { open: 0, opened: 0, refused: 0, ms: 0 };
      let memory: StreamMemory = { na: "no streams" };
      if (settings.streams) {
        // The server's memory per stream: its growth while this level's new streams open (nothing
        // else runs then), over their number; only when enough open to outweigh the noise.
        // The holders count the streams they opened now: after a PGlite restart that is all of them.
        const rssBefore = processRssKiB(pid);
        held = await holdStreams(users);
        await sleep(1000);
        memory = memoryPerStream(rssBefore, processRssKiB(pid), held.opened);
        log(
          `capacity ${users} users: ${held.open} event streams open (${held.refused} refused) in ${held.ms} ms`,
        );
      }
      const serverBefore = processCpuMs(pid);
      const generatorBefore =
        processCpuMs(generator.pid) + holders.reduce((a, h) => a + processCpuMs(h.pid), 0);
      const machineBefore = machineCpuMs();
      for (const holder of holders) holder.send({ type: "record", on: true });
      const started = performance.now();
      // The server's own figures and who used the machine: over the recorded part only.
      let machineFrom = cpuSnapshot();
      const statsFrom = sleep(settings.warmupSeconds * 1000).then(async () => {
        machineFrom = cpuSnapshot();
        await target.serverStats(true);
      });
      const changes = settings.streams
        ? raiseEvents(
            started + settings.warmupSeconds * 1000,
            started + (settings.warmupSeconds + settings.seconds) * 1000 - settings.eventLateMs,
          )
        : Promise.resolve();
      const result = await generator.run({
        type: "run",
        users,
        warmupSeconds: settings.warmupSeconds,
        seconds: settings.seconds,
        maxOutstanding: settings.maxOutstanding,
        streams: settings.streams,
      });
      await changes;
      await sleep(settings.eventLateMs);
      const recorded = await Promise.all(
        holders.map((h) => h.ask<StreamsRecorded>({ type: "record", on: false })),
      );
      const machineAfter = machineCpuMs();
      await statsFrom;
      const machineTo = cpuSnapshot();
      const answer = await target.serverStats(false);
      const wall = result.wallMs;
      const { type: _type, ...figures } = result;
      let errors = Object.values(result.errors).reduce((a, b) => a + b, 0);
      let p99 = result.latencyMs.p99;
      if (settings.streams) {
        const deliveries = Float64Array.from(recorded.flatMap((r) => r.deliveries)).toSorted();
        const fetches = Float64Array.from(recorded.flatMap((r) => r.fetches)).toSorted();
        const fetchErrors: Record<string, number> = {};
        for (const r of recorded) {
          for (const [k, v] of Object.entries(r.fetchErrors)) fetchErrors[k] = (fetchErrors[k] ?? 0) + v;
        }
        streams = {
          open: held.open,
          refused: held.refused,
          dropped: recorded.reduce((a, r) => a + r.dropped, 0),
          memoryPerStream: memory,
          events: {
            delivered: deliveries.length,
            late: recorded.reduce((a, r) => a + r.late, 0),
            missing: recorded.reduce((a, r) => a + r.missing, 0),
            p50: round(percentile(deliveries, 50), 1),
            p99: round(percentile(deliveries, 99), 1),
            max: round(percentile(deliveries, 100), 1),
          },
        };
        const fetchStats: EntryStats = {
          name: "event: count fetch",
          requests: fetches.length,
          errors: Object.values(fetchErrors).reduce((a, b) => a + b, 0),
          p50: round(percentile(fetches, 50), 1),
          p99: round(percentile(fetches, 99), 1),
          max: round(percentile(fetches, 100), 1),
        };
        figures.byEntry = [...figures.byEntry, fetchStats];
        for (const [k, v] of Object.entries(fetchErrors)) figures.errors[`count fetch ${k}`] = v;
        if (streams.refused > 0) figures.errors["stream refused"] = streams.refused;
        if (streams.dropped > 0) figures.errors["stream dropped"] = streams.dropped;
        if (streams.events.late > 0) figures.errors["event late"] = streams.events.late;
        if (streams.events.missing > 0) figures.errors["event missing"] = streams.events.missing;
        errors +=
          fetchStats.errors +
          streams.refused +
          streams.dropped +
          streams.events.late +
          streams.events.missing;
        if (fetches.length > 0) p99 = Math.max(p99, fetchStats.p99);
      }
      const lags = [result.lag, ...recorded.map((r) => r.lag)];
      const generatorLag = {
        p99: Math.max(...lags.map((l) => l.p99)),
        max: Math.max(...lags.map((l) => l.max)),
      };
      const server: LevelReport["server"] = answer
        ? serverFigures(answer.processes, answer.missing)
        : { na: "the server did not answer (BENCH_STATS)" };
      const machine =
        machineFrom && machineTo ? cpuShares(machineFrom, machineTo, pid, process.pid) : undefined;
      const passed = !result.overloaded && errors === 0 && p99 < settings.p99LimitMs;
      const verdict = classifyLevel({
        passed,
        limitMs: settings.p99LimitMs,
        server: "na" in server ? undefined : server,
        // Answers the server gave, other than 200 (a lost session's redirect, a 5xx).
        serverErrors: Object.entries(figures.errors)
          .filter(([k]) => /(^|\s)\d{3}$/u.test(k))
          .reduce((a, [, v]) => a + v, 0),
        generatorLag,
        cpu: machine ?? { stealPct: 0, othersPct: 0 },
      });
      const generatorCpu = processCpuMs(generator.pid) + holders.reduce((a, h) => a + processCpuMs(h.pid), 0);
      const report: LevelReport = {
        ...figures,
        ...(streams ? { streams } : {}),
        passed,
        clientP99: p99,
        server,
        generatorLag,
        machine,
        verdict,
        cpu: {
          serverPct: round(((processCpuMs(pid) - serverBefore) / wall) * 100, 0),
          // The server's CPU per answered request (the level's rate held over its whole wall time).
          serverMsPerRequest: round(
            (processCpuMs(pid) - serverBefore) / ((result.perSecond * wall) / 1000),
            1,
          ),
          loadGeneratorPct: round(((generatorCpu - generatorBefore) / wall) * 100, 0),
          machinePct: round(
            ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
            0,
          ),
        },
      };
      levels.push(report);
      const slowest = result.byEntry.toSorted((a, b) => b.p99 - a.p99)[0];
      if (streams) {
        log(
          `capacity ${users} users: ${streams.open} streams, memory per stream ${streamMemoryText(streams.memoryPerStream)}; events delivered ` +
            `${streams.events.delivered} (p50 ${streams.events.p50} ms, p99 ${streams.events.p99} ms, late ${streams.events.late}, missing ${streams.events.missing})`,
        );
      }
      log(
        `capacity ${users} users: ${report.passed ? "pass" : "FAIL"}, ${result.perSecond} req/s, ` +
          `p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, errors ${errors}` +
          `${result.overloaded ? " (overloaded, cut short)" : ""}; slowest: ${slowest?.name} p99 ${slowest?.p99} ms; ` +
          `cpu server ${report.cpu.serverPct}% (${report.cpu.serverMsPerRequest} ms/request), load ${report.cpu.loadGeneratorPct}%, machine ${report.cpu.machinePct}%`,
      );
      log(
        `capacity ${users} users: server ${"na" in server ? server.na : `p99 ${server.p99} ms over ${server.requests} requests, loop delay max ${server.workers.map((w) => w.loopDelayMax).join("/")} ms, GC max ${server.workers.map((w) => w.gcMaxMs).join("/")} ms, database waits ${server.database.queued} queued (p99 ${server.database.waitP99} ms)`}; ` +
          `generator lag p99 ${generatorLag.p99} ms (max ${generatorLag.max}); steal ${machine?.stealPct ?? "?"}%, others ${machine?.othersPct ?? "?"}%: ${verdictText(verdict)}`,
      );
      await settle(target.base, settings.pauseSeconds);
      return report;
    };

    let passed = 0;
    let failed = Number.POSITIVE_INFINITY;
    for (const users of settings.levels) {
      const level = await measure(users);
      if (!level.passed) {
        failed = users;
        break;
      }
      passed = users;
    }
    for (let step = 0; step < settings.bisectSteps && Number.isFinite(failed); step++) {
      // Round to a readable number of users (multiples of 250, or 50 below 1,000).
      const grain = failed - passed > 1000 ? 250 : 50;
      const middle = Math.round((passed + failed) / 2 / grain) * grain;
      if (middle <= passed || middle >= failed) break;
      const level = await measure(middle);
      if (level.passed) passed = middle;
      else failed = middle;
    }
    return { users: passed, settings, mix: perUserPerMinute(settings.streams), levels };
  } finally {
    await generator.stop();
    await Promise.all(holders.map((h) => h.stop()));
  }
}
