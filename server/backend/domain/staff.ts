// Staff members of the back office (issue 26, record 047): named people with
// roles, a password and TOTP, kept apart from holders (their own table,
// sessions and failure counter). The console (server/ops/console.ts) and the
// operator commands (server/ops/commands/staff.ts) both come here; nothing
// else reads or writes these tables.
//
// Secrets: an enrolment link's token and a session's token are stored as
// their SHA-256 only; recovery codes as an HMAC under a key derived from the
// backend secret; the TOTP secret encrypted (AES-256-GCM) under another. None
// of them is ever logged or written to the audit log.
import { createHash, randomBytes } from "node:crypto";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { normalisePassword } from "../../../common/passwords.ts";
import type { AppDb } from "../db/index.ts";
import { STAFF_ROLES, type StaffRole } from "../../../common/contract/console.ts";
import { auditLog, staffEnrolments, staffMembers, staffRecoveryCodes, staffSessions } from "../db/schema.ts";
import { hashPassword, verifyDummyPassword, verifyPassword } from "./crypto.ts";
import {
  canonicalRecovery,
  codeStep as stepOf,
  newRecoveryCode,
  newTotpSecret,
  openSecret as openTotp,
  recoveryHash as hashRecovery,
  RECOVERY_CODES,
  sealSecret as sealTotp,
  totpFor as totpOf,
  totpKeys,
} from "./totp.ts";

export { STAFF_ROLES, type StaffRole };

export const ENROLMENT_HOURS = 24;
export const SESSION_IDLE_MINUTES = 15;
export const SESSION_MAX_HOURS = 8;
/** The code step after the password must follow within this long. */
export const CODE_STEP_MINUTES = 5;
/** Consecutive wrong passwords and codes that lock a member's sign-in until an admin unlocks it. */
export const LOCK_FAILURES = 10;
export { RECOVERY_CODES };
/** Staff passwords: the holders' rules (NFKC, at most 1024 characters) and at least this many characters. */
export const MIN_STAFF_PASSWORD = 12;
export const MAX_STAFF_PASSWORD = 1024;

/** A token we hand out: 32 random bytes, base64url (43 characters). Anything else names nothing. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/u;

export function isStaffRole(value: string): value is StaffRole {
  return (STAFF_ROLES as readonly string[]).includes(value);
}

export function normaliseStaffEmail(email: string): string {
  return email.normalize("NFKC").trim().toLowerCase();
}

/** A plausible e-mail address: one @, something on each side, a dot in the domain, no spaces. */
export function isStaffEmail(email: string): boolean {
  return email.length >= 3 && email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/u.test(email);
}

/** What a staff member's new password must be; null when it is acceptable. */
export function staffPasswordProblem(password: string): string | null {
  const normal = normalisePassword(password);
  if (normal.length < MIN_STAFF_PASSWORD) return `Must be at least ${MIN_STAFF_PASSWORD} characters.`;
  if (normal.length > MAX_STAFF_PASSWORD) return `Must be at most ${MAX_STAFF_PASSWORD} characters.`;
  return null;
}

// ---------------------------------------------------------------------------
// Keys and hashes (server/backend/domain/totp.ts, under the "staff" keys)

const staffKeys = (backendSecret: string) => totpKeys(backendSecret, "staff");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const newToken = () => randomBytes(32).toString("base64url");
const sealSecret = (backendSecret: string, staffId: string, base32: string) =>
  sealTotp(staffKeys(backendSecret), staffId, base32);
const openSecret = (backendSecret: string, staffId: string, sealed: string) =>
  openTotp(staffKeys(backendSecret), staffId, sealed);
const recoveryHash = (backendSecret: string, staffId: string, code: string) =>
  hashRecovery(staffKeys(backendSecret), staffId, code);
const totpFor = (base32: string, email: string) => totpOf(base32, "Coinkeep staff", email);

// ---------------------------------------------------------------------------
// Members

export interface StaffMember {
  id: string;
  email: string;
  roles: StaffRole[];
  enrolled: boolean;
  locked: boolean;
  failedSignIns: number;
  removed: boolean;
  createdAt: Date;
  createdBy: string;
  enrolledAt: Date | null;
  /** Live signed-in sessions. */
  sessions: number;
}

/** Who acts, for the audit log: an operator command's --as, or a staff member and their roles. */
export interface StaffActor {
  actor: string;
  actorRoles?: readonly string[] | undefined;
}

export class StaffError extends Error {}

type Db = AppDb;

function rolesOf(value: readonly string[]): StaffRole[] {
  return STAFF_ROLES.filter((r) => value.includes(r));
}

async function writeAudit(
  db: Db,
  who: StaffActor,
  action: string,
  subject: string,
  details: Record<string, unknown>,
  reason?: string,
) {
  await db.insert(auditLog).values({
    actor: who.actor,
    actorRoles: who.actorRoles ? [...who.actorRoles] : null,
    action,
    subject,
    reason: reason ?? null,
    details,
  });
}

function memberRow(row: typeof staffMembers.$inferSelect, sessions: number): StaffMember {
  return {
    id: row.id,
    email: row.email,
    roles: rolesOf(row.roles),
    enrolled: row.enrolledAt !== null,
    locked: row.failedSignIns >= LOCK_FAILURES,
    failedSignIns: row.failedSignIns,
    removed: row.removedAt !== null,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    enrolledAt: row.enrolledAt,
    sessions,
  };
}

// Written with qualified names: inside a subquery drizzle names columns without their table.
const LIVE_SESSIONS = sql.raw(`(SELECT count(*)::int FROM staff_sessions s
  WHERE s.staff_id = staff_members.id AND s.stage = 'signed-in'
    AND s.last_seen_at > now() - interval '${SESSION_IDLE_MINUTES} minutes'
    AND s.absolute_expires_at > now())`);

export async function listStaff(db: Db, opts: { includeRemoved?: boolean } = {}): Promise<StaffMember[]> {
  const rows = await db
    .select({
      member: staffMembers,
      sessions: sql<number>`${LIVE_SESSIONS}`,
    })
    .from(staffMembers)
    .where(opts.includeRemoved ? undefined : isNull(staffMembers.removedAt))
    .orderBy(asc(staffMembers.email));
  return rows.map((r) => memberRow(r.member, Number(r.sessions)));
}

async function requireMember(db: Db, email: string): Promise<typeof staffMembers.$inferSelect> {
  const [row] = await db
    .select()
    .from(staffMembers)
    .where(eq(staffMembers.email, normaliseStaffEmail(email)))
    .for("update");
  if (!row || row.removedAt !== null)
    throw new StaffError(`No staff member uses ${normaliseStaffEmail(email)}.`);
  return row;
}

/** Ends every session of a member (in the caller's transaction); returns how many. */
async function endSessionsOf(db: Db, staffId: string): Promise<number> {
  const ended = await db
    .delete(staffSessions)
    .where(eq(staffSessions.staffId, staffId))
    .returning({ id: staffSessions.id });
  return ended.length;
}

/**
 * One change of a member by an admin, in one transaction: the member's row
 * locked, the change, and its audit row with the reason.
 */
async function changeMember<T>(
  db: Db,
  input: { email: string; reason: string },
  who: StaffActor,
  action: string,
  change: (
    tx: Db,
    row: typeof staffMembers.$inferSelect,
  ) => Promise<{ result: T; details: Record<string, unknown> }>,
): Promise<T> {
  return db.transaction(async (tx) => {
    const row = await requireMember(tx, input.email);
    const { result, details } = await change(tx, row);
    await writeAudit(tx, who, action, row.email, { staffId: row.id, ...details }, input.reason);
    return result;
  });
}

function checkRoles(roles: readonly string[]): StaffRole[] {
  if (roles.length === 0) throw new StaffError("Give at least one role: " + STAFF_ROLES.join(", ") + ".");
  const unknown = roles.filter((r) => !isStaffRole(r));
  if (unknown.length > 0) {
    throw new StaffError(`Unknown role ${unknown.join(", ")}: the roles are ${STAFF_ROLES.join(", ")}.`);
  }
  return rolesOf(roles);
}

export interface EnrolmentLink {
  member: StaffMember;
  /** The link's secret: shown once to whoever adds the member, stored as its SHA-256 only. */
  token: string;
  expiresAt: Date;
}

async function issueLink(
  db: Db,
  staffId: string,
  who: StaffActor,
): Promise<{ token: string; expiresAt: Date }> {
  const token = newToken();
  const expiresAt = new Date(Date.now() + ENROLMENT_HOURS * 3_600_000);
  // A new link replaces any earlier unused one.
  await db
    .update(staffEnrolments)
    .set({ usedAt: sql`now()` })
    .where(and(eq(staffEnrolments.staffId, staffId), isNull(staffEnrolments.usedAt)));
  await db
    .insert(staffEnrolments)
    .values({ tokenHash: sha256(token), staffId, expiresAt, createdBy: who.actor });
  return { token, expiresAt };
}

/** Adds a member (not yet enrolled) and issues their enrolment link. */
export async function addStaff(
  db: Db,
  input: { email: string; roles: readonly string[] },
  who: StaffActor,
): Promise<EnrolmentLink> {
  const email = normaliseStaffEmail(input.email);
  if (!isStaffEmail(email)) throw new StaffError(`"${input.email}" is not an e-mail address.`);
  const roles = checkRoles(input.roles);
  return db.transaction(async (tx) => {
    const [existing] = await tx
      .select()
      .from(staffMembers)
      .where(eq(staffMembers.email, email))
      .for("update");
    if (existing && existing.removedAt === null) throw new StaffError(`${email} is already a staff member.`);
    let row: typeof staffMembers.$inferSelect;
    if (existing) {
      // A removed member added again starts afresh: new roles, new password, new authenticator.
      [row] = (await tx
        .update(staffMembers)
        .set({
          roles,
          passwordHash: null,
          totpSecret: null,
          totpLastStep: null,
          failedSignIns: 0,
          enrolledAt: null,
          removedAt: null,
          createdBy: who.actor,
        })
        .where(eq(staffMembers.id, existing.id))
        .returning()) as [typeof staffMembers.$inferSelect];
      await tx.delete(staffRecoveryCodes).where(eq(staffRecoveryCodes.staffId, existing.id));
    } else {
      [row] = (await tx.insert(staffMembers).values({ email, roles, createdBy: who.actor }).returning()) as [
        typeof staffMembers.$inferSelect,
      ];
    }
    const link = await issueLink(tx, row.id, who);
    await writeAudit(tx, who, "staff.add", email, { staffId: row.id, roles, linkExpiresAt: link.expiresAt });
    return { member: memberRow(row, 0), ...link };
  });
}

/** A new enrolment link for a member who has not enrolled yet (the first expired or was lost). */
export async function newEnrolmentLink(db: Db, email: string, who: StaffActor): Promise<EnrolmentLink> {
  return db.transaction(async (tx) => {
    const row = await requireMember(tx, email);
    if (row.enrolledAt !== null) {
      throw new StaffError(`${row.email} has enrolled already; remove and add them again to start afresh.`);
    }
    const link = await issueLink(tx, row.id, who);
    await writeAudit(tx, who, "staff.link", row.email, { staffId: row.id, linkExpiresAt: link.expiresAt });
    return { member: memberRow(row, 0), ...link };
  });
}

/** Sets a member's roles; their sessions end (they sign in again under the new roles). */
export async function setStaffRoles(
  db: Db,
  input: { email: string; roles: readonly string[]; reason: string },
  who: StaffActor,
): Promise<StaffMember> {
  const roles = checkRoles(input.roles);
  return changeMember(db, input, who, "staff.roles", async (tx, row) => {
    await tx.update(staffMembers).set({ roles }).where(eq(staffMembers.id, row.id));
    const sessionsEnded = await endSessionsOf(tx, row.id);
    return {
      result: memberRow({ ...row, roles }, 0),
      details: { before: { roles: rolesOf(row.roles) }, after: { roles }, sessionsEnded },
    };
  });
}

/** Removes a member: no sign-in, every session ends; the row stays for the audit log. */
export async function removeStaff(
  db: Db,
  input: { email: string; reason: string },
  who: StaffActor,
): Promise<StaffMember> {
  return changeMember(db, input, who, "staff.remove", async (tx, row) => {
    if (who.actor === row.email) throw new StaffError("You cannot remove yourself; ask another admin.");
    if (rolesOf(row.roles).includes("admin")) await keepOneAdmin(tx, row.id);
    await tx
      .update(staffMembers)
      .set({ removedAt: sql`now()` })
      .where(eq(staffMembers.id, row.id));
    const sessionsEnded = await endSessionsOf(tx, row.id);
    await tx
      .update(staffEnrolments)
      .set({ usedAt: sql`now()` })
      .where(and(eq(staffEnrolments.staffId, row.id), isNull(staffEnrolments.usedAt)));
    return { result: { ...memberRow(row, 0), removed: true }, details: { sessionsEnded } };
  });
}

/** An admin can not take away the last enrolled admin (nobody could add staff from the console again). */
async function keepOneAdmin(db: Db, leavingId: string) {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(staffMembers)
    .where(
      and(
        isNull(staffMembers.removedAt),
        sql`'admin' = ANY(${staffMembers.roles})`,
        sql`${staffMembers.id} <> ${leavingId}`,
      ),
    );
  if (Number(row?.n ?? 0) === 0) {
    throw new StaffError("That is the last admin; add another admin first (or use the command line).");
  }
}

/** Ends every session of a member. */
export async function endStaffSessions(
  db: Db,
  input: { email: string; reason: string },
  who: StaffActor,
): Promise<number> {
  return changeMember(db, input, who, "staff.end-sessions", async (tx, row) => {
    const sessionsEnded = await endSessionsOf(tx, row.id);
    return { result: sessionsEnded, details: { sessionsEnded } };
  });
}

/** Lifts a member's sign-in lock. Returns the failures it cleared. */
export async function unlockStaff(
  db: Db,
  input: { email: string; reason: string },
  who: StaffActor,
): Promise<number> {
  return changeMember(db, input, who, "staff.unlock", async (tx, row) => {
    await tx.update(staffMembers).set({ failedSignIns: 0 }).where(eq(staffMembers.id, row.id));
    return { result: row.failedSignIns, details: { failuresCleared: row.failedSignIns } };
  });
}

// ---------------------------------------------------------------------------
// Enrolment

export type EnrolmentState =
  | { ok: true; staffId: string; email: string; roles: StaffRole[]; secret: string; otpauthUri: string }
  | { ok: false; reason: "unknown" | "used" | "expired" };

async function liveEnrolment(db: Db, token: string) {
  if (!TOKEN.test(token)) return { ok: false as const, reason: "unknown" as const };
  const [row] = await db
    .select({ link: staffEnrolments, member: staffMembers })
    .from(staffEnrolments)
    .innerJoin(staffMembers, eq(staffMembers.id, staffEnrolments.staffId))
    .where(eq(staffEnrolments.tokenHash, sha256(token)));
  if (!row) return { ok: false as const, reason: "unknown" as const };
  if (row.link.usedAt !== null || row.member.removedAt !== null || row.member.enrolledAt !== null) {
    return { ok: false as const, reason: "used" as const };
  }
  if (row.link.expiresAt.getTime() <= Date.now()) return { ok: false as const, reason: "expired" as const };
  return { ok: true as const, member: row.member };
}

/**
 * The enrolment behind a link: the member and their authenticator's secret.
 * The secret is made (and stored encrypted) the first time the link is opened
 * and shown again on each opening until enrolment completes.
 */
export async function openEnrolment(db: Db, backendSecret: string, token: string): Promise<EnrolmentState> {
  return db.transaction(async (tx) => {
    const live = await liveEnrolment(tx, token);
    if (!live.ok) return live;
    let member = live.member;
    if (member.totpSecret === null) {
      const sealed = sealSecret(backendSecret, member.id, newTotpSecret());
      const [updated] = await tx
        .update(staffMembers)
        .set({ totpSecret: sealed })
        .where(and(eq(staffMembers.id, member.id), isNull(staffMembers.totpSecret)))
        .returning();
      // Two openings at once: the first one's secret stands.
      member =
        updated ?? (await tx.select().from(staffMembers).where(eq(staffMembers.id, member.id)))[0] ?? member;
    }
    const secret = openSecret(backendSecret, member.id, member.totpSecret ?? "");
    return {
      ok: true,
      staffId: member.id,
      email: member.email,
      roles: rolesOf(member.roles),
      secret,
      otpauthUri: totpFor(secret, member.email).toString(),
    };
  });
}

export type CompleteEnrolment =
  | { ok: true; email: string; recoveryCodes: string[] }
  | { ok: false; reason: "unknown" | "used" | "expired" }
  | { ok: false; reason: "password"; message: string }
  | { ok: false; reason: "code" };

/**
 * Completes an enrolment: the password (checked) and a code from the
 * authenticator (proving it holds the secret). In one transaction the password
 * is set, the link used up and ten recovery codes made; the codes are
 * returned to be shown once.
 */
export async function completeEnrolment(
  db: Db,
  backendSecret: string,
  input: { token: string; password: string; code: string },
  now: number = Date.now(),
): Promise<CompleteEnrolment> {
  const problem = staffPasswordProblem(input.password);
  if (problem) return { ok: false, reason: "password", message: problem };
  const passwordHash = await hashPassword(normalisePassword(input.password));
  return db.transaction(async (tx): Promise<CompleteEnrolment> => {
    const live = await liveEnrolment(tx, input.token);
    if (!live.ok) return live;
    const [member] = await tx
      .select()
      .from(staffMembers)
      .where(eq(staffMembers.id, live.member.id))
      .for("update");
    if (!member?.totpSecret || member.enrolledAt !== null) return { ok: false, reason: "used" };
    const step = codeStep(
      openSecret(backendSecret, member.id, member.totpSecret),
      member.email,
      input.code,
      now,
    );
    if (step === null) return { ok: false, reason: "code" };
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await tx
      .update(staffMembers)
      .set({ passwordHash, enrolledAt: sql`now()`, totpLastStep: step, failedSignIns: 0 })
      .where(eq(staffMembers.id, member.id));
    await tx
      .update(staffEnrolments)
      .set({ usedAt: sql`now()` })
      .where(eq(staffEnrolments.tokenHash, sha256(input.token)));
    await tx.delete(staffRecoveryCodes).where(eq(staffRecoveryCodes.staffId, member.id));
    await tx
      .insert(staffRecoveryCodes)
      .values(
        codes.map((c) => ({ staffId: member.id, codeHash: recoveryHash(backendSecret, member.id, c) })),
      );
    await writeAudit(
      tx,
      { actor: member.email, actorRoles: rolesOf(member.roles) },
      "staff.enrol",
      member.email,
      {
        staffId: member.id,
      },
    );
    return { ok: true, email: member.email, recoveryCodes: codes };
  });
}

/** The time step a six-digit code belongs to (now ±1 step), or null when it is no current code. */
function codeStep(base32: string, email: string, code: string, now: number): number | null {
  return stepOf(totpFor(base32, email), code, now);
}

// ---------------------------------------------------------------------------
// Sign-in and sessions

export type PasswordStep = { ok: true; token: string } | { ok: false; reason: "invalid" | "locked" };

/**
 * Sign-in, first step: the e-mail and password. A right password opens a
 * 'password' session that only the code can turn into a signed-in one; a wrong
 * one counts toward the lock. An unknown, removed or not-enrolled e-mail is
 * answered like a wrong password, after the same work.
 */
export async function signInWithPassword(
  db: Db,
  input: { email: string; password: string },
): Promise<PasswordStep> {
  const email = normaliseStaffEmail(input.email);
  const password = normalisePassword(input.password);
  const [member] = await db.select().from(staffMembers).where(eq(staffMembers.email, email));
  if (!member || member.removedAt !== null || member.passwordHash === null) {
    await verifyDummyPassword(password);
    return { ok: false, reason: "invalid" };
  }
  if (member.failedSignIns >= LOCK_FAILURES) return { ok: false, reason: "locked" };
  if (!(await verifyPassword(member.passwordHash, password))) {
    const failures = await countFailure(db, member.id);
    return { ok: false, reason: failures >= LOCK_FAILURES ? "locked" : "invalid" };
  }
  const token = newToken();
  await db.insert(staffSessions).values({
    id: sha256(token),
    staffId: member.id,
    stage: "password",
    absoluteExpiresAt: new Date(Date.now() + CODE_STEP_MINUTES * 60_000),
  });
  return { ok: true, token };
}

async function countFailure(db: Db, staffId: string): Promise<number> {
  const [row] = await db
    .update(staffMembers)
    .set({ failedSignIns: sql`${staffMembers.failedSignIns} + 1` })
    .where(eq(staffMembers.id, staffId))
    .returning({ failures: staffMembers.failedSignIns });
  const failures = row?.failures ?? 0;
  // At the lock, every session of the member ends too.
  if (failures >= LOCK_FAILURES) await endSessionsOf(db, staffId);
  return failures;
}

export type CodeStep =
  | { ok: true; token: string; email: string }
  /** The password step is gone (expired, locked, or never was): start again. */
  | { ok: false; reason: "start-again" | "locked" }
  | { ok: false; reason: "invalid" | "replayed" };

/**
 * Sign-in, second step: a code of the authenticator (each time step accepted
 * once) or an unused recovery code. On success the password-step session is
 * replaced by a new signed-in one (a new token: rotated at sign-in).
 */
export async function signInWithCode(
  db: Db,
  backendSecret: string,
  input: { token: string; code: string },
  now: number = Date.now(),
): Promise<CodeStep> {
  if (!TOKEN.test(input.token)) return { ok: false, reason: "start-again" };
  return db.transaction(async (tx): Promise<CodeStep> => {
    const [row] = await tx
      .select({ session: staffSessions, member: staffMembers })
      .from(staffSessions)
      .innerJoin(staffMembers, eq(staffMembers.id, staffSessions.staffId))
      .where(eq(staffSessions.id, sha256(input.token)))
      .for("update");
    if (!row || row.session.stage !== "password" || row.session.absoluteExpiresAt.getTime() <= now) {
      return { ok: false, reason: "start-again" };
    }
    const { member } = row;
    if (member.removedAt !== null || member.totpSecret === null || member.enrolledAt === null) {
      return { ok: false, reason: "start-again" };
    }
    if (member.failedSignIns >= LOCK_FAILURES) return { ok: false, reason: "locked" };
    const code = input.code.trim();
    let accepted = false;
    let replayed = false;
    if (/^\d{3}\s?\d{3}$/u.test(code)) {
      const step = codeStep(openSecret(backendSecret, member.id, member.totpSecret), member.email, code, now);
      if (step !== null && member.totpLastStep !== null && step <= member.totpLastStep) replayed = true;
      else if (step !== null) {
        accepted = true;
        await tx.update(staffMembers).set({ totpLastStep: step }).where(eq(staffMembers.id, member.id));
      }
    } else if (canonicalRecovery(code).length === 10) {
      const used = await tx
        .update(staffRecoveryCodes)
        .set({ usedAt: sql`now()` })
        .where(
          and(
            eq(staffRecoveryCodes.staffId, member.id),
            eq(staffRecoveryCodes.codeHash, recoveryHash(backendSecret, member.id, code)),
            isNull(staffRecoveryCodes.usedAt),
          ),
        )
        .returning({ hash: staffRecoveryCodes.codeHash });
      accepted = used.length === 1;
      if (accepted) {
        await writeAudit(
          tx,
          { actor: member.email, actorRoles: rolesOf(member.roles) },
          "staff.recovery-code",
          member.email,
          {
            staffId: member.id,
          },
        );
      }
    }
    if (!accepted) {
      const failures = await countFailure(tx, member.id);
      if (failures >= LOCK_FAILURES) return { ok: false, reason: "locked" };
      return { ok: false, reason: replayed ? "replayed" : "invalid" };
    }
    await tx.delete(staffSessions).where(eq(staffSessions.id, row.session.id));
    await tx.update(staffMembers).set({ failedSignIns: 0 }).where(eq(staffMembers.id, member.id));
    const token = newToken();
    await tx.insert(staffSessions).values({
      id: sha256(token),
      staffId: member.id,
      stage: "signed-in",
      absoluteExpiresAt: new Date(now + SESSION_MAX_HOURS * 3_600_000),
    });
    await writeAudit(
      tx,
      { actor: member.email, actorRoles: rolesOf(member.roles) },
      "staff.sign-in",
      member.email,
      {
        staffId: member.id,
      },
    );
    return { ok: true, token, email: member.email };
  });
}

export interface StaffSession {
  staffId: string;
  email: string;
  roles: StaffRole[];
  /** Whether the token's row is still at the password step (only the code page opens). */
  stage: "password" | "signed-in";
  /** When the session ends if nothing touches it (ms since the epoch). */
  idleDeadline: number;
}

/**
 * The live session behind a token, or null: gone, idle too long, past its
 * absolute end, or its member removed. A signed-in read is activity (the idle
 * deadline moves on, at most every 15 s).
 */
export async function readStaffSession(
  db: Db,
  token: string,
  opts: { activity: boolean } = { activity: true },
): Promise<StaffSession | null> {
  if (!TOKEN.test(token)) return null;
  const id = sha256(token);
  const [row] = await db
    .select({ session: staffSessions, member: staffMembers })
    .from(staffSessions)
    .innerJoin(staffMembers, eq(staffMembers.id, staffSessions.staffId))
    .where(eq(staffSessions.id, id));
  if (!row) return null;
  const now = Date.now();
  const { session, member } = row;
  const idleEnd = session.lastSeenAt.getTime() + SESSION_IDLE_MINUTES * 60_000;
  if (
    member.removedAt !== null ||
    session.absoluteExpiresAt.getTime() <= now ||
    (session.stage === "signed-in" && idleEnd <= now)
  ) {
    await db.delete(staffSessions).where(eq(staffSessions.id, id));
    return null;
  }
  const stage = session.stage === "signed-in" ? "signed-in" : "password";
  let deadline = stage === "signed-in" ? idleEnd : session.absoluteExpiresAt.getTime();
  if (stage === "signed-in" && opts.activity && now - session.lastSeenAt.getTime() > 15_000) {
    await db
      .update(staffSessions)
      .set({ lastSeenAt: sql`now()` })
      .where(eq(staffSessions.id, id));
    deadline = now + SESSION_IDLE_MINUTES * 60_000;
  }
  return {
    staffId: member.id,
    email: member.email,
    roles: rolesOf(member.roles),
    stage,
    idleDeadline: Math.min(deadline, session.absoluteExpiresAt.getTime()),
  };
}

/** Sign-out: the token's row goes. */
export async function endStaffSession(db: Db, token: string, email?: string): Promise<void> {
  if (!TOKEN.test(token)) return;
  const ended = await db
    .delete(staffSessions)
    .where(eq(staffSessions.id, sha256(token)))
    .returning({ staffId: staffSessions.staffId });
  if (ended.length > 0 && email) {
    await writeAudit(db, { actor: email }, "staff.sign-out", email, { staffId: ended[0]?.staffId });
  }
}

/** Drops sessions past their deadlines (the purge job). */
export async function purgeStaffSessions(db: Db): Promise<number> {
  const gone = await db
    .delete(staffSessions)
    .where(
      sql`${staffSessions.absoluteExpiresAt} <= now() OR (${staffSessions.stage} = 'signed-in' AND ${staffSessions.lastSeenAt} <= now() - make_interval(mins => ${SESSION_IDLE_MINUTES}))`,
    )
    .returning({ id: staffSessions.id });
  return gone.length;
}
