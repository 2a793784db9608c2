// The phrase and password cryptography on its own, without a database.
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { parseOptions } from "@node-rs/argon2";
import { describe, expect, test } from "vitest";
import {
  decryptPhrase,
  derivePhraseKey,
  deriveServerKeys,
  encryptPhrase,
  generatePhrase,
  hashPassword,
  newKdfSalt,
  normalisePassword,
  normalisePhrase,
  phraseHmac,
  phraseMatches,
  samePassword,
  verifyDummyPassword,
  verifyPassword,
} from "../../server/backend/domain/crypto.ts";

const keys = deriveServerKeys("unit-test-backend-secret-0123456789");
const USER = "3f1c8a52-8f0e-4a8e-9a57-2a1b6f0e9c11";
const PHRASE = "legal winner thank year wave sausage worth useful legal winner thank yellow";

describe("server keys", () => {
  test("a short secret is refused", () => {
    expect(() => deriveServerKeys("x".repeat(31))).toThrow(/at least 32/);
  });

  test("sub-keys are independent, 32 bytes, and deterministic per secret", () => {
    expect(keys.hmacKey).toHaveLength(32);
    expect(keys.encryptionKey).toHaveLength(32);
    expect(keys.hmacKey.equals(keys.encryptionKey)).toBe(false);
    const again = deriveServerKeys("unit-test-backend-secret-0123456789");
    expect(again.hmacKey.equals(keys.hmacKey)).toBe(true);
    const other = deriveServerKeys("another-backend-secret-0123456789ab");
    expect(other.hmacKey.equals(keys.hmacKey)).toBe(false);
  });
});

describe("fresh phrases", () => {
  test("are 12 valid BIP-39 words and differ", () => {
    const phrases = Array.from({ length: 20 }, () => generatePhrase());
    for (const words of phrases) {
      expect(words).toHaveLength(12);
      for (const word of words) expect(wordlist).toContain(word);
      expect(validateMnemonic(words.join(" "), wordlist)).toBe(true);
    }
    expect(new Set(phrases.map((w) => w.join(" "))).size).toBe(phrases.length);
  });
});

describe("phrase HMAC", () => {
  test("normalisation: case, surrounding and inner whitespace, list or string", () => {
    const expected = phraseHmac(keys, PHRASE);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    const variants = [
      PHRASE.toUpperCase(),
      `  ${PHRASE}  `,
      PHRASE.split(" ").join(" \t\n "),
      PHRASE.split(" "),
      PHRASE.split(" ").map((w) => ` ${w.toUpperCase()} `),
    ];
    for (const variant of variants) {
      expect(normalisePhrase(variant)).toBe(PHRASE);
      expect(phraseHmac(keys, variant)).toBe(expected);
      expect(phraseMatches(keys, variant, expected)).toBe(true);
    }
  });

  test("a different phrase, a different key, or a malformed stored value do not match", () => {
    const stored = phraseHmac(keys, PHRASE);
    expect(phraseMatches(keys, PHRASE.replace("legal", "abandon"), stored)).toBe(false);
    expect(phraseMatches(deriveServerKeys("z".repeat(40)), PHRASE, stored)).toBe(false);
    expect(phraseMatches(keys, PHRASE, "")).toBe(false);
    expect(phraseMatches(keys, PHRASE, stored.slice(0, 62))).toBe(false);
    expect(phraseMatches(keys, PHRASE, stored.toUpperCase())).toBe(false);
  });
});

describe("phrase at rest", () => {
  test("round trip; format is base64(iv 12 | tag 16 | ciphertext); fresh IV every time", async () => {
    const salt = newKdfSalt();
    expect(Buffer.from(salt, "base64")).toHaveLength(16);
    const key = await derivePhraseKey(keys, "my password", salt);
    const a = encryptPhrase(key, USER, PHRASE);
    const b = encryptPhrase(key, USER, PHRASE);
    expect(a).not.toBe(b);
    expect(Buffer.from(a, "base64")).toHaveLength(12 + 16 + Buffer.byteLength(PHRASE));
    expect(a).not.toContain("legal");
    expect(decryptPhrase(key, USER, a)).toBe(PHRASE);
    expect(decryptPhrase(key, USER, b)).toBe(PHRASE);
  });

  test("flipping any byte (iv, tag or ciphertext) is detected", async () => {
    const key = await derivePhraseKey(keys, "my password", newKdfSalt());
    const stored = Buffer.from(encryptPhrase(key, USER, PHRASE), "base64");
    for (const index of [0, 11, 12, 27, 28, stored.length - 1]) {
      const tampered = Buffer.from(stored);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(decryptPhrase(key, USER, tampered.toString("base64"))).toBeNull();
    }
    expect(decryptPhrase(key, USER, stored.subarray(0, 28).toString("base64"))).toBeNull();
    expect(decryptPhrase(key, USER, "")).toBeNull();
  });

  test("another user's id (AAD) cannot decrypt", async () => {
    const key = await derivePhraseKey(keys, "my password", newKdfSalt());
    const stored = encryptPhrase(key, USER, PHRASE);
    expect(decryptPhrase(key, "00000000-0000-4000-8000-000000000000", stored)).toBeNull();
  });

  test("a wrong password, another salt, or another backend secret cannot decrypt", async () => {
    const salt = newKdfSalt();
    const stored = encryptPhrase(await derivePhraseKey(keys, "my password", salt), USER, PHRASE);
    expect(decryptPhrase(await derivePhraseKey(keys, "my passwore", salt), USER, stored)).toBeNull();
    expect(decryptPhrase(await derivePhraseKey(keys, "my password", newKdfSalt()), USER, stored)).toBeNull();
    const otherKeys = deriveServerKeys("another-backend-secret-0123456789ab");
    expect(decryptPhrase(await derivePhraseKey(otherKeys, "my password", salt), USER, stored)).toBeNull();
    expect(decryptPhrase(await derivePhraseKey(keys, "my password", salt), USER, stored)).toBe(PHRASE);
  });

  test("the key derivation is deterministic for the same inputs and refuses a bad salt", async () => {
    const salt = newKdfSalt();
    const k1 = await derivePhraseKey(keys, "pw", salt);
    const k2 = await derivePhraseKey(keys, "pw", salt);
    expect(k1.equals(k2)).toBe(true);
    expect(k1).toHaveLength(32);
    await expect(derivePhraseKey(keys, "pw", "c2hvcnQ=")).rejects.toThrow(/salt/);
  });
});

describe("passwords", () => {
  test("argon2id with the agreed cost; verify accepts only the right password", async () => {
    const hash = await hashPassword("pässword ✓");
    expect(hash.startsWith("$argon2id$v=19$m=19456,t=2,p=1$")).toBe(true);
    expect(parseOptions(hash)).toMatchObject({
      memoryCost: 19456,
      timeCost: 2,
      parallelism: 1,
      outputLen: 32,
    });
    expect(await verifyPassword(hash, "pässword ✓")).toBe(true);
    expect(await verifyPassword(hash, "password ✓")).toBe(false);
    expect(await verifyPassword("not a hash", "x")).toBe(false);
  });

  test("the dummy verification for unknown e-mails resolves", async () => {
    await expect(verifyDummyPassword("anything")).resolves.toBeUndefined();
  });
});

describe("password normalisation (record 025)", () => {
  test("NFKC: composed and decomposed, full-width, ligatures and no-break spaces are one password", () => {
    expect(normalisePassword("cafe\u0301")).toBe("caf\u00e9");
    expect(normalisePassword("caf\u00e9")).toBe("caf\u00e9");
    expect(normalisePassword("\uff11\uff12\uff13")).toBe("123");
    expect(normalisePassword("\ufb01ne")).toBe("fine");
    expect(normalisePassword("a\u00a0b")).toBe("a b");
    expect(samePassword("cafe\u0301", "caf\u00e9")).toBe(true);
    expect(samePassword("\uff11", "1")).toBe(true);
  });

  test("nothing else: no case folding, no trimming, no removal of spaces; never empty when not empty", () => {
    expect(samePassword("Password", "password")).toBe(false);
    expect(samePassword(" pw ", "pw")).toBe(false);
    expect(normalisePassword(" pw ")).toBe(" pw ");
    for (const text of [" ", "\u0301", "\u00a0", "\ufdfa", "\u{1f510}"]) {
      expect(normalisePassword(text).length).toBeGreaterThan(0);
    }
  });
});
