// The capacity section's figures that tell the server from its neighbours (scripts/bench/figures.ts,
// issue 29): the /proc parsers, who used the machine, the memory per stream (no more "NaN KiB"),
// the server processes' figures together, and whose a failed level was.
import { describe, expect, test } from "vitest";
import {
  classifyLevel,
  cpuShares,
  memoryPerStream,
  parsePidStat,
  parseProcStat,
  serverFigures,
  streamMemoryText,
  treeOf,
  verdictText,
  type CpuSnapshot,
  type LevelEvidence,
  type ProcessTicks,
  type ServerFigures,
} from "../../scripts/bench/figures.ts";
import type { ProcessStats } from "../../server/host/bench-stats.ts";

describe("/proc/stat", () => {
  test("the cpu line: busy without idle, iowait and steal; steal apart; guest not counted twice", () => {
    const text = ["cpu  100 20 30 400 50 6 4 70 9 1", "cpu0 50 10 15 200 25 3 2 35 9 1", "intr 12345"].join(
      "\n",
    );
    expect(parseProcStat(text)).toEqual({ busy: 160, interrupts: 10, steal: 70, total: 680 });
  });

  test("a kernel without the steal field counts none; no cpu line is no figure", () => {
    expect(parseProcStat("cpu  1 2 3 4 5 6 7\n")).toEqual({ busy: 19, interrupts: 13, steal: 0, total: 28 });
    expect(parseProcStat("cpu0 1 2 3 4 5 6 7 8\n")).toBeUndefined();
    expect(parseProcStat("")).toBeUndefined();
  });
});

describe("/proc/<pid>/stat", () => {
  test("pid, parent, name and user + system ticks, a name with spaces and brackets included", () => {
    const line = "4242 (node (worker) 1) S 4200 4242 4242 0 -1 4194560 100 0 0 0 1234 567 8 9 20 0 11 0";
    expect(parsePidStat(line)).toEqual({ pid: 4242, ppid: 4200, comm: "node (worker) 1", ticks: 1801 });
    expect(parsePidStat("1 (postgres) S 0 1 1 0 -1 0 0 0 0 0 7 3 0 0")).toEqual({
      pid: 1,
      ppid: 0,
      comm: "postgres",
      ticks: 10,
    });
  });

  test("not a stat line: no figure", () => {
    expect(parsePidStat("")).toBeUndefined();
    expect(parsePidStat("12 no name here")).toBeUndefined();
    expect(parsePidStat("12 (x) S")).toBeUndefined();
  });
});

function processes(...list: Array<[pid: number, ppid: number, comm: string, ticks: number]>) {
  return new Map<number, ProcessTicks>(
    list.map(([pid, ppid, comm, ticks]) => [pid, { pid, ppid, comm, ticks }]),
  );
}

describe("who used the machine", () => {
  test("a tree is its root and every process below it, however deep", () => {
    const all = processes(
      [1, 0, "init", 0],
      [10, 1, "node", 0],
      [11, 10, "node", 0],
      [12, 11, "x", 0],
      [20, 1, "y", 0],
    );
    expect([...treeOf(all, 10)].toSorted()).toEqual([10, 11, 12]);
    expect([...treeOf(all, 99)]).toEqual([]);
  });

  test("server, bench, PostgreSQL, interrupts and the rest as shares of all cores; steal apart", () => {
    // The bench (100) started the server (200, with workers 201 and 202), the generator (101);
    // PostgreSQL (300, 301) and a neighbour (400) run beside them.
    const before: CpuSnapshot = {
      machine: { busy: 1000, interrupts: 100, steal: 50, total: 5000 },
      processes: processes(
        [100, 1, "node", 10],
        [101, 100, "node", 10],
        [200, 100, "node", 10],
        [201, 200, "node", 100],
        [202, 200, "node", 100],
        [300, 1, "postgres", 40],
        [301, 300, "postgres", 0],
        [400, 1, "yes", 0],
      ),
    };
    const after: CpuSnapshot = {
      // 2,000 ticks passed: 1,400 busy, 50 of them interrupts, 100 stolen.
      machine: { busy: 2400, interrupts: 150, steal: 150, total: 7000 },
      processes: processes(
        [100, 1, "node", 30], // +20
        [101, 100, "node", 110], // +100
        [200, 100, "node", 20], // +10
        [201, 200, "node", 400], // +300
        [202, 200, "node", 390], // +290
        [300, 1, "postgres", 140], // +100
        [301, 300, "postgres", 60], // +60
        [302, 300, "postgres", 40], // new: all 40
        [400, 1, "yes", 400], // +400
      ),
    };
    expect(cpuShares(before, after, 200, 100)).toEqual({
      stealPct: 5,
      serverPct: 30,
      benchPct: 6,
      postgresPct: 10,
      interruptsPct: 2.5,
      // 1,400 − 50 − 600 − 120 − 200 = 430: the neighbour's 400 and 30 nobody is charged with.
      othersPct: 21.5,
    });
  });

  test("a process whose pid came back under another name counts from zero; no time passed: no share", () => {
    const machine = { busy: 0, interrupts: 0, steal: 0, total: 0 };
    const before: CpuSnapshot = { machine, processes: processes([5, 1, "old", 900]) };
    const after: CpuSnapshot = {
      machine: { busy: 100, interrupts: 0, steal: 0, total: 200 },
      processes: processes([5, 1, "new", 50]),
    };
    // The server's pid 5 was reused: its 50 ticks are all new (not 50 − 900).
    expect(cpuShares(before, after, 5, 8)).toMatchObject({ serverPct: 25, othersPct: 25 });
    expect(cpuShares(before, before, 9, 8).othersPct).toBeNaN();
  });
});

describe("memory per open stream", () => {
  test("the growth over the streams opened, to 0.1 KiB", () => {
    expect(memoryPerStream(100_000, 150_000, 2000)).toEqual({ kib: 25 });
    expect(memoryPerStream(100_000, 100_100, 3000)).toEqual({ kib: 0 });
    expect(memoryPerStream(100_000, 100_500, 3000)).toEqual({ kib: 0.2 });
  });

  test("n/a with the reason, never NaN: too few opened, none, memory unreadable, memory fell", () => {
    expect(memoryPerStream(100_000, 150_000, 500)).toEqual({ na: "500 new streams (a figure needs 1000)" });
    expect(memoryPerStream(100_000, 150_000, 0)).toEqual({ na: "no new streams (a figure needs 1000)" });
    expect(memoryPerStream(100_000, 150_000, Number.NaN)).toEqual({
      na: "no new streams (a figure needs 1000)",
    });
    expect(memoryPerStream(0, 150_000, 2000)).toEqual({ na: "the server's memory could not be read" });
    expect(memoryPerStream(Number.NaN, 150_000, 2000)).toEqual({
      na: "the server's memory could not be read",
    });
    expect(memoryPerStream(150_000, 130_000, 2000)).toEqual({
      na: "its memory fell by 20000 KiB meanwhile (a collection)",
    });
  });

  test("as printed", () => {
    expect(streamMemoryText({ kib: 48.3 })).toBe("48.3 KiB");
    expect(streamMemoryText({ na: "500 new streams (a figure needs 1000)" })).toBe(
      "n/a (500 new streams (a figure needs 1000))",
    );
    expect(streamMemoryText(undefined)).toBe("n/a (not measured)");
  });
});

function processStats(pid: number, requests: number[], more: Partial<ProcessStats> = {}): ProcessStats {
  return {
    pid,
    ms: 20_000,
    loopDelay: { p50: 10, p99: 20, max: 30 },
    gc: { count: 3, totalMs: 6, maxMs: 4 },
    database: { driver: "postgres", asked: 0, queued: 0, maxAhead: 0, waits: [] },
    requests,
    rssKiB: 1000,
    ...more,
  };
}

describe("the server processes' figures together", () => {
  test("percentiles over every process's requests; each process's own loop, GC and p99; the waits together", () => {
    const a = processStats(
      11,
      Array.from({ length: 99 }, () => 5),
      {
        loopDelay: { p50: 10, p99: 21.04, max: 250.46 },
        gc: { count: 2, totalMs: 9, maxMs: 7.25 },
        database: { driver: "postgres", asked: 4, queued: 1, maxAhead: 3, waits: [0.1, 0.2, 0.3, 40] },
      },
    );
    const b = processStats(12, [300], {
      database: { driver: "postgres", asked: 2, queued: 2, maxAhead: 5, waits: [1, 2] },
    });
    const figures = serverFigures([a, b], 1);
    expect(figures).toMatchObject({
      driver: "postgres",
      requests: 100,
      p50: 5,
      p99: 5,
      max: 300,
      missing: 1,
    });
    expect(figures.workers).toEqual([
      {
        pid: 11,
        requests: 99,
        p99: 5,
        loopDelayP99: 21,
        loopDelayMax: 250.5,
        gcCount: 2,
        gcTotalMs: 9,
        gcMaxMs: 7.3,
        rssKiB: 1000,
      },
      {
        pid: 12,
        requests: 1,
        p99: 300,
        loopDelayP99: 20,
        loopDelayMax: 30,
        gcCount: 3,
        gcTotalMs: 6,
        gcMaxMs: 4,
        rssKiB: 1000,
      },
    ]);
    expect(figures.database).toEqual({ asked: 6, queued: 3, maxAhead: 5, waitP99: 40, waitMax: 40 });
  });

  test("no requests: NaN percentiles (the report says so), not a crash", () => {
    const figures = serverFigures([processStats(1, [])]);
    expect(figures.requests).toBe(0);
    expect(figures.p99).toBeNaN();
    expect(figures.database.waitP99).toBeNaN();
  });
});

function server(more: Partial<ServerFigures> = {}, loopDelayMax = 20, gcMaxMs = 5): ServerFigures {
  return {
    driver: "postgres",
    requests: 1000,
    p50: 5,
    p99: 40,
    max: 80,
    missing: 0,
    workers: [
      {
        pid: 1,
        requests: 500,
        p99: 40,
        loopDelayP99: 12,
        loopDelayMax,
        gcCount: 1,
        gcTotalMs: 1,
        gcMaxMs,
        rssKiB: 1,
      },
      {
        pid: 2,
        requests: 500,
        p99: 40,
        loopDelayP99: 12,
        loopDelayMax: 15,
        gcCount: 1,
        gcTotalMs: 1,
        gcMaxMs: 2,
        rssKiB: 1,
      },
    ],
    database: { asked: 5000, queued: 0, maxAhead: 0, waitP99: 0.1, waitMax: 1 },
    ...more,
  };
}

function evidence(more: Partial<LevelEvidence> = {}): LevelEvidence {
  return {
    passed: false,
    limitMs: 200,
    server: server(),
    serverErrors: 0,
    generatorLag: { p99: 11, max: 30 },
    cpu: { stealPct: 0.2, othersPct: 1.5 },
    ...more,
  };
}

describe("whose a failed level is", () => {
  test("a passed level is a pass, whatever was seen", () => {
    expect(classifyLevel(evidence({ passed: true, cpu: { stealPct: 30, othersPct: 40 } })).verdict).toBe(
      "pass",
    );
  });

  test("the server's own p99, its errors, a GC pause or a database wait: the server's", () => {
    expect(classifyLevel(evidence({ server: server({ p99: 150 }) }))).toEqual({
      verdict: "server",
      server: ["server p99 150 ms"],
      neighbour: [],
    });
    expect(classifyLevel(evidence({ serverErrors: 3 })).server).toEqual(["3 answers not 200"]);
    expect(classifyLevel(evidence({ server: server({}, 20, 120) })).server).toEqual(["GC pause 120 ms"]);
    const waits = server({ database: { asked: 10, queued: 9, maxAhead: 8, waitP99: 60, waitMax: 90 } });
    expect(classifyLevel(evidence({ server: waits })).server).toEqual(["database wait p99 60 ms"]);
  });

  test("the server's stall is never hidden by busy neighbours: server, with the neighbours named too", () => {
    const c = classifyLevel(
      evidence({
        server: server({ p99: 230 }),
        cpu: { stealPct: 12, othersPct: 35 },
        generatorLag: { p99: 80, max: 400 },
      }),
    );
    expect(c).toEqual({
      verdict: "server",
      server: ["server p99 230 ms"],
      neighbour: ["generator lag p99 80 ms, max 400 ms", "steal 12 %", "others' CPU 35 %"],
    });
    expect(verdictText(c)).toBe(
      "server (server p99 230 ms; also: generator lag p99 80 ms, max 400 ms, steal 12 %, others' CPU 35 %)",
    );
  });

  test("the server well under the limit and the generator lagging, steal or others busy: the neighbour's", () => {
    expect(classifyLevel(evidence({ generatorLag: { p99: 50, max: 90 } })).verdict).toBe("neighbour");
    expect(classifyLevel(evidence({ generatorLag: { p99: 12, max: 200 } })).verdict).toBe("neighbour");
    expect(classifyLevel(evidence({ cpu: { stealPct: 5, othersPct: 0 } })).verdict).toBe("neighbour");
    const c = classifyLevel(evidence({ cpu: { stealPct: 0, othersPct: 10 } }));
    expect(c).toEqual({ verdict: "neighbour", server: [], neighbour: ["others' CPU 10 %"] });
    expect(verdictText(c)).toBe("neighbour (others' CPU 10 %)");
  });

  test("just below every threshold: nothing to blame", () => {
    const c = classifyLevel(
      evidence({
        server: server(
          { p99: 99.9, database: { asked: 1, queued: 1, maxAhead: 1, waitP99: 49.9, waitMax: 60 } },
          99.9,
          99.9,
        ),
        generatorLag: { p99: 49.9, max: 199.9 },
        cpu: { stealPct: 4.9, othersPct: 9.9 },
      }),
    );
    expect(c).toEqual({ verdict: "unexplained", server: [], neighbour: [] });
    expect(verdictText(c)).toBe("unexplained");
  });

  test("the server's event loop stalling: the server's when the neighbours are quiet, named beside them when not", () => {
    const stalled = server({}, 260);
    expect(classifyLevel(evidence({ server: stalled }))).toEqual({
      verdict: "server",
      server: ["server event loop stalled 260 ms"],
      neighbour: [],
    });
    const c = classifyLevel(evidence({ server: stalled, cpu: { stealPct: 0, othersPct: 40 } }));
    expect(c).toEqual({
      verdict: "neighbour",
      server: ["server event loop stalled 260 ms"],
      neighbour: ["others' CPU 40 %"],
    });
    expect(verdictText(c)).toBe("neighbour (others' CPU 40 %; also: server event loop stalled 260 ms)");
  });

  test("without the server's figures and nothing else seen: unexplained, saying why", () => {
    expect(classifyLevel(evidence({ server: undefined }))).toEqual({
      verdict: "unexplained",
      server: ["no server figures"],
      neighbour: [],
    });
  });
});
