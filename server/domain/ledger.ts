// The double-entry ledger. Every change of a balance is one transfer row that
// debits one account and credits another of the same coin, written in one
// database transaction; an account's balance is derived: credits − debits. So
// the balances of all accounts of a coin always sum to zero. Transfers are
// append-only: nothing updates or deletes one (a trigger refuses it too).
//
// A withdrawal is a two-phase transfer: a hold (wallet → withdrawals_pending)
// when requested, so the available balance drops at once; then exactly one of
// a post (pending → withdrawals_settled, 'Confirmed') or a void (pending →
// back to the wallet, 'Declined'). The unique index on pending_id enforces
// "exactly once" in the database as well.
//
// A wallet account never goes below zero: the only operation that debits it
// (the hold) first locks the account row, then sums its transfers, inside the
// same transaction. Concurrent holds on one wallet therefore run one after the
// other on PostgreSQL (PGlite runs one transaction at a time anyway).
//
// Each operation opens its own transaction; handed a transaction (drizzle's
// tx is an AppDb too) it becomes a savepoint of the caller's, so a caller can
// write, e.g., an audit row atomically with the change.
import { and, eq, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { isTicker, type Ticker } from "../../common/coins.ts";
import type { AppDb } from "../db/index.ts";
import { ledgerAccounts, ledgerTransfers, wallets, withdrawals } from "../db/schema.ts";
import { isUniqueViolation } from "./accounts.ts";
import { normaliseUsd } from "./amounts.ts";

export type SystemAccountKind = "deposits" | "withdrawals_pending" | "withdrawals_settled";
export type AccountKind = "wallet" | SystemAccountKind;
export type TransferKind = "deposit" | "withdrawal_hold" | "withdrawal_post" | "withdrawal_void";
export type WithdrawalStatus = "pending" | "Confirmed" | "Declined";

/** The longest on-chain transaction id, destination and decline reason accepted. */
export const MAX_EXTERNAL_TX_ID = 256;
export const MAX_DESTINATION = 256;
export const MAX_REASON = 1000;

export class LedgerInputError extends Error {}

// ---------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------

/** The ledger account of a wallet; created with the wallet (idempotent). */
export async function openWalletAccount(db: AppDb, walletId: string, coin: Ticker): Promise<string> {
  await db.insert(ledgerAccounts).values({ coin, kind: "wallet", walletId }).onConflictDoNothing();
  const rows = await db
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(eq(ledgerAccounts.walletId, walletId));
  const id = rows[0]?.id;
  if (!id) throw new Error("wallet ledger account missing after insert");
  return id;
}

/** The one system account of (coin, kind), created on first use. */
export async function systemAccount(db: AppDb, coin: Ticker, kind: SystemAccountKind): Promise<string> {
  const find = () =>
    db
      .select({ id: ledgerAccounts.id })
      .from(ledgerAccounts)
      .where(
        and(eq(ledgerAccounts.coin, coin), eq(ledgerAccounts.kind, kind), isNull(ledgerAccounts.walletId)),
      );
  const found = (await find())[0];
  if (found) return found.id;
  // A concurrent first use inserts too: the partial unique index keeps one, the other does nothing.
  await db.insert(ledgerAccounts).values({ coin, kind }).onConflictDoNothing();
  const id = (await find())[0]?.id;
  if (!id) throw new Error(`system account ${coin}/${kind} missing after insert`);
  return id;
}

/** credits − debits of one account, as read by the current statement. */
async function accountBalance(db: AppDb, accountId: string): Promise<bigint> {
  const rows = await db
    .select({
      balance: sql<string>`coalesce(sum(case when ${ledgerTransfers.creditAccountId} = ${accountId} then ${ledgerTransfers.amount} else -${ledgerTransfers.amount} end), 0)::text`,
    })
    .from(ledgerTransfers)
    .where(or(eq(ledgerTransfers.creditAccountId, accountId), eq(ledgerTransfers.debitAccountId, accountId)));
  return BigInt(rows[0]?.balance ?? "0");
}

interface WalletAccount {
  walletId: string;
  userId: string;
  coin: Ticker;
  address: string | null;
  accountId: string;
}

function toTicker(coin: string): Ticker {
  if (!isTicker(coin)) throw new Error(`unknown coin in the database: ${coin}`);
  return coin;
}

/**
 * A wallet with its ledger account. With lock, the account row is locked
 * (FOR NO KEY UPDATE: conflicts with other holds' locks, but not with the
 * KEY SHARE locks that foreign-key checks of concurrent deposits and voids
 * take, so those are not held up) until the transaction ends.
 */
async function findWalletAccount(
  db: AppDb,
  walletId: string,
  lock = false,
): Promise<WalletAccount | undefined> {
  if (!isUuid(walletId)) return undefined;
  const query = db
    .select({
      walletId: wallets.id,
      userId: wallets.userId,
      coin: wallets.coin,
      address: wallets.address,
      accountId: ledgerAccounts.id,
    })
    .from(ledgerAccounts)
    .innerJoin(wallets, eq(wallets.id, ledgerAccounts.walletId))
    .where(eq(ledgerAccounts.walletId, walletId));
  const rows = lock ? await query.for("no key update", { of: ledgerAccounts }) : await query;
  const row = rows[0];
  return row ? { ...row, coin: toTicker(row.coin) } : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

/** A well-formed uuid (any version): anything else cannot name a row, and PostgreSQL would refuse it. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

function requirePositive(units: bigint) {
  if (typeof units !== "bigint" || units <= 0n)
    throw new LedgerInputError("amount must be a positive bigint");
}

function usdOrNull(amountUsd: string | null | undefined): string | null {
  if (amountUsd === undefined || amountUsd === null) return null;
  const usd = normaliseUsd(amountUsd);
  if (usd === undefined) throw new LedgerInputError("amountUsd must be a plain non-negative decimal");
  return usd;
}

// ---------------------------------------------------------------------------
// Deposits
// ---------------------------------------------------------------------------

export interface CreditDepositInput {
  walletId: string;
  /** Base units; > 0. */
  units: bigint;
  /** The on-chain transaction id; credited at most once per coin. Stored as given (ids can be case-sensitive). */
  externalTxId: string;
  /** The USD value at the time, a plain decimal string. */
  amountUsd?: string | null;
}

export interface DepositRecord {
  transferId: string;
  walletId: string;
  coin: Ticker;
  units: bigint;
  externalTxId: string;
  amountUsd: string | null;
  createdAt: Date;
}

export type CreditDepositResult =
  | { ok: true; duplicate: false; deposit: DepositRecord }
  /** The transaction id was already credited (possibly to another wallet or with another amount): nothing written. */
  | { ok: true; duplicate: true; deposit: DepositRecord }
  | { ok: false; reason: "wallet-not-found" | "no-address" };

async function findDeposit(
  db: AppDb,
  coin: Ticker,
  externalTxId: string,
): Promise<DepositRecord | undefined> {
  const rows = await db
    .select({
      transferId: ledgerTransfers.id,
      walletId: ledgerAccounts.walletId,
      units: ledgerTransfers.amount,
      externalTxId: ledgerTransfers.externalTxId,
      amountUsd: ledgerTransfers.amountUsd,
      createdAt: ledgerTransfers.createdAt,
    })
    .from(ledgerTransfers)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerTransfers.creditAccountId))
    .where(
      and(
        eq(ledgerTransfers.coin, coin),
        eq(ledgerTransfers.externalTxId, externalTxId),
        eq(ledgerTransfers.kind, "deposit"),
      ),
    );
  const row = rows[0];
  if (!row?.walletId || row.externalTxId === null) return undefined;
  return { ...row, walletId: row.walletId, externalTxId: row.externalTxId, coin };
}

/** deposits → wallet. The same externalTxId for the same coin credits once; a repeat reports duplicate. */
export async function creditDeposit(db: AppDb, input: CreditDepositInput): Promise<CreditDepositResult> {
  requirePositive(input.units);
  const externalTxId = input.externalTxId;
  if (externalTxId.length === 0 || externalTxId.length > MAX_EXTERNAL_TX_ID || /\s/u.test(externalTxId)) {
    throw new LedgerInputError(`externalTxId must be 1 to ${MAX_EXTERNAL_TX_ID} characters without spaces`);
  }
  const amountUsd = usdOrNull(input.amountUsd);

  const attempt = () =>
    db.transaction(async (tx): Promise<CreditDepositResult> => {
      const wallet = await findWalletAccount(tx, input.walletId);
      if (!wallet) return { ok: false, reason: "wallet-not-found" };
      const existing = await findDeposit(tx, wallet.coin, externalTxId);
      if (existing) return { ok: true, duplicate: true, deposit: existing };
      // Deposits arrive at an address: a wallet still waiting for one cannot have received any.
      if (wallet.address === null) return { ok: false, reason: "no-address" };
      const deposits = await systemAccount(tx, wallet.coin, "deposits");
      const [row] = await tx
        .insert(ledgerTransfers)
        .values({
          coin: wallet.coin,
          debitAccountId: deposits,
          creditAccountId: wallet.accountId,
          amount: input.units,
          kind: "deposit",
          externalTxId,
          amountUsd,
        })
        .returning({ id: ledgerTransfers.id, createdAt: ledgerTransfers.createdAt });
      if (!row) throw new Error("deposit insert returned nothing");
      return {
        ok: true,
        duplicate: false,
        deposit: {
          transferId: row.id,
          walletId: wallet.walletId,
          coin: wallet.coin,
          units: input.units,
          externalTxId,
          amountUsd,
          createdAt: row.createdAt,
        },
      };
    });

  try {
    return await attempt();
  } catch (error) {
    // A concurrent credit of the same transaction id won the unique index: report it as the duplicate it is.
    if (!isUniqueViolation(error)) throw error;
    const again = await attempt();
    if (again.ok && !again.duplicate) {
      throw new Error("deposit unique violation without a duplicate", { cause: error });
    }
    return again;
  }
}

// ---------------------------------------------------------------------------
// Withdrawals
// ---------------------------------------------------------------------------

export interface HoldWithdrawalInput {
  walletId: string;
  units: bigint;
  /** Where to send; validated by the caller (server/domain/addresses.ts). */
  destination: string;
  /** The USD value at request time, a plain decimal string (or null when unknown). */
  amountUsd: string | null;
  /** When given, a wallet of anyone else is answered as not found (and nothing is written). */
  ownerId?: string;
}

export type HoldWithdrawalResult =
  | {
      ok: true;
      withdrawalId: string;
      holdTransferId: string;
      coin: Ticker;
      createdAt: Date;
      /** The available balance left after the hold. */
      available: bigint;
    }
  /** own-address: the destination is the wallet's own address. */
  | { ok: false; reason: "wallet-not-found" | "no-address" | "own-address" }
  | { ok: false; reason: "insufficient-balance"; available: bigint };

/**
 * wallet → withdrawals_pending, plus the withdrawals row ('pending'). Refused,
 * with nothing written, when the wallet's available balance is below units.
 * `available` on success is the balance left after the hold.
 */
export async function holdWithdrawal(db: AppDb, input: HoldWithdrawalInput): Promise<HoldWithdrawalResult> {
  requirePositive(input.units);
  const destination = input.destination;
  if (destination.length === 0 || destination.length > MAX_DESTINATION) {
    throw new LedgerInputError(`destination must be 1 to ${MAX_DESTINATION} characters`);
  }
  const amountUsd = usdOrNull(input.amountUsd);

  return db.transaction(async (tx): Promise<HoldWithdrawalResult> => {
    // Lock first, then read the balance: a concurrent hold on this wallet waits here until we commit.
    const wallet = await findWalletAccount(tx, input.walletId, true);
    if (!wallet) return { ok: false, reason: "wallet-not-found" };
    if (input.ownerId !== undefined && wallet.userId !== input.ownerId) {
      return { ok: false, reason: "wallet-not-found" };
    }
    if (wallet.address === null) return { ok: false, reason: "no-address" };
    if (wallet.address === destination) return { ok: false, reason: "own-address" };
    const available = await accountBalance(tx, wallet.accountId);
    if (available < input.units) return { ok: false, reason: "insufficient-balance", available };

    const pending = await systemAccount(tx, wallet.coin, "withdrawals_pending");
    const [hold] = await tx
      .insert(ledgerTransfers)
      .values({
        coin: wallet.coin,
        debitAccountId: wallet.accountId,
        creditAccountId: pending,
        amount: input.units,
        kind: "withdrawal_hold",
        amountUsd,
      })
      .returning({ id: ledgerTransfers.id });
    if (!hold) throw new Error("hold insert returned nothing");
    const [withdrawal] = await tx
      .insert(withdrawals)
      .values({
        walletId: wallet.walletId,
        amount: input.units,
        amountUsd,
        destination,
        status: "pending",
        holdTransferId: hold.id,
      })
      .returning({ id: withdrawals.id, createdAt: withdrawals.createdAt });
    if (!withdrawal) throw new Error("withdrawal insert returned nothing");
    return {
      ok: true,
      withdrawalId: withdrawal.id,
      holdTransferId: hold.id,
      coin: wallet.coin,
      createdAt: withdrawal.createdAt,
      available: available - input.units,
    };
  });
}

export type DecideWithdrawalResult =
  | { ok: true; withdrawalId: string; status: "Confirmed" | "Declined"; transferId: string }
  | { ok: false; reason: "withdrawal-not-found" }
  | { ok: false; reason: "already-decided"; status: WithdrawalStatus };

async function decide(
  db: AppDb,
  withdrawalId: string,
  outcome: { status: "Confirmed" } | { status: "Declined"; reason: string },
): Promise<DecideWithdrawalResult> {
  if (!isUuid(withdrawalId)) return { ok: false, reason: "withdrawal-not-found" };
  return db.transaction(async (tx): Promise<DecideWithdrawalResult> => {
    // The row lock makes a concurrent second decision wait, then see the first one's status.
    const rows = await tx
      .select({
        id: withdrawals.id,
        status: withdrawals.status,
        holdTransferId: withdrawals.holdTransferId,
        amount: ledgerTransfers.amount,
        coin: ledgerTransfers.coin,
        walletAccountId: ledgerTransfers.debitAccountId,
        pendingAccountId: ledgerTransfers.creditAccountId,
        amountUsd: ledgerTransfers.amountUsd,
      })
      .from(withdrawals)
      .innerJoin(ledgerTransfers, eq(ledgerTransfers.id, withdrawals.holdTransferId))
      .where(eq(withdrawals.id, withdrawalId))
      .for("no key update", { of: withdrawals });
    const row = rows[0];
    if (!row) return { ok: false, reason: "withdrawal-not-found" };
    if (row.status !== "pending") {
      return { ok: false, reason: "already-decided", status: row.status as WithdrawalStatus };
    }
    const coin = toTicker(row.coin);
    const credit =
      outcome.status === "Confirmed"
        ? await systemAccount(tx, coin, "withdrawals_settled")
        : row.walletAccountId;
    const [transfer] = await tx
      .insert(ledgerTransfers)
      .values({
        coin,
        debitAccountId: row.pendingAccountId,
        creditAccountId: credit,
        amount: row.amount,
        kind: outcome.status === "Confirmed" ? "withdrawal_post" : "withdrawal_void",
        pendingId: row.holdTransferId,
        amountUsd: row.amountUsd,
      })
      .returning({ id: ledgerTransfers.id });
    if (!transfer) throw new Error("resolution insert returned nothing");
    await tx
      .update(withdrawals)
      .set({
        status: outcome.status,
        decidedAt: new Date(),
        declineReason: outcome.status === "Declined" ? outcome.reason : null,
      })
      .where(eq(withdrawals.id, row.id));
    return { ok: true, withdrawalId: row.id, status: outcome.status, transferId: transfer.id };
  });
}

/** withdrawals_pending → withdrawals_settled; the send becomes 'Confirmed'. Exactly once per withdrawal. */
export async function postWithdrawal(db: AppDb, withdrawalId: string): Promise<DecideWithdrawalResult> {
  return decide(db, withdrawalId, { status: "Confirmed" });
}

/** withdrawals_pending → back to the wallet; the send becomes 'Declined' with the reason. Exactly once. */
export async function voidWithdrawal(
  db: AppDb,
  withdrawalId: string,
  reason: string,
): Promise<DecideWithdrawalResult> {
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_REASON) {
    throw new LedgerInputError(`reason must be 1 to ${MAX_REASON} characters`);
  }
  return decide(db, withdrawalId, { status: "Declined", reason: trimmed });
}

// ---------------------------------------------------------------------------
// Balances
// ---------------------------------------------------------------------------

/** The wallet's available balance (holds already subtracted), in base units; 0 for an unknown wallet. */
export async function walletBalance(db: AppDb, walletId: string): Promise<bigint> {
  const wallet = await findWalletAccount(db, walletId);
  return wallet ? accountBalance(db, wallet.accountId) : 0n;
}

export interface WalletBalance {
  walletId: string;
  userId: string;
  coin: Ticker;
  address: string | null;
  requestedAt: Date;
  /** Available balance in base units. */
  units: bigint;
}

/**
 * Balances of the wallets matching where (over wallets), ordered by
 * requested_at, coin. Each balance is two index-backed sums per account.
 */
export async function walletBalancesWhere(db: AppDb, where: SQL | undefined): Promise<WalletBalance[]> {
  // Spelled out: drizzle leaves a column unqualified in single-table selects, and inside the
  // subqueries an unqualified "id" would be the transfer's own id.
  const account = sql.raw(`"ledger_accounts"."id"`);
  const rows = await db
    .select({
      walletId: wallets.id,
      userId: wallets.userId,
      coin: wallets.coin,
      address: wallets.address,
      requestedAt: wallets.requestedAt,
      units: sql<string>`(
        coalesce((select sum(lt.amount) from ledger_transfers lt where lt.credit_account_id = ${account}), 0)
        - coalesce((select sum(lt.amount) from ledger_transfers lt where lt.debit_account_id = ${account}), 0)
      )::text`,
    })
    .from(wallets)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.walletId, wallets.id))
    .where(where)
    .orderBy(wallets.requestedAt, wallets.coin);
  return rows.map((row) => ({ ...row, coin: toTicker(row.coin), units: BigInt(row.units) }));
}

/** Every wallet of the user with its available balance. */
export async function balancesForUser(db: AppDb, userId: string): Promise<WalletBalance[]> {
  if (!isUuid(userId)) return [];
  return walletBalancesWhere(db, eq(wallets.userId, userId));
}

/** Balances of the given wallets (all wallets when ids is undefined). */
export async function balancesForWallets(db: AppDb, ids?: readonly string[]): Promise<WalletBalance[]> {
  if (ids === undefined) return walletBalancesWhere(db, undefined);
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return [];
  return walletBalancesWhere(db, inArray(wallets.id, valid));
}
