// Security events in the append-only audit_log (record 015): sign-ins and their
// failures, phrase reveals, the restore flow's steps and password changes.
// Written by the backend, so a web tier in this process and one on another
// host (BACKEND_URL) both produce them. One INSERT per event.
//
// What a row holds: actor = the account's (normalised) e-mail, or 'anonymous'
// when the e-mail is not an account's — what was typed is not kept then, as it
// may be a password typed into the wrong box; subject = the user id when known;
// details = the client IP when known and a reason code. Never a password, a
// phrase, a word of it, or a session id.
import type { AppDb } from "../db/index.ts";
import { auditLog } from "../db/schema.ts";
import { queueAlert } from "../mail/outbox.ts";
import { shortAddress, type SecurityChange } from "../mail/templates.ts";

export type SecurityAction =
  | "auth.login"
  | "auth.login.failed"
  | "auth.reveal"
  | "auth.reveal.failed"
  | "restore.lookup"
  | "restore.lookup.failed"
  | "restore.phrase"
  | "restore.phrase.failed"
  | "auth.password.changed"
  | "auth.password.change.failed"
  // Two-factor (issue 27, record 048).
  | "auth.two-factor.enabled"
  | "auth.two-factor.disabled"
  | "auth.two-factor.failed"
  | "auth.two-factor.recovery-code"
  | "auth.two-factor.removal-scheduled"
  | "auth.two-factor.removal-cancelled"
  | "auth.two-factor.removed"
  // The withdrawal address allowlist (issue 27, record 048).
  | "allowlist.added"
  | "allowlist.removed"
  | "allowlist.on"
  | "allowlist.off-requested"
  | "allowlist.off"
  // E-mail (issue 28, record 049).
  | "auth.email.verified"
  | "auth.sessions.ended";

export type FailureReason = "unknown-email" | "wrong-password" | "wrong-phrase" | "wrong-code";

/** What the caller knows about the request behind an account operation. */
export interface AuditInfo {
  /** The client's IP address, when the API knows it (record 011 says when it is believed). */
  ip: string | null;
}

export interface SecurityEvent {
  action: SecurityAction;
  /** A normalised e-mail of an existing account, or null for 'anonymous'. */
  email: string | null;
  userId?: string | null;
  reason?: FailureReason;
  /** What changed, when the action needs saying (a saved address: its coin, address, tag). */
  details?: Record<string, string>;
}

/** Anything that can insert: the database or a transaction on it. */
type Inserter = Pick<AppDb, "insert" | "execute">;

/**
 * The security changes a holder is mailed of (issue 28, record 049), queued with the audit
 * row in the same transaction: a change that rolls back mails nothing.
 */
const MAILED: Partial<Record<SecurityAction, SecurityChange>> = {
  "auth.password.changed": "password_changed",
  "auth.two-factor.enabled": "two_factor_on",
  "auth.two-factor.disabled": "two_factor_off",
  "auth.two-factor.removal-scheduled": "two_factor_removal_scheduled",
  "auth.two-factor.removal-cancelled": "two_factor_removal_cancelled",
  "auth.two-factor.removed": "two_factor_removed",
  "allowlist.added": "allowlist_added",
  "allowlist.removed": "allowlist_removed",
  "allowlist.on": "allowlist_on",
  "allowlist.off-requested": "allowlist_off_requested",
  "allowlist.off": "allowlist_off",
  "auth.sessions.ended": "sessions_ended",
};

/** What a mail may say of the change: a saved address's coin and short address, never its label. */
function mailDetail(details: Record<string, string> | undefined): string | undefined {
  if (details?.count) return details.count === "1" ? "1 session" : `${details.count} sessions`;
  if (!details?.coin || !details.address) return undefined;
  const tag = details.destinationTag ? ` (tag ${details.destinationTag})` : "";
  return `${details.coin} ${shortAddress(details.address)}${tag}`;
}

export async function recordSecurityEvent(
  db: Inserter,
  event: SecurityEvent,
  info: AuditInfo,
): Promise<void> {
  const details: Record<string, string> = { ...event.details };
  if (info.ip) details.ip = info.ip;
  if (event.reason) details.reason = event.reason;
  await db.insert(auditLog).values({
    actor: event.email ?? "anonymous",
    action: event.action,
    subject: event.userId ?? null,
    details,
  });
  const change = MAILED[event.action];
  if (change && event.userId) {
    const detail = mailDetail(event.details);
    await queueAlert(db, event.userId, "security_change", { change, ...(detail ? { detail } : {}) });
  }
}
