// Migration 0010 (issue 16) on each real database: every deposit credited
// before chain keys existed becomes its chain_deposits row (output 0,
// credited, its transfer named), so crediting that chain output again is a
// duplicate, while another output of the same transaction is a new deposit.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { creditDeposit, walletBalance } from "../../server/backend/domain/ledger.ts";
import { describeMigration } from "./migration-helpers.ts";

describeMigration("migration 0010 on $name", "0010_custody_operations", (migrating) => {
  test("backfills a credited chain_deposits row per earlier deposit; the output stays credited once", async () => {
    const { db } = migrating;
    await migrating.migrateBefore();

    // Deposits as the code before 0010 wrote them: a ledger transfer with the txid, nothing else.
    const user = randomUUID();
    await db.execute(sql`insert into users (id, email, password_hash, phrase_hmac, phrase_ciphertext, phrase_kdf_salt)
      values (${user}, 'holder@example.com', 'x', ${"0".repeat(64)}, 'x', 'x')`);
    const wallet = randomUUID();
    const account = randomUUID();
    const deposits = randomUUID();
    await db.execute(sql`insert into wallets (id, user_id, coin, address, issued_at)
      values (${wallet}, ${user}, 'BTC', 'bc1qexampleaddress', now())`);
    await db.execute(sql`insert into ledger_accounts (id, coin, kind, wallet_id, balance) values
      (${account}, 'BTC', 'wallet', ${wallet}, 0), (${deposits}, 'BTC', 'deposits', null, null)`);
    const first = randomUUID();
    const second = randomUUID();
    await db.execute(sql`insert into ledger_transfers
      (id, coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd) values
      (${first}, 'BTC', ${deposits}, ${account}, 1500, 'deposit', 'tx-old-1', '12.34'),
      (${second}, 'BTC', ${deposits}, ${account}, 25, 'deposit', 'tx-old-2', null)`);

    await migrating.migrateRest();

    const result = await db.execute(sql`select id, coin, txid, output_index::int as output_index, address,
        wallet_id, amount::text as amount, confirmations, status, transfer_id, amount_usd,
        credited_at is not null as credited
      from chain_deposits order by txid`);
    const rows = (result as unknown as { rows: Record<string, unknown>[] }).rows;
    expect(rows).toEqual([
      {
        id: first,
        coin: "BTC",
        txid: "tx-old-1",
        output_index: 0,
        address: "bc1qexampleaddress",
        wallet_id: wallet,
        amount: "1500",
        confirmations: null,
        status: "credited",
        transfer_id: first,
        amount_usd: "12.34",
        credited: true,
      },
      {
        id: second,
        coin: "BTC",
        txid: "tx-old-2",
        output_index: 0,
        address: "bc1qexampleaddress",
        wallet_id: wallet,
        amount: "25",
        confirmations: null,
        status: "credited",
        transfer_id: second,
        amount_usd: null,
        credited: true,
      },
    ]);
    expect(await walletBalance(db, wallet)).toBe(1525n);

    // The old deposit's output is credited already; another output of its transaction is new.
    const again = await creditDeposit(db, { walletId: wallet, units: 1500n, externalTxId: "tx-old-1" });
    expect(again).toMatchObject({ ok: true, duplicate: true, deposit: { transferId: first, units: 1500n } });
    expect(await walletBalance(db, wallet)).toBe(1525n);
    const other = await creditDeposit(db, {
      walletId: wallet,
      units: 7n,
      externalTxId: "tx-old-1",
      outputIndex: 1,
    });
    expect(other).toMatchObject({ ok: true, duplicate: false, deposit: { outputIndex: 1, units: 7n } });
    expect(await walletBalance(db, wallet)).toBe(1532n);
  }, 60_000);
});
