// A holder's two-factor authentication (issue 27, record 048): an
// authenticator app's codes (server/backend/domain/totp.ts, under the "holder"
// keys) or a single-use recovery code, asked at sign-in, before a send and
// before the phrase is shown. Nothing here speaks HTTP; server/backend/services.ts
// decides which call needs what.
//
// Secrets: the TOTP secret is sealed with the user id as associated data,
// recovery codes are kept as HMACs, a step-up grant is an HMAC'd expiry. None
// is ever logged or written to the audit log.
import { createHmac, timingSafeEqual } from "node:crypto";
import { and, count, eq, isNull, sql } from "drizzle-orm";
import type { AppDb } from "../db/index.ts";
import { holderRecoveryCodes, holderTwoFactor, users } from "../db/schema.ts";
import { STEP_UP_MINUTES } from "../../../common/literals.ts";
import { normalisePassword } from "../../../common/passwords.ts";
import { verifyDummyPassword, verifyPassword } from "./crypto.ts";
import { recordSecurityEvent, type AuditInfo } from "./security-audit.ts";
import {
  codeStep,
  looksLikeRecoveryCode,
  looksLikeTotpCode,
  newRecoveryCode,
  newTotpSecret,
  openSecret,
  RECOVERY_CODES,
  recoveryHash,
  sealSecret,
  totpFor,
  totpKeys,
  type TotpKeys,
} from "./totp.ts";

export { STEP_UP_MINUTES };
/** A restore without a code removes two-factor only after this long; sends wait meanwhile. */
export const REMOVAL_HOLD_HOURS = 48;
const ISSUER = "Coinkeep";

export interface SecondFactorKeys {
  totp: TotpKeys;
  /** Signs step-up grants. */
  grant: Buffer;
}

export function secondFactorKeys(backendSecret: string): SecondFactorKeys {
  const totp = totpKeys(backendSecret, "holder");
  return {
    totp,
    grant: createHmac("sha256", totp.recovery).update("coinkeep holder step-up grant v1").digest(),
  };
}

export type TwoFactorState =
  | { on: false }
  /** removalDueAt: a restore without a code asked for it to go at that instant (the hold). */
  | { on: true; enrolledAt: Date; removalDueAt: Date | null; recoveryCodesLeft: number };

/**
 * The holder's two-factor state at `now` (the holds' clock). A removal whose
 * hold has ended is carried out here, in one transaction with its audit row.
 */
export async function twoFactorState(db: AppDb, userId: string, now: Date): Promise<TwoFactorState> {
  const [row] = await db
    .select({ enrolledAt: holderTwoFactor.enrolledAt, removalDueAt: holderTwoFactor.removalDueAt })
    .from(holderTwoFactor)
    .where(eq(holderTwoFactor.userId, userId));
  if (!row) return { on: false };
  if (row.removalDueAt !== null && row.removalDueAt.getTime() <= now.getTime()) {
    await db.transaction(async (tx) => {
      const gone = await tx
        .delete(holderTwoFactor)
        .where(and(eq(holderTwoFactor.userId, userId), eq(holderTwoFactor.removalDueAt, row.removalDueAt!)))
        .returning({ userId: holderTwoFactor.userId });
      if (gone.length === 0) return;
      await tx.delete(holderRecoveryCodes).where(eq(holderRecoveryCodes.userId, userId));
      const email = await emailOf(tx, userId);
      await recordSecurityEvent(tx, { action: "auth.two-factor.removed", email, userId }, { ip: null });
    });
    return { on: false };
  }
  const [left] = await db
    .select({ n: count() })
    .from(holderRecoveryCodes)
    .where(and(eq(holderRecoveryCodes.userId, userId), isNull(holderRecoveryCodes.usedAt)));
  return {
    on: true,
    enrolledAt: row.enrolledAt,
    removalDueAt: row.removalDueAt,
    recoveryCodesLeft: left?.n ?? 0,
  };
}

/** What the operator's `user` command shows: on or off, a waiting removal, codes left. Reads only. */
export async function twoFactorSummary(
  db: AppDb,
  userId: string,
): Promise<{ on: boolean; removalDueAt: Date | null; recoveryCodesLeft: number }> {
  const [row] = await db
    .select({ removalDueAt: holderTwoFactor.removalDueAt })
    .from(holderTwoFactor)
    .where(eq(holderTwoFactor.userId, userId));
  if (!row) return { on: false, removalDueAt: null, recoveryCodesLeft: 0 };
  const [left] = await db
    .select({ n: count() })
    .from(holderRecoveryCodes)
    .where(and(eq(holderRecoveryCodes.userId, userId), isNull(holderRecoveryCodes.usedAt)));
  return { on: true, removalDueAt: row.removalDueAt, recoveryCodesLeft: left?.n ?? 0 };
}

async function emailOf(db: Pick<AppDb, "select">, userId: string): Promise<string | null> {
  const [row] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  return row?.email ?? null;
}

/** The account's password, checked (NFKC, record 025); an unknown account spends the same work. */
export async function passwordIsRight(db: AppDb, userId: string, password: string): Promise<boolean> {
  const [row] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, userId));
  const normal = normalisePassword(password);
  if (!row) {
    await verifyDummyPassword(normal);
    return false;
  }
  return verifyPassword(row.hash, normal);
}

// ---------------------------------------------------------------------------
// Enrolment

/** A new secret for an enrolment, and its otpauth:// URI (for the QR code). Nothing is stored. */
export function newEnrolment(email: string): { secret: string; uri: string } {
  const secret = newTotpSecret();
  return { secret, uri: totpFor(secret, ISSUER, email).toString() };
}

/** A base32 secret as newEnrolment makes them (160 bits: 32 characters). */
export function isEnrolmentSecret(value: string): boolean {
  return /^[A-Z2-7]{32}$/u.test(value);
}

export type EnableResult =
  { ok: true; recoveryCodes: string[] } | { ok: false; reason: "already-on" | "invalid-code" };

/**
 * Turns two-factor on: the code must be a current one of `secret`. The
 * sealed secret, the step used and ten recovery codes are written in one
 * transaction with the audit row; a wrong code writes nothing.
 */
export async function enableTwoFactor(
  db: AppDb,
  keys: SecondFactorKeys,
  input: { userId: string; email: string; secret: string; code: string },
  audit: AuditInfo,
  now: number = Date.now(),
): Promise<EnableResult> {
  const step = codeStep(totpFor(input.secret, ISSUER, input.email), input.code, now);
  if (step === null) return { ok: false, reason: "invalid-code" };
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  return db.transaction(async (tx): Promise<EnableResult> => {
    const inserted = await tx
      .insert(holderTwoFactor)
      .values({
        userId: input.userId,
        secretSealed: sealSecret(keys.totp, input.userId, input.secret),
        lastStep: step,
      })
      .onConflictDoNothing()
      .returning({ userId: holderTwoFactor.userId });
    if (inserted.length === 0) return { ok: false, reason: "already-on" };
    await tx.delete(holderRecoveryCodes).where(eq(holderRecoveryCodes.userId, input.userId));
    await tx
      .insert(holderRecoveryCodes)
      .values(
        codes.map((c) => ({ userId: input.userId, codeHash: recoveryHash(keys.totp, input.userId, c) })),
      );
    await recordSecurityEvent(
      tx,
      { action: "auth.two-factor.enabled", email: input.email, userId: input.userId },
      audit,
    );
    return { ok: true, recoveryCodes: codes };
  });
}

// ---------------------------------------------------------------------------
// Codes

export type CodeCheck = "accepted" | "invalid" | "replayed" | "off";

/**
 * Checks and uses up a code: an authenticator code (its time step, and every
 * earlier one, is refused from then on) or an unused recovery code (marked
 * used). Under the row's lock, so two requests with one code accept it once.
 * Wrong codes are audited; counting them toward the lock is the caller's.
 */
export async function spendCode(
  db: AppDb,
  keys: SecondFactorKeys,
  input: { userId: string; email: string; code: string },
  audit: AuditInfo,
  now: number = Date.now(),
): Promise<CodeCheck> {
  const result = await db.transaction(async (tx): Promise<CodeCheck> => {
    const [row] = await tx
      .select()
      .from(holderTwoFactor)
      .where(eq(holderTwoFactor.userId, input.userId))
      .for("update");
    if (!row) return "off";
    const code = input.code.trim();
    if (looksLikeTotpCode(code)) {
      const secret = openSecret(keys.totp, input.userId, row.secretSealed);
      const step = codeStep(totpFor(secret, ISSUER, input.email), code, now);
      if (step === null) return "invalid";
      if (row.lastStep !== null && step <= row.lastStep) return "replayed";
      await tx
        .update(holderTwoFactor)
        .set({ lastStep: step })
        .where(eq(holderTwoFactor.userId, input.userId));
      return "accepted";
    }
    if (!looksLikeRecoveryCode(code)) return "invalid";
    const used = await tx
      .update(holderRecoveryCodes)
      .set({ usedAt: sql`now()` })
      .where(
        and(
          eq(holderRecoveryCodes.userId, input.userId),
          eq(holderRecoveryCodes.codeHash, recoveryHash(keys.totp, input.userId, code)),
          isNull(holderRecoveryCodes.usedAt),
        ),
      )
      .returning({ hash: holderRecoveryCodes.codeHash });
    if (used.length !== 1) return "invalid";
    await recordSecurityEvent(
      tx,
      { action: "auth.two-factor.recovery-code", email: input.email, userId: input.userId },
      audit,
    );
    return "accepted";
  });
  if (result === "invalid" || result === "replayed") {
    await recordSecurityEvent(
      db,
      { action: "auth.two-factor.failed", email: input.email, userId: input.userId, reason: "wrong-code" },
      audit,
    );
  }
  return result;
}

/** Turns two-factor off (the caller has checked the password and a code): row, codes and audit in one transaction. */
export async function disableTwoFactor(
  db: AppDb,
  input: { userId: string; email: string },
  audit: AuditInfo,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(holderTwoFactor).where(eq(holderTwoFactor.userId, input.userId));
    await tx.delete(holderRecoveryCodes).where(eq(holderRecoveryCodes.userId, input.userId));
    await recordSecurityEvent(
      tx,
      { action: "auth.two-factor.disabled", email: input.email, userId: input.userId },
      audit,
    );
  });
}

/** Anything that runs statements: the database or a transaction on it. */
type Runner = Pick<AppDb, "update" | "insert" | "execute">;

/**
 * A restore without a code: two-factor goes at `dueAt` unless a removal is
 * already waiting (its instant stands). Returns the instant it goes.
 */
export async function scheduleRemoval(
  tx: Runner,
  input: { userId: string; email: string; dueAt: Date },
  audit: AuditInfo,
): Promise<Date | null> {
  const [row] = await tx
    .update(holderTwoFactor)
    .set({
      removalDueAt: sql`coalesce(${holderTwoFactor.removalDueAt}, ${input.dueAt.toISOString()}::timestamptz)`,
    })
    .where(eq(holderTwoFactor.userId, input.userId))
    .returning({ dueAt: holderTwoFactor.removalDueAt });
  if (!row?.dueAt) return null;
  await recordSecurityEvent(
    tx,
    { action: "auth.two-factor.removal-scheduled", email: input.email, userId: input.userId },
    audit,
  );
  return row.dueAt;
}

/** A code proved the authenticator is still there: a waiting removal is called off. */
export async function cancelRemoval(
  tx: Runner,
  input: { userId: string; email: string },
  audit: AuditInfo,
): Promise<boolean> {
  const rows = await tx
    .update(holderTwoFactor)
    .set({ removalDueAt: null })
    .where(and(eq(holderTwoFactor.userId, input.userId), sql`${holderTwoFactor.removalDueAt} IS NOT NULL`))
    .returning({ userId: holderTwoFactor.userId });
  if (rows.length === 0) return false;
  await recordSecurityEvent(
    tx,
    { action: "auth.two-factor.removal-cancelled", email: input.email, userId: input.userId },
    audit,
  );
  return true;
}

// ---------------------------------------------------------------------------
// Step-up grants: "a code was given in the last 5 minutes of this session".
// The web tier keeps the grant in the session's sealed data and hands it back;
// it names the user, the enrolment it was given under and its expiry.

function grantMac(keys: SecondFactorKeys, userId: string, enrolledAt: Date, expires: number): string {
  return createHmac("sha256", keys.grant)
    .update(`${userId}\n${enrolledAt.getTime()}\n${expires}`)
    .digest("base64url");
}

export function issueGrant(
  keys: SecondFactorKeys,
  userId: string,
  enrolledAt: Date,
  now: number = Date.now(),
): { grant: string; expiresAt: Date } {
  const expires = now + STEP_UP_MINUTES * 60_000;
  return {
    grant: `v1.${expires}.${grantMac(keys, userId, enrolledAt, expires)}`,
    expiresAt: new Date(expires),
  };
}

export function grantIsValid(
  keys: SecondFactorKeys,
  grant: string,
  userId: string,
  enrolledAt: Date,
  now: number = Date.now(),
): boolean {
  const match = /^v1\.(\d{13})\.([A-Za-z0-9_-]{43})$/u.exec(grant);
  if (!match) return false;
  const expires = Number(match[1]);
  if (expires <= now || expires > now + STEP_UP_MINUTES * 60_000) return false;
  const given = Buffer.from(match[2] ?? "", "utf8");
  const wanted = Buffer.from(grantMac(keys, userId, enrolledAt, expires), "utf8");
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
