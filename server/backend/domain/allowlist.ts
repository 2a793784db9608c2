// The withdrawal address allowlist (issue 27, record 048): a holder's saved
// addresses per coin, and "Only send to saved addresses". Nothing here speaks
// HTTP or checks a password; server/backend/services.ts does, before calling.
//
// The rules: turning the allowlist on is immediate; turning it off and adding
// an address wait for the hold (ALLOWLIST_HOLD_HOURS, by the holds' clock),
// as times in the database ("usable from", users.allowlist_off_at), never a
// timer; removing is immediate; turning it on while a turn-off waits calls
// the turn-off off. Each change writes its audit row in its own transaction.
// The send itself is checked inside the hold's statement (ledger.ts HOLD_SEND).
import { and, asc, count, eq } from "drizzle-orm";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import { MAX_SAVED_ADDRESSES } from "../../../common/allowlist.ts";
import type { AppDb } from "../db/index.ts";
import { users, withdrawalAddresses } from "../db/schema.ts";
import { isUuid } from "./ledger.ts";
import { recordSecurityEvent, type AuditInfo } from "./security-audit.ts";

export interface SavedAddress {
  id: string;
  coin: Ticker;
  /** Canonical (common/addresses.ts), as a send to it is stored. */
  address: string;
  /** XRP only; null: none. */
  destinationTag: number | null;
  label: string;
  createdAt: Date;
  usableFrom: Date;
}

export interface AllowlistState {
  /** Only saved addresses can receive sends (also while a turn-off waits). */
  on: boolean;
  /** A waiting turn-off: the allowlist stops applying at this instant. */
  offAt: Date | null;
  addresses: SavedAddress[];
}

/** Who changes the allowlist. */
export interface Holder {
  userId: string;
  email: string;
}

type Tx = Parameters<Parameters<AppDb["transaction"]>[0]>[0];

const COLUMNS = {
  id: withdrawalAddresses.id,
  coin: withdrawalAddresses.coin,
  address: withdrawalAddresses.address,
  destinationTag: withdrawalAddresses.destinationTag,
  label: withdrawalAddresses.label,
  createdAt: withdrawalAddresses.createdAt,
  usableFrom: withdrawalAddresses.usableFrom,
};

function savedAddress(row: {
  id: string;
  coin: string;
  address: string;
  destinationTag: number | null;
  label: string;
  createdAt: Date;
  usableFrom: Date;
}): SavedAddress {
  if (!isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
  return { ...row, coin: row.coin };
}

/** An audit row's details for a saved address: what it is, never its label (the holder's own words). */
function addressDetails(saved: SavedAddress): Record<string, string> {
  return {
    id: saved.id,
    coin: saved.coin,
    address: saved.address,
    ...(saved.destinationTag === null ? {} : { destinationTag: String(saved.destinationTag) }),
    usableFrom: saved.usableFrom.toISOString(),
  };
}

/**
 * The switch as it stands at `now`, locked for the change that follows when
 * `tx` is a transaction; a turn-off whose hold has ended is carried out here,
 * with its audit row ("allowlist.off").
 */
async function switchAt(
  tx: Tx,
  holder: Holder,
  now: Date,
  audit: AuditInfo,
): Promise<{ on: boolean; offAt: Date | null }> {
  const [row] = await tx
    .select({ on: users.allowlistOnly, offAt: users.allowlistOffAt })
    .from(users)
    .where(eq(users.id, holder.userId))
    .for("no key update");
  if (!row) return { on: false, offAt: null };
  if (row.on && row.offAt !== null && row.offAt.getTime() <= now.getTime()) {
    await tx
      .update(users)
      .set({ allowlistOnly: false, allowlistOffAt: null })
      .where(eq(users.id, holder.userId));
    await recordSecurityEvent(
      tx,
      { action: "allowlist.off", email: holder.email, userId: holder.userId },
      { ip: audit.ip },
    );
    return { on: false, offAt: null };
  }
  return { on: row.on, offAt: row.on ? row.offAt : null };
}

/**
 * The holder's allowlist at `now` (the holds' clock): one read, and a write
 * only when a turn-off's hold has just ended (carried out and audited then).
 */
export async function readAllowlist(db: AppDb, holder: Holder, now: Date): Promise<AllowlistState> {
  const rows = await db
    .select({
      ...COLUMNS,
      on: users.allowlistOnly,
      offAt: users.allowlistOffAt,
    })
    .from(users)
    .leftJoin(withdrawalAddresses, eq(withdrawalAddresses.userId, users.id))
    .where(eq(users.id, holder.userId))
    .orderBy(asc(withdrawalAddresses.coin), asc(withdrawalAddresses.createdAt), asc(withdrawalAddresses.id));
  const first = rows[0];
  let on = first?.on ?? false;
  let offAt = on ? (first?.offAt ?? null) : null;
  if (on && offAt !== null && offAt.getTime() <= now.getTime()) {
    // The turn-off's hold is over: carried out (once, under the row's lock) and audited.
    ({ on, offAt } = await db.transaction((tx) => switchAt(tx, holder, now, { ip: null })));
  }
  const addresses = rows.flatMap((row) =>
    row.id === null ||
    row.coin === null ||
    row.address === null ||
    row.label === null ||
    row.createdAt === null ||
    row.usableFrom === null
      ? []
      : [
          savedAddress({
            id: row.id,
            coin: row.coin,
            address: row.address,
            destinationTag: row.destinationTag,
            label: row.label,
            createdAt: row.createdAt,
            usableFrom: row.usableFrom,
          }),
        ],
  );
  return { on, offAt, addresses };
}

export type AddResult =
  { ok: true; saved: SavedAddress } | { ok: false; reason: "duplicate" | "full" | "no-account" };

/**
 * Saves an address (already checked and in canonical form) that may receive
 * sends from `now` + the hold. Refused, with nothing written, when the same
 * address (and tag) of the coin is saved already, or the holder has
 * MAX_SAVED_ADDRESSES saved.
 */
export async function addSavedAddress(
  db: AppDb,
  holder: Holder,
  input: { coin: Ticker; address: string; destinationTag: number | null; label: string },
  times: { now: Date; holdHours: number },
  audit: AuditInfo,
): Promise<AddResult> {
  const usableFrom = new Date(times.now.getTime() + times.holdHours * 3_600_000);
  return db.transaction(async (tx) => {
    // The holder's row, locked: two adds at once cannot both pass the count.
    const [user] = await tx
      .select({ id: users.id })
      .from(users)
      .where(eq(users.id, holder.userId))
      .for("no key update");
    if (!user) return { ok: false, reason: "no-account" };
    const [saved] = await tx
      .select({ n: count() })
      .from(withdrawalAddresses)
      .where(eq(withdrawalAddresses.userId, holder.userId));
    if ((saved?.n ?? 0) >= MAX_SAVED_ADDRESSES) return { ok: false, reason: "full" };
    const [row] = await tx
      .insert(withdrawalAddresses)
      .values({
        userId: holder.userId,
        coin: input.coin,
        address: input.address,
        destinationTag: input.destinationTag,
        label: input.label,
        createdAt: times.now,
        usableFrom,
      })
      .onConflictDoNothing()
      .returning(COLUMNS);
    if (!row) return { ok: false, reason: "duplicate" };
    const added = savedAddress(row);
    await recordSecurityEvent(
      tx,
      {
        action: "allowlist.added",
        email: holder.email,
        userId: holder.userId,
        details: addressDetails(added),
      },
      audit,
    );
    return { ok: true, saved: added };
  });
}

/** Removes one of the holder's saved addresses, at once; null when they have none by that id. */
export async function removeSavedAddress(
  db: AppDb,
  holder: Holder,
  id: string,
  audit: AuditInfo,
): Promise<SavedAddress | null> {
  // Another holder's id, an unknown one and a malformed one: the same answer, nothing written.
  if (!isUuid(id)) return null;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .delete(withdrawalAddresses)
      .where(and(eq(withdrawalAddresses.id, id), eq(withdrawalAddresses.userId, holder.userId)))
      .returning(COLUMNS);
    if (!row) return null;
    const removed = savedAddress(row);
    await recordSecurityEvent(
      tx,
      {
        action: "allowlist.removed",
        email: holder.email,
        userId: holder.userId,
        details: addressDetails(removed),
      },
      audit,
    );
    return removed;
  });
}

export interface SwitchResult {
  on: boolean;
  offAt: Date | null;
  /** What this request changed: nothing when the switch was already where it was asked to be. */
  change: "on" | "off-cancelled" | "off-requested" | "none";
}

/**
 * "Only send to saved addresses": on at once (a waiting turn-off is called
 * off); off after the hold. Asking for what already is writes nothing: a
 * second turn-off keeps the first one's time, it does not move it.
 */
export async function setAllowlist(
  db: AppDb,
  holder: Holder,
  on: boolean,
  times: { now: Date; holdHours: number },
  audit: AuditInfo,
): Promise<SwitchResult> {
  return db.transaction(async (tx) => {
    const was = await switchAt(tx, holder, times.now, audit);
    const event = (action: "allowlist.on" | "allowlist.off-requested", details: Record<string, string>) =>
      recordSecurityEvent(tx, { action, email: holder.email, userId: holder.userId, details }, audit);
    if (on) {
      if (was.on && was.offAt === null) return { ...was, change: "none" };
      await tx
        .update(users)
        .set({ allowlistOnly: true, allowlistOffAt: null })
        .where(eq(users.id, holder.userId));
      await event("allowlist.on", was.offAt === null ? {} : { cancelledOffAt: was.offAt.toISOString() });
      return { on: true, offAt: null, change: was.on ? "off-cancelled" : "on" };
    }
    if (!was.on || was.offAt !== null) return { ...was, change: "none" };
    const offAt = new Date(times.now.getTime() + times.holdHours * 3_600_000);
    await tx.update(users).set({ allowlistOffAt: offAt }).where(eq(users.id, holder.userId));
    await event("allowlist.off-requested", { offAt: offAt.toISOString() });
    return { on: true, offAt, change: "off-requested" };
  });
}
