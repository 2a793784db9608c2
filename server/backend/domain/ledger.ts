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
// Running balances (record 017): each wallet account carries its balance in
// ledger_accounts.balance, applied by a database trigger in the same statement
// as every transfer row, so reading a balance is one row, not a sum over the
// wallet's history. The transfers stay the source of truth (the tests check
// that the column always equals credits − debits); a CHECK keeps the column
// at or above zero, so the database itself refuses an overdraft.
//
// A wallet account never goes below zero: the only operation that debits it
// (the hold) first locks the account row, then compares its balance with the
// amount, inside the same statement. Concurrent holds on one wallet therefore
// run one after the other on PostgreSQL (PGlite runs one at a time anyway).
//
// Each operation is one statement or opens its own transaction; handed a
// transaction (drizzle's tx is an AppDb too) it runs inside the caller's (as a
// savepoint where it opens one), so a caller can write, e.g., an audit row
// atomically with the change.
import { randomUUID } from "node:crypto";
import { and, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { COINS, isTicker, type Ticker } from "../../../common/coins.ts";
import { MAX_DESTINATION_TAG } from "../../../common/literals.ts";
import { type AppDb, rowsOf } from "../db/index.ts";
import { chainDeposits, ledgerAccounts, ledgerTransfers, wallets, withdrawals } from "../db/schema.ts";
import { retryOnUniqueViolation } from "./accounts.ts";
import { formatAmount, normaliseUsd } from "./amounts.ts";
import { queueAlertForAccount } from "../mail/outbox.ts";

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
  await db
    .insert(ledgerAccounts)
    .values({ coin, kind: "wallet", walletId, balance: 0n })
    .onConflictDoNothing();
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

interface WalletAccount {
  walletId: string;
  userId: string;
  coin: Ticker;
  address: string | null;
  accountId: string;
}

export function toTicker(coin: string): Ticker {
  if (!isTicker(coin)) throw new Error(`unknown coin in the database: ${coin}`);
  return coin;
}

/** The columns of a wallet that both findWalletAccount and walletBalancesWhere read first. */
const WALLET_COLUMNS = {
  walletId: wallets.id,
  userId: wallets.userId,
  coin: wallets.coin,
  address: wallets.address,
};

/** A wallet with its ledger account. */
async function findWalletAccount(db: AppDb, walletId: string): Promise<WalletAccount | undefined> {
  if (!isUuid(walletId)) return undefined;
  const rows = await db
    .select({ ...WALLET_COLUMNS, accountId: ledgerAccounts.id })
    .from(ledgerAccounts)
    .innerJoin(wallets, eq(wallets.id, ledgerAccounts.walletId))
    .where(eq(ledgerAccounts.walletId, walletId));
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
  /** The on-chain transaction id. Stored as given (ids can be case-sensitive). */
  externalTxId: string;
  /** The output index (UTXO coins) or log index (tokens) within the transaction; default 0. */
  outputIndex?: number;
  /** The USD value at the time, a plain decimal string. */
  amountUsd?: string | null;
}

export interface DepositRecord {
  transferId: string;
  walletId: string;
  coin: Ticker;
  units: bigint;
  externalTxId: string;
  outputIndex: number;
  amountUsd: string | null;
  createdAt: Date;
  /** 'pending' while the chain output waits for confirmations (then transferId is the row's id, not yet a transfer). */
  status: "pending" | "credited";
}

export type CreditDepositResult =
  /** Credited now: a new output, or a pending one the operator vouched for. */
  | { ok: true; duplicate: false; deposit: DepositRecord }
  /** The chain output was already recorded (possibly to another wallet or with another amount): nothing written. */
  | { ok: true; duplicate: true; deposit: DepositRecord }
  | { ok: false; reason: "wallet-not-found" | "no-address" };

/** The largest output / log index accepted (PostgreSQL bigint; real chains stay far below). */
export const MAX_OUTPUT_INDEX = 2 ** 31 - 1;

/** Refuses a txid or output index the chain_deposits key cannot hold (LedgerInputError). */
export function checkChainOutput(txid: string, outputIndex: number) {
  if (txid.length === 0 || txid.length > MAX_EXTERNAL_TX_ID || /\s/u.test(txid)) {
    throw new LedgerInputError(`externalTxId must be 1 to ${MAX_EXTERNAL_TX_ID} characters without spaces`);
  }
  if (!Number.isSafeInteger(outputIndex) || outputIndex < 0 || outputIndex > MAX_OUTPUT_INDEX) {
    throw new LedgerInputError(`outputIndex must be a whole number from 0 to ${MAX_OUTPUT_INDEX}`);
  }
}

async function findDeposit(
  db: AppDb,
  coin: Ticker,
  externalTxId: string,
  outputIndex: number,
  lock = false,
): Promise<(DepositRecord & { id: string; address: string; confirmations: number | null }) | undefined> {
  const query = db
    .select({
      id: chainDeposits.id,
      transferId: chainDeposits.transferId,
      walletId: chainDeposits.walletId,
      units: chainDeposits.amount,
      externalTxId: chainDeposits.txid,
      outputIndex: chainDeposits.outputIndex,
      amountUsd: chainDeposits.amountUsd,
      createdAt: chainDeposits.createdAt,
      status: chainDeposits.status,
      address: chainDeposits.address,
      confirmations: chainDeposits.confirmations,
    })
    .from(chainDeposits)
    .where(
      and(
        eq(chainDeposits.coin, coin),
        eq(chainDeposits.txid, externalTxId),
        eq(chainDeposits.outputIndex, outputIndex),
      ),
    );
  const rows = await (lock ? query.for("update") : query);
  const row = rows[0];
  if (!row) return undefined;
  const { transferId, status, ...rest } = row;
  if (status !== "pending" && status !== "credited") throw new Error(`unknown deposit status: ${status}`);
  return {
    ...rest,
    transferId: transferId ?? row.id,
    outputIndex: Number(row.outputIndex),
    confirmations: row.confirmations === null ? null : Number(row.confirmations),
    coin,
    status,
  };
}

/**
 * deposits → wallet: the ledger half of a chain deposit, with the id its
 * chain_deposits row has (or will have), so the deposit keeps one id from
 * 'pending' to credited. Run inside the transaction that writes the row.
 */
async function insertDepositTransfer(
  tx: AppDb,
  t: {
    id: string;
    coin: Ticker;
    walletAccountId: string;
    units: bigint;
    externalTxId: string;
    amountUsd: string | null;
  },
): Promise<Date> {
  const deposits = await systemAccount(tx, t.coin, "deposits");
  const [row] = await tx
    .insert(ledgerTransfers)
    .values({
      id: t.id,
      coin: t.coin,
      debitAccountId: deposits,
      creditAccountId: t.walletAccountId,
      amount: t.units,
      kind: "deposit",
      externalTxId: t.externalTxId,
      amountUsd: t.amountUsd,
    })
    .returning({ createdAt: ledgerTransfers.createdAt });
  if (!row) throw new Error("deposit insert returned nothing");
  // The holder's "deposit received" mail, in the credit's transaction (issue 28, record 049).
  await queueAlertForAccount(tx, t.walletAccountId, "deposit_credited", {
    coin: t.coin,
    amount: formatAmount(t.coin, t.units),
  });
  return row.createdAt;
}

/**
 * Credits a pending chain_deposits row: its transfer (same id), then the row
 * becomes 'credited'. The row is locked first, so of two concurrent callers
 * one credits and the other finds it credited (answer: undefined, nothing
 * written). `confirmations` (when given) is recorded with the credit.
 */
export async function creditPendingDeposit(
  db: AppDb,
  depositId: string,
  update: { confirmations?: number | null; amountUsd?: string | null } = {},
): Promise<DepositRecord | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(chainDeposits)
      .where(and(eq(chainDeposits.id, depositId), eq(chainDeposits.status, "pending")))
      .for("update");
    if (!row) return undefined;
    const wallet = await findWalletAccount(tx, row.walletId);
    if (!wallet) throw new Error("pending deposit of a wallet without a ledger account");
    const amountUsd = usdOrNull(update.amountUsd) ?? row.amountUsd;
    const createdAt = await insertDepositTransfer(tx, {
      id: row.id,
      coin: wallet.coin,
      walletAccountId: wallet.accountId,
      units: row.amount,
      externalTxId: row.txid,
      amountUsd,
    });
    await tx
      .update(chainDeposits)
      .set({
        status: "credited",
        transferId: row.id,
        creditedAt: createdAt,
        amountUsd,
        ...(update.confirmations === undefined ? {} : { confirmations: update.confirmations }),
      })
      .where(eq(chainDeposits.id, row.id));
    return {
      transferId: row.id,
      walletId: row.walletId,
      coin: wallet.coin,
      units: row.amount,
      externalTxId: row.txid,
      outputIndex: Number(row.outputIndex),
      amountUsd,
      createdAt,
      status: "credited",
    };
  });
}

export interface ChainOutputInput {
  walletId: string;
  units: bigint;
  txid: string;
  outputIndex: number;
  /** Canonical form; the wallet's own address. */
  address: string;
  /** As reported; null when an operator vouched. */
  confirmations: number | null;
  /** 'credited': the transfer is written with the row; 'pending': the row alone. */
  status: "pending" | "credited";
  amountUsd: string | null;
}

/**
 * Writes a chain output seen for the first time, credited or pending. A
 * concurrent writer of the same output makes the insert fail on the key
 * (unique violation, rolled back with the transfer): the caller retries and
 * finds the row.
 */
export async function insertChainDeposit(db: AppDb, input: ChainOutputInput): Promise<DepositRecord> {
  requirePositive(input.units);
  checkChainOutput(input.txid, input.outputIndex);
  return db.transaction(async (tx) => {
    const wallet = await findWalletAccount(tx, input.walletId);
    if (!wallet) throw new LedgerInputError("no wallet with that id");
    const id = randomUUID();
    const credited = input.status === "credited";
    let creditedAt: Date | null = null;
    if (credited) {
      creditedAt = await insertDepositTransfer(tx, {
        id,
        coin: wallet.coin,
        walletAccountId: wallet.accountId,
        units: input.units,
        externalTxId: input.txid,
        amountUsd: input.amountUsd,
      });
    }
    // The chain output's key: a concurrent write of the same output fails here and rolls back.
    const [row] = await tx
      .insert(chainDeposits)
      .values({
        id,
        coin: wallet.coin,
        txid: input.txid,
        outputIndex: input.outputIndex,
        address: input.address,
        walletId: wallet.walletId,
        amount: input.units,
        confirmations: input.confirmations,
        status: input.status,
        transferId: credited ? id : null,
        amountUsd: input.amountUsd,
        ...(creditedAt ? { createdAt: creditedAt } : {}),
        creditedAt,
      })
      .returning({ createdAt: chainDeposits.createdAt });
    if (!row) throw new Error("chain deposit insert returned nothing");
    return {
      transferId: id,
      walletId: wallet.walletId,
      coin: wallet.coin,
      units: input.units,
      externalTxId: input.txid,
      outputIndex: input.outputIndex,
      amountUsd: input.amountUsd,
      createdAt: row.createdAt,
      status: input.status,
    };
  });
}

/** The chain output's row (locked for update when lock), or undefined. */
export async function findChainDeposit(
  db: AppDb,
  coin: Ticker,
  txid: string,
  outputIndex: number,
  lock = false,
) {
  return findDeposit(db, coin, txid, outputIndex, lock);
}

/**
 * deposits → wallet, recorded as its chain output (chain_deposits, credited):
 * an operator vouching for it. The same (coin, txid, output index) is
 * credited once whatever the wallet argument says; a repeat reports duplicate
 * and writes nothing. An output still pending for this very wallet and
 * amount is credited now (the operator vouches for its confirmations).
 */
export async function creditDeposit(db: AppDb, input: CreditDepositInput): Promise<CreditDepositResult> {
  requirePositive(input.units);
  const externalTxId = input.externalTxId;
  const outputIndex = input.outputIndex ?? 0;
  checkChainOutput(externalTxId, outputIndex);
  const amountUsd = usdOrNull(input.amountUsd);

  const attempt = () =>
    db.transaction(async (tx): Promise<CreditDepositResult> => {
      const wallet = await findWalletAccount(tx, input.walletId);
      if (!wallet) return { ok: false, reason: "wallet-not-found" };
      const existing = await findDeposit(tx, wallet.coin, externalTxId, outputIndex, true);
      if (existing) {
        if (
          existing.status === "pending" &&
          existing.walletId === wallet.walletId &&
          existing.units === input.units
        ) {
          const deposit = await creditPendingDeposit(tx, existing.id, { amountUsd });
          if (!deposit) throw new Error("locked pending deposit was not pending");
          return { ok: true, duplicate: false, deposit };
        }
        const { id: _id, address: _address, confirmations: _confirmations, ...deposit } = existing;
        return { ok: true, duplicate: true, deposit };
      }
      // Deposits arrive at an address: a wallet still waiting for one cannot have received any.
      if (wallet.address === null) return { ok: false, reason: "no-address" };
      const deposit = await insertChainDeposit(tx, {
        walletId: wallet.walletId,
        units: input.units,
        txid: externalTxId,
        outputIndex,
        address: wallet.address,
        confirmations: null,
        status: "credited",
        amountUsd,
      });
      return { ok: true, duplicate: false, deposit };
    });

  // A concurrent credit of the same output won the unique key: report it as the duplicate it is.
  return retryOnUniqueViolation(attempt);
}

// ---------------------------------------------------------------------------
// Withdrawals
// ---------------------------------------------------------------------------

export interface HoldWithdrawalInput {
  walletId: string;
  units: bigint;
  /** Where to send; validated by the caller (common/addresses.ts). */
  destination: string;
  /** XRP's destination tag (0..4294967295), checked by the caller; none when absent or null. */
  destinationTag?: number | null;
  /** The USD value at request time, a plain decimal string (or null when unknown). */
  amountUsd: string | null;
  /** When given, a wallet of anyone else is answered as not found (and nothing is written). */
  ownerId?: string;
  /** When given, the coin the caller read the amount in: a wallet of another coin is an error (nothing written). */
  coin?: Ticker;
  /**
   * The holds' clock now (record 048): with the holder's allowlist on (and no turn-off due by
   * then), only a saved address of the coin (and tag) usable by then is a destination. Default:
   * the system clock.
   */
  allowlistAt?: Date;
}

export type HoldWithdrawalResult =
  | {
      ok: true;
      withdrawalId: string;
      holdTransferId: string;
      coin: Ticker;
      createdAt: Date;
      /** createdAt as ISO 8601 (UTC, milliseconds), as the database wrote it into a recorded answer. */
      date: string;
      /** The available balance left after the hold. */
      available: bigint;
    }
  /** own-address: the destination is the wallet's own address. */
  | { ok: false; reason: "wallet-not-found" | "no-address" | "own-address" }
  | { ok: false; reason: "insufficient-balance"; available: bigint }
  /** Sends are paused (record 041) for the wallet's coin or for its user: nothing written. */
  | { ok: false; reason: "sends-paused"; scope: "coin" | "user" }
  /**
   * The holder's allowlist is on and the destination is not a saved address of the coin (and
   * tag) usable now (record 048): nothing written. usableFrom: when it was saved too recently.
   */
  | { ok: false; reason: "not-allowlisted"; usableFrom: Date | null };

/** A send's idempotency record (call 6, record 010), written by the same statement as its hold. */
export interface SendRecord {
  userId: string;
  key: string;
  /** SHA-256 of the canonical request. */
  requestHash: string;
  /** The answer to record, without `id` and `date`: the statement adds the withdrawal's. */
  response: Record<string, unknown>;
}

export type HoldSendResult =
  | HoldWithdrawalResult
  /** The key was already recorded (by this user): nothing was written; the first request's record. */
  | { ok: false; reason: "recorded"; requestHash: string; response: unknown };

/**
 * wallet → withdrawals_pending, plus the withdrawals row ('pending'). Refused,
 * with nothing written, when the wallet's available balance is below units.
 * `available` on success is the balance left after the hold.
 */
export async function holdWithdrawal(db: AppDb, input: HoldWithdrawalInput): Promise<HoldWithdrawalResult> {
  const result = await holdSend(db, input);
  if (!result.ok && result.reason === "recorded") throw new Error("a hold without a key found a record");
  return result;
}

/** A coin's amount of base units as its exact decimal text in SQL (formatAmount's, for the mail). */
const DECIMALS_OF_COIN = sql.raw(
  `CASE account.coin ${Object.values(COINS)
    .map((c) => `WHEN '${c.ticker}' THEN ${c.decimals}`)
    .join(" ")} END`,
);

/** The hold (holdSend), as one statement with named parameters; see holdSend for what it does. */
const HOLD_SEND = sql`
  WITH account AS (
    SELECT a.id, a.coin, a.balance, w.user_id, w.address
    FROM ledger_accounts a JOIN wallets w ON w.id = a.wallet_id
    WHERE a.wallet_id = ${sql.placeholder("walletId")}::uuid
    FOR NO KEY UPDATE OF a
  ),
  pending AS (
    SELECT id FROM ledger_accounts
    WHERE coin = (SELECT coin FROM account) AND kind = 'withdrawals_pending' AND wallet_id IS NULL
  ),
  recorded AS (
    SELECT request_hash, response FROM send_requests
    WHERE user_id = ${sql.placeholder("recordUserId")}::uuid
      AND idempotency_key = ${sql.placeholder("recordKey")}::text
  ),
  paused AS (
    SELECT CASE WHEN p.coin IS NULL THEN 'user' ELSE 'coin' END AS scope FROM pauses p, account
    WHERE p.what = 'sends' AND (p.coin = account.coin OR p.user_id = account.user_id)
    ORDER BY p.coin IS NULL LIMIT 1
  ),
  allowlist AS (
    SELECT (
      SELECT saved.usable_from FROM withdrawal_addresses saved
      WHERE saved.user_id = account.user_id AND saved.coin = account.coin
        AND saved.address = ${sql.placeholder("destination")}::text
        AND coalesce(saved.destination_tag, -1) = coalesce(${sql.placeholder("destinationTag")}::bigint, -1)
    ) AS usable_from
    FROM users u, account
    WHERE u.id = account.user_id AND u.allowlist_only
      AND (u.allowlist_off_at IS NULL OR u.allowlist_off_at > ${sql.placeholder("allowlistAt")}::timestamptz)
  ),
  allowed AS (
    SELECT account.id, account.coin, pending.id AS pending_id FROM account, pending
    WHERE (${sql.placeholder("ownerId")}::uuid IS NULL OR account.user_id = ${sql.placeholder("ownerId")}::uuid)
      AND (${sql.placeholder("coin")}::text IS NULL OR account.coin = ${sql.placeholder("coin")}::text)
      AND NOT EXISTS (SELECT 1 FROM recorded)
      AND NOT EXISTS (SELECT 1 FROM paused)
      AND account.address IS NOT NULL
      AND account.address <> ${sql.placeholder("destination")}::text
      AND NOT EXISTS (
        SELECT 1 FROM allowlist
        WHERE usable_from IS NULL OR usable_from > ${sql.placeholder("allowlistAt")}::timestamptz
      )
      AND account.balance >= ${sql.placeholder("units")}::numeric
  ),
  hold AS (
    INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, amount_usd)
    SELECT coin, id, pending_id, ${sql.placeholder("units")}::numeric, 'withdrawal_hold',
      ${sql.placeholder("amountUsd")}::text
    FROM allowed
    RETURNING id
  ),
  withdrawal AS (
    INSERT INTO withdrawals (wallet_id, amount, amount_usd, destination, destination_tag, status, hold_transfer_id)
    SELECT ${sql.placeholder("walletId")}::uuid, ${sql.placeholder("units")}::numeric,
      ${sql.placeholder("amountUsd")}::text, ${sql.placeholder("destination")}::text,
      ${sql.placeholder("destinationTag")}::bigint, 'pending', id
    FROM hold
    RETURNING id, hold_transfer_id,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS date
  ),
  request AS (
    INSERT INTO send_requests (user_id, idempotency_key, request_hash, withdrawal_id, response)
    SELECT ${sql.placeholder("recordUserId")}::uuid, ${sql.placeholder("recordKey")}::text,
      ${sql.placeholder("requestHash")}::text, id,
      ${sql.placeholder("response")}::jsonb || jsonb_build_object('id', id, 'date', date)
    FROM withdrawal
    WHERE ${sql.placeholder("recordKey")}::text IS NOT NULL
  ),
  mail AS (
    -- The holder's "send requested" mail, when their address is verified (issue 28, record 049).
    INSERT INTO mail_outbox (user_id, to_address, kind, data)
    SELECT u.id, u.email, 'send_requested', jsonb_build_object(
      'coin', account.coin,
      'amount', trim_scale(${sql.placeholder("units")}::numeric / power(10::numeric, ${DECIMALS_OF_COIN}))::text,
      'address', ${sql.placeholder("destination")}::text)
    FROM withdrawal, account JOIN users u ON u.id = account.user_id
    WHERE u.email_verified_at IS NOT NULL
  )
  SELECT account.coin, account.balance::text AS balance, account.user_id, account.address,
    (SELECT id FROM pending) AS pending_id, (SELECT scope FROM paused) AS paused,
    EXISTS (SELECT 1 FROM allowlist) AS allowlist_on,
    (SELECT to_char(usable_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM allowlist)
      AS allowlist_from,
    recorded.request_hash, recorded.response,
    withdrawal.id AS withdrawal_id, withdrawal.hold_transfer_id, withdrawal.date
  FROM account
  LEFT JOIN recorded ON true
  LEFT JOIN withdrawal ON true`;

/**
 * A fixed statement prepared once per database connection under `name`:
 * PostgreSQL parses and plans it once, not on every call, and its text is
 * built once per process. The values fill its placeholders.
 */
function preparedStatement(name: string, statement: SQL) {
  const query = new PgDialect().sqlToQuery(statement);
  return async <T>(db: AppDb, values: Record<string, unknown>): Promise<T[]> =>
    rowsOf<T>(await db._.session.prepareQuery(query, undefined, name, false).execute(values));
}

const runHoldSend = preparedStatement("coinkeep_ledger_hold_send", HOLD_SEND);

/**
 * holdWithdrawal, and when `record` is given, the send's idempotency record
 * too: looked up first (a recorded key answers "recorded" and nothing is
 * written), else written with the hold. The same order of checks as record 010.
 *
 * One statement, so one round trip and atomic by itself: it locks the wallet's
 * account row (FOR NO KEY UPDATE: a concurrent hold on this wallet waits, then
 * reads the balance its predecessor left; the KEY SHARE locks of foreign-key
 * checks are not held up), checks, and inserts the hold transfer, the
 * withdrawal and the record only when every check passes. The trigger of
 * migration 0006 takes the amount off the account's running balance in the same
 * statement; its CHECK (balance ≥ 0) refuses an overdraft should a check here ever be wrong.
 * A sends pause of the coin or the user (record 041) is one of the checks, so
 * a pause committed before the statement starts cannot be slipped past by a
 * separate read; one committed while it runs lets it through, as if it had
 * come a moment earlier (reconciliation counts it among the held sends).
 * The holder's allowlist (record 048) is checked the same way, after the own
 * address: with it on, the destination (and XRP tag) must be a saved address
 * of the coin whose usable_from has passed by `allowlistAt`. The users row is
 * read by its key within the statement; the saved address is looked up (by
 * the unique index on user, coin, address and tag) only when the allowlist is
 * on: no extra round trip, and no read of withdrawal_addresses for anyone else.
 */
export async function holdSend(
  db: AppDb,
  input: HoldWithdrawalInput & { record?: SendRecord },
): Promise<HoldSendResult> {
  requirePositive(input.units);
  const destination = input.destination;
  if (destination.length === 0 || destination.length > MAX_DESTINATION) {
    throw new LedgerInputError(`destination must be 1 to ${MAX_DESTINATION} characters`);
  }
  const amountUsd = usdOrNull(input.amountUsd);
  const tag = input.destinationTag;
  if (tag != null && !(Number.isSafeInteger(tag) && tag >= 0 && tag <= MAX_DESTINATION_TAG)) {
    throw new LedgerInputError("destination tag must be an integer from 0 to 4294967295");
  }
  if (!isUuid(input.walletId)) return { ok: false, reason: "wallet-not-found" };
  const ownerId = input.ownerId;
  if (ownerId !== undefined && !isUuid(ownerId)) return { ok: false, reason: "wallet-not-found" };
  const record = input.record;
  const allowlistAt = input.allowlistAt ?? new Date();

  interface Row {
    coin: string;
    balance: string;
    user_id: string;
    address: string | null;
    pending_id: string | null;
    /** The sends pause in force for the wallet's coin ('coin') or its user ('user'), else null. */
    paused: "coin" | "user" | null;
    /** The holder's allowlist applies; allowlist_from: the saved destination's usable_from (ISO), if saved. */
    allowlist_on: boolean;
    allowlist_from: string | null;
    request_hash: string | null;
    response: unknown;
    withdrawal_id: string | null;
    hold_transfer_id: string | null;
    /** created_at (timestamp(3)) as ISO 8601: the drivers disagree on how they hand a timestamp back. */
    date: string | null;
  }
  const [row] = await runHoldSend<Row>(db, {
    walletId: input.walletId,
    ownerId: ownerId ?? null,
    coin: input.coin ?? null,
    units: input.units.toString(),
    destination,
    destinationTag: input.destinationTag ?? null,
    amountUsd,
    allowlistAt: allowlistAt.toISOString(),
    recordUserId: record?.userId ?? null,
    recordKey: record?.key ?? null,
    requestHash: record?.requestHash ?? null,
    response: record ? JSON.stringify(record.response) : null,
  });
  if (!row) return { ok: false, reason: "wallet-not-found" };
  const coin = toTicker(row.coin);
  const balance = BigInt(row.balance);
  if (row.withdrawal_id !== null) {
    if (row.hold_transfer_id === null || row.date === null) {
      throw new Error("hold statement returned an incomplete withdrawal");
    }
    return {
      ok: true,
      withdrawalId: row.withdrawal_id,
      holdTransferId: row.hold_transfer_id,
      coin,
      createdAt: new Date(row.date),
      date: row.date,
      available: balance - input.units,
    };
  }
  // Nothing written: the first failing check, in the order of `allowed` above.
  if (ownerId !== undefined && row.user_id !== ownerId.toLowerCase())
    return { ok: false, reason: "wallet-not-found" };
  if (input.coin !== undefined && coin !== input.coin) {
    throw new Error(`hold of ${input.coin} units asked of a ${coin} wallet`);
  }
  if (row.request_hash !== null) {
    const response: unknown = typeof row.response === "string" ? JSON.parse(row.response) : row.response;
    return { ok: false, reason: "recorded", requestHash: row.request_hash, response };
  }
  if (row.paused !== null) return { ok: false, reason: "sends-paused", scope: row.paused };
  if (row.address === null) return { ok: false, reason: "no-address" };
  if (row.address === destination) return { ok: false, reason: "own-address" };
  if (row.allowlist_on) {
    const usableFrom = row.allowlist_from === null ? null : new Date(row.allowlist_from);
    if (usableFrom === null || usableFrom.getTime() > allowlistAt.getTime()) {
      return { ok: false, reason: "not-allowlisted", usableFrom };
    }
  }
  if (balance < input.units) return { ok: false, reason: "insufficient-balance", available: balance };
  if (row.pending_id === null) {
    // The coin's first send ever: create its pending account, then hold again.
    await systemAccount(db, coin, "withdrawals_pending");
    return holdSend(db, input);
  }
  throw new Error("hold statement wrote nothing although every check passed");
}

export type DecideWithdrawalResult =
  | { ok: true; withdrawalId: string; status: "Confirmed" | "Declined"; transferId: string }
  | { ok: false; reason: "withdrawal-not-found" }
  | { ok: false; reason: "already-decided"; status: WithdrawalStatus };

/** Who decides a send (a staff member's e-mail, an operator's --as), kept in withdrawals.decided_by. */
export interface DecideOptions {
  decidedBy?: string;
}

async function decide(
  db: AppDb,
  withdrawalId: string,
  outcome: { status: "Confirmed" } | { status: "Declined"; reason: string },
  opts: DecideOptions,
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
        destination: withdrawals.destination,
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
        decidedBy: opts.decidedBy ?? null,
        declineReason: outcome.status === "Declined" ? outcome.reason : null,
      })
      .where(eq(withdrawals.id, row.id));
    // The holder's mail of the decision, in its transaction (issue 28, record 049).
    await queueAlertForAccount(
      tx,
      row.walletAccountId,
      outcome.status === "Confirmed" ? "send_confirmed" : "send_declined",
      { coin, amount: formatAmount(coin, row.amount), address: row.destination },
    );
    return { ok: true, withdrawalId: row.id, status: outcome.status, transferId: transfer.id };
  });
}

/** withdrawals_pending → withdrawals_settled; the send becomes 'Confirmed'. Exactly once per withdrawal. */
export async function postWithdrawal(
  db: AppDb,
  withdrawalId: string,
  opts: DecideOptions = {},
): Promise<DecideWithdrawalResult> {
  return decide(db, withdrawalId, { status: "Confirmed" }, opts);
}

/** withdrawals_pending → back to the wallet; the send becomes 'Declined' with the reason. Exactly once. */
export async function voidWithdrawal(
  db: AppDb,
  withdrawalId: string,
  reason: string,
  opts: DecideOptions = {},
): Promise<DecideWithdrawalResult> {
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_REASON) {
    throw new LedgerInputError(`reason must be 1 to ${MAX_REASON} characters`);
  }
  return decide(db, withdrawalId, { status: "Declined", reason: trimmed }, opts);
}

// ---------------------------------------------------------------------------
// Balances
// ---------------------------------------------------------------------------

/** The wallet's available balance (holds already subtracted), in base units; 0 for an unknown wallet. */
export async function walletBalance(db: AppDb, walletId: string): Promise<bigint> {
  if (!isUuid(walletId)) return 0n;
  const rows = await db
    .select({ balance: ledgerAccounts.balance })
    .from(ledgerAccounts)
    .where(eq(ledgerAccounts.walletId, walletId));
  return rows[0]?.balance ?? 0n;
}

export interface WalletBalance {
  walletId: string;
  userId: string;
  coin: Ticker;
  address: string | null;
  requestedAt: Date;
  /** Available balance in base units. */
  units: bigint;
  /** A sends pause in force for the wallet's coin ('coin') or its user ('user'), else null (record 041). */
  sendsPaused: "coin" | "user" | null;
}

/**
 * Balances of the wallets matching where (over wallets), ordered by
 * requested_at, coin: each wallet account's running balance.
 */
export async function walletBalancesWhere(db: AppDb, where: SQL | undefined): Promise<WalletBalance[]> {
  const rows = await db
    .select({
      ...WALLET_COLUMNS,
      requestedAt: wallets.requestedAt,
      units: ledgerAccounts.balance,
      // One subquery of the same read (the pauses table has a handful of rows), so the send form knows.
      sendsPaused: sql<"coin" | "user" | null>`(
        SELECT CASE WHEN p.coin IS NULL THEN 'user' ELSE 'coin' END FROM pauses p
        WHERE p.what = 'sends' AND (p.coin = ${wallets.coin} OR p.user_id = ${wallets.userId})
        ORDER BY p.coin IS NULL LIMIT 1)`,
    })
    .from(wallets)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.walletId, wallets.id))
    .where(where)
    .orderBy(wallets.requestedAt, wallets.coin);
  return rows.map((row) => {
    if (row.units === null) throw new Error("wallet account without a running balance");
    return { ...row, coin: toTicker(row.coin), units: row.units };
  });
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
