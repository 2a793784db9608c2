// The capacity section's figures that tell the server from its neighbours (issue 29), as pure
// functions of what was read: /proc's text, the server processes' own figures
// (server/host/bench-stats.ts), the load generator's lag. capacity.ts reads, this computes,
// tests/unit/bench-figures.test.ts checks.
import type { ProcessStats } from "../../server/host/bench-stats.ts";

// ---------------------------------------------------------------------------
// /proc
// ---------------------------------------------------------------------------

/** The machine's CPU time so far, in ticks (USER_HZ), from the "cpu" line of /proc/stat. */
export interface MachineTicks {
  /** user + nice + system + irq + softirq (guest time is already inside user and nice). */
  busy: number;
  /** irq + softirq: the kernel's interrupt work, which no process is charged with. */
  interrupts: number;
  /** Time this virtual machine was ready to run but the host ran something else. */
  steal: number;
  /** busy + idle + iowait + steal. */
  total: number;
}

/** The "cpu" line of /proc/stat; undefined when the text has none. */
export function parseProcStat(text: string): MachineTicks | undefined {
  const line = text.split("\n").find((l) => /^cpu\s/u.test(l));
  if (!line) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/u)
    .slice(1, 9)
    .map((v) => Number(v) || 0);
  const interrupts = (irq ?? 0) + (softirq ?? 0);
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + interrupts;
  return {
    busy,
    interrupts,
    steal: steal ?? 0,
    total: busy + (idle ?? 0) + (iowait ?? 0) + (steal ?? 0),
  };
}

/** One process of /proc/<pid>/stat: its parent, its command name, its CPU ticks (user + system). */
export interface ProcessTicks {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

/** /proc/<pid>/stat's text; undefined when it is not one. The command name may hold spaces and brackets. */
export function parsePidStat(text: string): ProcessTicks | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  // After the name: state, ppid, … utime is field 14 of the line, stime 15.
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/u);
  const ppid = Number(rest[1]);
  const ticks = Number(rest[11]) + Number(rest[12]);
  if (!Number.isInteger(pid) || !Number.isFinite(ppid) || !Number.isFinite(ticks)) return undefined;
  return { pid, ppid, comm: text.slice(open + 1, close), ticks };
}

/** `root` and every process below it. */
export function treeOf(processes: ReadonlyMap<number, ProcessTicks>, root: number): Set<number> {
  const tree = new Set<number>(processes.has(root) ? [root] : []);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of processes.values()) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return tree;
}

export interface CpuSnapshot {
  machine: MachineTicks;
  processes: ReadonlyMap<number, ProcessTicks>;
}

/** Shares of the whole machine (all cores = 100 %) over a level. */
export interface CpuShares {
  /** Time stolen by the hypervisor for other machines. */
  stealPct: number;
  /** The server's processes (the primary and its workers). */
  serverPct: number;
  /** The bench's own processes (the harness, the load generator, the stream holders, …). */
  benchPct: number;
  /** PostgreSQL's processes (named "postgres"), which work for the server and for pgbench alike. */
  postgresPct: number;
  /** The kernel's interrupt work (loopback networking mostly), charged to no process. */
  interruptsPct: number;
  /** Everything else that was busy: other processes on this machine, and any that started or ended meanwhile. */
  othersPct: number;
}

/** CPU ticks a set of processes used between two snapshots (a process new in `after` counts from zero). */
function ticksBetween(before: CpuSnapshot, after: CpuSnapshot, pids: Iterable<number>): number {
  let ticks = 0;
  for (const pid of pids) {
    const end = after.processes.get(pid);
    if (!end) continue;
    const start = before.processes.get(pid);
    ticks += start && start.comm === end.comm ? Math.max(0, end.ticks - start.ticks) : end.ticks;
  }
  return ticks;
}

/**
 * Who used the machine between two snapshots: the server's processes (`serverPid`'s tree), the
 * bench's (`benchPid`'s tree without the server's), PostgreSQL's, the kernel's interrupts, and
 * the rest ("others"), each a share of all cores, rounded to 0.1.
 */
export function cpuShares(
  before: CpuSnapshot,
  after: CpuSnapshot,
  serverPid: number,
  benchPid: number,
): CpuShares {
  const total = after.machine.total - before.machine.total;
  const share = (ticks: number) => (total > 0 ? Math.round((ticks / total) * 1000) / 10 : Number.NaN);
  const alive = new Map([...before.processes, ...after.processes]);
  const server = treeOf(alive, serverPid);
  const bench = [...treeOf(alive, benchPid)].filter((pid) => !server.has(pid));
  const postgres = [...alive.values()]
    .filter((p) => p.comm === "postgres" && !server.has(p.pid))
    .map((p) => p.pid);
  const serverTicks = ticksBetween(before, after, server);
  const benchTicks = ticksBetween(before, after, bench);
  const postgresTicks = ticksBetween(before, after, postgres);
  const interrupts = after.machine.interrupts - before.machine.interrupts;
  const busy = after.machine.busy - before.machine.busy;
  return {
    stealPct: share(after.machine.steal - before.machine.steal),
    serverPct: share(serverTicks),
    benchPct: share(benchTicks),
    postgresPct: share(postgresTicks),
    interruptsPct: share(interrupts),
    othersPct: share(Math.max(0, busy - interrupts - serverTicks - benchTicks - postgresTicks)),
  };
}

// ---------------------------------------------------------------------------
// Memory per open stream
// ---------------------------------------------------------------------------

/** The server's memory per event stream at a level, or why there is no figure. */
export type StreamMemory = { kib: number } | { na: string };

/**
 * The growth of the server's RSS (all its processes) while `opened` new streams opened (nothing
 * else runs then), over their number. No figure — with the reason — when too few opened to tell
 * from noise, when the memory could not be read, or when it did not grow (a collection
 * meanwhile freed more than the streams took).
 */
export function memoryPerStream(
  rssBeforeKiB: number,
  rssAfterKiB: number,
  opened: number,
  minOpened = 1000,
): StreamMemory {
  if (!(opened >= minOpened)) {
    return { na: `${opened > 0 ? opened : "no"} new streams (a figure needs ${minOpened})` };
  }
  if (!(rssBeforeKiB > 0) || !(rssAfterKiB > 0)) return { na: "the server's memory could not be read" };
  const grew = rssAfterKiB - rssBeforeKiB;
  if (grew <= 0) return { na: `its memory fell by ${-grew} KiB meanwhile (a collection)` };
  return { kib: Math.round((grew / opened) * 10) / 10 };
}

export function streamMemoryText(memory: StreamMemory | undefined): string {
  if (!memory) return "n/a (not measured)";
  return "kib" in memory ? `${memory.kib} KiB` : `n/a (${memory.na})`;
}

// ---------------------------------------------------------------------------
// The server's own figures over a level
// ---------------------------------------------------------------------------

/** The p-th percentile (0–100) of ascending values, nearest rank; NaN when there are none. */
function percentileOf(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? Number.NaN;
}

export interface WorkerFigures {
  pid: number;
  requests: number;
  /** Request to last byte in this process, ms. */
  p99: number;
  loopDelayP99: number;
  loopDelayMax: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
  rssKiB: number;
}

export interface ServerFigures {
  driver: "postgres" | "pglite";
  /** Every process's requests together: arrival to last byte, ms. */
  requests: number;
  p50: number;
  p99: number;
  max: number;
  workers: WorkerFigures[];
  /** Server processes that did not answer (their figures are missing from the rest). */
  missing: number;
  /** Waits for the database (a pool connection; PGlite: its queue), every process together. */
  database: { asked: number; queued: number; maxAhead: number; waitP99: number; waitMax: number };
}

const r1 = (value: number) => Math.round(value * 10) / 10;

/** The level's figures from every server process's answer. */
export function serverFigures(processes: readonly ProcessStats[], missing = 0): ServerFigures {
  const requests = Float64Array.from(processes.flatMap((p) => p.requests)).toSorted();
  const waits = Float64Array.from(processes.flatMap((p) => p.database.waits)).toSorted();
  return {
    driver: processes[0]?.database.driver ?? "postgres",
    requests: requests.length,
    p50: r1(percentileOf(requests, 50)),
    p99: r1(percentileOf(requests, 99)),
    max: r1(percentileOf(requests, 100)),
    missing,
    workers: processes.map((p) => {
      const own = Float64Array.from(p.requests).toSorted();
      return {
        pid: p.pid,
        requests: own.length,
        p99: r1(percentileOf(own, 99)),
        loopDelayP99: r1(p.loopDelay.p99),
        loopDelayMax: r1(p.loopDelay.max),
        gcCount: p.gc.count,
        gcTotalMs: r1(p.gc.totalMs),
        gcMaxMs: r1(p.gc.maxMs),
        rssKiB: p.rssKiB,
      };
    }),
    database: {
      asked: processes.reduce((a, p) => a + p.database.asked, 0),
      queued: processes.reduce((a, p) => a + p.database.queued, 0),
      maxAhead: Math.max(0, ...processes.map((p) => p.database.maxAhead)),
      waitP99: r1(percentileOf(waits, 99)),
      waitMax: r1(percentileOf(waits, 100)),
    },
  };
}

// ---------------------------------------------------------------------------
// Whose failure
// ---------------------------------------------------------------------------

export interface LevelEvidence {
  passed: boolean;
  /** The level's latency limit (p99), ms. */
  limitMs: number;
  /** The server's own figures; undefined when they could not be had. */
  server?: ServerFigures | undefined;
  /** Answers the server gave that were not 200 (by status), during the level. */
  serverErrors: number;
  /** The load generator's and stream holders' worst event-loop delay: p99 and max, ms. */
  generatorLag: { p99: number; max: number };
  cpu: Pick<CpuShares, "stealPct" | "othersPct">;
}

export type Verdict = "pass" | "server" | "neighbour" | "unexplained";

export interface Classification {
  verdict: Verdict;
  /** What points at the server, and what at its neighbours (both, whichever wins). */
  server: string[];
  neighbour: string[];
}

/** Steal or others' CPU (shares of all cores) from which a neighbour counts as busy. */
export const NEIGHBOUR_STEAL_PCT = 5;
export const NEIGHBOUR_OTHERS_PCT = 10;

/**
 * Whose a failed level is. "server" when the server's own figures explain it: its own p99
 * (arrival to last byte) at half the limit or more, answers other than 200, a GC pause or a
 * database wait that long — whatever the neighbours did, so a stall in the server is never
 * hidden. Otherwise "neighbour" when the neighbours were busy: the load generator lagging
 * (p99 a quarter of the limit, or a stall as long as the limit), steal or other processes'
 * CPU above their thresholds — a stall there is not charged to the server. Otherwise the
 * server's event loop stalling (half the limit) makes it "server" again; with none of these,
 * "unexplained" (and both lists say what was seen).
 */
export function classifyLevel(e: LevelEvidence): Classification {
  const server: string[] = [];
  const neighbour: string[] = [];
  const half = e.limitMs / 2;
  const s = e.server;
  if (s && s.p99 >= half) server.push(`server p99 ${s.p99} ms`);
  if (e.serverErrors > 0) server.push(`${e.serverErrors} answers not 200`);
  const gcMax = Math.max(0, ...(s?.workers.map((w) => w.gcMaxMs) ?? []));
  if (gcMax >= half) server.push(`GC pause ${gcMax} ms`);
  if (s && s.database.waitP99 >= e.limitMs / 4) server.push(`database wait p99 ${s.database.waitP99} ms`);
  if (e.generatorLag.p99 >= e.limitMs / 4 || e.generatorLag.max >= e.limitMs) {
    neighbour.push(`generator lag p99 ${e.generatorLag.p99} ms, max ${e.generatorLag.max} ms`);
  }
  if (e.cpu.stealPct >= NEIGHBOUR_STEAL_PCT) neighbour.push(`steal ${e.cpu.stealPct} %`);
  if (e.cpu.othersPct >= NEIGHBOUR_OTHERS_PCT) neighbour.push(`others' CPU ${e.cpu.othersPct} %`);
  const loopMax = Math.max(0, ...(s?.workers.map((w) => w.loopDelayMax) ?? []));
  const loopStall = loopMax >= half ? `server event loop stalled ${loopMax} ms` : undefined;
  if (e.passed) return { verdict: "pass", server, neighbour };
  if (server.length > 0) return { verdict: "server", server, neighbour };
  if (neighbour.length > 0) return { verdict: "neighbour", server: loopStall ? [loopStall] : [], neighbour };
  if (loopStall) return { verdict: "server", server: [loopStall], neighbour };
  if (!s) server.push("no server figures");
  return { verdict: "unexplained", server, neighbour };
}

/** The verdict as the report prints it: "server (server p99 212 ms)", "neighbour (steal 9 %; also: …)". */
export function verdictText(c: Classification): string {
  if (c.verdict === "pass") return "pass";
  const own = c.verdict === "neighbour" ? c.neighbour : c.server;
  const other = c.verdict === "neighbour" ? c.server : c.neighbour;
  const parts = [own.join(", "), other.length > 0 ? `also: ${other.join(", ")}` : ""].filter(Boolean);
  return parts.length > 0 ? `${c.verdict} (${parts.join("; ")})` : c.verdict;
}
