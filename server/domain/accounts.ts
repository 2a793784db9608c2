// Account operations over the database. Pure domain code: no HTTP here.
// Every function normalises the e-mail itself, so callers cannot forget to.
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import type { AppDb } from "../db/index.ts";
import { users } from "../db/schema.ts";
import {
  decryptPhrase,
  derivePhraseKey,
  encryptPhrase,
  generatePhrase,
  hashPassword,
  newKdfSalt,
  normalisePhrase,
  phraseHmac,
  phraseMatches,
  verifyDummyPassword,
  verifyPassword,
  type ServerKeys,
} from "./crypto.ts";

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
  { ok: true; email: string; words: string[] } | { ok: false; reason: "not-found" | "wrong-password" };

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

async function findByEmail(db: AppDb, email: string) {
  const rows = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return rows[0];
}

export async function createAccount(
  ctx: AccountsContext,
  rawEmail: string,
  password: string,
): Promise<CreateAccountResult> {
  const email = normaliseEmail(rawEmail);
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

export async function login(ctx: AccountsContext, rawEmail: string, password: string): Promise<LoginResult> {
  const email = normaliseEmail(rawEmail);
  const user = await findByEmail(ctx.db, email);
  if (!user) {
    await verifyDummyPassword(password);
    return { ok: false, reason: "not-found" };
  }
  if (!(await verifyPassword(user.passwordHash, password))) return { ok: false, reason: "wrong-password" };
  const key = await derivePhraseKey(ctx.keys, password, user.phraseKdfSalt);
  const phrase = decryptPhrase(key, user.id, user.phraseCiphertext);
  // The password verified, so a failure here means damaged data or a changed backend secret.
  if (phrase === null) throw new Error("Stored phrase could not be decrypted");
  return { ok: true, email: user.email, words: phrase.split(" ") };
}

/** Same answer for an unknown e-mail and a wrong phrase. */
export async function checkCredentials(
  ctx: AccountsContext,
  rawEmail: string,
  phrase: string | readonly string[],
): Promise<CheckCredentialsResult> {
  const email = normaliseEmail(rawEmail);
  const user = await findByEmail(ctx.db, email);
  // Compare against a placeholder for an unknown e-mail so both paths do the same work.
  const matches = phraseMatches(ctx.keys, phrase, user?.phraseHmac ?? "0".repeat(64));
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
  newPassword: string,
): Promise<ChangePasswordResult> {
  const email = normaliseEmail(rawEmail);
  const normalised = normalisePhrase(phrase);
  const found = await checkCredentials(ctx, email, normalised);
  if (!found.ok) return found;

  // The expensive hashing happens before the transaction so the row lock (and,
  // on PGlite, the whole database) is held only for the short write.
  const kdfSalt = newKdfSalt();
  const [passwordHash, phraseKey] = await Promise.all([
    hashPassword(newPassword),
    derivePhraseKey(ctx.keys, newPassword, kdfSalt),
  ]);
  const phraseCiphertext = encryptPhrase(phraseKey, found.userId, normalised);

  return ctx.db.transaction(async (tx) => {
    const rows = await tx.select().from(users).where(eq(users.id, found.userId)).for("update");
    const user = rows[0];
    // Checked again under the lock: the row may have gone or changed meanwhile.
    if (!user || user.email !== email || !phraseMatches(ctx.keys, normalised, user.phraseHmac)) {
      return { ok: false, reason: "invalid" } as const;
    }
    const now = new Date();
    await tx
      .update(users)
      .set({ passwordHash, phraseKdfSalt: kdfSalt, phraseCiphertext, updatedAt: now, passwordChangedAt: now })
      .where(eq(users.id, user.id));
    return { ok: true } as const;
  });
}
