// Statements (issue 28 item 2, record 050): one holder's deposits and sends of
// a date range (UTC days, both included), one coin or all, oldest first, as
// CSV that is written as it is read and never held whole.
//
// Reading: one reader per (wallet, kind) — credited deposits through the
// ledger's (credit account, created_at, id) index, unconfirmed deposits
// through chain_deposits_pending_idx, sends through withdrawals_wallet_created_idx
// — each paging by keyset ((created_at, id) after the last row it gave), PAGE
// rows at a time, every page its own short query (no transaction is held open:
// PGlite takes turns, record 036). The readers are merged by (date, id). At most
// readers × PAGE rows are in memory, whatever the statement's length.
//
// Values: the USD value recorded when the transaction was made (amount_usd)
// times the currency's ECB multiplier of the transaction's UTC day, or of the
// nearest earlier recorded day (the source cell says which); none recorded at
// all, or no USD value: the value cell is empty and the source cell says why.
import { and, asc, eq, gte, lt, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { COINS, type Ticker } from "../../../common/coins.ts";
import { toCsv } from "../../../common/csv.ts";
import type { StatementRequest } from "../../../common/contract/statement.ts";
import { divide, multiply, parseDecimal, round, toFixed, toPlain } from "../../../common/decimal.ts";
import { log } from "../../../common/log.ts";
import type { AppDb } from "../db/index.ts";
import { chainDeposits, ledgerAccounts, ledgerTransfers, wallets, withdrawals } from "../db/schema.ts";
import { ratesForRange, type RecordedRate } from "./fx-history.ts";
import { isUuid } from "./ledger.ts";

/** Rows per page of each reader. */
export const STATEMENT_PAGE = 500;

/** One line of a statement before it is valued and written. */
export interface StatementRow {
  date: Date;
  id: string;
  coin: Ticker;
  direction: "in" | "out";
  units: bigint;
  amountUsd: string | null;
  /** As the app shows it: Unconfirmed, Confirmed, Declined. */
  status: string;
  address: string;
  destinationTag: string | null;
  transactionId: string;
}

/** The statement's columns, in order; the value and price columns name the currency. */
export function statementHeader(currency: string): string[] {
  return [
    "Date (UTC)",
    "Coin",
    "Direction",
    "Amount",
    `Value (${currency})`,
    `Price (${currency} per coin)`,
    "Price source",
    "USD value recorded",
    `Rate (USD to ${currency})`,
    "Status",
    "Address",
    "Destination tag",
    "Transaction ID",
  ];
}

const STATUS_SHOWN: Readonly<Record<string, string>> = { pending: "Unconfirmed" };

/** An amount in its coin's base units as exact decimal text with all of the coin's decimals. */
export function exactAmount(coin: Ticker, units: bigint): string {
  return toFixed({ units, scale: COINS[coin].decimals }, COINS[coin].decimals);
}

/** A price: 8 decimals at most, 2 at least (55000.1 → "55000.10", 0.123456789 → "0.12345679"). */
function priceText(value: { units: bigint; scale: number }): string {
  const plain = toPlain(round(value, 8));
  const [whole, fraction = ""] = plain.split(".");
  return `${whole}.${fraction.padEnd(2, "0")}`;
}

/**
 * Finds the rate of a day among the recorded ones, walking forward: rows come
 * oldest first, so each lookup starts where the previous one ended.
 */
export function rateFinder(rates: readonly RecordedRate[]) {
  let at = -1;
  return (day: string): RecordedRate | null => {
    if (at >= 0 && (rates[at]?.day ?? "") > day) at = -1; // not in order: start again
    while (at + 1 < rates.length && (rates[at + 1]?.day ?? "") <= day) at += 1;
    return at >= 0 ? (rates[at] ?? null) : null;
  };
}

/** The cells of one row, valued in `currency` (USD: the recorded value as it is). */
export function statementCells(
  row: StatementRow,
  currency: string,
  rateOf: (day: string) => RecordedRate | null,
): string[] {
  const day = row.date.toISOString().slice(0, 10);
  const usd = parseDecimal(row.amountUsd);
  let value = "";
  let price = "";
  let source: string;
  let rate = "";
  if (usd === undefined) {
    source = "No USD value was recorded for this transaction";
  } else {
    let multiplier = parseDecimal("1");
    if (currency === "USD") {
      source = "USD value recorded at the transaction";
      rate = "1";
    } else {
      const found = rateOf(day);
      multiplier = found ? parseDecimal(found.multiplier) : undefined;
      if (!found || !multiplier) {
        source = `No ECB rate recorded on or before ${day}`;
      } else {
        rate = found.multiplier;
        source =
          found.day === day
            ? `USD value recorded at the transaction × ECB rate of ${found.day}`
            : `USD value recorded at the transaction × ECB rate of ${found.day} (none for ${day})`;
      }
    }
    if (multiplier) {
      const fiat = multiply(usd, multiplier);
      value = toFixed(fiat, 2);
      const amount = { units: row.units, scale: COINS[row.coin].decimals };
      price = priceText(divide(fiat, amount, 10));
    }
  }
  return [
    row.date.toISOString(),
    row.coin,
    row.direction,
    exactAmount(row.coin, row.units),
    value,
    price,
    source,
    row.amountUsd ?? "",
    rate,
    STATUS_SHOWN[row.status] ?? row.status,
    row.address,
    row.destinationTag ?? "",
    row.transactionId,
  ];
}

/** A CSV line, written by the audit export's own writer (common/csv.ts: every cell quoted, formula starts defused, CRLF). */
export const csvLine = (cells: readonly string[]) => toCsv([cells]);

interface Cursor {
  date: Date;
  id: string;
}

/** The keyset condition: (created_at, id) after the cursor, and inside the range. */
function keyset(
  createdAt: AnyPgColumn,
  id: AnyPgColumn,
  range: { start: Date; end: Date },
  after: Cursor | null,
) {
  return and(
    gte(createdAt, range.start),
    lt(createdAt, range.end),
    after
      ? sql`(${createdAt}, ${id}) > (${after.date.toISOString()}::timestamptz, ${after.id}::uuid)`
      : undefined,
  );
}

type PageReader = (after: Cursor | null) => Promise<StatementRow[]>;

/** Rows of one reader, one page at a time, in (date, id) order. */
function rowsOf(read: PageReader): () => Promise<StatementRow | null> {
  let buffer: StatementRow[] = [];
  let index = 0;
  let cursor: Cursor | null = null;
  let done = false;
  return async () => {
    if (index >= buffer.length) {
      if (done) return null;
      buffer = await read(cursor);
      index = 0;
      if (buffer.length < STATEMENT_PAGE) done = true;
      const last = buffer.at(-1);
      if (last) cursor = { date: last.date, id: last.id };
      if (buffer.length === 0) return null;
    }
    const row = buffer[index] ?? null;
    index += 1;
    return row;
  };
}

interface StatementWallet {
  walletId: string;
  coin: Ticker;
  address: string | null;
  accountId: string | null;
}

/** The readers of one wallet: credited deposits, unconfirmed deposits, sends. */
function walletReaders(db: AppDb, w: StatementWallet, range: { start: Date; end: Date }): PageReader[] {
  const address = w.address ?? "";
  const credited: PageReader = async (after) => {
    if (!w.accountId) return [];
    const rows = await db
      .select({
        id: ledgerTransfers.id,
        date: ledgerTransfers.createdAt,
        units: ledgerTransfers.amount,
        amountUsd: ledgerTransfers.amountUsd,
        txid: ledgerTransfers.externalTxId,
        paid: chainDeposits.address,
      })
      .from(ledgerTransfers)
      .leftJoin(chainDeposits, eq(chainDeposits.transferId, ledgerTransfers.id))
      .where(
        and(
          eq(ledgerTransfers.creditAccountId, w.accountId),
          eq(ledgerTransfers.kind, "deposit"),
          keyset(ledgerTransfers.createdAt, ledgerTransfers.id, range, after),
        ),
      )
      .orderBy(asc(ledgerTransfers.createdAt), asc(ledgerTransfers.id))
      .limit(STATEMENT_PAGE);
    return rows.map((r) => ({
      date: r.date,
      id: r.id,
      coin: w.coin,
      direction: "in" as const,
      units: r.units,
      amountUsd: r.amountUsd,
      status: "Confirmed",
      address: r.paid ?? address,
      destinationTag: null,
      transactionId: r.txid ?? r.id,
    }));
  };
  const unconfirmed: PageReader = async (after) => {
    const rows = await db
      .select({
        id: chainDeposits.id,
        date: chainDeposits.createdAt,
        units: chainDeposits.amount,
        amountUsd: chainDeposits.amountUsd,
        txid: chainDeposits.txid,
        paid: chainDeposits.address,
      })
      .from(chainDeposits)
      .where(
        and(
          eq(chainDeposits.walletId, w.walletId),
          // A literal, as call 4 writes it: the planner matches the partial index's predicate.
          sql`${chainDeposits.status} = 'pending'`,
          keyset(chainDeposits.createdAt, chainDeposits.id, range, after),
        ),
      )
      .orderBy(asc(chainDeposits.createdAt), asc(chainDeposits.id))
      .limit(STATEMENT_PAGE);
    return rows.map((r) => ({
      date: r.date,
      id: r.id,
      coin: w.coin,
      direction: "in" as const,
      units: r.units,
      amountUsd: r.amountUsd,
      status: "pending",
      address: r.paid,
      destinationTag: null,
      transactionId: r.txid,
    }));
  };
  const sends: PageReader = async (after) => {
    const rows = await db
      .select({
        id: withdrawals.id,
        date: withdrawals.createdAt,
        units: withdrawals.amount,
        amountUsd: withdrawals.amountUsd,
        status: withdrawals.status,
        destination: withdrawals.destination,
        tag: sql<string | null>`${withdrawals.destinationTag}::text`,
      })
      .from(withdrawals)
      .where(
        and(
          eq(withdrawals.walletId, w.walletId),
          keyset(withdrawals.createdAt, withdrawals.id, range, after),
        ),
      )
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .limit(STATEMENT_PAGE);
    return rows.map((r) => ({
      date: r.date,
      id: r.id,
      coin: w.coin,
      direction: "out" as const,
      units: r.units,
      amountUsd: r.amountUsd,
      status: r.status,
      address: r.destination,
      destinationTag: r.tag,
      // A send has no on-chain id in Coinkeep: its id is the one the app shows for it.
      transactionId: r.id,
    }));
  };
  return [credited, unconfirmed, sends];
}

const before = (a: StatementRow, b: StatementRow) =>
  a.date.getTime() < b.date.getTime() || (a.date.getTime() === b.date.getTime() && a.id < b.id);

/**
 * The holder's statement rows, oldest first: only the wallets of `userId`
 * (and of the coin, when one is asked for), within the request's days, and
 * never after `asOf` (the moment the statement was asked for), so a long
 * download is one consistent list however long it takes.
 */
export async function* statementRows(
  db: AppDb,
  userId: string,
  request: Pick<StatementRequest, "from" | "to" | "coin">,
  asOf: Date,
): AsyncGenerator<StatementRow> {
  if (!isUuid(userId)) return;
  const end = new Date(Math.min(Date.parse(`${request.to}T00:00:00.000Z`) + 86_400_000, asOf.getTime() + 1));
  const range = { start: new Date(`${request.from}T00:00:00.000Z`), end };
  const owned = await db
    .select({
      walletId: wallets.id,
      coin: wallets.coin,
      address: wallets.address,
      accountId: ledgerAccounts.id,
    })
    .from(wallets)
    .leftJoin(ledgerAccounts, eq(ledgerAccounts.walletId, wallets.id))
    .where(
      and(eq(wallets.userId, userId), request.coin === "all" ? undefined : eq(wallets.coin, request.coin)),
    );
  const nexts = owned.flatMap((w) => walletReaders(db, w as StatementWallet, range).map(rowsOf));
  const heads = await Promise.all(nexts.map((next) => next()));
  for (;;) {
    let pick = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      const best = pick >= 0 ? heads[pick] : undefined;
      if (head && (!best || before(head, best))) pick = i;
    }
    if (pick < 0) return;
    const row = heads[pick];
    const next = nexts[pick];
    if (!row || !next) return;
    yield row;
    heads[pick] = await next();
  }
}

/** Lines per chunk of the stream. */
const LINES_PER_CHUNK = 200;

/**
 * The statement as a byte stream of CSV: the header line, then a line per
 * row. Pulled: the next rows are read only when the reader wants more, so a
 * slow download holds a few pages, not the statement. A failure after the
 * first byte can only end the stream (logged; the download fails visibly).
 */
export async function statementStream(
  db: AppDb,
  userId: string,
  request: StatementRequest,
  asOf: Date,
): Promise<ReadableStream<Uint8Array>> {
  const rates =
    request.currency === "USD" ? [] : await ratesForRange(db, request.currency, request.from, request.to);
  const rateOf = rateFinder(rates);
  const rows = statementRows(db, userId, request, asOf);
  const encoder = new TextEncoder();
  let headerSent = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          let text = "";
          if (!headerSent) {
            // A byte-order mark: spreadsheets then read the file as UTF-8 (×, →).
            text += `\uFEFF${csvLine(statementHeader(request.currency))}`;
            headerSent = true;
          }
          for (let n = 0; n < LINES_PER_CHUNK; n++) {
            const next = await rows.next();
            if (next.done) {
              if (text) controller.enqueue(encoder.encode(text));
              controller.close();
              return;
            }
            text += csvLine(statementCells(next.value, request.currency, rateOf));
          }
          controller.enqueue(encoder.encode(text));
        } catch (error) {
          log.error("statement failed while streaming", {
            error: error instanceof Error ? error.name : typeof error,
          });
          controller.error(error);
        }
      },
      async cancel() {
        await rows.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}
