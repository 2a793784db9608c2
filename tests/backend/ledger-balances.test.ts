// Migration 0006 (record 017) on each real database: a ledger written before
// running balances existed gets every wallet account's balance backfilled to
// exactly credits − debits of its transfers, system accounts get none, and the
// trigger keeps the balance from then on.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { holdWithdrawal, walletBalance } from "../../server/backend/domain/ledger.ts";
import { describeMigration } from "./migration-helpers.ts";

describeMigration("migration 0006 on $name", "0006_ledger_balances", (migrating) => {
  test("backfills each wallet's balance from its transfers; the trigger keeps it afterwards", async () => {
    const { db } = migrating;
    await migrating.migrateBefore();

    // A ledger as the code before 0006 wrote it: no balance column anywhere.
    const userA = randomUUID();
    const userB = randomUUID();
    for (const [id, email] of [
      [userA, "a@example.com"],
      [userB, "b@example.com"],
    ]) {
      await db.execute(sql`insert into users (id, email, password_hash, phrase_hmac, phrase_ciphertext, phrase_kdf_salt)
        values (${id}, ${email}, 'x', ${"0".repeat(64)}, 'x', 'x')`);
    }
    const eth = randomUUID();
    const btc = randomUUID();
    const requested = randomUUID();
    await db.execute(sql`insert into wallets (id, user_id, coin, address, issued_at) values
      (${eth}, ${userA}, 'ETH', 'eth-address', now()),
      (${btc}, ${userA}, 'BTC', 'btc-address', now()),
      (${requested}, ${userB}, 'ETH', null, null)`);
    const account = { eth: randomUUID(), btc: randomUUID(), requested: randomUUID() };
    const system = {
      ethDeposits: randomUUID(),
      ethPending: randomUUID(),
      ethSettled: randomUUID(),
      btcDeposits: randomUUID(),
      btcPending: randomUUID(),
      btcSettled: randomUUID(),
    };
    await db.execute(sql`insert into ledger_accounts (id, coin, kind, wallet_id) values
      (${account.eth}, 'ETH', 'wallet', ${eth}),
      (${account.btc}, 'BTC', 'wallet', ${btc}),
      (${account.requested}, 'ETH', 'wallet', ${requested}),
      (${system.ethDeposits}, 'ETH', 'deposits', null),
      (${system.ethPending}, 'ETH', 'withdrawals_pending', null),
      (${system.ethSettled}, 'ETH', 'withdrawals_settled', null),
      (${system.btcDeposits}, 'BTC', 'deposits', null),
      (${system.btcPending}, 'BTC', 'withdrawals_pending', null),
      (${system.btcSettled}, 'BTC', 'withdrawals_settled', null)`);
    const big = 10n ** 30n;
    const hold = { pending: randomUUID(), posted: randomUUID(), voided: randomUUID(), btc: randomUUID() };
    const transfers = [
      // ETH: deposits of 10^30 + 1005, holds of 300 (pending), 200 (posted), 100 (voided).
      sql`(${randomUUID()}, 'ETH', ${system.ethDeposits}, ${account.eth}, ${big.toString()}, 'deposit', 'tx-1', null)`,
      sql`(${randomUUID()}, 'ETH', ${system.ethDeposits}, ${account.eth}, 1005, 'deposit', 'tx-2', null)`,
      sql`(${hold.pending}, 'ETH', ${account.eth}, ${system.ethPending}, 300, 'withdrawal_hold', null, null)`,
      sql`(${hold.posted}, 'ETH', ${account.eth}, ${system.ethPending}, 200, 'withdrawal_hold', null, null)`,
      sql`(${hold.voided}, 'ETH', ${account.eth}, ${system.ethPending}, 100, 'withdrawal_hold', null, null)`,
      sql`(${randomUUID()}, 'ETH', ${system.ethPending}, ${system.ethSettled}, 200, 'withdrawal_post', null, ${hold.posted})`,
      sql`(${randomUUID()}, 'ETH', ${system.ethPending}, ${account.eth}, 100, 'withdrawal_void', null, ${hold.voided})`,
      // BTC: everything sent and settled, so 0.
      sql`(${randomUUID()}, 'BTC', ${system.btcDeposits}, ${account.btc}, 7, 'deposit', 'tx-1', null)`,
      sql`(${hold.btc}, 'BTC', ${account.btc}, ${system.btcPending}, 7, 'withdrawal_hold', null, null)`,
      sql`(${randomUUID()}, 'BTC', ${system.btcPending}, ${system.btcSettled}, 7, 'withdrawal_post', null, ${hold.btc})`,
    ];
    for (const values of transfers) {
      await db.execute(sql`insert into ledger_transfers
        (id, coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, pending_id) values ${values}`);
    }

    await migrating.migrateRest();

    const rows = await db.execute(sql`select id, kind, balance::text as balance from ledger_accounts`);
    const balances = new Map(
      (rows as unknown as { rows: { id: string; balance: string | null }[] }).rows.map((r) => [
        r.id,
        r.balance,
      ]),
    );
    const ethBalance = big + 1005n - 300n - 200n - 100n + 100n;
    expect(Object.fromEntries(balances)).toEqual({
      [account.eth]: ethBalance.toString(),
      [account.btc]: "0",
      [account.requested]: "0",
      ...Object.fromEntries(Object.values(system).map((id) => [id, null])),
    });
    expect(await walletBalance(db, eth)).toBe(ethBalance);

    // From here on the trigger keeps it: a hold of all but 1 leaves 1, and 2 more are refused.
    const held = await holdWithdrawal(db, {
      walletId: eth,
      units: ethBalance - 1n,
      destination: "elsewhere",
      amountUsd: null,
    });
    expect(held).toMatchObject({ ok: true, available: 1n });
    expect(await walletBalance(db, eth)).toBe(1n);
    expect(
      await holdWithdrawal(db, { walletId: eth, units: 2n, destination: "elsewhere", amountUsd: null }),
    ).toEqual({ ok: false, reason: "insufficient-balance", available: 1n });
  }, 60_000);
});
