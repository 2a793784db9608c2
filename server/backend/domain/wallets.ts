// Wallets: one per (user, coin), requested by the user, given a deposit
// address by an operator. And the client-balances view of spec call 4.
//
// States (spec section 4): no row = hasNoWallet; a row without an address =
// walletIsRequested (shown as 'Not added yet'); a row with one = hasWallet.
import { and, asc, count, desc, eq, gte, isNull, lt, or, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import { perDatabase, type AppDb } from "../db/index.ts";
import {
  chainDeposits,
  ledgerAccounts,
  ledgerTransfers,
  messageReads,
  messages,
  users,
  wallets,
  withdrawals,
  type Wallet,
} from "../db/schema.ts";
import { isUniqueViolation } from "./accounts.ts";
import { INCOMING_TRANSACTION, NOT_ADDED_YET } from "../../../common/literals.ts";
import { formatAmount } from "./amounts.ts";
import {
  balancesForUser,
  balancesForWallets,
  isUuid,
  openWalletAccount,
  type WalletBalance,
  type WithdrawalStatus,
} from "./ledger.ts";
import { visibleTo } from "./messages.ts";
import { issueAutomatically, warnIfPoolLow, type IssueOutcome, type IssuingPolicy } from "./issuing.ts";

export { INCOMING_TRANSACTION, NOT_ADDED_YET };
export const MAX_TRANSACTIONS = 1000;
/** Call 4 returns at most this many messages, newest first. */
export const MAX_MESSAGES = 1000;

export interface WalletInfo {
  id: string;
  userId: string;
  coin: Ticker;
  address: string | null;
  requestedAt: Date;
  issuedAt: Date | null;
  /** 'manual' | 'derived' | 'pool'; null while requested (or issued before issue 16). */
  addressSource: string | null;
  derivationKey: string | null;
  derivationIndex: number | null;
}

function toInfo(row: Wallet): WalletInfo {
  if (!isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
  return { ...row, coin: row.coin };
}

function isForeignKeyViolation(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    if ((current as { code?: unknown }).code === "23503") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export type RequestWalletResult =
  | {
      ok: true;
      created: boolean;
      wallet: WalletInfo;
      /** A created wallet: whether its address was issued at once, and how (record 039). */
      issuing?: IssueOutcome;
    }
  | { ok: false; reason: "user-not-found" };

/**
 * Requests the user's wallet for a coin, with its ledger account. Idempotent:
 * when the wallet exists (requested or issued), it is returned with
 * created: false and nothing is written. Concurrent requests create one.
 * With an issuing policy, a coin that issues automatically gives the new
 * wallet its address in the same transaction (issuing.ts).
 */
export async function requestWallet(
  db: AppDb,
  userId: string,
  ticker: Ticker,
  issuing?: IssuingPolicy,
): Promise<RequestWalletResult> {
  if (!isUuid(userId)) return { ok: false, reason: "user-not-found" };
  try {
    const result = await db.transaction(async (tx): Promise<RequestWalletResult> => {
      const [inserted] = await tx
        .insert(wallets)
        .values({ userId, coin: ticker })
        .onConflictDoNothing({ target: [wallets.userId, wallets.coin] })
        .returning();
      if (inserted) {
        await openWalletAccount(tx, inserted.id, ticker);
        if (!issuing) return { ok: true, created: true, wallet: toInfo(inserted) };
        const outcome = await issueAutomatically(
          tx,
          { id: inserted.id, userId, coin: ticker },
          issuing,
          "request",
        );
        return {
          ok: true,
          created: true,
          wallet: toInfo(outcome.issued ? outcome.wallet : inserted),
          issuing: outcome,
        };
      }
      const [existing] = await tx
        .select()
        .from(wallets)
        .where(and(eq(wallets.userId, userId), eq(wallets.coin, ticker)));
      if (!existing) throw new Error("wallet neither inserted nor found");
      return { ok: true, created: false, wallet: toInfo(existing) };
    });
    if (result.ok && result.issuing && issuing) warnIfPoolLow(result.issuing, issuing);
    return result;
  } catch (error) {
    if (isForeignKeyViolation(error)) return { ok: false, reason: "user-not-found" };
    throw error;
  }
}

export type IssueAddressResult =
  | { ok: true; wallet: WalletInfo }
  | { ok: false; reason: "wallet-not-found" }
  | { ok: false; reason: "already-issued"; address: string }
  /** Another wallet of the same coin already has this address. */
  | { ok: false; reason: "address-taken" };

/**
 * Gives a requested wallet its deposit address, once. The caller validates the
 * address first (validateAddress in common/addresses.ts) and passes its
 * normalised form.
 */
export async function issueAddress(
  db: AppDb,
  walletId: string,
  address: string,
): Promise<IssueAddressResult> {
  if (address.length === 0 || address.length > 256 || address.trim() !== address) {
    throw new Error("address must be 1 to 256 characters without surrounding spaces");
  }
  if (!isUuid(walletId)) return { ok: false, reason: "wallet-not-found" };
  try {
    return await db.transaction(async (tx): Promise<IssueAddressResult> => {
      const [updated] = await tx
        .update(wallets)
        .set({ address, issuedAt: new Date(), addressSource: "manual" })
        .where(and(eq(wallets.id, walletId), isNull(wallets.address)))
        .returning();
      if (updated) return { ok: true, wallet: toInfo(updated) };
      const [existing] = await tx.select().from(wallets).where(eq(wallets.id, walletId));
      if (!existing) return { ok: false, reason: "wallet-not-found" };
      return { ok: false, reason: "already-issued", address: existing.address ?? "" };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { ok: false, reason: "address-taken" };
    throw error;
  }
}

/** One wallet with its owner's e-mail, or undefined. */
export async function findWallet(
  db: AppDb,
  walletId: string,
): Promise<(WalletInfo & { email: string }) | undefined> {
  if (!isUuid(walletId)) return undefined;
  const [row] = await db
    .select({ wallet: wallets, email: users.email })
    .from(wallets)
    .innerJoin(users, eq(users.id, wallets.userId))
    .where(eq(wallets.id, walletId));
  return row ? { ...toInfo(row.wallet), email: row.email } : undefined;
}

// ---------------------------------------------------------------------------
// Call 4: client balances
// ---------------------------------------------------------------------------

export interface ClientWallet {
  id: string;
  wallet_crypto: Ticker;
  /** The address, or 'Not added yet' while requested. */
  wallet_address: string;
  /** Our addition (record 041): only while sends are paused, for the coin or for the user. */
  sends_paused?: "coin" | "user";
}

export interface ClientTransaction {
  /** The deposit's id (its chain_deposits row, which its transfer shares once credited), or the withdrawal id of a send. */
  id: string;
  /** ISO 8601, UTC, milliseconds. */
  date: string;
  wallet_id: string;
  /** 'Incoming Transaction' for a deposit, else the destination address. */
  recipient_wallet: string;
  amount_in_crypto: string;
  amount_in_dollar: string | null;
  /** The on-chain id of a deposit, the withdrawal id of a send. */
  transaction_id: string;
  transaction_crypto: Ticker;
  /** A deposit's 'pending' (waiting for confirmations) | 'Confirmed'; the withdrawal's 'pending' | 'Confirmed' | 'Declined'. */
  status: string;
  /** An XRP send's destination tag, only when it has one (issue 15). */
  destination_tag?: number;
}

export interface ClientMessage {
  id: string;
  created_at: string;
  message: string;
  open_status: 0 | 1;
}

export interface ClientBalances {
  /** Wallet id → available balance as a decimal string of the coin. */
  balances: Record<string, string>;
  wallets: ClientWallet[];
  /** Newest first. */
  transactions: ClientTransaction[];
  /** Newest first. */
  messages: ClientMessage[];
}

export interface ClientBalancesOptions {
  /** 1..1000, default 1000. */
  transactionsLimit?: number;
  /** Only transactions strictly older than this. */
  transactionsBefore?: Date;
  /** Only this coin's transactions (balances and wallets stay whole). */
  transactionsCoin?: Ticker;
  /** false: no transactions are read (the list is empty). */
  includeTransactions?: boolean;
  /** false: no messages are read (the list is empty). */
  includeMessages?: boolean;
  /** Reads the user's wallets with their balances (default: balancesForUser), say to share a read. */
  readWallets?: () => Promise<WalletBalance[]>;
}

function newestFirst(a: { date: Date; id: string }, b: { date: Date; id: string }): number {
  const byDate = b.date.getTime() - a.date.getTime();
  if (byDate !== 0) return byDate;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

interface TransactionRowsQuery {
  userId: string;
  /** Only this wallet's (undefined: every wallet of the user). */
  walletId: string | undefined;
  before: Date | undefined;
  limit: number;
}

/** One shape of transactionRows' union, its values as placeholders (walletId, userId, before, limit). */
function transactionQuery(db: AppDb, q: { byWallet: boolean; before: boolean }) {
  const walletId = sql.placeholder("walletId");
  const userId = sql.placeholder("userId");
  const before = sql`${sql.placeholder("before")}::timestamptz`;
  const limit = sql.placeholder("limit");
  // With a wallet the filter names the index's first column (an account id found in a subquery
  // for deposits), so PostgreSQL reads the index backwards and stops after `limit` rows; through
  // the join to wallets it would read all of the wallet's rows and sort them.
  const depositAccount = q.byWallet
    ? sql`${ledgerTransfers.creditAccountId} = (SELECT ${ledgerAccounts.id} FROM ${ledgerAccounts} WHERE ${ledgerAccounts.walletId} = ${walletId}::uuid)`
    : sql`${wallets.userId} = ${userId}::uuid`;
  const deposits = db
    .select({
      kind: sql<"deposit" | "send" | "unconfirmed">`'deposit'`.as("kind"),
      id: ledgerTransfers.id,
      date: ledgerTransfers.createdAt,
      walletId: wallets.id,
      amount: ledgerTransfers.amount,
      amountUsd: ledgerTransfers.amountUsd,
      // A deposit's chain transaction id; a send's destination.
      reference: ledgerTransfers.externalTxId,
      status: sql<string | null>`NULL::text`.as("status"),
      // bigint as text: the drivers disagree on how they hand a bigint back.
      tag: sql<string | null>`NULL::text`.as("tag"),
    })
    .from(ledgerTransfers)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerTransfers.creditAccountId))
    .innerJoin(wallets, eq(wallets.id, ledgerAccounts.walletId))
    .where(
      and(
        depositAccount,
        eq(ledgerTransfers.kind, "deposit"),
        q.before ? lt(ledgerTransfers.createdAt, before) : undefined,
      ),
    )
    .orderBy(desc(ledgerTransfers.createdAt), desc(ledgerTransfers.id))
    .limit(limit);
  const sends = db
    .select({
      kind: sql<"deposit" | "send" | "unconfirmed">`'send'`.as("kind"),
      id: withdrawals.id,
      date: withdrawals.createdAt,
      walletId: withdrawals.walletId,
      amount: withdrawals.amount,
      amountUsd: withdrawals.amountUsd,
      reference: withdrawals.destination,
      status: withdrawals.status,
      tag: sql<string | null>`${withdrawals.destinationTag}::text`.as("tag"),
    })
    .from(withdrawals)
    .innerJoin(wallets, eq(wallets.id, withdrawals.walletId))
    .where(
      and(
        q.byWallet
          ? sql`${withdrawals.walletId} = ${walletId}::uuid`
          : sql`${wallets.userId} = ${userId}::uuid`,
        q.before ? lt(withdrawals.createdAt, before) : undefined,
      ),
    )
    .orderBy(desc(withdrawals.createdAt), desc(withdrawals.id))
    .limit(limit);
  // Deposits still waiting for confirmations (record 040): not in the ledger yet, so not in the
  // balance; read through chain_deposits_pending_idx (wallet, created_at, id), newest first.
  const unconfirmed = db
    .select({
      kind: sql<"deposit" | "send" | "unconfirmed">`'unconfirmed'`.as("kind"),
      id: chainDeposits.id,
      date: chainDeposits.createdAt,
      walletId: chainDeposits.walletId,
      amount: chainDeposits.amount,
      amountUsd: chainDeposits.amountUsd,
      reference: chainDeposits.txid,
      status: sql<string | null>`NULL::text`.as("status"),
      tag: sql<string | null>`NULL::text`.as("tag"),
    })
    .from(chainDeposits)
    .where(
      and(
        q.byWallet
          ? sql`${chainDeposits.walletId} = ${walletId}::uuid`
          : sql`${chainDeposits.walletId} IN (SELECT ${wallets.id} FROM ${wallets} WHERE ${wallets.userId} = ${userId}::uuid)`,
        // A literal, not a parameter: the planner matches it with the partial index's predicate.
        sql`${chainDeposits.status} = 'pending'`,
        q.before ? lt(chainDeposits.createdAt, before) : undefined,
      ),
    )
    .orderBy(desc(chainDeposits.createdAt), desc(chainDeposits.id))
    .limit(limit);
  return unionAll(deposits, sends, unconfirmed).prepare(
    `coinkeep_transactions_${q.byWallet ? "wallet" : "user"}${q.before ? "_before" : ""}`,
  );
}

// Every wallet page and /history reads one page of transactions: the four shapes (one wallet or
// all of the user's, older than a date or not) are each built and prepared once per database, so
// a request neither builds the union nor has the database parse and plan it again (record 052).
const transactionQueries = perDatabase((db) => ({
  wallet: transactionQuery(db, { byWallet: true, before: false }),
  walletBefore: transactionQuery(db, { byWallet: true, before: true }),
  user: transactionQuery(db, { byWallet: false, before: false }),
  userBefore: transactionQuery(db, { byWallet: false, before: true }),
}));

/**
 * Deposits (credited and pending) and sends, each newest first (ties by id), at
 * most `limit` of each, in one round trip: each part is its own limited, ordered select.
 */
async function transactionRows(db: AppDb, q: TransactionRowsQuery) {
  const queries = transactionQueries(db);
  const query = q.walletId
    ? q.before
      ? queries.walletBefore
      : queries.wallet
    : q.before
      ? queries.userBefore
      : queries.user;
  const rows = await query.execute({
    walletId: q.walletId ?? null,
    userId: q.userId,
    before: q.before?.toISOString() ?? null,
    limit: q.limit,
  });
  return {
    deposits: rows
      .filter((r) => r.kind !== "send")
      .map((r) => ({ ...r, externalTxId: r.reference, pending: r.kind === "unconfirmed" })),
    sends: rows.flatMap((r) =>
      r.kind === "send" && r.reference !== null && r.status !== null
        ? [{ ...r, destination: r.reference, status: r.status }]
        : [],
    ),
  };
}

/**
 * What call 4 answers for the user. Transactions are deposits and sends of
 * every wallet of the user, newest first (ties by id), at most
 * transactionsLimit of them, only older than transactionsBefore when given.
 * Dates have millisecond precision in the database, so the date of the last
 * row of a page, passed back as transactionsBefore, continues exactly after
 * it (rows sharing that very millisecond beyond the page are skipped).
 */
export async function clientBalances(
  db: AppDb,
  userId: string,
  opts: ClientBalancesOptions = {},
): Promise<ClientBalances> {
  const limit = opts.transactionsLimit ?? MAX_TRANSACTIONS;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TRANSACTIONS) {
    throw new RangeError(`transactionsLimit must be 1..${MAX_TRANSACTIONS}`);
  }
  const before = opts.transactionsBefore;

  const walletRows = await (opts.readWallets ? opts.readWallets() : balancesForUser(db, userId));
  const coinOf = new Map(walletRows.map((w) => [w.walletId, w.coin]));
  const balances: Record<string, string> = {};
  for (const w of walletRows) balances[w.walletId] = formatAmount(w.coin, w.units);
  const clientWallets: ClientWallet[] = walletRows.map((w) => ({
    id: w.walletId,
    wallet_crypto: w.coin,
    wallet_address: w.address ?? NOT_ADDED_YET,
    ...(w.sendsPaused ? { sends_paused: w.sendsPaused } : {}),
  }));

  let transactions: ClientTransaction[] = [];
  if (walletRows.length > 0 && opts.includeTransactions !== false) {
    // One coin's list (the wallet page): by its wallet, so each read walks its index newest
    // first and stops at the limit. A user has one wallet per coin.
    const coinWallet = opts.transactionsCoin
      ? (walletRows.find((w) => w.coin === opts.transactionsCoin)?.walletId ?? null)
      : undefined;
    const { deposits, sends } =
      coinWallet === null
        ? { deposits: [], sends: [] }
        : await transactionRows(db, { userId, walletId: coinWallet, before, limit });
    const coin = (walletId: string): Ticker => {
      const found = coinOf.get(walletId);
      if (!found) throw new Error("transaction of a wallet not in the user's list");
      return found;
    };
    const merged = [
      ...deposits.map((d) => {
        const ticker = coin(d.walletId);
        return {
          id: d.id,
          date: d.date,
          row: {
            id: d.id,
            date: d.date.toISOString(),
            wallet_id: d.walletId,
            recipient_wallet: INCOMING_TRANSACTION,
            amount_in_crypto: formatAmount(ticker, d.amount),
            amount_in_dollar: d.amountUsd,
            transaction_id: d.externalTxId ?? d.id,
            transaction_crypto: ticker,
            status: d.pending ? "pending" : "Confirmed",
          } satisfies ClientTransaction,
        };
      }),
      ...sends.map((s) => {
        const ticker = coin(s.walletId);
        return {
          id: s.id,
          date: s.date,
          row: {
            id: s.id,
            date: s.date.toISOString(),
            wallet_id: s.walletId,
            recipient_wallet: s.destination,
            amount_in_crypto: formatAmount(ticker, s.amount),
            amount_in_dollar: s.amountUsd,
            transaction_id: s.id,
            transaction_crypto: ticker,
            status: s.status,
            ...(s.tag === null ? {} : { destination_tag: Number(s.tag) }),
          } satisfies ClientTransaction,
        };
      }),
    ];
    transactions = merged
      .toSorted(newestFirst)
      .slice(0, limit)
      .map((m) => m.row);
  }

  const messageRows =
    isUuid(userId) && opts.includeMessages !== false
      ? await db
          .select({
            id: messages.id,
            createdAt: messages.createdAt,
            message: messages.message,
            openedAt: messageReads.openedAt,
          })
          .from(messages)
          .innerJoin(users, eq(users.id, userId))
          .leftJoin(
            messageReads,
            and(eq(messageReads.messageId, messages.id), eq(messageReads.userId, userId)),
          )
          .where(visibleTo(userId))
          .orderBy(desc(messages.createdAt), desc(messages.id))
          .limit(MAX_MESSAGES)
      : [];

  return {
    balances,
    wallets: clientWallets,
    transactions,
    messages: messageRows.map((m) => ({
      id: m.id,
      created_at: m.createdAt.toISOString(),
      message: m.message,
      open_status: m.openedAt === null ? 0 : 1,
    })),
  };
}

// ---------------------------------------------------------------------------
// Operator views
// ---------------------------------------------------------------------------

export interface WalletRequest {
  walletId: string;
  userId: string;
  email: string;
  coin: Ticker;
  requestedAt: Date;
}

/** Wallets waiting for an address (of one coin, when given), oldest request first. */
export async function pendingWalletRequests(db: AppDb, coin?: Ticker): Promise<WalletRequest[]> {
  const rows = await db
    .select({
      walletId: wallets.id,
      userId: wallets.userId,
      email: users.email,
      coin: wallets.coin,
      requestedAt: wallets.requestedAt,
    })
    .from(wallets)
    .innerJoin(users, eq(users.id, wallets.userId))
    .where(coin ? and(isNull(wallets.address), eq(wallets.coin, coin)) : isNull(wallets.address))
    .orderBy(asc(wallets.requestedAt), asc(wallets.id));
  return rows.map((row) => {
    if (!isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
    return { ...row, coin: row.coin };
  });
}

export interface UserOverview {
  userId: string;
  email: string;
  createdAt: Date;
  wallets: { id: string; coin: Ticker; address: string | null; units: bigint }[];
}

/** Every user (oldest first) with each wallet's coin, address and available balance. */
export async function usersOverview(db: AppDb): Promise<UserOverview[]> {
  const people = await db
    .select({ userId: users.id, email: users.email, createdAt: users.createdAt })
    .from(users)
    .orderBy(asc(users.createdAt), asc(users.email));
  const balances = await balancesForWallets(db);
  const byUser = new Map<string, UserOverview["wallets"]>();
  for (const b of balances) {
    const list = byUser.get(b.userId) ?? [];
    list.push({ id: b.walletId, coin: b.coin, address: b.address, units: b.units });
    byUser.set(b.userId, list);
  }
  return people.map((p) => ({ ...p, wallets: byUser.get(p.userId) ?? [] }));
}

export interface SendInfo {
  sendId: string;
  walletId: string;
  userId: string;
  email: string;
  coin: Ticker;
  /** Base units of the coin. */
  units: bigint;
  /** The USD value when requested, or null when unknown. */
  amountUsd: string | null;
  /** The destination address. */
  address: string;
  /** XRP's destination tag, or null. */
  destinationTag: number | null;
  status: WithdrawalStatus;
  requestedAt: Date;
  decidedAt: Date | null;
  declineReason: string | null;
}

export interface PendingSend extends Omit<SendInfo, "status" | "decidedAt" | "declineReason"> {
  /** Whole seconds since the request, by the database's clock (the one that dated it). */
  ageSeconds: number;
}

const sendColumns = {
  sendId: withdrawals.id,
  walletId: withdrawals.walletId,
  userId: wallets.userId,
  email: users.email,
  coin: wallets.coin,
  units: withdrawals.amount,
  amountUsd: withdrawals.amountUsd,
  address: withdrawals.destination,
  destinationTag: withdrawals.destinationTag,
  requestedAt: withdrawals.createdAt,
};

function sendCoin(coin: string): Ticker {
  if (!isTicker(coin)) throw new Error(`unknown coin in the database: ${coin}`);
  return coin;
}

/** Sends waiting for an operator's decision, oldest request first. */
export async function pendingSends(db: AppDb): Promise<PendingSend[]> {
  const rows = await db
    .select({
      ...sendColumns,
      ageSeconds: sql<number>`greatest(0, floor(extract(epoch from (now() - ${withdrawals.createdAt}))))::int`,
    })
    .from(withdrawals)
    .innerJoin(wallets, eq(wallets.id, withdrawals.walletId))
    .innerJoin(users, eq(users.id, wallets.userId))
    .where(eq(withdrawals.status, "pending"))
    .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id));
  return rows.map((row) => ({
    ...row,
    coin: sendCoin(row.coin),
    ageSeconds: Number(row.ageSeconds),
  }));
}

/** One send (any status) with its owner's e-mail, or undefined. */
export async function findSend(db: AppDb, sendId: string): Promise<SendInfo | undefined> {
  if (!isUuid(sendId)) return undefined;
  const [row] = await db
    .select({
      ...sendColumns,
      status: withdrawals.status,
      decidedAt: withdrawals.decidedAt,
      declineReason: withdrawals.declineReason,
    })
    .from(withdrawals)
    .innerJoin(wallets, eq(wallets.id, withdrawals.walletId))
    .innerJoin(users, eq(users.id, wallets.userId))
    .where(eq(withdrawals.id, sendId));
  if (!row) return undefined;
  const status = row.status;
  if (status !== "pending" && status !== "Confirmed" && status !== "Declined") {
    throw new Error(`unknown send status in the database: ${status}`);
  }
  return { ...row, coin: sendCoin(row.coin), status };
}

/** The number of wallets of a user (used by the demo to tell whether it already ran). */
export async function countWallets(db: AppDb, userId: string): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(wallets)
    .where(eq(wallets.userId, userId));
  return rows[0]?.n ?? 0;
}

/** Call 7: how many of the user's messages are still unread. */
export async function unreadMessagesCount(db: AppDb, userId: string): Promise<number> {
  if (!isUuid(userId)) return 0;
  const rows = await unreadQuery(db).execute({ userId });
  return rows[0]?.unread ?? 0;
}

// Signed-in pages poll the count every 10 s: the query is prepared once per database.
const unreadQuery = perDatabase((db) => {
  const userId = sql.placeholder("userId");
  return db
    .select({ unread: count() })
    .from(messages)
    .innerJoin(users, sql`${users.id} = ${userId}::uuid`)
    .leftJoin(
      messageReads,
      and(eq(messageReads.messageId, messages.id), sql`${messageReads.userId} = ${userId}::uuid`),
    )
    .where(
      and(
        or(
          sql`${messages.userId} = ${userId}::uuid`,
          and(isNull(messages.userId), gte(messages.createdAt, users.createdAt)),
        ),
        isNull(messageReads.openedAt),
      ),
    )
    .prepare("coinkeep_wallets_unread_count");
});
