// Call 6 under concurrent load: many sends of one wallet at the same moment,
// through the API handler, on every database (on PostgreSQL they really run in
// parallel over a pool of connections; PGlite runs one transaction at a time).
// Whatever the interleaving, the wallet never spends more than it holds.
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { beforeAll, expect, test } from "vitest";
import type { AppDb } from "../../server/backend/db/index.ts";
import { withdrawals } from "../../server/backend/db/schema.ts";
import {
  creditDeposit,
  postWithdrawal,
  voidWithdrawal,
  walletBalance,
} from "../../server/backend/domain/ledger.ts";
import { randomAddress, fundedWallet, inProcess } from "./helpers.ts";
import { describeEachDatabase, connectApi } from "./api-suite.ts";

const WEI = 10n ** 18n;

describeEachDatabase("concurrent sends on $name", { openTimeout: 60_000 }, (getDatabase) => {
  const api = connectApi(inProcess, getDatabase);
  const { call } = api;
  let db: AppDb;
  beforeAll(() => {
    db = api.db;
  });

  /** A user whose ETH wallet holds `wei`. */
  async function holder(wei: bigint) {
    const { email, twelveWords, userId } = await api.newAccount("race");
    const { walletId } = await fundedWallet(db, userId, "ETH", { deposit: wei });
    const destination = randomAddress("ETH");
    const send = (amount: string, key?: string) =>
      call("/request-transaction", {
        email,
        twelveWords,
        amount,
        amount_in_usd: "0",
        receiver_wallet_address: destination,
        wallet_id: walletId,
        ...(key ? { idempotency_key: key } : {}),
      });
    return { walletId, send };
  }

  /** Held and settled sends of the wallet, in wei (declined ones returned their funds). */
  async function spent(walletId: string): Promise<bigint> {
    const rows = await db
      .select({ total: sql<string>`coalesce(sum(amount), 0)::text` })
      .from(withdrawals)
      .where(sql`${withdrawals.walletId} = ${walletId} and ${withdrawals.status} <> 'Declined'`);
    return BigInt(rows[0]?.total ?? "0");
  }

  /** Wallet accounts whose balance (credits − debits) is below zero: there must never be one. */
  async function negativeWallets(): Promise<number> {
    const rows = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from (
        select a.id
        from ledger_accounts a
        left join ledger_transfers t on a.id in (t.credit_account_id, t.debit_account_id)
        where a.kind = 'wallet'
        group by a.id
        having coalesce(sum(case when a.id = t.credit_account_id then t.amount else -t.amount end), 0) < 0
      ) negative`);
    const list = Array.isArray(rows) ? rows : (rows as { rows: { n: number }[] }).rows;
    return Number(list[0]?.n ?? -1);
  }

  /** Wallet accounts whose running balance (record 017) differs from credits − debits: there must never be one. */
  async function runningBalanceMismatches(): Promise<number> {
    const rows = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from ledger_accounts a
      where a.kind = 'wallet' and a.balance is distinct from (
        coalesce((select sum(t.amount) from ledger_transfers t where t.credit_account_id = a.id), 0)
        - coalesce((select sum(t.amount) from ledger_transfers t where t.debit_account_id = a.id), 0))`);
    const list = Array.isArray(rows) ? rows : (rows as { rows: { n: number }[] }).rows;
    return Number(list[0]?.n ?? -1);
  }

  test("20 parallel sends of 60 % of the balance: exactly one goes through", async () => {
    const { walletId, send } = await holder(10n * WEI);
    const answers = await Promise.all(Array.from({ length: 20 }, () => send("6")));
    const statuses = answers.map((a) => a.status).toSorted();
    expect(statuses).toEqual([200, ...Array.from({ length: 19 }, () => 422)]);
    for (const a of answers.filter((x) => x.status === 422)) {
      expect(a.body).toEqual({
        success: false,
        code: "insufficient_balance",
        message: "Insufficient balance.",
      });
    }
    expect(await walletBalance(db, walletId)).toBe(4n * WEI);
    expect(await spent(walletId)).toBe(6n * WEI);
    expect(await negativeWallets()).toBe(0);
    expect(await runningBalanceMismatches()).toBe(0);
  });

  test("100 parallel small sends never spend more than the balance, and the balance never goes below zero", async () => {
    // 1 ETH; each send 0.015 ETH: 66 of them fit (0.99 ETH), the 67th would not.
    const { walletId, send } = await holder(WEI);
    const answers = await Promise.all(Array.from({ length: 100 }, () => send("0.015")));
    const ok = answers.filter((a) => a.status === 200).length;
    expect(answers.every((a) => a.status === 200 || a.status === 422)).toBe(true);
    expect(ok).toBe(66);
    const balance = await walletBalance(db, walletId);
    expect(balance).toBe(WEI - 66n * 15n * 10n ** 15n);
    expect(balance >= 0n).toBe(true);
    expect(await spent(walletId)).toBe(66n * 15n * 10n ** 15n);
    expect(await negativeWallets()).toBe(0);
    expect(await runningBalanceMismatches()).toBe(0);
  });

  test("the same idempotency key from 10 parallel requests makes one send, beside 5 sends with keys of their own", async () => {
    // Enough for all of them: this is about the key, not the balance (tested above).
    const { walletId, send } = await holder(10n * WEI);
    const key = `same-${randomBytes(12).toString("hex")}`;
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => send("1", key)),
      ...Array.from({ length: 5 }, (_, i) => send("1", `other-${i}-${randomBytes(12).toString("hex")}`)),
    ]);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    const keyed = answers.slice(0, 10);
    expect(new Set(keyed.map((a) => (a.body.transaction as { id: string }).id)).size).toBe(1);
    const others = answers.slice(10).map((a) => (a.body.transaction as { id: string }).id);
    expect(new Set(others).size).toBe(5);
    expect(await walletBalance(db, walletId)).toBe(4n * WEI);
    const rows = await db
      .select({ id: withdrawals.id })
      .from(withdrawals)
      .where(eq(withdrawals.walletId, walletId));
    expect(rows).toHaveLength(6);
  });

  test("20 parallel decisions on one send leave exactly one outcome", async () => {
    const { walletId, send } = await holder(2n * WEI);
    const sent = await send("1.5");
    const id = (sent.body.transaction as { id: string }).id;
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? postWithdrawal(db, id) : voidWithdrawal(db, id, "Declined in a race."),
      ),
    );
    const winners = decisions.filter((d) => d.ok);
    expect(winners).toHaveLength(1);
    const outcome = winners[0]?.ok ? winners[0].status : undefined;
    for (const d of decisions.filter((x) => !x.ok)) {
      expect(d).toEqual({ ok: false, reason: "already-decided", status: outcome });
    }
    expect(await walletBalance(db, walletId)).toBe(outcome === "Declined" ? 2n * WEI : WEI / 2n);
    expect(await negativeWallets()).toBe(0);
    expect(await runningBalanceMismatches()).toBe(0);
  });

  test("parallel sends, deposits, approvals and declines on two wallets: balances match the transfers", async () => {
    const a = await holder(3n * WEI);
    const b = await holder(WEI);
    // Sends to decide while the rest runs.
    const first = await Promise.all([a.send("0.5"), a.send("0.25"), b.send("0.5")]);
    const ids = first.map((r) => (r.body.transaction as { id: string }).id);
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).send("0.07")),
      ...Array.from({ length: 6 }, (_, i) =>
        creditDeposit(db, {
          walletId: (i % 2 === 0 ? a : b).walletId,
          units: WEI / 10n,
          externalTxId: `mixed-${randomBytes(8).toString("hex")}`,
        }),
      ),
      postWithdrawal(db, ids[0] ?? ""),
      voidWithdrawal(db, ids[1] ?? "", "Declined while others send."),
      voidWithdrawal(db, ids[2] ?? "", "Declined while others send."),
    ]);
    const sends = answers.slice(0, 30) as { status: number }[];
    expect(sends.every((r) => r.status === 200 || r.status === 422)).toBe(true);
    expect(answers.slice(30).every((r) => "ok" in r && r.ok)).toBe(true);
    // What each wallet holds is what came in less what is held or settled.
    for (const w of [a, b]) {
      const rows = await db.execute<{ total: string }>(sql`
        select (coalesce((select sum(t.amount) from ledger_transfers t
                 join ledger_accounts x on x.id = t.credit_account_id
                 where x.wallet_id = ${w.walletId} and t.kind = 'deposit'), 0)
               - ${(await spent(w.walletId)).toString()}::numeric)::text as total`);
      const list = Array.isArray(rows) ? rows : (rows as { rows: { total: string }[] }).rows;
      expect(await walletBalance(db, w.walletId)).toBe(BigInt(list[0]?.total ?? "-1"));
    }
    expect(await negativeWallets()).toBe(0);
    expect(await runningBalanceMismatches()).toBe(0);
  });
});
