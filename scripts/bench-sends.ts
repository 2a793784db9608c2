// Benchmark (not a test): sends per second through POST /api/request-transaction
// on PostgreSQL, beside pgbench's TPC-B-like tps on the same server in the same
// run (the ratio is the figure), with the latency percentiles at that load and
// the ledger invariants checked afterwards.
//
//   npm run build && node scripts/bench-sends.ts
//
// Settings (environment): BENCH_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres, used to create and drop two
// throw-away databases), BENCH_SECONDS (default 15), BENCH_CONCURRENCY
// (default 32), BENCH_USERS (default 200), BENCH_PORT (default 3290).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import pg from "pg";
import { openDatabase } from "../server/backend/db/index.ts";
import { deriveServerKeys } from "../server/backend/domain/crypto.ts";
import { ethAddress, seedEthHolder } from "./eth-holder.ts";

const root = path.resolve(import.meta.dirname, "..");
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const userCount = Number(process.env.BENCH_USERS ?? 200);
const port = Number(process.env.BENCH_PORT ?? 3290);
const BACKEND_SECRET = randomBytes(32).toString("hex");

if (!existsSync(path.join(root, "build/server/index.js"))) {
  console.error("No build: run npm run build first.");
  process.exit(1);
}

function databaseUrl(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(statement: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const suffix = randomBytes(4).toString("hex");
const appDb = `coinkeep_bench_${suffix}`;
const pgbenchDb = `coinkeep_pgbench_${suffix}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), "coinkeep-bench-"));
await admin(`CREATE DATABASE "${appDb}"`);
await admin(`CREATE DATABASE "${pgbenchDb}"`);
let server: ReturnType<typeof spawn> | undefined;

try {
  // --- Seed: users with an ETH wallet holding 1,000 ETH each.
  const seedStart = performance.now();
  const database = await openDatabase({ databaseUrl: databaseUrl(appDb), dataDir });
  const keys = deriveServerKeys(BACKEND_SECRET);
  const people: { email: string; twelveWords: string; walletId: string; destination: string }[] = [];
  for (let i = 0; i < userCount; i++) {
    const holder = await seedEthHolder(
      { db: database.db, keys },
      {
        email: `bench-${i}@example.com`,
        password: "bench-password",
        units: 1000n * 10n ** 18n,
        externalTxId: `bench-${i}`,
      },
    );
    people.push({ ...holder, destination: ethAddress() });
  }
  const seedMs = performance.now() - seedStart;

  // --- The production server on that database, in its own process.
  server = spawn(process.execPath, [path.join(root, "server/host/host.ts")], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl(appDb),
      DATA_DIR: dataDir,
      BACKEND_SECRET,
      FEEDS_OFFLINE: "true",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/api/currencies`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 100) throw new Error("the server did not start");
    await sleep(100);
  }

  // --- Load: `concurrency` clients sending 0.0001 ETH each, back to back, for `seconds`.
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let ok = 0;
  const stopAt = performance.now() + seconds * 1000;
  async function client() {
    while (performance.now() < stopAt) {
      const person = people[Math.floor(Math.random() * people.length)];
      if (!person) continue;
      const started = performance.now();
      const response = await fetch(`${base}/api/request-transaction`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          platform: "CK",
          email: person.email,
          twelveWords: person.twelveWords,
          amount: "0.0001",
          amount_in_usd: "0",
          receiver_wallet_address: person.destination,
          wallet_id: person.walletId,
          idempotency_key: randomBytes(16).toString("hex"),
        }),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 200) ok++;
    }
  }
  const loadStart = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => client()));
  const loadSeconds = (performance.now() - loadStart) / 1000;
  latencies.sort((a, b) => a - b);

  // --- Ledger invariants after the load.
  const db = database.db;
  const [negative] = rowsOf<{ n: number }>(
    await db.execute(sql`
    select count(*)::int as n from (
      select a.id from ledger_accounts a
      left join ledger_transfers t on a.id in (t.credit_account_id, t.debit_account_id)
      where a.kind = 'wallet' group by a.id
      having coalesce(sum(case when a.id = t.credit_account_id then t.amount else -t.amount end), 0) < 0) x`),
  );
  const [held] = rowsOf<{ sends: number; withdrawn: string; holds: string; keys: number }>(
    await db.execute(sql`
    select (select count(*)::int from withdrawals) as sends,
           (select coalesce(sum(amount), 0)::text from withdrawals) as withdrawn,
           (select coalesce(sum(amount), 0)::text from ledger_transfers where kind = 'withdrawal_hold') as holds,
           (select count(*)::int from send_requests) as keys`),
  );
  await database.close();

  // --- pgbench, TPC-B-like, same server, same client count, same duration.
  const pgbenchUrl = databaseUrl(pgbenchDb);
  const init = spawnSync("pgbench", ["-i", "-s", "10", "-q", pgbenchUrl], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
  const run = spawnSync(
    "pgbench",
    ["-c", String(concurrency), "-j", "2", "-T", String(seconds), "-n", pgbenchUrl],
    { encoding: "utf8" },
  );
  if (run.status !== 0) throw new Error(`pgbench failed: ${run.stderr}`);
  const tps = Number(/tps = ([\d.]+)/u.exec(run.stdout)?.[1] ?? Number.NaN);
  const pgLatency = /latency average = ([\d.]+) ms/u.exec(run.stdout)?.[1];

  const sendsPerSecond = ok / loadSeconds;
  const report = {
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    date: new Date().toISOString(),
    settings: { seconds, concurrency, users: userCount },
    seedSeconds: Math.round(seedMs / 100) / 10,
    sends: {
      ok,
      statuses: Object.fromEntries(statuses),
      perSecond: Math.round(sendsPerSecond * 10) / 10,
      latencyMs: {
        p50: Math.round(percentile(latencies, 50) * 10) / 10,
        p95: Math.round(percentile(latencies, 95) * 10) / 10,
        p99: Math.round(percentile(latencies, 99) * 10) / 10,
        max: Math.round((latencies.at(-1) ?? Number.NaN) * 10) / 10,
      },
    },
    pgbench: { tps: Math.round(tps * 10) / 10, latencyAverageMs: Number(pgLatency) },
    ratio: Math.round((sendsPerSecond / tps) * 1000) / 1000,
    invariants: {
      negativeWallets: negative?.n,
      sendsRecorded: held?.sends,
      sendsAnswered200: ok,
      holdsEqualWithdrawals: held?.withdrawn === held?.holds,
      idempotencyKeys: held?.keys,
    },
  };
  console.log(JSON.stringify(report, null, 2));
  if (negative?.n !== 0 || held?.sends !== ok || held?.withdrawn !== held?.holds) {
    console.error("LEDGER INVARIANT VIOLATED");
    process.exitCode = 1;
  }
} finally {
  server?.kill("SIGTERM");
  await sleep(500);
  await admin(`DROP DATABASE IF EXISTS "${appDb}" WITH (FORCE)`);
  await admin(`DROP DATABASE IF EXISTS "${pgbenchDb}" WITH (FORCE)`);
  rmSync(dataDir, { recursive: true, force: true });
}
