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
  | "allowlist.off";

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
type Inserter = Pick<AppDb, "insert">;

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
}
