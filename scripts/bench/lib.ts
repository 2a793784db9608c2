// Shared pieces of the benchmark harness: child processes that are always
// cleaned up, throw-away databases, the production server, percentiles and
// CPU accounting. Nothing here measures anything by itself.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import {
  BENCH_STATS_ANSWER,
  BENCH_STATS_ASK,
  type BenchStatsAnswer,
  type BenchStatsAsk,
} from "../../server/host/bench-stats.ts";
import { root, spawnHost } from "../host.ts";
import {
  parsePidStat,
  parseProcStat,
  type CpuSnapshot,
  type MachineTicks,
  type ProcessTicks,
} from "./figures.ts";

export { root };

// ---------------------------------------------------------------------------
// Cleanup: every child process and database registers an undo step; they run
// in reverse order at the end, on failure, and on SIGINT/SIGTERM.
// ---------------------------------------------------------------------------

type Undo = () => Promise<void> | void;
const undoSteps: Undo[] = [];

export function onCleanup(step: Undo): () => void {
  undoSteps.push(step);
  return () => {
    const at = undoSteps.indexOf(step);
    if (at >= 0) undoSteps.splice(at, 1);
  };
}

export async function cleanupAll(): Promise<void> {
  while (undoSteps.length > 0) {
    const step = undoSteps.pop();
    try {
      await step?.();
    } catch (error) {
      console.error(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

let signalled = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = true;
    console.error(`\n${signal}: cleaning up…`);
    void cleanupAll().finally(() => process.exit(130));
  });
}

/** Stops a child process: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const killed = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!killed) {
    child.kill("SIGKILL");
    await exited;
  }
}

/** A child process that is stopped at cleanup if it is still running. */
export function spawnTracked(
  command: string,
  args: string[],
  options: Parameters<typeof spawn>[2],
): ChildProcess {
  const child = spawn(command, args, options);
  const forget = onCleanup(() => stopChild(child));
  child.once("exit", forget);
  return child;
}

/** Runs a command to completion and returns its output; throws on a non-zero exit. */
export async function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  const child = spawnTracked(command, args, {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (exitCode) => resolve(exitCode));
  });
  if (code !== 0) {
    throw new Error(`${path.basename(command)} ${args[0] ?? ""} exited with ${code}: ${stderr.slice(-2000)}`);
  }
  return { stdout, stderr };
}

// ---------------------------------------------------------------------------
// PostgreSQL: throw-away databases on the admin URL's server.
// ---------------------------------------------------------------------------

export const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function admin<T = Record<string, unknown>>(statement: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query(statement)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Creates a database that is dropped at cleanup. */
export async function throwAwayDatabase(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/u.test(name)) throw new Error(`bad database name ${name}`);
  await admin(`CREATE DATABASE "${name}"`);
  onCleanup(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined));
  return databaseUrl(name);
}

// ---------------------------------------------------------------------------
// The production server, in its own process.
// ---------------------------------------------------------------------------

export interface ServerHandle {
  base: string;
  pid: number;
  child: ChildProcess;
  /**
   * With `benchStats`: every server process's own figures since the last reset (and a reset
   * when asked), over the IPC channel (server/host/bench-stats.ts); undefined without, or when
   * no answer came within 10 s.
   */
  stats(reset: boolean): Promise<BenchStatsAnswer | undefined>;
  stop(): Promise<void>;
}

export interface ServerOptions {
  port: number;
  dataDir: string;
  databaseUrl?: string | undefined;
  sessionSecret: string;
  backendSecret: string;
  /** Server processes (WORKERS); default 1. */
  workers?: number;
  /**
   * Where every server process (a cluster's workers too) writes a CPU profile when it stops;
   * default BENCH_SERVER_PROFILE. `node scripts/bench/cpu-profile.ts <dir>` summarises them.
   */
  profileDir?: string | undefined;
  /** More settings for the server (BENCH_SMTP's SMTP_URL and PUBLIC_URL). */
  env?: Record<string, string | undefined>;
  /** BENCH_STATS=1 and an IPC channel to the server: ServerHandle.stats answers (issue 29). */
  benchStats?: boolean;
}

/** The production server (scripts/host.ts spawnHost), up and answering; stopped at cleanup. */
export async function startServer(opts: ServerOptions): Promise<ServerHandle> {
  const profileDir = opts.profileDir ?? process.env.BENCH_SERVER_PROFILE;
  const host = await spawnHost({
    port: opts.port,
    dataDir: opts.dataDir,
    env: {
      HOME: process.env.HOME,
      NODE_ENV: "production",
      SESSION_SECRET: opts.sessionSecret,
      BACKEND_SECRET: opts.backendSecret,
      DATABASE_URL: opts.databaseUrl,
      WORKERS: opts.workers && opts.workers > 1 ? String(opts.workers) : undefined,
      BENCH_STATS: opts.benchStats ? "1" : undefined,
      ...opts.env,
    },
    nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    // One JSON log line per request: discarded (writing them is part of the server's cost).
    // The IPC channel carries only the bench's figures (BENCH_STATS).
    stdio: opts.benchStats ? ["ignore", "ignore", "pipe", "ipc"] : ["ignore", "ignore", "pipe"],
  });
  host.child.once(
    "exit",
    onCleanup(() => host.stop()),
  );
  await host.ready();
  if (host.child.pid === undefined) throw new Error("the server has no pid");
  const child = host.child;
  const waiting = new Map<number, (answer: BenchStatsAnswer) => void>();
  child.on("message", (message: Partial<BenchStatsAnswer>) => {
    if (message?.type === BENCH_STATS_ANSWER && typeof message.id === "number") {
      waiting.get(message.id)?.(message as BenchStatsAnswer);
    }
  });
  let next = 0;
  const stats = async (reset: boolean): Promise<BenchStatsAnswer | undefined> => {
    if (!opts.benchStats || !child.connected) return undefined;
    const id = next++;
    const ask: BenchStatsAsk = { type: BENCH_STATS_ASK, id, reset };
    const answer = new Promise<BenchStatsAnswer | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 10_000);
      waiting.set(id, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
    });
    child.send(ask);
    const got = await answer;
    waiting.delete(id);
    return got;
  };
  return { base: host.base, pid: child.pid ?? -1, child, stats, stop: () => host.stop() };
}

// ---------------------------------------------------------------------------
// Figures.
// ---------------------------------------------------------------------------

/** The p-th percentile (0–100) of ascending values, nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? Number.NaN;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function ticksOf(fields: string[] | undefined): number {
  return Number(fields?.[11]) + Number(fields?.[12]);
}

/**
 * CPU time (user + system) a process and its child processes (the server's
 * workers, WORKERS > 1) have used so far, in ms, from /proc (Linux).
 */
export function processCpuMs(pid: number): number {
  const own = statFields(pid);
  if (!own) return Number.NaN;
  let ticks = ticksOf(own);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry) || entry === String(pid)) continue;
    const fields = statFields(entry);
    if (fields?.[1] === String(pid)) ticks += ticksOf(fields);
  }
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** A process's resident memory in KiB (0 when it is gone). */
function rss(id: number | string): number {
  try {
    const line = readFileSync(`/proc/${id}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("VmRSS:"));
    return Number(/\d+/u.exec(line ?? "")?.[0] ?? 0);
  } catch {
    return 0;
  }
}

/** Resident memory of a process and its child processes (the server's workers), in KiB, from /proc (Linux). */
export function processRssKiB(pid: number): number {
  let total = rss(pid);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry) || entry === String(pid)) continue;
    if (statFields(entry)?.[1] === String(pid)) total += rss(entry);
  }
  return total;
}

/** Busy and total CPU time of the whole machine so far, in ms, from /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } {
  const ticks = readMachineTicks();
  return ticks
    ? { busy: (ticks.busy * 1000) / 100, total: (ticks.total * 1000) / 100 }
    : { busy: Number.NaN, total: Number.NaN };
}

function readMachineTicks(): MachineTicks | undefined {
  try {
    return parseProcStat(readFileSync("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}

/** The machine's CPU ticks and every process's, now (for figures.ts cpuShares); undefined off Linux. */
export function cpuSnapshot(): CpuSnapshot | undefined {
  const machineTicks = readMachineTicks();
  if (!machineTicks) return undefined;
  const processes = new Map<number, ProcessTicks>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const parsed = parsePidStat(readFileSync(`/proc/${entry}/stat`, "utf8"));
      if (parsed) processes.set(parsed.pid, parsed);
    } catch {
      // ended meanwhile
    }
  }
  return { machine: machineTicks, processes };
}

export function machine(): { cpu: string; cores: number; memoryGiB: number; os: string; node: string } {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
  };
}

export function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}
