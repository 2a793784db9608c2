// Account operations over the database. Pure domain code: no HTTP here.
// Every function normalises the e-mail itself, so callers cannot forget to.
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { log } from "../../../common/log.ts";
import { perDatabase, type AppDb } from "../db/index.ts";
import { users, type User } from "../db/schema.ts";
import {
  decryptPhrase,
  derivePhraseKey,
  encryptPhrase,
  generatePhrase,
  hashPassword,
  newKdfSalt,
  normalisePassword,
  normalisePhrase,
  phraseHmac,
  phraseMatches,
  verifyDummyPassword,
  verifyPassword,
  type ServerKeys,
} from "./crypto.ts";
import { recordSecurityEvent, type AuditInfo, type SecurityAction } from "./security-audit.ts";

export interface AccountsContext {
  db: AppDb;
  keys: ServerKeys;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export type CreateAccountResult =
  { ok: true; userId: string; words: string[] } | { ok: false; reason: "email-taken" };

export type LoginResult =
  | { ok: true; userId: string; email: string; words: string[] }
  | { ok: false; reason: "not-found" | "wrong-password" };

export type CheckCredentialsResult =
  { ok: true; userId: string; email: string } | { ok: false; reason: "invalid" };

export type ChangePasswordResult = { ok: true } | { ok: false; reason: "invalid" };

/** PostgreSQL's unique_violation, looked for along the error's cause chain (drizzle wraps driver errors). */
export function isUniqueViolation(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    if ((current as { code?: unknown }).code === "23505") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Runs `attempt`, and once more when it lost a unique key to a concurrent writer (whose row it then finds). */
export async function retryOnUniqueViolation<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return attempt();
  }
}

async function findByEmail(db: AppDb, email: string) {
  const rows = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return rows[0];
}

export async function createAccount(
  ctx: AccountsContext,
  rawEmail: string,
  rawPassword: string,
): Promise<CreateAccountResult> {
  const email = normaliseEmail(rawEmail);
  // Hashed and turned into the phrase key in NFKC (record 025).
  const password = normalisePassword(rawPassword);
  // A cheap early answer; the unique constraint below is what guarantees uniqueness.
  if (await findByEmail(ctx.db, email)) return { ok: false, reason: "email-taken" };

  const userId = randomUUID();
  const words = generatePhrase();
  const phrase = normalisePhrase(words);
  const kdfSalt = newKdfSalt();
  const [passwordHash, phraseKey] = await Promise.all([
    hashPassword(password),
    derivePhraseKey(ctx.keys, password, kdfSalt),
  ]);
  try {
    await ctx.db.insert(users).values({
      id: userId,
      email,
      passwordHash,
      phraseHmac: phraseHmac(ctx.keys, phrase),
      phraseCiphertext: encryptPhrase(phraseKey, userId, phrase),
      phraseKdfSalt: kdfSalt,
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { ok: false, reason: "email-taken" };
    throw error;
  }
  return { ok: true, userId, words };
}

/** Why call 2 checks a password (record 015); absent: a sign-in. */
export type LoginPurpose = "reveal" | "restore";

export interface LoginAudit extends AuditInfo {
  purpose?: LoginPurpose | undefined;
}

/**
 * Call 2. With `audit`, the outcome is written to the audit log: a sign-in, a
 * phrase reveal, or the restore flow's e-mail lookup (which probes with a
 * throw-away password, so its "wrong password" is the lookup succeeding).
 */
export async function login(
  ctx: AccountsContext,
  rawEmail: string,
  password: string,
  audit?: LoginAudit,
): Promise<LoginResult> {
  const result = await checkLogin(ctx, rawEmail, password);
  if (audit) {
    const purpose = audit.purpose;
    const email = result.user?.email ?? null;
    const userId = result.user?.id ?? null;
    let action: SecurityAction;
    if (result.ok) action = purpose === "reveal" ? "auth.reveal" : "auth.login";
    else if (purpose === "restore") action = result.user ? "restore.lookup" : "restore.lookup.failed";
    else action = purpose === "reveal" ? "auth.reveal.failed" : "auth.login.failed";
    const reason = result.ok ? undefined : result.user ? "wrong-password" : "unknown-email";
    await recordSecurityEvent(ctx.db, { action, email, userId, ...(reason ? { reason } : {}) }, audit);
  }
  return result.answer;
}

/**
 * The password check (record 025): the NFKC form first; when that fails and
 * the entry as typed is not already NFKC, the entry as typed once, for an
 * account whose hash and phrase key were made before passwords were
 * normalised. Such an account is then moved to the NFKC form. An unknown
 * e-mail spends the same verifications against the dummy hash.
 */
async function checkLogin(
  ctx: AccountsContext,
  rawEmail: string,
  rawPassword: string,
): Promise<{ ok: boolean; user: User | undefined; answer: LoginResult }> {
  const email = normaliseEmail(rawEmail);
  const password = normalisePassword(rawPassword);
  const legacy = rawPassword === password ? undefined : rawPassword;
  const user = await findByEmail(ctx.db, email);
  if (!user) {
    await verifyDummyPassword(password);
    if (legacy !== undefined) await verifyDummyPassword(legacy);
    return { ok: false, user, answer: { ok: false, reason: "not-found" } };
  }
  let verified: string | undefined;
  if (await verifyPassword(user.passwordHash, password)) verified = password;
  else if (legacy !== undefined && (await verifyPassword(user.passwordHash, legacy))) verified = legacy;
  if (verified === undefined) return { ok: false, user, answer: { ok: false, reason: "wrong-password" } };
  const key = await derivePhraseKey(ctx.keys, verified, user.phraseKdfSalt);
  const phrase = decryptPhrase(key, user.id, user.phraseCiphertext);
  // The password verified, so a failure here means damaged data or a changed backend secret.
  if (phrase === null) throw new Error("Stored phrase could not be decrypted");
  if (verified !== password) await moveToNormalisedPassword(ctx, user, password, phrase);
  return {
    ok: true,
    user,
    answer: { ok: true, userId: user.id, email: user.email, words: phrase.split(" ") },
  };
}

/**
 * Rehashes a legacy account's password in its NFKC form and re-encrypts the
 * phrase under the key derived from that form: hash, salt and ciphertext in
 * one UPDATE (one transaction), and only while the row still holds the hash
 * just verified, so a password change that landed meanwhile is never undone.
 * A failure is logged and the sign-in goes on; the next one tries again.
 */
async function moveToNormalisedPassword(ctx: AccountsContext, user: User, password: string, phrase: string) {
  const kdfSalt = newKdfSalt();
  try {
    const [passwordHash, phraseKey] = await Promise.all([
      hashPassword(password),
      derivePhraseKey(ctx.keys, password, kdfSalt),
    ]);
    const phraseCiphertext = encryptPhrase(phraseKey, user.id, phrase);
    await ctx.db
      .update(users)
      .set({ passwordHash, phraseKdfSalt: kdfSalt, phraseCiphertext, updatedAt: new Date() })
      .where(
        and(
          eq(users.id, user.id),
          eq(users.passwordHash, user.passwordHash),
          eq(users.phraseKdfSalt, user.phraseKdfSalt),
          eq(users.phraseCiphertext, user.phraseCiphertext),
        ),
      );
  } catch (error) {
    log.warn("could not rehash a password in NFKC", {
      userId: user.id,
      error: error instanceof Error ? error.name : "unknown",
    });
  }
}

/** Same answer for an unknown e-mail and a wrong phrase. */
export async function checkCredentials(
  ctx: AccountsContext,
  rawEmail: string,
  phrase: string | readonly string[],
): Promise<CheckCredentialsResult> {
  const [user] = await credentialsQuery(ctx.db).execute({ email: normaliseEmail(rawEmail) });
  // Compare against a placeholder for an unknown e-mail so both paths do the same work.
  const matches = phraseMatches(ctx.keys, phrase, user?.phraseHmac ?? "0".repeat(64));
  if (!user || !matches) return { ok: false, reason: "invalid" };
  return { ok: true, userId: user.id, email: user.email };
}

// checkCredentials runs on every signed-in call (pages poll), so its read is
// prepared once per database: built once, and planned once per connection.
const credentialsQuery = perDatabase((db) =>
  db
    .select({ id: users.id, email: users.email, phraseHmac: users.phraseHmac })
    .from(users)
    .where(eq(users.email, sql.placeholder("email")))
    .prepare("coinkeep_accounts_check_credentials"),
);

async function findCredentials(ctx: AccountsContext, rawEmail: string, phrase: string | readonly string[]) {
  const email = normaliseEmail(rawEmail);
  const user = await findByEmail(ctx.db, email);
  // Compare against a placeholder for an unknown e-mail so both paths do the same work.
  const matches = phraseMatches(ctx.keys, phrase, user?.phraseHmac ?? "0".repeat(64));
  return { user, matches };
}

/** Call 10, the restore flow's phrase check: checkCredentials, audited. */
export async function checkRestorePhrase(
  ctx: AccountsContext,
  rawEmail: string,
  phrase: string | readonly string[],
  audit: AuditInfo,
): Promise<CheckCredentialsResult> {
  const { user, matches } = await findCredentials(ctx, rawEmail, phrase);
  const ok = Boolean(user && matches);
  await recordSecurityEvent(
    ctx.db,
    {
      action: ok ? "restore.phrase" : "restore.phrase.failed",
      email: user?.email ?? null,
      userId: user?.id ?? null,
      ...(ok ? {} : { reason: user ? ("wrong-phrase" as const) : ("unknown-email" as const) }),
    },
    audit,
  );
  if (!user || !matches) return { ok: false, reason: "invalid" };
  return { ok: true, userId: user.id, email: user.email };
}

/**
 * The restore flow: the phrase proves ownership; the password hash, the KDF salt
 * and the phrase ciphertext are replaced together in one transaction.
 */
export async function changePassword(
  ctx: AccountsContext,
  rawEmail: string,
  phrase: string | readonly string[],
  rawNewPassword: string,
  audit?: AuditInfo,
  /** Runs inside the change's transaction, after the write (two-factor's restore step, record 048). */
  within?: (tx: Pick<AppDb, "update" | "insert" | "execute">, user: User) => Promise<void>,
): Promise<ChangePasswordResult> {
  const email = normaliseEmail(rawEmail);
  // Hashed and turned into the phrase key in NFKC (record 025).
  const newPassword = normalisePassword(rawNewPassword);
  const normalised = normalisePhrase(phrase);
  const refused = async (user: User | undefined) => {
    if (audit) {
      await recordSecurityEvent(
        ctx.db,
        {
          action: "auth.password.change.failed",
          email: user?.email ?? null,
          userId: user?.id ?? null,
          reason: user ? "wrong-phrase" : "unknown-email",
        },
        audit,
      );
    }
    return { ok: false, reason: "invalid" } as const;
  };
  const { user: known, matches } = await findCredentials(ctx, email, normalised);
  if (!known || !matches) return refused(known);
  const found = { userId: known.id };

  // The expensive hashing happens before the transaction so the row lock (and,
  // on PGlite, the whole database) is held only for the short write.
  const kdfSalt = newKdfSalt();
  const [passwordHash, phraseKey] = await Promise.all([
    hashPassword(newPassword),
    derivePhraseKey(ctx.keys, newPassword, kdfSalt),
  ]);
  const phraseCiphertext = encryptPhrase(phraseKey, found.userId, normalised);

  const changed = await ctx.db.transaction(async (tx) => {
    const rows = await tx.select().from(users).where(eq(users.id, found.userId)).for("update");
    const user = rows[0];
    // Checked again under the lock: the row may have gone or changed meanwhile.
    if (!user || user.email !== email || !phraseMatches(ctx.keys, normalised, user.phraseHmac)) {
      return false;
    }
    const now = new Date();
    await tx
      .update(users)
      .set({ passwordHash, phraseKdfSalt: kdfSalt, phraseCiphertext, updatedAt: now, passwordChangedAt: now })
      .where(eq(users.id, user.id));
    await within?.(tx, user);
    // In the change's own transaction: no password change without its audit row.
    if (audit) {
      await recordSecurityEvent(
        tx,
        { action: "auth.password.changed", email: user.email, userId: user.id },
        audit,
      );
    }
    return true;
  });
  if (!changed) return refused(undefined);
  return { ok: true };
}

export type UpdatePasswordResult = { ok: true } | { ok: false; reason: "wrong-password" };

/**
 * A signed-in holder changes their password (issue 27; the caller has proved
 * the e-mail and words). The current password is verified as a sign-in
 * verifies it (NFKC, then as typed for an account from before record 025),
 * the phrase is decrypted under its key, and the new password's hash, a new
 * KDF salt and the phrase re-encrypted under the new password's key replace
 * the old three in ONE transaction with the audit row: a crash or a failure
 * at any point leaves either the old password (and phrase key) or the new
 * one, never a mix. The row is changed only while it still holds what was
 * verified, so a change that landed meanwhile is never undone (the slower
 * one is then answered as a wrong current password, which it now is).
 */
export async function updatePassword(
  ctx: AccountsContext,
  userId: string,
  rawCurrentPassword: string,
  rawNewPassword: string,
  audit: AuditInfo,
): Promise<UpdatePasswordResult> {
  const current = normalisePassword(rawCurrentPassword);
  const legacy = rawCurrentPassword === current ? undefined : rawCurrentPassword;
  const newPassword = normalisePassword(rawNewPassword);
  const [user] = await ctx.db.select().from(users).where(eq(users.id, userId)).limit(1);
  const refused = async () => {
    await recordSecurityEvent(
      ctx.db,
      {
        action: "auth.password.change.failed",
        email: user?.email ?? null,
        userId: user?.id ?? null,
        reason: "wrong-password",
      },
      audit,
    );
    return { ok: false, reason: "wrong-password" } as const;
  };
  if (!user) {
    await verifyDummyPassword(current);
    return refused();
  }
  let verified: string | undefined;
  if (await verifyPassword(user.passwordHash, current)) verified = current;
  else if (legacy !== undefined && (await verifyPassword(user.passwordHash, legacy))) verified = legacy;
  if (verified === undefined) return refused();
  const oldKey = await derivePhraseKey(ctx.keys, verified, user.phraseKdfSalt);
  const phrase = decryptPhrase(oldKey, user.id, user.phraseCiphertext);
  // The password verified, so a failure here means damaged data or a changed backend secret.
  if (phrase === null) throw new Error("Stored phrase could not be decrypted");

  // The expensive hashing happens before the transaction, so the row (and, on
  // PGlite, the whole database) is held only for the short write.
  const kdfSalt = newKdfSalt();
  const [passwordHash, phraseKey] = await Promise.all([
    hashPassword(newPassword),
    derivePhraseKey(ctx.keys, newPassword, kdfSalt),
  ]);
  const phraseCiphertext = encryptPhrase(phraseKey, user.id, phrase);

  const changed = await ctx.db.transaction(async (tx) => {
    const [row] = await tx.select().from(users).where(eq(users.id, user.id)).for("update");
    if (
      !row ||
      row.passwordHash !== user.passwordHash ||
      row.phraseKdfSalt !== user.phraseKdfSalt ||
      row.phraseCiphertext !== user.phraseCiphertext
    ) {
      return false;
    }
    const now = new Date();
    await tx
      .update(users)
      .set({ passwordHash, phraseKdfSalt: kdfSalt, phraseCiphertext, updatedAt: now, passwordChangedAt: now })
      .where(eq(users.id, user.id));
    // In the change's own transaction: no password change without its audit row, nor the reverse.
    await recordSecurityEvent(
      tx,
      { action: "auth.password.changed", email: row.email, userId: row.id },
      audit,
    );
    return true;
  });
  return changed ? { ok: true } : refused();
}
