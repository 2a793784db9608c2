// A signed-in page's one read (issue 29, record 052). Every signed-in page
// checks the session's e-mail and words (spec section 4) under the words
// check's limits (record 013), then shows the user's wallets with their
// balances and the unread count. Those were five statements, each a round trip
// to PostgreSQL or a turn of the event loop with PGlite (record 036); this is
// one: the account found by its e-mail, the words check's two counters, the
// unread count and the wallets with their balances.
//
// Nothing here decides anything: the caller weighs the counters and compares
// the phrase (server/backend/services.ts, checkWords) exactly as the separate
// reads did, and uses the rest only when both pass. An unknown e-mail reads
// the counters and nothing else, and is compared against a placeholder, as before.
import { getTableName, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Ticker } from "../../../common/coins.ts";
import { perDatabase, type AppDb } from "../db/index.ts";
import {
  holderTwoFactor,
  ledgerAccounts,
  messageReads,
  messages,
  pauses,
  rateLimits,
  sendRequests,
  users,
  wallets,
} from "../db/schema.ts";
import { toTicker, type WalletBalance } from "./ledger.ts";
import type { RateLimitRow } from "./rate-limits.ts";

export interface PageRead {
  /** The account with this e-mail, if there is one. */
  user: { id: string; email: string; phraseHmac: string } | undefined;
  /** The words check's counters that exist (none when the limits are off). */
  limits: RateLimitRow[];
  /** The account's wallets with balances, as balancesForUser reads them ([] without an account). */
  wallets: WalletBalance[];
  /** The account's unread messages, as unreadMessagesCount counts them (0 without an account). */
  unread: number;
}

interface Raw {
  id: string | null;
  email: string | null;
  phrase_hmac: string | null;
  unread: number | string | null;
  limits: string | unknown[] | null;
  wallets: string | unknown[] | null;
}

interface RawLimit {
  key: string;
  hits: number | string;
  windowStartedAt: string;
  blockedUntil: string | null;
}

interface RawWallet {
  walletId: string;
  userId: string;
  coin: string;
  address: string | null;
  requestedAt: string;
  units: string | null;
  sendsPaused: "coin" | "user" | null;
}

/** The drivers hand json back parsed (node-postgres) or as text (PGlite without its parsers). */
function json<T>(value: string | unknown[] | null): T[] {
  if (value === null) return [];
  return (typeof value === "string" ? JSON.parse(value) : value) as T[];
}

/**
 * A column with its table's name: drizzle writes a select's fields unqualified, and these
 * subqueries join tables that share column names.
 */
const c = (column: PgColumn) => sql.raw(`"${getTableName(column.table)}"."${column.name}"`);

/** What every words check reads: the account (by the placeholder `email`) and the two counters. */
const credentialFields = {
  id: sql<string | null>`account.id`,
  email: sql<string | null>`account.email`,
  phrase_hmac: sql<string | null>`account.phrase_hmac`,
  limits: sql<Raw["limits"]>`(SELECT json_agg(json_build_object(
      'key', ${c(rateLimits.key)}, 'hits', ${c(rateLimits.hits)},
      'windowStartedAt', ${c(rateLimits.windowStartedAt)}, 'blockedUntil', ${c(rateLimits.blockedUntil)}))
    FROM ${rateLimits}
    WHERE ${c(rateLimits.key)} IN (${sql.placeholder("pairKey")}, ${sql.placeholder("ipKey")}))`,
};

/** One row always: the account's columns are NULL when no account has the e-mail. */
const accountRow = sql`(SELECT 1) AS one LEFT JOIN (
    SELECT ${c(users.id)} AS id, ${c(users.email)} AS email, ${c(users.phraseHmac)} AS phrase_hmac,
           ${c(users.createdAt)} AS created_at
    FROM ${users} WHERE ${c(users.email)} = ${sql.placeholder("email")}) AS account ON true`;

// Every signed-in page makes it: prepared once per database, so it is parsed and planned once per
// connection (PGlite parses in WebAssembly: a plan of this size costs more than its reading).
const pageQuery = perDatabase((db) =>
  db
    .select({
      ...credentialFields,
      unread: sql<Raw["unread"]>`(SELECT count(*) FROM ${messages}
        LEFT JOIN ${messageReads}
          ON ${c(messageReads.messageId)} = ${c(messages.id)} AND ${c(messageReads.userId)} = account.id
        WHERE (${c(messages.userId)} = account.id
               OR (${c(messages.userId)} IS NULL AND ${c(messages.createdAt)} >= account.created_at))
          AND ${c(messageReads.openedAt)} IS NULL)`,
      wallets: sql<Raw["wallets"]>`(SELECT json_agg(json_build_object(
          'walletId', ${c(wallets.id)}, 'userId', ${c(wallets.userId)}, 'coin', ${c(wallets.coin)},
          'address', ${c(wallets.address)}, 'requestedAt', ${c(wallets.requestedAt)},
          'units', ${c(ledgerAccounts.balance)}::text,
          'sendsPaused', (SELECT CASE WHEN ${c(pauses.coin)} IS NULL THEN 'user' ELSE 'coin' END FROM ${pauses}
            WHERE ${c(pauses.what)} = 'sends' AND (${c(pauses.coin)} = ${c(wallets.coin)} OR ${c(pauses.userId)} = ${c(wallets.userId)})
            ORDER BY ${c(pauses.coin)} IS NULL LIMIT 1))
          ORDER BY ${c(wallets.requestedAt)}, ${c(wallets.coin)})
        FROM ${wallets} INNER JOIN ${ledgerAccounts} ON ${c(ledgerAccounts.walletId)} = ${c(wallets.id)}
        WHERE ${c(wallets.userId)} = account.id)`,
    })
    .from(accountRow)
    .prepare("coinkeep_page_read"),
);

/** The counters as the limiter weighs them. */
function limitsOf(row: Pick<Raw, "limits">): RateLimitRow[] {
  return json<RawLimit>(row.limits).map((limit): RateLimitRow => ({
    key: limit.key,
    hits: Number(limit.hits),
    windowStartedAt: new Date(limit.windowStartedAt),
    blockedUntil: limit.blockedUntil === null ? null : new Date(limit.blockedUntil),
  }));
}

/** The placeholders of the counters' keys. Counter keys are hex HMACs: "" is none of them. */
function limitKeys(keys: { pairKey: string; ipKey: string | null } | null) {
  return { pairKey: keys?.pairKey ?? "", ipKey: keys ? (keys.ipKey ?? keys.pairKey) : "" };
}

/**
 * The one statement. `email` is normalised; `keys` are the words check's two
 * counter keys (the address's may be null), or null when the limits are off.
 * Bigints travel as text inside the json (a json number would lose digits).
 */
export async function readPage(
  db: AppDb,
  email: string,
  keys: { pairKey: string; ipKey: string | null } | null,
): Promise<PageRead> {
  const rows = await pageQuery(db).execute({ email, ...limitKeys(keys) });
  const [row] = rows as Raw[];
  if (!row) throw new Error("the page read answered no row");
  const limits = limitsOf(row);
  if (row.id === null || row.email === null || row.phrase_hmac === null) {
    return { user: undefined, limits, wallets: [], unread: 0 };
  }
  return {
    user: { id: row.id, email: row.email, phraseHmac: row.phrase_hmac },
    limits,
    unread: Number(row.unread ?? 0),
    wallets: json<RawWallet>(row.wallets).map((wallet): WalletBalance => {
      if (wallet.units === null) throw new Error("wallet account without a running balance");
      const coin: Ticker = toTicker(wallet.coin);
      return {
        walletId: wallet.walletId,
        userId: wallet.userId,
        coin,
        address: wallet.address,
        requestedAt: new Date(wallet.requestedAt),
        units: BigInt(wallet.units),
        sendsPaused: wallet.sendsPaused,
      };
    }),
  };
}

/** A send's checks before its hold (call 6): the words check's, and what decides its step-up. */
export interface SendCheckRead {
  user: PageRead["user"];
  limits: RateLimitRow[];
  /** The idempotency key is recorded for the account (a replay needs no code). */
  recorded: boolean;
  /** The account has a holder_two_factor row (its state is then read in full, as before). */
  twoFactor: boolean;
}

interface RawSendCheck extends Pick<Raw, "id" | "email" | "phrase_hmac" | "limits"> {
  recorded: boolean | null;
  two_factor: boolean | null;
}

// Every send through the API makes it: prepared once per database.
const sendCheckQuery = perDatabase((db) =>
  db
    .select({
      ...credentialFields,
      recorded: sql<boolean | null>`EXISTS (SELECT 1 FROM ${sendRequests}
        WHERE ${c(sendRequests.userId)} = account.id
          AND ${c(sendRequests.idempotencyKey)} = ${sql.placeholder("idempotencyKey")})`,
      two_factor: sql<boolean | null>`EXISTS (SELECT 1 FROM ${holderTwoFactor}
        WHERE ${c(holderTwoFactor.userId)} = account.id)`,
    })
    .from(accountRow)
    .prepare("coinkeep_send_check"),
);

/**
 * A send's words check (the account, its counters) with whether its idempotency key is recorded
 * and whether two-factor is on, in one statement: a send without two-factor is this and its hold
 * (record 052). `idempotencyKey` null: no key (recorded is then false).
 */
export async function readSendCheck(
  db: AppDb,
  email: string,
  keys: { pairKey: string; ipKey: string | null } | null,
  idempotencyKey: string | null,
): Promise<SendCheckRead> {
  const rows = await sendCheckQuery(db).execute({
    email,
    ...limitKeys(keys),
    // No key is recorded under "" (call 6 refuses an empty key): the EXISTS finds nothing.
    idempotencyKey: idempotencyKey ?? "",
  });
  const [row] = rows as RawSendCheck[];
  if (!row) throw new Error("the send check answered no row");
  const limits = limitsOf(row);
  if (row.id === null || row.email === null || row.phrase_hmac === null) {
    return { user: undefined, limits, recorded: false, twoFactor: false };
  }
  return {
    user: { id: row.id, email: row.email, phraseHmac: row.phrase_hmac },
    limits,
    recorded: idempotencyKey !== null && row.recorded === true,
    twoFactor: row.two_factor === true,
  };
}
