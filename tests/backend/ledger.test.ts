// The double-entry ledger over each real database (PGlite always, PostgreSQL
// when TEST_DATABASE_URL is set): deposits, holds, posts, voids, the
// database's own guarantees, a model-based property test, and concurrent
// holds that must not overspend.
import { randomBytes, randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, expect, test } from "vitest";
import type { Ticker } from "../../common/coins.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { auditLog, ledgerAccounts, ledgerTransfers, withdrawals } from "../../server/backend/db/schema.ts";
import {
  balancesForUser,
  creditDeposit,
  holdWithdrawal,
  LedgerInputError,
  postWithdrawal,
  systemAccount,
  voidWithdrawal,
  walletBalance,
} from "../../server/backend/domain/ledger.ts";
import { issueAddress, requestWallet } from "../../server/backend/domain/wallets.ts";
import { insertUser } from "./helpers.ts";
import { describeEachDatabase } from "./api-suite.ts";

const ETH = 10n ** 18n;
const BTC = 10n ** 8n;

/** A user row without the (slow) password hashing: the ledger does not care. */
const newUser = (db: AppDb) => insertUser(db, "ledger");

async function requestedWallet(db: AppDb, userId: string, coin: Ticker): Promise<string> {
  const requested = await requestWallet(db, userId, coin);
  if (!requested.ok) throw new Error("request failed");
  return requested.wallet.id;
}

/** A wallet with a (fake, unique) address: the ledger does not validate addresses. */
async function issuedWallet(db: AppDb, userId: string, coin: Ticker): Promise<string> {
  const id = await requestedWallet(db, userId, coin);
  const issued = await issueAddress(db, id, `test-${coin}-${randomBytes(8).toString("hex")}`);
  if (!issued.ok) throw new Error("issue failed");
  return id;
}

const txid = () => randomBytes(32).toString("hex");

async function counts(db: AppDb) {
  const [transfers] = await db.select({ n: sql<number>`count(*)::int` }).from(ledgerTransfers);
  const [sends] = await db.select({ n: sql<number>`count(*)::int` }).from(withdrawals);
  return { transfers: transfers?.n ?? 0, withdrawals: sends?.n ?? 0 };
}

async function deposit(db: AppDb, walletId: string, units: bigint, id = txid()) {
  const result = await creditDeposit(db, { walletId, units, externalTxId: id });
  if (!result.ok || result.duplicate) throw new Error(`deposit failed: ${JSON.stringify(result.ok)}`);
  return result.deposit;
}

async function hold(db: AppDb, walletId: string, units: bigint) {
  const result = await holdWithdrawal(db, {
    walletId,
    units,
    destination: "dest-address",
    amountUsd: "12.5",
  });
  if (!result.ok) throw new Error(`hold failed: ${result.reason}`);
  return result;
}

/** The SQLSTATE of a database error, found along drizzle's cause chain. */
function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The statement fails with this SQLSTATE. */
async function refused(statement: PromiseLike<unknown>, state: string) {
  const error = await Promise.resolve(statement).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the statement should have failed").toBeDefined();
  expect(sqlState(error)).toBe(state);
}

/** Per account: credits − debits, read from the transfers. */
async function accountBalances(db: AppDb) {
  const id = sql.raw(`"ledger_accounts"."id"`);
  const rows = await db
    .select({
      id: ledgerAccounts.id,
      coin: ledgerAccounts.coin,
      kind: ledgerAccounts.kind,
      walletId: ledgerAccounts.walletId,
      running: ledgerAccounts.balance,
      balance: sql<string>`(
        coalesce((select sum(t.amount) from ledger_transfers t where t.credit_account_id = ${id}), 0)
        - coalesce((select sum(t.amount) from ledger_transfers t where t.debit_account_id = ${id}), 0)
      )::text`,
    })
    .from(ledgerAccounts);
  return rows.map((r) => ({ ...r, balance: BigInt(r.balance) }));
}

/** The invariants that hold after any sequence of ledger operations, over the whole database. */
async function checkInvariants(db: AppDb) {
  const accounts = await accountBalances(db);
  const perCoin = new Map<string, bigint>();
  for (const a of accounts) perCoin.set(a.coin, (perCoin.get(a.coin) ?? 0n) + a.balance);
  for (const [coin, total] of perCoin) expect({ coin, total }).toEqual({ coin, total: 0n });
  for (const a of accounts.filter((x) => x.kind === "wallet")) expect(a.balance >= 0n).toBe(true);
  // The running balance (record 017) is exactly credits − debits; system accounts keep none.
  for (const a of accounts) {
    expect({ id: a.id, running: a.running }).toEqual({
      id: a.id,
      running: a.kind === "wallet" ? a.balance : null,
    });
  }

  // The pending account holds exactly the pending sends; the settled one the confirmed sends.
  const sends = await db
    .select({ coin: ledgerTransfers.coin, amount: withdrawals.amount, status: withdrawals.status })
    .from(withdrawals)
    .innerJoin(ledgerTransfers, eq(ledgerTransfers.id, withdrawals.holdTransferId));
  const sum = (coin: string, status: string) =>
    sends.filter((s) => s.coin === coin && s.status === status).reduce((n, s) => n + s.amount, 0n);
  for (const a of accounts) {
    if (a.kind === "withdrawals_pending") expect(a.balance).toBe(sum(a.coin, "pending"));
    if (a.kind === "withdrawals_settled") expect(a.balance).toBe(sum(a.coin, "Confirmed"));
  }
}

/** What deciding an already decided withdrawal answers. */
const alreadyDecided = (status: string) => ({ ok: false, reason: "already-decided", status });

describeEachDatabase("ledger on $name", (getDatabase) => {
  let db: AppDb;
  beforeAll(() => {
    db = getDatabase().database.db;
  });

  test("a deposit credits the wallet from the coin's deposits account", async () => {
    const user = await newUser(db);
    const wallet = await issuedWallet(db, user, "ETH");
    expect(await walletBalance(db, wallet)).toBe(0n);
    const id = txid();
    const result = await creditDeposit(db, {
      walletId: wallet,
      units: 3n * ETH + 1n,
      externalTxId: id,
      amountUsd: "9600.0000000000032",
    });
    expect(result).toMatchObject({
      ok: true,
      duplicate: false,
      deposit: { walletId: wallet, coin: "ETH", units: 3n * ETH + 1n, externalTxId: id },
    });
    expect(await walletBalance(db, wallet)).toBe(3n * ETH + 1n);
    await deposit(db, wallet, 2n);
    expect(await walletBalance(db, wallet)).toBe(3n * ETH + 3n);

    const [row] = await db.select().from(ledgerTransfers).where(eq(ledgerTransfers.externalTxId, id));
    expect(row).toMatchObject({
      kind: "deposit",
      coin: "ETH",
      amount: 3n * ETH + 1n,
      amountUsd: "9600.0000000000032",
    });
    expect(row?.debitAccountId).toBe(await systemAccount(db, "ETH", "deposits"));
    expect(await balancesForUser(db, user)).toMatchObject([
      { walletId: wallet, coin: "ETH", units: 3n * ETH + 3n },
    ]);
    await checkInvariants(db);
  });

  test("the same txid of the same coin credits once; the repeat reports the first credit", async () => {
    const user = await newUser(db);
    const wallet = await issuedWallet(db, user, "BTC");
    const other = await issuedWallet(db, await newUser(db), "BTC");
    const id = txid();
    const first = await deposit(db, wallet, BTC, id);
    const before = await counts(db);
    const again = await creditDeposit(db, { walletId: wallet, units: BTC, externalTxId: id });
    expect(again).toEqual({ ok: true, duplicate: true, deposit: first });
    // Even to another wallet or with another amount: the chain transaction was already counted.
    const elsewhere = await creditDeposit(db, { walletId: other, units: 5n, externalTxId: id });
    expect(elsewhere).toEqual({ ok: true, duplicate: true, deposit: first });
    expect(await counts(db)).toEqual(before);
    expect(await walletBalance(db, wallet)).toBe(BTC);
    expect(await walletBalance(db, other)).toBe(0n);
    // The same id on another coin's chain is another transaction.
    const eth = await issuedWallet(db, user, "ETH");
    expect((await creditDeposit(db, { walletId: eth, units: 7n, externalTxId: id })).ok).toBe(true);
    expect(await walletBalance(db, eth)).toBe(7n);
  });

  test("concurrent credits of one txid: one credit, the rest duplicates", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "SOL");
    const id = txid();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => creditDeposit(db, { walletId: wallet, units: 10n, externalTxId: id })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
    expect(await walletBalance(db, wallet)).toBe(10n);
  });

  test("deposits need a known wallet with an address, a positive amount and a txid", async () => {
    const user = await newUser(db);
    const requested = await requestedWallet(db, user, "XRP");
    const before = await counts(db);
    expect(await creditDeposit(db, { walletId: requested, units: 1n, externalTxId: txid() })).toEqual({
      ok: false,
      reason: "no-address",
    });
    for (const walletId of [randomUUID(), "not-a-uuid", ""]) {
      expect(await creditDeposit(db, { walletId, units: 1n, externalTxId: txid() })).toEqual({
        ok: false,
        reason: "wallet-not-found",
      });
    }
    const wallet = await issuedWallet(db, user, "ADA");
    await expect(creditDeposit(db, { walletId: wallet, units: 0n, externalTxId: txid() })).rejects.toThrow(
      LedgerInputError,
    );
    await expect(creditDeposit(db, { walletId: wallet, units: -5n, externalTxId: txid() })).rejects.toThrow(
      LedgerInputError,
    );
    await expect(creditDeposit(db, { walletId: wallet, units: 1n, externalTxId: "" })).rejects.toThrow(
      LedgerInputError,
    );
    await expect(
      creditDeposit(db, { walletId: wallet, units: 1n, externalTxId: txid(), amountUsd: "-1" }),
    ).rejects.toThrow(LedgerInputError);
    expect(await counts(db)).toEqual(before);
  });

  test("hold → post: the available balance drops at the hold and stays down; 'Confirmed'", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "ETH");
    await deposit(db, wallet, 5n * ETH);
    const held = await hold(db, wallet, 2n * ETH);
    expect(held.available).toBe(3n * ETH);
    expect(await walletBalance(db, wallet)).toBe(3n * ETH);
    const [pending] = await db.select().from(withdrawals).where(eq(withdrawals.id, held.withdrawalId));
    expect(pending).toMatchObject({
      walletId: wallet,
      amount: 2n * ETH,
      amountUsd: "12.5",
      destination: "dest-address",
      status: "pending",
      holdTransferId: held.holdTransferId,
      decidedAt: null,
      declineReason: null,
    });
    await checkInvariants(db);

    const posted = await postWithdrawal(db, held.withdrawalId);
    expect(posted).toMatchObject({ ok: true, withdrawalId: held.withdrawalId, status: "Confirmed" });
    expect(await walletBalance(db, wallet)).toBe(3n * ETH);
    const [confirmed] = await db.select().from(withdrawals).where(eq(withdrawals.id, held.withdrawalId));
    expect(confirmed?.status).toBe("Confirmed");
    expect(confirmed?.decidedAt).toBeInstanceOf(Date);
    const [post] = await db
      .select()
      .from(ledgerTransfers)
      .where(eq(ledgerTransfers.pendingId, held.holdTransferId));
    expect(post).toMatchObject({ kind: "withdrawal_post", amount: 2n * ETH });
    expect(post?.creditAccountId).toBe(await systemAccount(db, "ETH", "withdrawals_settled"));
    await checkInvariants(db);
  });

  test("hold → void: the amount returns to the wallet; 'Declined' with the reason", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "USDT");
    await deposit(db, wallet, 100_000_000n);
    const held = await hold(db, wallet, 100_000_000n);
    expect(held.available).toBe(0n);
    expect(await walletBalance(db, wallet)).toBe(0n);
    const voided = await voidWithdrawal(db, held.withdrawalId, "  Failed the compliance check.  ");
    expect(voided).toMatchObject({ ok: true, status: "Declined" });
    expect(await walletBalance(db, wallet)).toBe(100_000_000n);
    const [row] = await db.select().from(withdrawals).where(eq(withdrawals.id, held.withdrawalId));
    expect(row).toMatchObject({ status: "Declined", declineReason: "Failed the compliance check." });
    await expect(voidWithdrawal(db, held.withdrawalId, "   ")).rejects.toThrow(LedgerInputError);
    await checkInvariants(db);
  });

  test("insufficient available balance: a typed failure and nothing written", async () => {
    const user = await newUser(db);
    const wallet = await issuedWallet(db, user, "BTC");
    await deposit(db, wallet, 10n);
    await hold(db, wallet, 4n);
    const before = await counts(db);
    expect(
      await holdWithdrawal(db, { walletId: wallet, units: 7n, destination: "d", amountUsd: null }),
    ).toEqual({ ok: false, reason: "insufficient-balance", available: 6n });
    expect(await counts(db)).toEqual(before);
    // Exactly the available balance is fine.
    expect((await hold(db, wallet, 6n)).available).toBe(0n);
    expect(
      await holdWithdrawal(db, { walletId: wallet, units: 1n, destination: "d", amountUsd: null }),
    ).toEqual({
      ok: false,
      reason: "insufficient-balance",
      available: 0n,
    });
    // Unknown wallets and wallets without an address send nothing.
    const requested = await requestedWallet(db, user, "DOGE");
    expect(
      await holdWithdrawal(db, { walletId: requested, units: 1n, destination: "d", amountUsd: null }),
    ).toEqual({
      ok: false,
      reason: "no-address",
    });
    expect(
      await holdWithdrawal(db, { walletId: randomUUID(), units: 1n, destination: "d", amountUsd: null }),
    ).toEqual({ ok: false, reason: "wallet-not-found" });
    await expect(
      holdWithdrawal(db, { walletId: wallet, units: 0n, destination: "d", amountUsd: null }),
    ).rejects.toThrow(LedgerInputError);
    await expect(
      holdWithdrawal(db, { walletId: wallet, units: 1n, destination: "", amountUsd: null }),
    ).rejects.toThrow(LedgerInputError);
    expect(await counts(db)).toEqual({
      ...before,
      transfers: before.transfers + 1,
      withdrawals: before.withdrawals + 1,
    });
  });

  test("a withdrawal is decided exactly once: no second transfer", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "TRX");
    await deposit(db, wallet, 1_000n);
    const a = await hold(db, wallet, 100n);
    const b = await hold(db, wallet, 200n);
    expect((await postWithdrawal(db, a.withdrawalId)).ok).toBe(true);
    expect((await voidWithdrawal(db, b.withdrawalId, "no")).ok).toBe(true);
    const before = await counts(db);
    expect(await postWithdrawal(db, a.withdrawalId)).toEqual(alreadyDecided("Confirmed"));
    expect(await voidWithdrawal(db, a.withdrawalId, "late")).toEqual(alreadyDecided("Confirmed"));
    expect(await postWithdrawal(db, b.withdrawalId)).toEqual(alreadyDecided("Declined"));
    expect(await voidWithdrawal(db, b.withdrawalId, "again")).toEqual(alreadyDecided("Declined"));
    expect(await postWithdrawal(db, randomUUID())).toEqual({ ok: false, reason: "withdrawal-not-found" });
    expect(await postWithdrawal(db, "nope")).toEqual({ ok: false, reason: "withdrawal-not-found" });
    expect(await counts(db)).toEqual(before);
    expect(await walletBalance(db, wallet)).toBe(900n);

    // Racing decisions: one wins, the other sees it.
    const c = await hold(db, wallet, 300n);
    const raced = await Promise.all([
      postWithdrawal(db, c.withdrawalId),
      voidWithdrawal(db, c.withdrawalId, "x"),
    ]);
    expect(raced.filter((r) => r.ok)).toHaveLength(1);
    expect(raced.filter((r) => !r.ok && r.reason === "already-decided")).toHaveLength(1);
    await checkInvariants(db);
  });

  test("the database itself refuses a second resolution, edits, bad amounts and mixed coins", async () => {
    const user = await newUser(db);
    const wallet = await issuedWallet(db, user, "ETH");
    const btcWallet = await issuedWallet(db, user, "BTC");
    await deposit(db, wallet, 50n);
    const held = await hold(db, wallet, 20n);
    await postWithdrawal(db, held.withdrawalId);
    const pending = await systemAccount(db, "ETH", "withdrawals_pending");
    const [walletAccount] = await db.select().from(ledgerAccounts).where(eq(ledgerAccounts.walletId, wallet));
    const [btcAccount] = await db.select().from(ledgerAccounts).where(eq(ledgerAccounts.walletId, btcWallet));
    if (!walletAccount || !btcAccount) throw new Error("accounts missing");
    const before = await counts(db);

    // A second resolution of the same hold (unique pending_id).
    await refused(
      db.insert(ledgerTransfers).values({
        coin: "ETH",
        debitAccountId: pending,
        creditAccountId: walletAccount.id,
        amount: 20n,
        kind: "withdrawal_void",
        pendingId: held.holdTransferId,
      }),
      "23505",
    );
    /** An ETH deposit transfer written straight into the table, refused with the state. */
    const depositRefused = (debit: string, credit: string, amount: bigint, state: string) =>
      refused(
        db.insert(ledgerTransfers).values({
          coin: "ETH",
          debitAccountId: debit,
          creditAccountId: credit,
          amount,
          kind: "deposit",
          externalTxId: txid(),
        }),
        state,
      );
    // Zero, and debit = credit.
    await depositRefused(pending, walletAccount.id, 0n, "23514");
    await depositRefused(walletAccount.id, walletAccount.id, 1n, "23514");
    // A BTC account on an ETH transfer.
    await depositRefused(await systemAccount(db, "ETH", "deposits"), btcAccount.id, 1n, "23503");
    // Append-only: no UPDATE, no DELETE.
    await refused(
      db.update(ledgerTransfers).set({ amount: 1n }).where(eq(ledgerTransfers.id, held.holdTransferId)),
      "42501",
    );
    await refused(db.delete(ledgerTransfers).where(eq(ledgerTransfers.id, held.holdTransferId)), "42501");
    // The audit log is append-only too.
    await db.insert(auditLog).values({ actor: "test", action: "test.append-only", details: {} });
    await refused(db.update(auditLog).set({ actor: "someone else" }), "42501");
    await refused(db.delete(auditLog), "42501");
    expect(await counts(db)).toEqual(before);
    expect(await walletBalance(db, wallet)).toBe(30n);
  });

  test("model: random deposits, duplicates, holds, posts and voids keep every invariant", async () => {
    type Step =
      | { t: "deposit"; w: number; units: bigint }
      | { t: "duplicate"; k: number }
      | { t: "hold"; w: number; percent: number }
      | { t: "post"; k: number }
      | { t: "void"; k: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        t: fc.constant("deposit" as const),
        w: fc.nat(2),
        units: fc.oneof(fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 1n, max: 10n ** 30n })),
      }),
      fc.record({ t: fc.constant("duplicate" as const), k: fc.nat() }),
      fc.record({
        t: fc.constant("hold" as const),
        w: fc.nat(2),
        percent: fc.integer({ min: 1, max: 150 }),
      }),
      fc.record({ t: fc.constant("post" as const), k: fc.nat() }),
      fc.record({ t: fc.constant("void" as const), k: fc.nat() }),
    );

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        // Two users, three wallets over two coins: the ETH wallets share the ETH system accounts.
        const alice = await newUser(db);
        const bob = await newUser(db);
        const wallets = [
          await issuedWallet(db, alice, "ETH"),
          await issuedWallet(db, alice, "BTC"),
          await issuedWallet(db, bob, "ETH"),
        ];
        const model = {
          balances: [0n, 0n, 0n],
          deposits: [] as { w: number; units: bigint; id: string }[],
        };
        const sends: { w: number; units: bigint; id: string; status: string }[] = [];

        for (const s of steps) {
          if (s.t === "deposit") {
            const id = txid();
            const r = await creditDeposit(db, {
              walletId: wallets[s.w] ?? "",
              units: s.units,
              externalTxId: id,
            });
            expect(r.ok && !r.duplicate).toBe(true);
            model.balances[s.w] = (model.balances[s.w] ?? 0n) + s.units;
            model.deposits.push({ w: s.w, units: s.units, id });
          } else if (s.t === "duplicate") {
            const d = model.deposits[s.k % Math.max(1, model.deposits.length)];
            if (!d) continue;
            const r = await creditDeposit(db, {
              walletId: wallets[d.w] ?? "",
              units: d.units,
              externalTxId: d.id,
            });
            expect(r.ok && r.duplicate).toBe(true);
          } else if (s.t === "hold") {
            const available = model.balances[s.w] ?? 0n;
            const units = available === 0n ? 1n : (available * BigInt(s.percent)) / 100n || 1n;
            const r = await holdWithdrawal(db, {
              walletId: wallets[s.w] ?? "",
              units,
              destination: "model-destination",
              amountUsd: null,
            });
            if (units <= available) {
              if (!r.ok) throw new Error(`hold refused: ${r.reason}`);
              model.balances[s.w] = available - units;
              sends.push({ w: s.w, units, id: r.withdrawalId, status: "pending" });
            } else {
              expect(r).toEqual({ ok: false, reason: "insufficient-balance", available });
            }
          } else {
            const send = sends[s.k % Math.max(1, sends.length)];
            if (!send) continue;
            const r =
              s.t === "post" ? await postWithdrawal(db, send.id) : await voidWithdrawal(db, send.id, "model");
            if (send.status === "pending") {
              expect(r.ok).toBe(true);
              send.status = s.t === "post" ? "Confirmed" : "Declined";
              if (s.t === "void") model.balances[send.w] = (model.balances[send.w] ?? 0n) + send.units;
            } else {
              expect(r).toEqual({ ok: false, reason: "already-decided", status: send.status });
            }
          }
          for (const [i, w] of wallets.entries()) expect(await walletBalance(db, w)).toBe(model.balances[i]);
          await checkInvariants(db);
        }
      }),
      { numRuns: 20 },
    );
  });

  test("the database refuses an overdraft and any change of a running balance but a transfer's", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "ETH");
    await deposit(db, wallet, 100n);
    const [account] = await db.select().from(ledgerAccounts).where(eq(ledgerAccounts.walletId, wallet));
    if (!account) throw new Error("account missing");
    expect(account.balance).toBe(100n);
    const pending = await systemAccount(db, "ETH", "withdrawals_pending");
    const before = await counts(db);

    // A hold written past the checks of holdWithdrawal: the balance would go below zero.
    await refused(
      db.insert(ledgerTransfers).values({
        coin: "ETH",
        debitAccountId: account.id,
        creditAccountId: pending,
        amount: 101n,
        kind: "withdrawal_hold",
      }),
      "23514",
    );
    // The running balance is not edited by hand, and an account starts at zero.
    await refused(
      db.update(ledgerAccounts).set({ balance: 1_000_000n }).where(eq(ledgerAccounts.id, account.id)),
      "42501",
    );
    await refused(
      db.execute(sql`update ledger_accounts set balance = balance + 1 where kind = 'wallet'`),
      "42501",
    );
    // (Checked before the account's uniqueness: the guard refuses any account born with money.)
    const other = await requestedWallet(db, await newUser(db), "ETH");
    await refused(
      db.execute(
        sql`insert into ledger_accounts (coin, kind, wallet_id, balance) values ('ETH', 'wallet', ${other}, 5)`,
      ),
      "42501",
    );
    // A system account keeps no running balance.
    await refused(db.execute(sql`update ledger_accounts set balance = 0 where id = ${pending}`), "42501");
    expect(await counts(db)).toEqual(before);
    expect(await walletBalance(db, wallet)).toBe(100n);
    // Exactly the balance is fine, and leaves zero.
    expect((await hold(db, wallet, 100n)).available).toBe(0n);
    expect(await walletBalance(db, wallet)).toBe(0n);
    await checkInvariants(db);
  });

  test("concurrent holds, deposits, approvals and declines: every running balance equals its transfers", async () => {
    const user = await newUser(db);
    const wallets = [await issuedWallet(db, user, "ETH"), await issuedWallet(db, await newUser(db), "ETH")];
    for (const w of wallets) await deposit(db, w, 1_000n);
    // Held ahead, so the round below also approves and declines while others hold and deposit.
    const early = await Promise.all(wallets.flatMap((w) => [hold(db, w, 50n), hold(db, w, 70n)]));
    const operations = Array.from({ length: 60 }, (_, i) => {
      const walletId = wallets[i % 2] ?? "";
      switch (i % 6) {
        case 0:
        case 1:
          return holdWithdrawal(db, {
            walletId,
            units: BigInt(40 + i),
            destination: "race",
            amountUsd: null,
          });
        case 2:
          return creditDeposit(db, { walletId, units: BigInt(10 + i), externalTxId: txid() });
        case 3: {
          const send = early[i % early.length];
          return send ? postWithdrawal(db, send.withdrawalId) : Promise.resolve();
        }
        case 4: {
          const send = early[(i + 1) % early.length];
          return send ? voidWithdrawal(db, send.withdrawalId, "race") : Promise.resolve();
        }
        default:
          return walletBalance(db, walletId);
      }
    });
    const results = await Promise.all(operations);
    // Holds were refused only for want of balance, never for anything else.
    for (const r of results) {
      if (r && typeof r === "object" && "ok" in r && !r.ok) {
        expect(["insufficient-balance", "already-decided"]).toContain(r.reason);
      }
    }
    await checkInvariants(db);
    for (const w of wallets) expect((await walletBalance(db, w)) >= 0n).toBe(true);
  });

  test("20 concurrent holds of 60 % of the balance: exactly one succeeds", async () => {
    const wallet = await issuedWallet(db, await newUser(db), "ETH");
    await deposit(db, wallet, 10n * ETH);
    const before = await counts(db);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        holdWithdrawal(db, { walletId: wallet, units: 6n * ETH, destination: "race", amountUsd: null }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const r of results.filter((x) => !x.ok)) {
      expect(r).toEqual({ ok: false, reason: "insufficient-balance", available: 4n * ETH });
    }
    expect(await walletBalance(db, wallet)).toBe(4n * ETH);
    expect(await counts(db)).toEqual({
      transfers: before.transfers + 1,
      withdrawals: before.withdrawals + 1,
    });
    await checkInvariants(db);
  });
});
