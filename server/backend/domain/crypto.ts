// Key material, password hashing and the protection of the 12-word phrase.
//
// Keys:
//   backendSecret ──HKDF-SHA-256(info "coinkeep phrase-hmac v1")──────▶ hmacKey
//                 ──HKDF-SHA-256(info "coinkeep phrase-encryption v1")─▶ encryptionKey
//
// Phrase verification: hex HMAC-SHA-256(hmacKey, normalised phrase), compared in
// constant time with users.phrase_hmac.
//
// Phrase at rest (users.phrase_ciphertext): AES-256-GCM under
//   HKDF-SHA-256(ikm  = argon2id raw hash(password, users.phrase_kdf_salt),
//                salt = encryptionKey,
//                info = "coinkeep phrase-at-rest v1")
// with a random 12-byte IV and the user's id as additional authenticated data.
// Stored format: base64( iv[12 bytes] | tag[16 bytes] | ciphertext ).
// The key needs both the password and the backend secret, so neither a copy of
// the database alone nor the secret alone reveals a phrase.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { hash, hashRaw, verify } from "@node-rs/argon2";
import type { Algorithm, Options as Argon2Options } from "@node-rs/argon2";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";

export interface ServerKeys {
  /** Key for the phrase HMAC. */
  readonly hmacKey: Buffer;
  /** Salt for the per-user, password-derived phrase encryption key. */
  readonly encryptionKey: Buffer;
}

export const MIN_SECRET_LENGTH = 32;

/** Derives independent sub-keys from the backend secret (>= 32 characters). */
export function deriveServerKeys(backendSecret: string): ServerKeys {
  if (typeof backendSecret !== "string" || backendSecret.length < MIN_SECRET_LENGTH) {
    throw new Error(`backendSecret must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  const ikm = Buffer.from(backendSecret, "utf8");
  const sub = (info: string) => Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), info, 32));
  return {
    hmacKey: sub("coinkeep phrase-hmac v1"),
    encryptionKey: sub("coinkeep phrase-encryption v1"),
  };
}

// ---------------------------------------------------------------------------
// Passwords
//
// Every password that enters is normalised to NFKC first (common/passwords.ts,
// record 025): server/backend/domain/accounts.ts does it before the functions below,
// which hash exactly what they are given, for the hash and the phrase key alike.

export { normalisePassword, samePassword } from "../../../common/passwords.ts";
import { normalisePhrase } from "../../../common/phrase.ts";
export { normalisePhrase, PHRASE_WORDS } from "../../../common/phrase.ts";

/** argon2id; `2` is Algorithm.Argon2id (a const enum, which type stripping cannot inline). */
export const ARGON2_OPTIONS = {
  algorithm: 2 as Algorithm,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const satisfies Argon2Options;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

/** False for a wrong password and for a malformed stored hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same work as one verifyPassword, against a fixed dummy hash, so an
 * unknown e-mail takes as long as a known one with a wrong password.
 */
export async function verifyDummyPassword(password: string): Promise<void> {
  dummyHash ??= hashPassword("coinkeep dummy password for unknown accounts");
  await verifyPassword(await dummyHash, password);
}

// ---------------------------------------------------------------------------
// The phrase

/** A fresh 12-word English BIP-39 mnemonic (128 bits of entropy). */
export function generatePhrase(): string[] {
  return generateMnemonic(wordlist, 128).split(" ");
}

export function phraseHmac(keys: ServerKeys, phrase: string | readonly string[]): string {
  return createHmac("sha256", keys.hmacKey).update(normalisePhrase(phrase), "utf8").digest("hex");
}

/** Constant-time comparison of the phrase's HMAC with the stored hex. */
export function phraseMatches(
  keys: ServerKeys,
  phrase: string | readonly string[],
  storedHex: string,
): boolean {
  const actual = Buffer.from(phraseHmac(keys, phrase), "hex");
  const wellFormed = /^[0-9a-f]{64}$/u.test(storedHex);
  const expected = wellFormed ? Buffer.from(storedHex, "hex") : Buffer.alloc(actual.length);
  return timingSafeEqual(actual, expected) && wellFormed;
}

// ---------------------------------------------------------------------------
// The phrase at rest

const KDF_SALT_BYTES = 16;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AT_REST_INFO = "coinkeep phrase-at-rest v1";

/** A fresh per-user salt for the password-derived key, base64. */
export function newKdfSalt(): string {
  return randomBytes(KDF_SALT_BYTES).toString("base64");
}

/** The AES-256-GCM key for one user's phrase: argon2id(password, salt), then HKDF with the server key. */
export async function derivePhraseKey(
  keys: ServerKeys,
  password: string,
  kdfSaltBase64: string,
): Promise<Buffer> {
  const salt = Buffer.from(kdfSaltBase64, "base64");
  if (salt.length !== KDF_SALT_BYTES) throw new Error("Invalid phrase KDF salt");
  const raw = await hashRaw(password, { ...ARGON2_OPTIONS, salt, outputLen: 32 });
  return Buffer.from(hkdfSync("sha256", raw, keys.encryptionKey, AT_REST_INFO, 32));
}

/** Encrypts the normalised phrase; returns base64(iv | tag | ciphertext). */
export function encryptPhrase(key: Buffer, userId: string, phrase: string | readonly string[]): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(userId, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(normalisePhrase(phrase), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64");
}

/** The phrase, or null when the key, the user id or the stored bytes do not match. */
export function decryptPhrase(key: Buffer, userId: string, stored: string): string | null {
  const blob = Buffer.from(stored, "base64");
  if (blob.length <= IV_BYTES + TAG_BYTES) return null;
  const iv = blob.subarray(0, IV_BYTES);
  const tag = blob.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const ciphertext = blob.subarray(IV_BYTES + TAG_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(userId, "utf8"));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
