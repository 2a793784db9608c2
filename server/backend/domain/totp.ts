// Time-based one-time codes (RFC 6238: SHA-1, 6 digits, 30 s, ±1 step) and
// single-use recovery codes, shared by the staff console (record 047) and the
// holders' two-factor authentication (record 048). Each user of this module
// names its own keys (an HKDF "info" of the backend secret), so a staff
// secret's key never opens a holder's and the other way round.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";

export const TOTP_PERIOD = 30;
export const RECOVERY_CODES = 10;

export interface TotpKeys {
  /** Seals the TOTP secrets (AES-256-GCM). */
  seal: Buffer;
  /** HMACs the recovery codes. */
  recovery: Buffer;
}

const keysByName = new Map<string, TotpKeys>();

/** The keys under `name` ("staff", "holder") derived from the backend secret. */
export function totpKeys(backendSecret: string, name: string): TotpKeys {
  const id = `${name}\n${backendSecret}`;
  let keys = keysByName.get(id);
  if (!keys) {
    const ikm = Buffer.from(backendSecret, "utf8");
    const sub = (info: string) => Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), info, 32));
    keys = { seal: sub(`coinkeep ${name}-totp v1`), recovery: sub(`coinkeep ${name}-recovery v1`) };
    keysByName.set(id, keys);
  }
  return keys;
}

/** A new random secret (160 bits), as base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** base64(iv[12] | tag[16] | ciphertext); `owner` (a user's or member's id) is bound in as associated data. */
export function sealSecret(keys: TotpKeys, owner: string, base32: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keys.seal, iv);
  cipher.setAAD(Buffer.from(owner, "utf8"));
  const body = Buffer.concat([cipher.update(base32, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

export function openSecret(keys: TotpKeys, owner: string, sealed: string): string {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", keys.seal, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(owner, "utf8"));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

/** Recovery codes are shown as "xxxxx-xxxxx" (lower-case base32); compared without case, spaces or dashes. */
export function canonicalRecovery(code: string): string {
  return code.toLowerCase().replace(/[\s-]/gu, "");
}

/** Whether `code` has a recovery code's shape (10 characters once spaces and dashes go). */
export function looksLikeRecoveryCode(code: string): boolean {
  return /^[a-z0-9]{10}$/u.test(canonicalRecovery(code));
}

/** Whether `code` has an authenticator code's shape: six digits, maybe as "123 456". */
export function looksLikeTotpCode(code: string): boolean {
  return /^\d{3}\s?\d{3}$/u.test(code.trim());
}

export function recoveryHash(keys: TotpKeys, owner: string, code: string): string {
  return createHmac("sha256", keys.recovery)
    .update(`${owner}\n${canonicalRecovery(code)}`)
    .digest("hex");
}

export function newRecoveryCode(): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyz23456789";
  const bytes = randomBytes(10);
  let code = "";
  for (const byte of bytes) code += alphabet[byte % alphabet.length];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

export function totpFor(base32: string, issuer: string, label: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: "SHA1",
    digits: 6,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(base32),
  });
}

/** The time step a six-digit code belongs to (now ±1 step), or null when it is no current code. */
export function codeStep(totp: TOTP, code: string, now: number): number | null {
  const token = code.replace(/\s/gu, "");
  if (!/^\d{6}$/u.test(token)) return null;
  const delta = totp.validate({ token, timestamp: now, window: 1 });
  if (delta === null) return null;
  return Math.floor(now / 1000 / TOTP_PERIOD) + delta;
}
