// Reading the audit log (the operators' and the staff console's audit viewer):
// rows newest first, filtered by who acted, the holder concerned, the action
// and a time range, in pages by id (keyset: "before this id"), never by
// OFFSET, so a page costs the same however deep it is and rows written
// meanwhile neither repeat nor vanish between pages.
import { and, desc, eq, gte, lt, type SQL } from "drizzle-orm";
import type { AppDb } from "../db/index.ts";
import { auditLog } from "../db/schema.ts";
import { isUuid } from "./ledger.ts";

/** The most rows one page answers. */
export const MAX_AUDIT_PAGE = 1000;

export class AuditQueryError extends Error {}

export interface AuditQuery {
  /** Exactly this actor (a staff member's e-mail, an operator's --as name). */
  actor?: string;
  /** Only rows concerning this holder. */
  userId?: string;
  /** Exactly this action ("send.approve"). */
  action?: string;
  /** At or after. */
  from?: Date;
  /** Strictly before. */
  to?: Date;
  /** Only rows with a smaller id: the previous page's last id. */
  before?: number;
  /** 1..MAX_AUDIT_PAGE. */
  limit: number;
}

export interface AuditEntry {
  id: number;
  at: Date;
  actor: string;
  actorRoles: string[] | null;
  action: string;
  subject: string | null;
  userId: string | null;
  reason: string | null;
  details: unknown;
}

/** One page of audit rows, newest first (by id, which follows the order they were written in). */
export async function searchAudit(db: AppDb, q: AuditQuery): Promise<AuditEntry[]> {
  if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > MAX_AUDIT_PAGE) {
    throw new AuditQueryError(`limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`);
  }
  if (q.before !== undefined && (!Number.isSafeInteger(q.before) || q.before < 1)) {
    throw new AuditQueryError("before must be a positive whole number");
  }
  if (q.userId !== undefined && !isUuid(q.userId)) return [];
  const where: (SQL | undefined)[] = [
    q.actor === undefined ? undefined : eq(auditLog.actor, q.actor),
    q.userId === undefined ? undefined : eq(auditLog.userId, q.userId),
    q.action === undefined ? undefined : eq(auditLog.action, q.action),
    q.from === undefined ? undefined : gte(auditLog.createdAt, q.from),
    q.to === undefined ? undefined : lt(auditLog.createdAt, q.to),
    q.before === undefined ? undefined : lt(auditLog.id, q.before),
  ];
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.id))
    .limit(q.limit);
  return rows.map((r) => ({
    id: r.id,
    at: r.createdAt,
    actor: r.actor,
    actorRoles: r.actorRoles,
    action: r.action,
    subject: r.subject,
    userId: r.userId,
    reason: r.reason,
    details: r.details,
  }));
}

/**
 * Every row the query matches, newest first, page by page (each `page` rows
 * long, keyset by id): for exports of any size. Stops after `max` rows when given.
 */
export async function* allAuditRows(
  db: AppDb,
  q: Omit<AuditQuery, "limit">,
  opts: { page?: number; max?: number } = {},
): AsyncGenerator<AuditEntry> {
  const page = opts.page ?? MAX_AUDIT_PAGE;
  let before = q.before;
  let left = opts.max ?? Number.POSITIVE_INFINITY;
  while (left > 0) {
    const rows = await searchAudit(db, {
      ...q,
      ...(before === undefined ? {} : { before }),
      limit: Math.min(page, left),
    });
    for (const row of rows) yield row;
    left -= rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < Math.min(page, left + rows.length)) return;
    before = last.id;
  }
}
