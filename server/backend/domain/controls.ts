// Kill switches (issue 16, record 041): a pause of sends, deposits or issuing
// for one coin (every user) or one user (every coin). A row in `pauses` is a
// pause in force; resuming deletes it. Operators set and lift them with
// `ops pause` / `ops resume` (server/ops/commands/controls.ts), and
// reconciliation pauses a coin's sends by itself on a shortfall.
import { and, eq, or } from "drizzle-orm";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import type { AppDb } from "../db/index.ts";
import { auditLog, pauses } from "../db/schema.ts";
import { isUuid } from "./ledger.ts";

export type PauseWhat = "sends" | "deposits" | "issuing";
export const PAUSE_WHATS: readonly PauseWhat[] = ["sends", "deposits", "issuing"];

export interface ActivePause {
  id: string;
  what: PauseWhat;
  /** Set for a coin's pause (every user), else null. */
  coin: Ticker | null;
  /** Set for a user's pause (every coin), else null. */
  userId: string | null;
  reason: string;
  actor: string;
  /** Set by reconciliation, not by a person. */
  automatic: boolean;
  createdAt: Date;
}

function toPause(row: typeof pauses.$inferSelect): ActivePause {
  if (row.what !== "sends" && row.what !== "deposits" && row.what !== "issuing") {
    throw new Error(`unknown pause in the database: ${row.what}`);
  }
  if (row.coin !== null && !isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
  return { ...row, what: row.what, coin: row.coin };
}

/**
 * The pause that stops `what` for this coin and user, or undefined: the
 * coin's pause when there is one, else the user's. Read inside the caller's
 * transaction when given one.
 */
export async function activePause(
  db: AppDb,
  what: PauseWhat,
  scope: { coin: Ticker; userId?: string | null | undefined },
): Promise<ActivePause | undefined> {
  const userId = scope.userId != null && isUuid(scope.userId) ? scope.userId : undefined;
  const rows = await db
    .select()
    .from(pauses)
    .where(
      and(
        eq(pauses.what, what),
        userId === undefined
          ? eq(pauses.coin, scope.coin)
          : or(eq(pauses.coin, scope.coin), eq(pauses.userId, userId)),
      ),
    );
  const found = rows.map(toPause);
  return found.find((p) => p.coin !== null) ?? found[0];
}

/** Every pause in force, newest first. */
export async function listPauses(db: AppDb): Promise<ActivePause[]> {
  const rows = await db.select().from(pauses);
  return rows.map(toPause).toSorted((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

// ---------------------------------------------------------------------------
// Setting and lifting a pause
// ---------------------------------------------------------------------------

/** The most characters of a pause's reason (the table's CHECK says the same). */
export const MAX_PAUSE_REASON = 1000;

export class ControlsInputError extends Error {}

/** One coin for every user, or one user for every coin. */
export type PauseScope = { coin: Ticker } | { userId: string };

export interface PauseInput {
  what: PauseWhat;
  scope: PauseScope;
  /** Why, for the audit log and `ops pauses`; 1..1000 characters once trimmed. Never shown to users. */
  reason: string;
  /** Who: an operator's name, or 'reconcile'. */
  actor: string;
  /** The staff member's roles, when the staff console acts (for the audit log). */
  actorRoles?: readonly string[] | undefined;
  /** Set by reconciliation. */
  automatic?: boolean;
}

export type PauseResult =
  | { ok: true; pause: ActivePause }
  /** Nothing written: the same switch is already on (this pause). */
  | { ok: false; reason: "already-paused"; pause: ActivePause };

export type ResumeResult =
  /** The pause lifted. */
  | { ok: true; pause: ActivePause }
  /** Nothing written: no such switch is on. */
  | { ok: false; reason: "not-paused" };

function checkReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_PAUSE_REASON) {
    throw new ControlsInputError(`The reason must be 1 to ${MAX_PAUSE_REASON} characters.`);
  }
  return trimmed;
}

function scopeWhere(what: PauseWhat, scope: PauseScope) {
  return and(
    eq(pauses.what, what),
    "coin" in scope ? eq(pauses.coin, scope.coin) : eq(pauses.userId, scope.userId),
  );
}

/** The audit row's subject and scope fields of a pause. */
function auditScope(p: ActivePause) {
  return p.coin !== null
    ? { subject: p.coin, scope: { coin: p.coin } }
    : { subject: p.userId, scope: { userId: p.userId } };
}

/** The audit_log row of a pause or a resume: the switch, the reason given, then what the action adds. */
async function auditSwitch(
  tx: AppDb,
  who: { actor: string; actorRoles?: readonly string[] | undefined },
  action: "pause" | "resume",
  p: ActivePause,
  reason: string,
  more: object,
) {
  const { subject, scope } = auditScope(p);
  await tx.insert(auditLog).values({
    actor: who.actor,
    actorRoles: who.actorRoles ? [...who.actorRoles] : null,
    action,
    subject,
    // The columns the audit viewer filters by: the holder of a user's pause, and why.
    userId: p.userId,
    reason,
    details: { pauseId: p.id, what: p.what, ...scope, reason, ...more },
  });
}

/**
 * Turns a switch on, with its audit_log row (action "pause") in the same
 * transaction. The same switch already on is refused with nothing written; the
 * partial unique indexes of `pauses` decide it, so of two concurrent pauses one
 * is written and the other told "already paused".
 */
export async function pause(db: AppDb, input: PauseInput): Promise<PauseResult> {
  const reason = checkReason(input.reason);
  if ("userId" in input.scope && !isUuid(input.scope.userId)) {
    throw new ControlsInputError(`No user with id ${input.scope.userId}.`);
  }
  return db.transaction(async (tx): Promise<PauseResult> => {
    const [row] = await tx
      .insert(pauses)
      .values({
        what: input.what,
        ...("coin" in input.scope ? { coin: input.scope.coin } : { userId: input.scope.userId }),
        reason,
        actor: input.actor,
        automatic: input.automatic === true,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) {
      const [existing] = await tx.select().from(pauses).where(scopeWhere(input.what, input.scope));
      if (!existing) throw new Error("pause neither written nor found");
      return { ok: false, reason: "already-paused", pause: toPause(existing) };
    }
    const written = toPause(row);
    await auditSwitch(tx, input, "pause", written, reason, { automatic: written.automatic });
    return { ok: true, pause: written };
  });
}

/**
 * Turns a switch off (deletes its row), with its audit_log row (action
 * "resume", naming the pause lifted) in the same transaction. An automatic
 * pause is lifted only this way: reconciliation never lifts one by itself.
 */
export async function resume(
  db: AppDb,
  input: {
    what: PauseWhat;
    scope: PauseScope;
    reason: string;
    actor: string;
    actorRoles?: readonly string[] | undefined;
  },
): Promise<ResumeResult> {
  const reason = checkReason(input.reason);
  if ("userId" in input.scope && !isUuid(input.scope.userId)) return { ok: false, reason: "not-paused" };
  return db.transaction(async (tx): Promise<ResumeResult> => {
    const [row] = await tx.delete(pauses).where(scopeWhere(input.what, input.scope)).returning();
    if (!row) return { ok: false, reason: "not-paused" };
    const lifted = toPause(row);
    await auditSwitch(tx, input, "resume", lifted, reason, {
      lifted: {
        reason: lifted.reason,
        actor: lifted.actor,
        automatic: lifted.automatic,
        since: lifted.createdAt.toISOString(),
      },
    });
    return { ok: true, pause: lifted };
  });
}
