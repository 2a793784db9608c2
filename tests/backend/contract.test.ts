// The API contract, through the typed client, for every database × transport:
// PGlite always, PostgreSQL when TEST_DATABASE_URL is set; in-process and HTTP.
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { beforeAll, expect, test } from "vitest";
import type { BackendClient, BackendResult } from "../../app/backend.server.ts";
import { describeEachDatabaseAndTransport, type Api } from "./api-suite.ts";
import { PLATFORM, uniqueEmail } from "./helpers.ts";

function unwrap<T>(result: BackendResult<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.kind}: ${result.message}`);
  return result.data;
}

/** A refusal as the client hands it over: its status, its code and the spec's text, exactly. */
function rejected(status: number, code: string, message: string) {
  return { ok: false, kind: "rejected", code, status, message };
}

/** Creates an account and returns its e-mail and words. */
async function newAccount(client: BackendClient, password = "correct horse battery staple") {
  const email = uniqueEmail("acct");
  const data = unwrap(await client.createAccount({ email, password, passwordConfirmed: password }));
  return { email, password, words: data.twelveWords, userId: data.newUserId };
}

function otherPhrase(words: string[]): string[] {
  // Same shape, different phrase: swap the first word for another list word.
  const replacement = words[0] === "abandon" ? "ability" : "abandon";
  return [replacement, ...words.slice(1)];
}

function contractSuite(api: Api) {
  let client: BackendClient;
  beforeAll(() => {
    client = api.connection.client;
  });

  test("create → login → check → phrase check → change password → login with the new password", async () => {
    const email = uniqueEmail("flow");
    const created = unwrap(
      await client.createAccount({
        email,
        password: "first password",
        passwordConfirmed: "first password",
      }),
    );
    expect(created.success).toBe(true);
    expect(created.message).toBe("Wallet created.");
    expect(created.newUserId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(created.twelveWords).toHaveLength(12);
    const words = created.twelveWords;
    expect(validateMnemonic(words.join(" "), wordlist)).toBe(true);

    const loggedIn = unwrap(await client.login({ email, password: "first password" }));
    expect(loggedIn).toEqual({
      success: true,
      message: "Logged in.",
      user: { email, twelveWords: words.join(" ") },
    });

    expect(await client.checkLoggedIn({ email, twelveWords: words })).toEqual({
      ok: true,
      data: { success: true, user: { email, userId: created.newUserId } },
    });
    expect(await client.checkPhrase({ email, twelveWords: words })).toEqual({
      ok: true,
      data: { success: true, message: "Phrase accepted." },
    });

    expect(
      await client.changePassword({
        email,
        twelveWords: words,
        password: "second password",
        confirmPassword: "second password",
      }),
    ).toEqual({ ok: true, data: { success: true, message: "Password changed." } });

    const afterChange = unwrap(await client.login({ email, password: "second password" }));
    expect(afterChange.user.twelveWords).toBe(words.join(" "));
    expect(validateMnemonic(afterChange.user.twelveWords, wordlist)).toBe(true);
    expect(await client.login({ email, password: "first password" })).toEqual(
      rejected(401, "wrong_password", "Password is inccorect"),
    );
    // The phrase still proves ownership after the change.
    expect((await client.checkLoggedIn({ email, twelveWords: words })).ok).toBe(true);
  });

  test("fresh accounts get different valid phrases", async () => {
    const a = await newAccount(client);
    const b = await newAccount(client);
    expect(a.words.join(" ")).not.toBe(b.words.join(" "));
    expect(a.userId).not.toBe(b.userId);
    for (const w of [a.words, b.words]) expect(validateMnemonic(w.join(" "), wordlist)).toBe(true);
  });

  test("e-mails are normalised: trimmed and lower-cased", async () => {
    const local = `Alice-${Math.random().toString(36).slice(2, 10)}`;
    const shown = ` ${local}@Example.COM `;
    const stored = `${local.toLowerCase()}@example.com`;
    unwrap(await client.createAccount({ email: shown, password: "pw", passwordConfirmed: "pw" }));
    const loggedIn = unwrap(await client.login({ email: stored, password: "pw" }));
    expect(loggedIn.user.email).toBe(stored);
    const again = unwrap(
      await client.login({ email: `  ${local.toUpperCase()}@EXAMPLE.com`, password: "pw" }),
    );
    expect(again.user.email).toBe(stored);
  });

  test("an e-mail can hold only one account, whatever its case", async () => {
    const email = uniqueEmail("dup");
    unwrap(await client.createAccount({ email, password: "pw", passwordConfirmed: "pw" }));
    expect(
      await client.createAccount({
        email: ` ${email.toUpperCase()} `,
        password: "other",
        passwordConfirmed: "other",
      }),
    ).toEqual(rejected(409, "email_taken", "An account with this email address already exists."));
    // The original password still works: nothing was overwritten.
    expect((await client.login({ email, password: "pw" })).ok).toBe(true);
  });

  test("concurrent sign-ups with one e-mail: exactly one wins, the others get 409", async () => {
    const email = uniqueEmail("race");
    const results = await Promise.all(
      [email, email.toUpperCase(), ` ${email} `].map((e) =>
        client.createAccount({ email: e, password: "pw", passwordConfirmed: "pw" }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const failure of results.filter((r) => !r.ok)) {
      expect(failure).toEqual(
        rejected(409, "email_taken", "An account with this email address already exists."),
      );
    }
  });

  test("create: mismatched confirmation", async () => {
    expect(
      await client.createAccount({ email: uniqueEmail(), password: "one", passwordConfirmed: "two" }),
    ).toEqual(rejected(400, "passwords_do_not_match", "Passwords do not match."));
  });

  test("login: unknown e-mail and wrong password", async () => {
    const account = await newAccount(client);
    expect(await client.login({ email: uniqueEmail("nobody"), password: "whatever" })).toEqual(
      rejected(404, "user_not_found", "User not found with this email address."),
    );
    expect(await client.login({ email: account.email, password: `${account.password}!` })).toEqual(
      rejected(401, "wrong_password", "Password is inccorect"),
    );
  });

  test("check-if-logged-in: same answer for a wrong phrase and an unknown e-mail", async () => {
    const account = await newAccount(client);
    const wrong = await client.checkLoggedIn({
      email: account.email,
      twelveWords: otherPhrase(account.words),
    });
    const unknown = await client.checkLoggedIn({
      email: uniqueEmail("nobody"),
      twelveWords: account.words,
    });
    expect(wrong).toEqual(rejected(401, "invalid_credentials", "Invalid credentials."));
    expect(unknown).toEqual(wrong);
  });

  test("request-change-password: same answer for a wrong phrase and an unknown e-mail", async () => {
    const account = await newAccount(client);
    const wrong = await client.checkPhrase({
      email: account.email,
      twelveWords: otherPhrase(account.words),
    });
    const unknown = await client.checkPhrase({ email: uniqueEmail("nobody"), twelveWords: account.words });
    expect(wrong).toEqual(rejected(401, "wrong_phrase", "Wrong 12 word phrase"));
    expect(unknown).toEqual(wrong);
  });

  test("aml-client-change-password: mismatch, wrong phrase, unknown e-mail; nothing changes", async () => {
    const account = await newAccount(client);
    const base = { email: account.email, twelveWords: account.words };
    expect(await client.changePassword({ ...base, password: "new one", confirmPassword: "new two" })).toEqual(
      rejected(400, "passwords_do_not_match", "Passwords do not match."),
    );
    expect(
      await client.changePassword({
        ...base,
        twelveWords: otherPhrase(account.words),
        password: "new",
        confirmPassword: "new",
      }),
    ).toEqual(rejected(401, "wrong_phrase", "Wrong 12 word phrase"));
    expect(
      await client.changePassword({
        ...base,
        email: uniqueEmail("nobody"),
        password: "new",
        confirmPassword: "new",
      }),
    ).toEqual(rejected(401, "wrong_phrase", "Wrong 12 word phrase"));
    // The password is untouched.
    expect((await client.login({ email: account.email, password: account.password })).ok).toBe(true);
  });

  test("twelveWords is accepted as a list and as a string, and normalised", async () => {
    const account = await newAccount(client);
    const send = async (path: string, twelveWords: unknown) => {
      const response = await api.connection.fetch(
        new Request(`${api.connection.baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({ platform: PLATFORM, email: account.email, twelveWords }),
        }),
      );
      return { status: response.status, body: await response.json() };
    };
    const variants: unknown[] = [
      account.words,
      account.words.join(" "),
      `  ${account.words.join("   ").toUpperCase()}\n`,
      account.words.map((w) => ` ${w.toUpperCase()} `),
    ];
    for (const twelveWords of variants) {
      expect(await send("/check-if-logged-in", twelveWords)).toEqual({
        status: 200,
        body: { success: true, user: { email: account.email, userId: account.userId } },
      });
      expect(await send("/request-change-password", twelveWords)).toEqual({
        status: 200,
        body: { success: true, message: "Phrase accepted." },
      });
    }
  });

  test("every answer is JSON and not cacheable", async () => {
    const response = await api.connection.fetch(
      new Request(`${api.connection.baseUrl}/aml-authorization`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ platform: PLATFORM, email: uniqueEmail("nobody"), password: "x" }),
      }),
    );
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });
}

describeEachDatabaseAndTransport("database: $name", contractSuite);
