// The server's opt-in figures for the bench (server/host/bench-stats.ts, issue 29): off unless
// BENCH_STATS asks; what a process keeps, answers and forgets on a reset.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { loadConfig } from "../../server/config.ts";
import { createBenchStats } from "../../server/host/bench-stats.ts";

const dataDir = mkdtempSync(path.join(tmpdir(), "coinkeep-bench-stats-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const base = { NODE_ENV: "test", DATA_DIR: dataDir };

describe("the bench's figures in the server", () => {
  test("off unless BENCH_STATS is set", () => {
    expect(loadConfig({ ...base }).benchStats).toBe(false);
    expect(loadConfig({ ...base, BENCH_STATS: "0" }).benchStats).toBe(false);
    expect(loadConfig({ ...base, BENCH_STATS: "1" }).benchStats).toBe(true);
    expect(() => loadConfig({ ...base, BENCH_STATS: "yes" })).toThrow(/BENCH_STATS/u);
  });

  test("a process answers its requests and database waits since the last reset, then starts afresh", () => {
    const stats = createBenchStats("pglite");
    stats.request(12.345);
    stats.request(3);
    stats.wait({ ms: 0.004, queued: false, ahead: 0 });
    stats.wait({ ms: 7.5, queued: true, ahead: 4 });
    stats.wait({ ms: 1, queued: true, ahead: 2 });
    const first = stats.snapshot(true);
    expect(first.pid).toBe(process.pid);
    expect(first.requests).toEqual([12.35, 3]);
    expect(first.database).toEqual({
      driver: "pglite",
      asked: 3,
      queued: 2,
      maxAhead: 4,
      waits: [0, 7.5, 1],
    });
    expect(first.rssKiB).toBeGreaterThan(0);
    const second = stats.snapshot(false);
    expect(second.requests).toEqual([]);
    expect(second.database).toEqual({ driver: "pglite", asked: 0, queued: 0, maxAhead: 0, waits: [] });
    expect(second.gc).toEqual({ count: 0, totalMs: 0, maxMs: 0 });
    // Not reset: the same figures again.
    stats.request(1);
    expect(stats.snapshot(false).requests).toEqual([1]);
    expect(stats.snapshot(false).requests).toEqual([1]);
  });
});
