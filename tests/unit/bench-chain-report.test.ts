// The chain section's lines in the bench report (scripts/bench/chain.ts, issue 30): the read's
// figures beside the hello world, the time split, and the capacity arms, a first level that
// failed included.
import { describe, expect, test } from "vitest";
import { chainSection, type ChainReport } from "../../scripts/bench/chain.ts";
import type { CapacityReport, LevelReport } from "../../scripts/bench/capacity.ts";

const level = (users: number, passed: boolean): LevelReport =>
  ({
    users,
    passed,
    clientP99: passed ? 80 : 450,
    cpu: { serverPct: 50, loadGeneratorPct: 5, machinePct: 70, serverMsPerRequest: 4.2 },
  }) as LevelReport;

const capacity = (users: number, levels: LevelReport[]) => ({ users, levels }) as CapacityReport;

const report: ChainReport = {
  settings: {
    wallets: 100_000,
    blocks: 30,
    perBlock: 1000,
    ours: 0.1,
    blockEverySeconds: 2,
    levels: { postgres: [2000, 4000], pglite: [1000] },
    accounts: 200,
    withCapacity: true,
    fallbackBatch: 10,
    profile: false,
    seconds: 20,
    warmupSeconds: 3,
  },
  runs: [
    {
      database: "postgres",
      setup: {
        wallets: 100_000,
        seedSeconds: 60,
        generateSeconds: 30,
        made: { blocks: 30, transfers: 30_000, ours: 3000 },
      },
      hello: { perSecond: 20_000, p50: 1, p99: 3, non2xx: 0, errors: 0, answered: 160_000 },
      readAtDefault: { batchBlocks: 20, error: "HTTP response body exceeded the size limit." },
      read: {
        batchBlocks: 10,
        blocks: 30,
        transfers: 30_000,
        ours: 3000,
        steps: 3,
        seconds: 40,
        blocksPerSecond: 0.75,
        transfersPerSecond: 750,
        deposits: { recorded: 3000, credited: 1900, pending: 1100 },
        split: {
          rpc: 15,
          record: 24,
          other: 1,
          byMethod: { eth_getTransactionReceipt: { calls: 3000, seconds: 13.2 } },
          recordTransactions: 2,
          statements: 33_000,
        },
        logLines: 4100,
        cpu: { bench: 30, node: 4 },
      },
      capacityHello: { perSecond: 25_000, p50: 1, p99: 3, non2xx: 0, errors: 0, answered: 200_000 },
      arms: [
        {
          name: "watcher off",
          capacity: capacity(4000, [level(2000, true), level(4000, true)]),
          produced: { blocks: 40, transfers: 40_000, ours: 4000 },
          seconds: 80,
          nodeCpuSeconds: 30,
        },
        {
          name: "watcher on",
          capacity: capacity(0, [level(2000, false)]),
          produced: { blocks: 20, transfers: 20_000, ours: 2000 },
          seconds: 40,
          nodeCpuSeconds: 15,
          watcher: { blocksRead: 6, lagEnd: 14, lagMax: 14, depositsRecorded: 600 },
        },
      ],
    },
    { database: "pglite", error: "the node did not start" },
  ],
};

describe("the chain section", () => {
  const text = chainSection(report).join("\n");

  test("the read: blocks and transfers per second, per 1,000 hello-world req/s, the split and the statements", () => {
    expect(text).toContain(
      "| 30 | 30,000 (3,000) | 3 | 40 | **0.75** | **750** | 0.038 | 15 | 24 | 1 | 30 / 4 | 3,000 (1,900, 1,100) |",
    );
    expect(text).toContain("Hello world before the read: 20,000 req/s.");
    expect(text).toContain(
      "**With the watcher's own batch (20 blocks a step) the read failed**: HTTP response body exceeded the size limit.",
    );
    expect(text).toContain("The figures below read 10 blocks a step");
    expect(text).toContain("eth_getTransactionReceipt 3,000 (13.2 s summed)");
    expect(text).toContain("Statements sent to PostgreSQL: 33,000 (11 per deposit recorded).");
  });

  test("the arms: users carried per 1,000 hello-world req/s, a failed first level, the watcher's lag", () => {
    expect(text).toContain("hello world before the arms: 25,000 req/s");
    expect(text).toContain(
      "| watcher off | 4,000 | 160 | 2,000: pass, 80 ms, 4.2 ms, 70 %; 4,000: pass, 80 ms, 4.2 ms, 70 % | 40 (30) | not running |",
    );
    expect(text).toContain(
      "| watcher on | < 2,000 (the first level failed) | — | 2,000: fail, 450 ms, 4.2 ms, 70 % | 20 (15) | read 6 blocks, 600 deposits recorded; lag 14 blocks at the end (max 14) |",
    );
  });

  test("a database that failed says so; no report, no lines", () => {
    expect(text).toContain("**pglite**: failed: the node did not start");
    expect(chainSection(undefined)).toEqual([]);
    expect(chainSection({ error: "boom" }).join("\n")).toContain("Failed: boom");
  });
});
