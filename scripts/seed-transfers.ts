// The README's "demo + 100,000 transfers" (issue 32's backup figures): adds `count` deposits of
// 0.000001 ETH to the demo holder's ETH wallet, straight in SQL (10,000 a statement), so the
// ledger's triggers keep the balance. Run after `npm run demo`, with no server on the database.
//
//   node scripts/seed-transfers.ts [count]      (DATA_DIR, or DATABASE_URL)
import { sql } from "drizzle-orm";
import { openDatabase, rowsOf } from "../server/backend/db/index.ts";

const count = Number(process.argv[2] ?? "100000");
const database = await openDatabase({
  dataDir: process.env.DATA_DIR ?? "data",
  databaseUrl: process.env.DATABASE_URL,
});
try {
  const [wallet] = rowsOf<{ id: string }>(
    await database.db.execute(sql`
      SELECT a.id FROM ledger_accounts a JOIN wallets w ON w.id = a.wallet_id JOIN users u ON u.id = w.user_id
      WHERE a.coin = 'ETH' AND u.email = 'demo@coinkeep.example'`),
  );
  const [deposits] = rowsOf<{ id: string }>(
    await database.db.execute(sql`SELECT id FROM ledger_accounts WHERE coin = 'ETH' AND kind = 'deposits'`),
  );
  if (!wallet || !deposits) throw new Error("No demo ETH wallet: run npm run demo first.");
  const batch = `seed-${Date.now()}`;
  for (let done = 0; done < count; done += 10_000) {
    const n = Math.min(10_000, count - done);
    await database.db.execute(sql`
      INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd)
      SELECT 'ETH', ${deposits.id}::uuid, ${wallet.id}::uuid, 1000000000000, 'deposit',
             ${batch} || '-' || (${done}::int + g), '0.00'
      FROM generate_series(1, ${n}::int) g`);
  }
  await database.maintain?.();
  console.log(`Added ${count} deposits to the demo holder's ETH wallet.`);
} finally {
  await database.close();
}
