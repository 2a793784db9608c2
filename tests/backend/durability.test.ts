// Durability on power loss (issue 12, hole 9; record 020), measured with
// strace by scripts/durability-trace.ts: on PostgreSQL a send's commit is
// synced to the WAL on disk before its HTTP answer is written; on the embedded
// database (PGlite) nothing is synced, which is the documented behaviour.
// Needs Linux, root, strace and PostgreSQL's initdb (run as the postgres user);
// skipped otherwise.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const pgBin = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const feasible =
  process.platform === "linux" &&
  process.getuid?.() === 0 &&
  spawnSync("strace", ["-V"]).status === 0 &&
  existsSync(path.join(pgBin, "initdb")) &&
  existsSync(path.join(root, "build/server/index.js"));

interface SendTrace {
  status: string;
  syncCalls: number;
  syncs: string;
  walWrites: number;
  walSyncBeforeAnswer: boolean;
}

function trace(which: "pglite" | "postgres"): { settings?: Record<string, string>; sends: SendTrace[] } {
  const run = spawnSync(
    process.execPath,
    [path.join(root, "scripts/durability-trace.ts"), which, "3", "--json"],
    {
      cwd: root,
      encoding: "utf8",
      timeout: 240_000,
    },
  );
  if (run.status !== 0) throw new Error(`durability-trace failed: ${run.stderr}`);
  const last = run.stdout.trim().split("\n").at(-1) ?? "{}";
  return (
    (JSON.parse(last) as Record<string, { settings?: Record<string, string>; sends: SendTrace[] }>)[
      which
    ] ?? {
      sends: [],
    }
  );
}

describe.runIf(feasible)("a send's commit and the disk (strace)", () => {
  test("PostgreSQL: each send's WAL is fdatasync'ed before the server writes its HTTP answer", () => {
    const measured = trace("postgres");
    expect(measured.settings).toMatchObject({ fsync: "on", synchronous_commit: "on" });
    expect(measured.sends).toHaveLength(3);
    for (const send of measured.sends) {
      expect(send.status).toBe("200");
      expect(send.walWrites).toBeGreaterThan(0);
      expect(send.syncs).toMatch(/fdatasync\(0{7}1[0-9A-F]+\)|fsync\(0{7}1[0-9A-F]+\)/u);
      expect(send.walSyncBeforeAnswer).toBe(true);
    }
  }, 300_000);

  test("PGlite: the WAL is written before the answer but never synced (record 020: PostgreSQL for real money)", () => {
    const measured = trace("pglite");
    expect(measured.sends).toHaveLength(3);
    for (const send of measured.sends) {
      expect(send.status).toBe("200");
      // The commit's WAL reaches the kernel (it survives kill -9) …
      expect(send.walWrites).toBeGreaterThan(0);
      // … but no fsync-family call makes it survive a power loss. Should this ever change, the
      // record and the README's choice of database must change with it.
      expect(send.syncCalls).toBe(0);
    }
  }, 300_000);
});
