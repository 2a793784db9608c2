// The transactional outbox (issue 28, record 049). A mail is queued by an INSERT in the
// transaction of the change it reports: if the change rolls back, so does the mail. Alerts go
// only to a verified address: the INSERT reads the holder's row and writes nothing when the
// address is not verified, so nobody can make us mail a stranger.
//
// Senders, one or many (workers, hosts), take due rows with FOR UPDATE SKIP LOCKED and put a
// lease on them (locked_until) in a short transaction of their own; SMTP is spoken outside any
// transaction, so no lock or connection waits on a mail server. A row is marked sent once the
// server accepted it; a refusal, a timeout or a dropped connection puts it back with a backoff.
import { createHash, randomBytes } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import { type AppDb, rowsOf } from "../db/index.ts";
import { openSecret, sealSecret, totpKeys, type TotpKeys } from "../domain/totp.ts";
import type { MailData, MailKind } from "./templates.ts";

/** Anything that runs SQL: the database or a transaction on it. */
export type Executor = Pick<AppDb, "execute">;

type AlertKind = Exclude<MailKind, "verify_email">;

/**
 * The one rule of every alert: queued for the holder `holder` (an SQL expression of their
 * user id) in the caller's transaction, only when their address is verified. Answers whether
 * a mail was queued.
 */
async function queueFor<K extends AlertKind>(
  db: Executor,
  holder: SQL,
  kind: K,
  data: MailData[K],
): Promise<boolean> {
  const result = await db.execute(sql`
    INSERT INTO mail_outbox (user_id, to_address, kind, data)
    SELECT id, email, ${kind}, ${JSON.stringify(data)}::jsonb FROM users
    WHERE id = (${holder}) AND email_verified_at IS NOT NULL
    RETURNING id`);
  return rowsOf<{ id: unknown }>(result).length > 0;
}

/** Queues an alert for a holder, when their address is verified (queueFor). */
export function queueAlert<K extends AlertKind>(
  db: Executor,
  userId: string,
  kind: K,
  data: MailData[K],
): Promise<boolean> {
  return queueFor(db, sql`${userId}::uuid`, kind, data);
}

/** queueAlert for the holder of a wallet's ledger account (a deposit, a send's decision). */
export function queueAlertForAccount<K extends AlertKind>(
  db: Executor,
  walletAccountId: string,
  kind: K,
  data: MailData[K],
): Promise<boolean> {
  return queueFor(
    db,
    sql`SELECT w.user_id FROM ledger_accounts a JOIN wallets w ON w.id = a.wallet_id WHERE a.id = ${walletAccountId}`,
    kind,
    data,
  );
}

/** The verification link's token keys: the token waits sealed in its outbox row. */
export function mailKeys(backendSecret: string): TotpKeys {
  return totpKeys(backendSecret, "mail-token");
}

export const VERIFY_HOURS = 24;

export function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * A new "Verify your e-mail" link for the holder's current address, in the caller's
 * transaction: the token's hash is stored with its deadline, and the token itself goes into
 * the outbox sealed (AES-GCM with the user id bound), so the database alone cannot verify.
 */
export async function queueVerification(
  db: Executor,
  keys: TotpKeys,
  user: { userId: string; email: string },
  now: Date,
): Promise<void> {
  const token = randomBytes(32).toString("base64url");
  const expires = new Date(now.getTime() + VERIFY_HOURS * 3_600_000);
  await db.execute(sql`
    INSERT INTO email_verifications (token_hash, user_id, email, created_at, expires_at)
    VALUES (${tokenHash(token)}, ${user.userId}, ${user.email}, ${now.toISOString()}, ${expires.toISOString()})`);
  const sealed = sealSecret(keys, user.userId, token);
  await db.execute(sql`
    INSERT INTO mail_outbox (user_id, to_address, kind, data)
    VALUES (${user.userId}, ${user.email}, 'verify_email', ${JSON.stringify({ sealed })}::jsonb)`);
}

/** Opens a verification row's token for the template; null when it cannot be opened. */
export function openVerificationToken(keys: TotpKeys, userId: string | null, data: unknown): string | null {
  const sealed = (data as { sealed?: unknown } | null)?.sealed;
  if (typeof sealed !== "string" || !userId) return null;
  try {
    return openSecret(keys, userId, sealed);
  } catch {
    return null;
  }
}

export interface DueMail {
  id: number;
  userId: string | null;
  to: string;
  kind: string;
  data: unknown;
  attempts: number;
  createdAt: Date;
}

/**
 * Takes up to `limit` due mails for this sender: each gets a lease until `leaseMs` from now
 * (another sender skips it meanwhile) and its attempt counted. A lease that ran out (a
 * sender that died mid-send) makes the row due again.
 */
export async function claimDue(db: AppDb, limit: number, leaseMs: number): Promise<DueMail[]> {
  const result = await db.execute(sql`
    WITH due AS (
      SELECT id FROM mail_outbox
      WHERE status = 'queued' AND next_attempt_at <= now()
        AND (locked_until IS NULL OR locked_until <= now())
      ORDER BY next_attempt_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE mail_outbox m
    SET locked_until = now() + ${`${leaseMs} milliseconds`}::interval, attempts = m.attempts + 1
    FROM due WHERE m.id = due.id
    RETURNING m.id, m.user_id, m.to_address, m.kind, m.data, m.attempts,
      to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`);
  return rowsOf<{
    id: string | number;
    user_id: string | null;
    to_address: string;
    kind: string;
    data: unknown;
    attempts: number;
    created_at: string;
  }>(result).map((r) => ({
    id: Number(r.id),
    userId: r.user_id,
    to: r.to_address,
    kind: r.kind,
    data: typeof r.data === "string" ? (JSON.parse(r.data) as unknown) : r.data,
    attempts: Number(r.attempts),
    createdAt: new Date(r.created_at),
  }));
}

/** The server took it: sent, once. Only a row still queued is marked (a second mark changes nothing). */
export async function markSent(db: AppDb, id: number): Promise<void> {
  await db.execute(sql`
    UPDATE mail_outbox SET status = 'sent', sent_at = now(), locked_until = NULL, last_error = NULL
    WHERE id = ${id} AND status = 'queued'`);
}

/** Seconds to wait after the n-th failed attempt: 30 s doubling, at most an hour. */
export function backoffSeconds(attempts: number): number {
  return Math.min(3600, 30 * 2 ** Math.max(0, Math.min(attempts - 1, 12)));
}

/** Not sent this time: back in the queue after its backoff, with why (no secret: a server's words). */
export async function markFailed(db: AppDb, id: number, attempts: number, error: string): Promise<void> {
  await db.execute(sql`
    UPDATE mail_outbox
    SET locked_until = NULL, last_error = ${error.slice(0, 500)},
      next_attempt_at = now() + ${`${backoffSeconds(attempts)} seconds`}::interval
    WHERE id = ${id} AND status = 'queued'`);
}

export interface OutboxRow {
  id: number;
  to: string;
  kind: string;
  status: "queued" | "sent" | "failing";
  attempts: number;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
  nextAttemptAt: string | null;
}

/** The newest `limit` mails, newest first; "failing" is a queued mail whose last attempt failed. */
export async function listOutbox(
  db: AppDb,
  opts: { limit: number; status?: "queued" | "sent" | "failing" | undefined },
): Promise<OutboxRow[]> {
  const where =
    opts.status === "sent"
      ? sql`WHERE status = 'sent'`
      : opts.status === "failing"
        ? sql`WHERE status = 'queued' AND last_error IS NOT NULL`
        : opts.status === "queued"
          ? sql`WHERE status = 'queued'`
          : sql``;
  const result = await db.execute(sql`
    SELECT id, to_address, kind, status, attempts, last_error,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
      to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS sent_at,
      CASE WHEN status = 'queued'
        THEN to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END AS next_attempt_at
    FROM mail_outbox ${where} ORDER BY id DESC LIMIT ${opts.limit}`);
  return rowsOf<{
    id: string | number;
    to_address: string;
    kind: string;
    status: string;
    attempts: number;
    last_error: string | null;
    created_at: string;
    sent_at: string | null;
    next_attempt_at: string | null;
  }>(result).map((r) => ({
    id: Number(r.id),
    to: r.to_address,
    kind: r.kind,
    status: r.status === "sent" ? "sent" : r.last_error ? "failing" : "queued",
    attempts: Number(r.attempts),
    lastError: r.last_error,
    createdAt: r.created_at,
    sentAt: r.sent_at,
    nextAttemptAt: r.next_attempt_at,
  }));
}

/** `mail retry <id>`: a queued mail is due now (its backoff dropped). Answers whether one was. */
export async function retryNow(db: AppDb, id: number): Promise<"queued" | "sent" | "missing"> {
  const result = await db.execute(sql`
    UPDATE mail_outbox SET next_attempt_at = now(), locked_until = NULL
    WHERE id = ${id} AND status = 'queued' RETURNING id`);
  if (rowsOf(result).length > 0) return "queued";
  const found = await db.execute(sql`SELECT status FROM mail_outbox WHERE id = ${id}`);
  return rowsOf(found).length > 0 ? "sent" : "missing";
}

/** For the metrics: mails waiting, and those among them whose last attempt failed. */
export async function outboxCounts(db: AppDb): Promise<{ queued: number; failing: number }> {
  const result = await db.execute(sql`
    SELECT count(*)::int AS queued, count(*) FILTER (WHERE last_error IS NOT NULL)::int AS failing
    FROM mail_outbox WHERE status = 'queued'`);
  const [row] = rowsOf<{ queued: number; failing: number }>(result);
  return { queued: Number(row?.queued ?? 0), failing: Number(row?.failing ?? 0) };
}

/** A verification link followed: the address it was made for becomes verified, once. */
export async function confirmVerification(
  db: AppDb,
  token: string,
  now: Date,
  within?: (tx: Executor & Pick<AppDb, "insert">, user: { userId: string; email: string }) => Promise<void>,
): Promise<
  { ok: true; userId: string; email: string } | { ok: false; reason: "unknown" | "expired" | "used" }
> {
  return db.transaction(async (tx) => {
    const found = rowsOf<{
      user_id: string;
      email: string;
      expired: boolean;
      used: boolean;
      current: string;
    }>(
      await tx.execute(sql`
        SELECT v.user_id, v.email, v.expires_at <= ${now.toISOString()} AS expired, v.used_at IS NOT NULL AS used,
          u.email AS current
        FROM email_verifications v JOIN users u ON u.id = v.user_id
        WHERE v.token_hash = ${tokenHash(token)} FOR UPDATE OF v`),
    );
    const row = found[0];
    if (!row || row.email !== row.current) return { ok: false, reason: "unknown" };
    if (row.used) return { ok: false, reason: "used" };
    if (row.expired) return { ok: false, reason: "expired" };
    await tx.execute(
      sql`UPDATE email_verifications SET used_at = ${now.toISOString()} WHERE token_hash = ${tokenHash(token)}`,
    );
    await tx.execute(
      sql`UPDATE users SET email_verified_at = coalesce(email_verified_at, ${now.toISOString()}) WHERE id = ${row.user_id}`,
    );
    await within?.(tx, { userId: row.user_id, email: row.email });
    return { ok: true, userId: row.user_id, email: row.email };
  });
}
