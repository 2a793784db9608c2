// The statement benchmark (issue 28 item 2, record 050): one holder with
// 100,000 transactions (BENCH_STATEMENT_ROWS) over a year — ETH and BTC
// deposits, BTC sends — and a year of recorded EUR rates; the production
// server downloads the holder's all-coins EUR statement of that year through
// GET /history/statement.csv while the server's resident memory is sampled
// every 20 ms. Reports the server's RSS before (signed in, warmed up by a
// small statement) and its peak during the download, the time, bytes and rows.
// Flat memory: the peak stays near the baseline however many rows there are.
//
//   flock /tmp/browser.lock node scripts/bench/statement.ts            (embedded PGlite)
//   flock /tmp/browser.lock node scripts/bench/statement.ts --postgres (BENCH_DATABASE_URL)
//
// Seeding writes straight into the tables (generate_series), before the
// server starts: an embedded database is one process's.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { ledgerAccounts } from "../../server/backend/db/schema.ts";
import { openDatabase } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { recordRateDays } from "../../server/backend/domain/fx-history.ts";
import { systemAccount } from "../../server/backend/domain/ledger.ts";
import { cleanupAll, log, machine, processRssKiB, round, startServer, throwAwayDatabase } from "./lib.ts";
import { freshAddress, PASSWORD, seedPageUser } from "./seed.ts";
import { signInThroughForm } from "./sessions.ts";

const ROWS = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000);
const usePostgres = process.argv.includes("--postgres");
const port = Number(process.env.BENCH_PORT ?? 3281);
const dataDir = mkdtempSync(path.join(os.tmpdir(), "coinkeep-bench-statement-"));

/** The time between `n` rows spread evenly over a year, as an interval. */
const step = (n: number) => `${Math.floor((365 * 86_400_000) / Math.max(1, n))} milliseconds`;

/** Reads a response body to its end, counting bytes and lines, holding nothing. */
async function drain(response: Response): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  const reader = response.body?.getReader();
  if (!reader) return { bytes, lines };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes, lines };
    bytes += value.byteLength;
    for (const byte of value) if (byte === 10) lines += 1;
  }
}

try {
  const databaseUrl = usePostgres
    ? await throwAwayDatabase(`coinkeep_bench_statement_${randomBytes(4).toString("hex")}`)
    : undefined;
  const backendSecret = randomBytes(32).toString("hex");
  log(`seeding ${ROWS} transactions (${usePostgres ? "PostgreSQL" : "PGlite"})`);
  const seedStarted = performance.now();
  const database = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  const db = database.db;
  const user = await seedPageUser(
    { db, keys: deriveServerKeys(backendSecret) },
    "statement@bench.example",
    10,
  );
  const accountOf = async (walletId: string) =>
    (
      await db
        .select({ id: ledgerAccounts.id })
        .from(ledgerAccounts)
        .where(eq(ledgerAccounts.walletId, walletId))
    )[0]?.id;
  const ethAccount = await accountOf(user.walletIds.ETH);
  const btcAccount = await accountOf(user.walletIds.BTC);
  if (!ethAccount || !btcAccount) throw new Error("no wallet accounts");
  const ethDeposits = await systemAccount(db, "ETH", "deposits");
  const btcDeposits = await systemAccount(db, "BTC", "deposits");
  const btcPending = await systemAccount(db, "BTC", "withdrawals_pending");
  const start = "2025-01-01T00:00:00Z";
  // 40% ETH deposits, 30% BTC deposits, 30% BTC sends, spread over 2025 (each kind interleaved).
  const [nEth, nBtc] = [Math.round(ROWS * 0.4), Math.round(ROWS * 0.3)];
  const nSends = ROWS - nEth - nBtc;
  await db.execute(sql`
    INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd, created_at)
    SELECT 'ETH', ${ethDeposits}, ${ethAccount}, 1000000000000000 * (1 + n % 97), 'deposit', 'bench-eth-' || n,
      ((1 + n % 97) * 3.0005)::text, ${start}::timestamptz + n * ${step(nEth)}::interval
    FROM generate_series(0, ${nEth - 1}) AS n`);
  await db.execute(sql`
    INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd, created_at)
    SELECT 'BTC', ${btcDeposits}, ${btcAccount}, 100000000, 'deposit', '=bench-btc-' || n, '60000',
      ${start}::timestamptz + n * ${step(nBtc)}::interval + interval '1 second'
    FROM generate_series(0, ${nBtc - 1}) AS n`);
  const destination = freshAddress("BTC");
  await db.execute(sql`
    WITH holds AS (
      INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, amount_usd, created_at)
      SELECT 'BTC', ${btcAccount}, ${btcPending}, 1000, 'withdrawal_hold', '0.6',
        ${start}::timestamptz + n * ${step(nSends)}::interval + interval '2 seconds'
      FROM generate_series(0, ${nSends - 1}) AS n
      RETURNING id, created_at
    )
    INSERT INTO withdrawals (wallet_id, amount, amount_usd, destination, status, hold_transfer_id, created_at)
    SELECT ${user.walletIds.BTC}, 1000, '0.6', ${destination}, 'pending', id, created_at FROM holds`);
  // A year of EUR rates on working days (the ECB publishes none at weekends).
  const days = [];
  for (let d = 0; d < 365; d++) {
    const at = new Date(Date.parse(start) + d * 86_400_000);
    if (at.getUTCDay() === 0 || at.getUTCDay() === 6) continue;
    days.push({ day: at.toISOString().slice(0, 10), rates: { EUR: `0.9${String(d).padStart(3, "0")}` } });
  }
  await recordRateDays(db, days, "ECB");
  await database.close();
  log(`seeded in ${round((performance.now() - seedStarted) / 1000)} s`);

  const server = await startServer({
    port,
    dataDir,
    databaseUrl,
    sessionSecret: randomBytes(32).toString("hex"),
    backendSecret,
  });
  const cookie = await signInThroughForm(server.base, user.email, PASSWORD);
  const statement = (from: string, to: string) =>
    fetch(`${server.base}/history/statement.csv?from=${from}&to=${to}&coin=all&currency=EUR`, {
      headers: { cookie },
    });
  // Warm up: the route, the backend call and the queries, on a one-day statement.
  for (let i = 0; i < 3; i++) await drain(await statement("2025-03-03", "2025-03-03"));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const baseline = processRssKiB(server.pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, processRssKiB(server.pid));
  }, 20);
  const started = performance.now();
  const response = await statement("2025-01-01", "2025-12-31");
  const firstByteMs = performance.now() - started;
  const { bytes, lines } = await drain(response);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, processRssKiB(server.pid));
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  const rows = lines - 1;
  const report = {
    database: usePostgres ? "PostgreSQL" : "PGlite",
    rows,
    // The seeded user's own ten transactions are dated now, outside 2025.
    expectedRows: ROWS,
    bytes,
    firstByteMs: round(firstByteMs),
    seconds: round(seconds, 2),
    rowsPerSecond: Math.round(rows / seconds),
    baselineRssMiB: round(baseline / 1024),
    peakRssMiB: round(peak / 1024),
    growthMiB: round((peak - baseline) / 1024),
    machine: machine(),
  };
  console.log(JSON.stringify(report, null, 2));
  if (rows !== ROWS) throw new Error(`expected ${ROWS} rows, got ${rows}`);
  await server.stop();
} finally {
  await cleanupAll();
  rmSync(dataDir, { recursive: true, force: true });
}
