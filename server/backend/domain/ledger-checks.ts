// The ledger's invariants, checked over the whole database (a restored backup is verified with
// these before restore says done, issue 32): every transfer is balanced (a positive amount,
// from one account to another of the transfer's own coin), every wallet's running balance is
// the sum of its entries (credits − debits, record 017), and what is held for pending sends
// is what the pending account holds, with no wallet below zero. Each check is one statement;
// an empty list means they all hold.
import { sql } from "drizzle-orm";
import { type AppDb, rowsOf } from "../db/index.ts";

export interface LedgerCheck {
  transfers: number;
  walletAccounts: number;
  /** One sentence per invariant that does not hold; empty when all do. */
  problems: string[];
}

export async function checkLedger(db: AppDb): Promise<LedgerCheck> {
  const problems: string[] = [];
  const [counts] = rowsOf<{ transfers: string; wallets: string }>(
    await db.execute(sql`
      SELECT (SELECT count(*) FROM ledger_transfers)::text AS transfers,
             (SELECT count(*) FROM ledger_accounts WHERE kind = 'wallet')::text AS wallets`),
  );
  const [unbalanced] = rowsOf<{ n: string }>(
    await db.execute(sql`
      SELECT count(*)::text AS n
      FROM ledger_transfers t
      LEFT JOIN ledger_accounts d ON d.id = t.debit_account_id
      LEFT JOIN ledger_accounts c ON c.id = t.credit_account_id
      WHERE t.amount <= 0 OR d.id IS NULL OR c.id IS NULL OR d.id = c.id
         OR d.coin <> t.coin OR c.coin <> t.coin`),
  );
  if (unbalanced && unbalanced.n !== "0") {
    problems.push(`${unbalanced.n} transfers are not balanced (amount, accounts or coin).`);
  }
  const [drifted] = rowsOf<{ n: string }>(
    await db.execute(sql`
      SELECT count(*)::text AS n
      FROM ledger_accounts a
      WHERE a.kind = 'wallet' AND a.balance IS DISTINCT FROM
        (SELECT coalesce(sum(CASE WHEN t.credit_account_id = a.id THEN t.amount ELSE -t.amount END), 0)
         FROM ledger_transfers t WHERE t.credit_account_id = a.id OR t.debit_account_id = a.id)`),
  );
  if (drifted && drifted.n !== "0") {
    problems.push(`${drifted.n} wallet balances differ from the sum of their entries.`);
  }
  const [negative] = rowsOf<{ n: string }>(
    await db.execute(sql`SELECT count(*)::text AS n FROM ledger_accounts WHERE balance < 0`),
  );
  if (negative && negative.n !== "0") problems.push(`${negative.n} wallet balances are below zero.`);
  // Per coin: the pending account's balance (credits − debits) equals the pending sends' amounts.
  const held = rowsOf<{ coin: string; account: string; pending: string }>(
    await db.execute(sql`
      SELECT coins.coin,
        coalesce((SELECT sum(CASE WHEN t.credit_account_id = p.id THEN t.amount ELSE -t.amount END)
                  FROM ledger_accounts p JOIN ledger_transfers t
                    ON t.credit_account_id = p.id OR t.debit_account_id = p.id
                  WHERE p.kind = 'withdrawals_pending' AND p.coin = coins.coin), 0)::text AS account,
        coalesce((SELECT sum(w.amount) FROM withdrawals w JOIN wallets wa ON wa.id = w.wallet_id
                  WHERE w.status = 'pending' AND wa.coin = coins.coin), 0)::text AS pending
      FROM (SELECT DISTINCT coin FROM ledger_accounts) coins
      ORDER BY coins.coin`),
  );
  for (const row of held) {
    if (row.account !== row.pending) {
      problems.push(
        `${row.coin}: held for pending sends ${row.pending} base units, but the pending account holds ${row.account}.`,
      );
    }
  }
  return {
    transfers: Number(counts?.transfers ?? 0),
    walletAccounts: Number(counts?.wallets ?? 0),
    problems,
  };
}
