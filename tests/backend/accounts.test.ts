// The account operations directly over each real database: what is stored,
// and that the unique constraint (not just the early check) guards e-mails.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../../server/backend/db/index.ts";
import { users } from "../../server/backend/db/schema.ts";
import {
  changePassword,
  checkCredentials,
  createAccount,
  isUniqueViolation,
  login,
  type AccountsContext,
} from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { BACKEND_SECRET, openTempPostgres, uniqueEmail } from "./helpers.ts";
import { describeEachDatabase } from "./api-suite.ts";

describeEachDatabase("accounts on $name", (getDatabase) => {
  let ctx: AccountsContext;
  beforeAll(() => {
    ctx = { db: getDatabase().database.db, keys: deriveServerKeys(BACKEND_SECRET) };
  });

  const row = async (email: string) => (await ctx.db.select().from(users).where(eq(users.email, email)))[0];

  test("the stored row holds no password or phrase in clear", async () => {
    const email = uniqueEmail("stored");
    const created = await createAccount(ctx, email, "secret password");
    if (!created.ok) throw new Error("create failed");
    const stored = await row(email);
    expect(stored?.id).toBe(created.userId);
    expect(stored?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored?.phraseHmac).toMatch(/^[0-9a-f]{64}$/);
    const everything = JSON.stringify(stored);
    expect(everything).not.toContain("secret password");
    expect(everything).not.toContain(created.words.join(" "));
    // The stored bytes, not their base64 text: random base64 holds a 3-letter word like "ten"
    // about once in 150 accounts, random bytes about once in 10 million.
    const sealed = Buffer.from(stored?.phraseCiphertext ?? "", "base64");
    expect(sealed.length).toBeGreaterThan(28);
    for (const word of created.words) expect(sealed.includes(Buffer.from(word, "utf8"))).toBe(false);
    expect(Buffer.from(stored?.phraseKdfSalt ?? "", "base64")).toHaveLength(16);
  });

  test("a duplicate insert is recognised as a unique violation (code 23505)", async () => {
    const email = uniqueEmail("constraint");
    const created = await createAccount(ctx, email, "pw");
    expect(created.ok).toBe(true);
    const error = await ctx.db
      .insert(users)
      .values({ email, passwordHash: "x", phraseHmac: "x", phraseCiphertext: "x", phraseKdfSalt: "x" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeDefined();
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error("other"))).toBe(false);
  });

  test("changePassword replaces hash, salt and ciphertext together and bumps the timestamps", async () => {
    const email = uniqueEmail("change");
    const created = await createAccount(ctx, email, "old password");
    if (!created.ok) throw new Error("create failed");
    const before = await row(email);
    await new Promise((r) => setTimeout(r, 5));
    expect(await changePassword(ctx, email.toUpperCase(), created.words, "new password")).toEqual({
      ok: true,
    });
    const after = await row(email);
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    expect(after?.phraseKdfSalt).not.toBe(before?.phraseKdfSalt);
    expect(after?.phraseCiphertext).not.toBe(before?.phraseCiphertext);
    expect(after?.phraseHmac).toBe(before?.phraseHmac);
    expect(after?.createdAt.getTime()).toBe(before?.createdAt.getTime());
    expect(after!.updatedAt.getTime()).toBeGreaterThan(before!.updatedAt.getTime());
    expect(after!.passwordChangedAt.getTime()).toBeGreaterThan(before!.passwordChangedAt.getTime());

    const loggedIn = await login(ctx, email, "new password");
    expect(loggedIn).toEqual({ ok: true, userId: created.userId, email, words: created.words });
    expect(validateMnemonic(created.words.join(" "), wordlist)).toBe(true);
    expect(await login(ctx, email, "old password")).toEqual({ ok: false, reason: "wrong-password" });
  });

  test("changePassword with a wrong phrase changes nothing", async () => {
    const email = uniqueEmail("nochange");
    const created = await createAccount(ctx, email, "pw");
    if (!created.ok) throw new Error("create failed");
    const before = await row(email);
    const wrong = [...created.words].toReversed();
    expect(await changePassword(ctx, email, wrong, "other")).toEqual({ ok: false, reason: "invalid" });
    expect(await row(email)).toEqual(before);
  });

  test("checkCredentials answers the same for an unknown e-mail and a wrong phrase", async () => {
    const email = uniqueEmail("check");
    const created = await createAccount(ctx, email, "pw");
    if (!created.ok) throw new Error("create failed");
    expect(await checkCredentials(ctx, ` ${email.toUpperCase()} `, created.words)).toEqual({
      ok: true,
      userId: created.userId,
      email,
    });
    const unknown = await checkCredentials(ctx, uniqueEmail("ghost"), created.words);
    const wrong = await checkCredentials(ctx, email, [...created.words].toReversed());
    expect(unknown).toEqual({ ok: false, reason: "invalid" });
    expect(wrong).toEqual(unknown);
  });
});

describe("openDatabase", () => {
  test("PGlite: creates a brand-new nested folder, migrates it, and reopens it with the data kept", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "coinkeep-open-"));
    const dataDir = path.join(root, "a", "b");
    try {
      const first = await openDatabase({ dataDir });
      expect(first.driver).toBe("pglite");
      const ctx = { db: first.db, keys: deriveServerKeys(BACKEND_SECRET) };
      const created = await createAccount(ctx, "keep@example.com", "pw");
      await first.close();
      await first.close(); // closing twice is harmless

      const again = await openDatabase({ dataDir });
      try {
        expect(await login({ db: again.db, keys: ctx.keys }, "keep@example.com", "pw")).toEqual({
          ok: true,
          userId: created.ok ? created.userId : "",
          email: "keep@example.com",
          words: created.ok ? created.words : [],
        });
      } finally {
        await again.close();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  test.runIf(process.env.TEST_DATABASE_URL)(
    "PostgreSQL: migrating an already migrated database is a no-op",
    async () => {
      const opened = await openTempPostgres(process.env.TEST_DATABASE_URL ?? "");
      try {
        const second = await openDatabase({ databaseUrl: opened.databaseUrl, dataDir: tmpdir() });
        expect(second.driver).toBe("postgres");
        await second.close();
      } finally {
        await opened.dispose();
      }
    },
  );
});
