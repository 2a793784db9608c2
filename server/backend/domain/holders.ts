// One account holder as the back office sees them (ops user, the staff
// console's holder page), and finding holders by a piece of their e-mail or
// their id. Read-only: what the holder's own pages show, plus what only staff
// see (pauses, live sessions). Login locks live with the rate limiter, which
// the caller asks (its keys need the backend secret).
import { and, asc, count, desc, eq, gt, ilike, inArray, or, sql } from "drizzle-orm";
import type { Ticker } from "../../../common/coins.ts";
import type { AppDb } from "../db/index.ts";
import { messageReads, messages, users, wallets, webSessions } from "../db/schema.ts";
import { listPauses, type ActivePause } from "./controls.ts";
import { balancesForUser, balancesForWallets, isUuid, type WalletBalance } from "./ledger.ts";
import { visibleTo } from "./messages.ts";
import { clientBalances, type ClientTransaction, type UserOverview } from "./wallets.ts";

/** How many of the holder's transactions and messages the detail shows, newest first. */
export const DETAIL_ROWS = 20;
/** The most holders a search answers. */
export const MAX_FOUND = 50;

export interface HolderDetail {
  userId: string;
  email: string;
  createdAt: Date;
  wallets: WalletBalance[];
  /** Deposits (credited or waiting for confirmations) and sends, newest first. */
  transactions: ClientTransaction[];
  messages: { id: string; createdAt: Date; message: string; openedAt: Date | null; toAll: boolean }[];
  /** The pauses set for this holder (every coin); coins' pauses apply to everyone and are not repeated. */
  pauses: ActivePause[];
  /** Live web sessions signed in as the holder, or null when this process cannot tell. */
  sessions: number | null;
}

/** The holder with this id or e-mail (normalised), or undefined. */
export async function findHolder(
  db: AppDb,
  idOrEmail: string,
): Promise<{ userId: string; email: string; createdAt: Date } | undefined> {
  const text = idOrEmail.trim();
  const [row] = await db
    .select({ userId: users.id, email: users.email, createdAt: users.createdAt })
    .from(users)
    .where(isUuid(text) ? eq(users.id, text.toLowerCase()) : eq(users.email, text.toLowerCase()))
    .limit(1);
  return row;
}

/**
 * The holder's detail. `sessionOwner`: the web_sessions owner tag of their
 * e-mail (an HMAC under the web tier's session secret), or null when the caller
 * cannot compute it for the sessions this database holds: sessions is then null, unknown.
 */
export async function holderDetail(
  db: AppDb,
  holder: { userId: string; email: string; createdAt: Date },
  opts: { sessionOwner: string | null },
): Promise<HolderDetail> {
  const walletRows = await balancesForUser(db, holder.userId);
  const { transactions } = await clientBalances(db, holder.userId, {
    transactionsLimit: DETAIL_ROWS,
    includeMessages: false,
    readWallets: () => Promise.resolve(walletRows),
  });
  const messageRows = await db
    .select({
      id: messages.id,
      createdAt: messages.createdAt,
      message: messages.message,
      openedAt: messageReads.openedAt,
      to: messages.userId,
    })
    .from(messages)
    .innerJoin(users, eq(users.id, holder.userId))
    .leftJoin(
      messageReads,
      and(eq(messageReads.messageId, messages.id), eq(messageReads.userId, holder.userId)),
    )
    .where(visibleTo(holder.userId))
    .orderBy(desc(messages.createdAt), desc(messages.id))
    .limit(DETAIL_ROWS);
  const pauses = (await listPauses(db)).filter((p) => p.userId === holder.userId);
  let sessions: number | null = null;
  if (opts.sessionOwner !== null) {
    const [row] = await db
      .select({ n: count() })
      .from(webSessions)
      .where(and(eq(webSessions.owner, opts.sessionOwner), gt(webSessions.expiresAt, sql`now()`)));
    sessions = row?.n ?? 0;
  }
  return {
    ...holder,
    wallets: walletRows,
    transactions,
    messages: messageRows.map(({ to, ...m }) => ({ ...m, toAll: to === null })),
    pauses,
    sessions,
  };
}

/**
 * Holders whose e-mail contains `text` (any case), or whose id it is, oldest
 * first, at most MAX_FOUND, with each wallet's coin, address and balance.
 */
export async function findHolders(db: AppDb, text: string): Promise<UserOverview[]> {
  const needle = text.trim().toLowerCase();
  if (needle === "") return [];
  // LIKE's own characters are taken literally.
  const pattern = `%${needle.replace(/[\\%_]/gu, (c) => `\\${c}`)}%`;
  const people = await db
    .select({ userId: users.id, email: users.email, createdAt: users.createdAt })
    .from(users)
    .where(
      isUuid(needle) ? or(eq(users.id, needle), ilike(users.email, pattern)) : ilike(users.email, pattern),
    )
    .orderBy(asc(users.createdAt), asc(users.email))
    .limit(MAX_FOUND);
  if (people.length === 0) return [];
  const walletIds = await db
    .select({ id: wallets.id })
    .from(wallets)
    .where(
      inArray(
        wallets.userId,
        people.map((p) => p.userId),
      ),
    );
  const balances =
    walletIds.length === 0
      ? []
      : await balancesForWallets(
          db,
          walletIds.map((w) => w.id),
        );
  const byUser = new Map<string, { id: string; coin: Ticker; address: string | null; units: bigint }[]>();
  for (const b of balances) {
    const list = byUser.get(b.userId) ?? [];
    list.push({ id: b.walletId, coin: b.coin, address: b.address, units: b.units });
    byUser.set(b.userId, list);
  }
  return people.map((p) => ({ ...p, wallets: byUser.get(p.userId) ?? [] }));
}
