// Passwords are compared in Unicode NFKC (NIST SP 800-63B 5.1.1.2; record 025):
// the same text on screen is the same password however the keyboard or the
// operating system composed it. Through the API handler (what every client
// reaches: the web tier in-process or over HTTP, fast login and the security
// reveal use call 2, restore uses call 11), on every database. Accounts made
// before normalisation (hash and phrase key from the raw password) keep
// working and are moved to the normalised form at their next sign-in.
import * as argon2 from "@node-rs/argon2";
import { eq } from "drizzle-orm";
import { beforeAll, expect, test, vi } from "vitest";
import { ANSWERS, REFUSALS } from "../../common/contract/refusals.ts";
import { createApiHandler, type ApiHandler } from "../../server/backend/api/handler.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { users } from "../../server/backend/db/schema.ts";
import { createAccount, login, type AccountsContext } from "../../server/backend/domain/accounts.ts";
import {
  decryptPhrase,
  derivePhraseKey,
  deriveServerKeys,
  encryptPhrase,
  generatePhrase,
  hashPassword,
  newKdfSalt,
  phraseHmac,
} from "../../server/backend/domain/crypto.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import { BACKEND_SECRET, PLATFORM, createTestHandler, uniqueEmail } from "./helpers.ts";
import { callApi, describeEachDatabase, type Answer } from "./api-suite.ts";

// Every argon2 verification goes through this spy (the timing test below counts them).
vi.mock("@node-rs/argon2", async (importOriginal) => {
  const original = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...original, verify: vi.fn<typeof original.verify>(original.verify) };
});

/** "café über" composed (NFC, what most keyboards type) and decomposed (NFD, as macOS may hand it over). */
const NFC = "caf\u00e9 \u00fcber-Passw\u00f6rd";
const NFD = "cafe\u0301 u\u0308ber-Passwo\u0308rd";
/** ASCII digits, and the same digits full-width (an East Asian input method); NFKC maps these to those. */
const ASCII_DIGITS = "pin 2468 \u00e9t\u00e9";
const FULLWIDTH_DIGITS = "pin \uff12\uff14\uff16\uff18 \u00e9t\u00e9";

const WRONG_PASSWORD: Answer = {
  status: 401,
  body: { success: false, code: "wrong_password", message: REFUSALS.wrong_password.message },
};

const loggedIn = (email: string, words: string): Answer => ({
  status: 200,
  body: { success: true, message: ANSWERS.loggedIn, user: { email, twelveWords: words } },
});

/** A schema refusal naming one field. */
const invalid = (path: string, message: string): Answer => ({
  status: 400,
  body: {
    success: false,
    code: "invalid_request",
    message: REFUSALS.invalid_request.message,
    issues: [{ path, message }],
  },
});

describeEachDatabase("password normalisation on $name", { openTimeout: 60_000 }, (getDatabase) => {
  let db: AppDb;
  let api: ApiHandler;
  let ctx: AccountsContext;

  beforeAll(() => {
    db = getDatabase().database.db;
    api = createTestHandler(db);
    ctx = { db, keys: deriveServerKeys(BACKEND_SECRET) };
  });

  const call = (path: string, body: Record<string, unknown>, handler = api) =>
    callApi(handler, path, body, { ip: "198.51.100.40" });

  async function signUp(password: string, confirmation = password) {
    const email = uniqueEmail("nfkc");
    const created = await call("/aml-authentication", { email, password, passwordConfirmed: confirmation });
    expect(created.status).toBe(200);
    return { email, words: (created.body.twelveWords as string[]).join(" ") };
  }

  const signIn = (email: string, password: string, extra: Record<string, unknown> = {}) =>
    call("/aml-authorization", { email, password, ...extra });

  const storedRow = async (email: string) => {
    const [row] = await db.select().from(users).where(eq(users.email, email));
    if (!row) throw new Error("no such account");
    return row;
  };

  /**
   * An account as the code before record 025 made it: the argon2id hash and the
   * phrase key both from the password exactly as typed (written through the
   * same primitives, with normalisation bypassed).
   */
  async function legacyAccount(rawPassword: string) {
    const email = uniqueEmail("legacy");
    const id = crypto.randomUUID();
    const words = generatePhrase();
    const phrase = words.join(" ");
    const salt = newKdfSalt();
    await db.insert(users).values({
      id,
      email,
      passwordHash: await hashPassword(rawPassword),
      phraseHmac: phraseHmac(ctx.keys, phrase),
      phraseCiphertext: encryptPhrase(await derivePhraseKey(ctx.keys, rawPassword, salt), id, phrase),
      phraseKdfSalt: salt,
    });
    return { email, id, words: phrase };
  }

  test("made with the composed spelling, signs in with the decomposed one (and back)", async () => {
    const nfc = await signUp(NFC);
    expect(await signIn(nfc.email, NFD)).toEqual(loggedIn(nfc.email, nfc.words));
    expect(await signIn(nfc.email, NFC)).toEqual(loggedIn(nfc.email, nfc.words));
    const nfd = await signUp(NFD);
    expect(await signIn(nfd.email, NFC)).toEqual(loggedIn(nfd.email, nfd.words));
    // The security page's reveal (and fast login, which is call 2 too) follow the same rule.
    expect(await signIn(nfd.email, NFC, { purpose: "reveal" })).toEqual(loggedIn(nfd.email, nfd.words));
  });

  test("compatibility forms count as their plain form: full-width digits, the ﬁ ligature", async () => {
    const digits = await signUp(ASCII_DIGITS);
    expect(await signIn(digits.email, FULLWIDTH_DIGITS)).toEqual(loggedIn(digits.email, digits.words));
    const fullwidth = await signUp(FULLWIDTH_DIGITS);
    expect(await signIn(fullwidth.email, ASCII_DIGITS)).toEqual(loggedIn(fullwidth.email, fullwidth.words));
    const ligature = await signUp("\ufb01ne print");
    expect(await signIn(ligature.email, "fine print")).toEqual(loggedIn(ligature.email, ligature.words));
  });

  test("the stored hash and the phrase key are made from the NFKC form", async () => {
    const account = await signUp(FULLWIDTH_DIGITS);
    const row = await storedRow(account.email);
    const normalised = ASCII_DIGITS.normalize("NFKC");
    expect(await argon2.verify(row.passwordHash, normalised)).toBe(true);
    expect(await argon2.verify(row.passwordHash, FULLWIDTH_DIGITS)).toBe(false);
    const key = await derivePhraseKey(ctx.keys, normalised, row.phraseKdfSalt);
    expect(decryptPhrase(key, row.id, row.phraseCiphertext)).toBe(account.words);
  });

  test("a password and a confirmation that differ only in composition match (sign-up and restore)", async () => {
    const account = await signUp(NFC, NFD);
    expect(await signIn(account.email, NFC)).toEqual(loggedIn(account.email, account.words));
    // Restore's new password (call 11), typed decomposed, confirmed composed.
    expect(
      await call("/aml-client-change-password", {
        email: account.email,
        twelveWords: account.words,
        password: FULLWIDTH_DIGITS,
        confirmPassword: ASCII_DIGITS,
      }),
    ).toEqual({ status: 200, body: { success: true, message: ANSWERS.passwordChanged } });
    expect(await signIn(account.email, ASCII_DIGITS)).toEqual(loggedIn(account.email, account.words));
    expect(await signIn(account.email, FULLWIDTH_DIGITS)).toEqual(loggedIn(account.email, account.words));
    expect(await signIn(account.email, NFC)).toEqual(WRONG_PASSWORD);
    // Really different passwords are still refused with the spec's text.
    expect(
      await call("/aml-client-change-password", {
        email: account.email,
        twelveWords: account.words,
        password: NFC,
        confirmPassword: `${NFC}!`,
      }),
    ).toEqual({
      status: 400,
      body: {
        success: false,
        code: "passwords_do_not_match",
        message: REFUSALS.passwords_do_not_match.message,
      },
    });
    expect(
      await call("/aml-authentication", {
        email: uniqueEmail("mismatch"),
        password: ASCII_DIGITS,
        passwordConfirmed: "pin 2469 \u00e9t\u00e9",
      }),
    ).toEqual({
      status: 400,
      body: {
        success: false,
        code: "passwords_do_not_match",
        message: REFUSALS.passwords_do_not_match.message,
      },
    });
  });

  test("wrong passwords are still refused with the spec's exact message", async () => {
    const account = await signUp(NFC);
    expect(await signIn(account.email, "cafe uber-Passwort")).toEqual(WRONG_PASSWORD);
    expect(await signIn(account.email, NFC.toUpperCase())).toEqual(WRONG_PASSWORD);
    expect(await signIn(account.email, `${NFD} `)).toEqual(WRONG_PASSWORD);
    expect(await signIn(uniqueEmail("ghost"), NFD)).toEqual({
      status: 404,
      body: { success: false, code: "user_not_found", message: REFUSALS.user_not_found.message },
    });
  });

  test("a legacy account (hash from the raw, decomposed password) signs in and is moved to NFKC in place", async () => {
    const legacy = await legacyAccount(NFD);
    const before = await storedRow(legacy.email);
    // Its own spelling: the NFKC form fails, the raw form is tried once and succeeds.
    expect(await signIn(legacy.email, NFD)).toEqual(loggedIn(legacy.email, legacy.words));
    const after = await storedRow(legacy.email);
    // Hash, salt and ciphertext replaced together; the phrase, its HMAC and the timestamps of a change stay.
    expect(after.passwordHash).not.toBe(before.passwordHash);
    expect(after.phraseKdfSalt).not.toBe(before.phraseKdfSalt);
    expect(after.phraseCiphertext).not.toBe(before.phraseCiphertext);
    expect(after.phraseHmac).toBe(before.phraseHmac);
    expect(after.passwordChangedAt.getTime()).toBe(before.passwordChangedAt.getTime());
    expect(await argon2.verify(after.passwordHash, NFD.normalize("NFKC"))).toBe(true);
    const key = await derivePhraseKey(ctx.keys, NFD.normalize("NFKC"), after.phraseKdfSalt);
    expect(decryptPhrase(key, after.id, after.phraseCiphertext)).toBe(legacy.words);
    // From now on either spelling signs in, and the phrase still decrypts.
    expect(await signIn(legacy.email, NFC)).toEqual(loggedIn(legacy.email, legacy.words));
    expect(await signIn(legacy.email, NFD)).toEqual(loggedIn(legacy.email, legacy.words));
    // Nothing more to move: a later sign-in leaves the row as it is.
    expect(await storedRow(legacy.email)).toEqual(after);
    expect(await signIn(legacy.email, "cafe uber-Passwort")).toEqual(WRONG_PASSWORD);
  });

  test("a legacy account with full-width digits, through the domain: moved at sign-in, then either form works", async () => {
    const legacy = await legacyAccount(FULLWIDTH_DIGITS);
    // Until it has signed in once with its own spelling, only that spelling is its password.
    expect(await login(ctx, legacy.email, ASCII_DIGITS)).toEqual({ ok: false, reason: "wrong-password" });
    expect(await login(ctx, legacy.email, FULLWIDTH_DIGITS)).toEqual({
      ok: true,
      userId: legacy.id,
      email: legacy.email,
      words: legacy.words.split(" "),
    });
    expect(await signIn(legacy.email, ASCII_DIGITS)).toEqual(loggedIn(legacy.email, legacy.words));
    expect(await signIn(legacy.email, FULLWIDTH_DIGITS)).toEqual(loggedIn(legacy.email, legacy.words));
  });

  test("a legacy account restored with a new password gets the normalised form", async () => {
    const legacy = await legacyAccount(NFD);
    expect(
      await call("/aml-client-change-password", {
        email: legacy.email,
        twelveWords: legacy.words,
        password: FULLWIDTH_DIGITS,
        confirmPassword: FULLWIDTH_DIGITS,
      }),
    ).toEqual({ status: 200, body: { success: true, message: ANSWERS.passwordChanged } });
    expect(await signIn(legacy.email, ASCII_DIGITS)).toEqual(loggedIn(legacy.email, legacy.words));
    expect(await signIn(legacy.email, NFD)).toEqual(WRONG_PASSWORD);
  });

  test("a legacy hash in NFKC form already (plain ASCII) needs no move", async () => {
    const legacy = await legacyAccount("plain ascii password");
    const before = await storedRow(legacy.email);
    expect(await signIn(legacy.email, "plain ascii password")).toEqual(loggedIn(legacy.email, legacy.words));
    expect(await storedRow(legacy.email)).toEqual(before);
  });

  test("createAccount through the domain (operators' demo) normalises too", async () => {
    const email = uniqueEmail("domain");
    const created = await createAccount(ctx, email, NFD);
    if (!created.ok) throw new Error("create failed");
    expect(await login(ctx, email, NFC)).toEqual({
      ok: true,
      userId: created.userId,
      email,
      words: created.words,
    });
  });

  test("the length and emptiness rules are judged on what was sent; their messages are unchanged", async () => {
    const email = uniqueEmail("rules");
    expect(await signIn(email, "")).toEqual(invalid("password", "Must not be empty."));
    expect(await call("/aml-authentication", { email, password: "", passwordConfirmed: "" })).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_request",
        message: REFUSALS.invalid_request.message,
        issues: [
          { path: "password", message: "Must not be empty." },
          { path: "passwordConfirmed", message: "Must not be empty." },
        ],
      },
    });
    expect(await signIn(email, "x".repeat(1025))).toEqual(
      invalid("password", "Must be at most 1024 characters."),
    );
    // U+FDFA is one character that NFKC spells with 18: 1024 of them are still a valid password.
    const long = "\ufdfa".repeat(1024);
    expect(long.normalize("NFKC").length).toBe(18 * 1024);
    const account = await signUp(long);
    expect(await signIn(account.email, long)).toEqual(loggedIn(account.email, account.words));
    // Sent already spelled out, the same text is over the limit: the limit is on what was sent.
    const spelled = "\ufdfa".repeat(60).normalize("NFKC");
    expect(spelled.length).toBe(1080);
    expect(await signIn(account.email, spelled)).toEqual(
      invalid("password", "Must be at most 1024 characters."),
    );
    // White space is part of a password: NFKC maps a no-break space to a space, and nothing is trimmed.
    const spaced = await signUp(" two\u00a0words ");
    expect(await signIn(spaced.email, " two words ")).toEqual(loggedIn(spaced.email, spaced.words));
    expect(await signIn(spaced.email, "two words")).toEqual(WRONG_PASSWORD);
  });

  test("timing: a non-normalised password costs two verifications for a known and an unknown e-mail alike", async () => {
    const account = await signUp(NFC);
    const verify = vi.mocked(argon2.verify);
    const count = async (email: string, password: string) => {
      verify.mockClear();
      await signIn(email, password);
      return verify.mock.calls.length;
    };
    // Already NFKC: one verification either way.
    expect(await count(account.email, "wrong")).toBe(1);
    expect(await count(uniqueEmail("ghost"), "wrong")).toBe(1);
    expect(await count(account.email, NFD)).toBe(1);
    // Not NFKC: the NFKC form, then the raw form once, also for an unknown e-mail.
    expect(await count(account.email, `${NFD}-wrong`)).toBe(2);
    expect(await count(uniqueEmail("ghost"), `${NFD}-wrong`)).toBe(2);
  });

  test("rate limits are unchanged: wrong spellings count as failures, 5 free then 429", async () => {
    const limited = createApiHandler({
      db,
      platform: PLATFORM,
      backendSecret: BACKEND_SECRET,
      rateLimits: DEFAULT_RATE_LIMITS,
      // A clock that stands still: the 1 s wait cannot run out on a slow machine.
      now: () => new Date("2026-11-21T12:00:00.000Z"),
    });
    const email = uniqueEmail("limited");
    const created = await call(
      "/aml-authentication",
      { email, password: NFC, passwordConfirmed: NFC },
      limited,
    );
    expect(created.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await signInWith(limited, email, `${NFD}${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    // The right password in the other spelling is not checked while the wait runs.
    expect((await signInWith(limited, email, NFD)).status).toBe(429);
  });

  const signInWith = (handler: ApiHandler, email: string, password: string) =>
    call("/aml-authorization", { email, password }, handler);
});
