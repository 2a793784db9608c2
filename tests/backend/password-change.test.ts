// Change password (issue 27, record 048): POST /api/change-password, the
// contract's updatePassword, over both transports on every database. The
// current password must be right (and counts toward call 2's limits when it is
// not), the new one twice; the phrase stays the same and is re-encrypted
// under the new password's key, with its audit row, in one transaction. Every
// refusal leaves the old password and the phrase exactly as they were.
import { eq, gt } from "drizzle-orm";
import { beforeAll, expect, test } from "vitest";
import { ANSWERS, REFUSALS } from "../../common/contract/refusals.ts";
import { auditLog, users } from "../../server/backend/db/schema.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import {
  callApi,
  describeEachDatabase,
  describeEachDatabaseAndTransport,
  type Answer,
  type ApiAccount,
} from "./api-suite.ts";
import { createTestHandler, uniqueEmail } from "./helpers.ts";

const PATH = "/change-password";

const refused = (code: keyof typeof REFUSALS): Answer => ({
  status: REFUSALS[code].status,
  body: { success: false, code, message: REFUSALS[code].message },
});

const CHANGED: Answer = { status: 200, body: { success: true, message: ANSWERS.passwordChanged } };

async function userRow(db: AppDb, email: string) {
  const [row] = await db.select().from(users).where(eq(users.email, email));
  if (!row) throw new Error("no such account");
  return row;
}

async function lastAuditId(db: AppDb): Promise<number> {
  const rows = await db.select({ id: auditLog.id }).from(auditLog);
  return rows.reduce((max, row) => Math.max(max, row.id), 0);
}

describeEachDatabaseAndTransport("change password (issue 27) on $name", (api) => {
  const signIn = (email: string, password: string) => api.call("/aml-authorization", { email, password });
  const change = (account: ApiAccount, fields: Record<string, unknown>) =>
    api.call(PATH, { email: account.email, twelveWords: account.twelveWords, ...fields });

  /** The old password still works, the phrase is the same, and the row is byte for byte as it was. */
  async function expectUnchanged(account: ApiAccount, before: Awaited<ReturnType<typeof userRow>>) {
    expect(await userRow(api.db, account.email)).toEqual(before);
    const again = await signIn(account.email, "pw");
    expect(again.status).toBe(200);
    expect((again.body.user as { twelveWords: string }).twelveWords).toBe(account.twelveWords);
  }

  test("the right current password: the new one signs in, the old one no longer, the phrase is the same; one audit row", async () => {
    const account = await api.newAccount("change");
    const before = await lastAuditId(api.db);
    const newPassword = "a new password, long enough";
    expect(
      await change(account, {
        current_password: "pw",
        password: newPassword,
        confirm_password: newPassword,
      }),
    ).toEqual(CHANGED);

    expect(await signIn(account.email, "pw")).toEqual(refused("wrong_password"));
    const after = await signIn(account.email, newPassword);
    expect(after.status).toBe(200);
    expect((after.body.user as { twelveWords: string }).twelveWords).toBe(account.twelveWords);
    // The words still prove the session (they did not change).
    expect(
      (await api.call("/check-if-logged-in", { email: account.email, twelveWords: account.twelveWords }))
        .status,
    ).toBe(200);

    const rows = await api.db.select().from(auditLog).where(gt(auditLog.id, before));
    const changed = rows.filter((row) => row.action === "auth.password.changed");
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ actor: account.email, subject: account.userId });
    for (const secret of [newPassword, account.twelveWords.split(" ").slice(0, 3).join(" ")]) {
      expect(JSON.stringify(rows)).not.toContain(secret);
    }
  });

  test("the typed client over this transport: the same call by its camelCase names", async () => {
    const account = await api.newAccount("client");
    const answer = await api.connection.client.updatePassword({
      email: account.email,
      twelveWords: account.twelveWords.split(" "),
      currentPassword: "pw",
      password: "pw-2",
      confirmPassword: "pw-2",
    });
    expect(answer).toEqual({ ok: true, data: { success: true, message: ANSWERS.passwordChanged } });
    const wrong = await api.connection.client.updatePassword({
      email: account.email,
      twelveWords: account.twelveWords,
      currentPassword: "pw",
      password: "pw-3",
      confirmPassword: "pw-3",
    });
    expect(wrong).toMatchObject({ ok: false, kind: "rejected", code: "wrong_password", status: 401 });
  });

  test("a wrong current password: 401 wrong_password, audited, and nothing changes", async () => {
    const account = await api.newAccount("wrong-current");
    const before = await userRow(api.db, account.email);
    const audited = await lastAuditId(api.db);
    expect(
      await change(account, { current_password: "not it", password: "pw-new", confirm_password: "pw-new" }),
    ).toEqual(refused("wrong_password"));
    await expectUnchanged(account, before);
    const rows = await api.db.select().from(auditLog).where(gt(auditLog.id, audited));
    expect(rows.filter((row) => row.subject === account.userId).map((row) => row.action)).toContain(
      "auth.password.change.failed",
    );
  });

  test("a confirmation that differs: 400 passwords_do_not_match; the same text in another Unicode form matches", async () => {
    const account = await api.newAccount("mismatch");
    const before = await userRow(api.db, account.email);
    expect(
      await change(account, { current_password: "pw", password: "pw-new", confirm_password: "pw-New" }),
    ).toEqual(refused("passwords_do_not_match"));
    await expectUnchanged(account, before);
    // NFC and NFD of the same word are one password (record 025).
    expect(
      await change(account, {
        current_password: "pw",
        password: "caf\u00e9-Passw\u00f6rd",
        confirm_password: "cafe\u0301-Passwo\u0308rd",
      }),
    ).toEqual(CHANGED);
    expect((await signIn(account.email, "cafe\u0301-Passwo\u0308rd")).status).toBe(200);
  });

  test("the right current password with a wrong phrase, or another account's: 401 invalid_credentials, nothing changes", async () => {
    const account = await api.newAccount("wrong-words");
    const other = await api.newAccount("other-words");
    const before = await userRow(api.db, account.email);
    for (const twelveWords of [other.twelveWords, account.twelveWords.split(" ").toReversed().join(" ")]) {
      expect(
        await api.call(PATH, {
          email: account.email,
          twelveWords,
          current_password: "pw",
          password: "pw-new",
          confirm_password: "pw-new",
        }),
      ).toEqual(refused("invalid_credentials"));
    }
    await expectUnchanged(account, before);
  });

  test("no current password, an empty one, or a missing confirmation: 400 invalid_request naming the field", async () => {
    const account = await api.newAccount("missing");
    const before = await userRow(api.db, account.email);
    const missing = await change(account, { password: "pw-new", confirm_password: "pw-new" });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: "invalid_request" });
    expect((missing.body.issues as { path: string }[]).map((i) => i.path)).toEqual(["current_password"]);
    const empty = await change(account, {
      current_password: "",
      password: "pw-new",
      confirm_password: "pw-new",
    });
    expect(empty.body.issues).toEqual([{ path: "current_password", message: "Must not be empty." }]);
    const noConfirm = await change(account, { current_password: "pw", password: "pw-new" });
    expect((noConfirm.body.issues as { path: string }[]).map((i) => i.path)).toEqual(["confirm_password"]);
    await expectUnchanged(account, before);
  });

  test("two changes from the same current password at once: exactly one wins, and its password is the one that works", async () => {
    const account = await api.newAccount("race");
    const answers = await Promise.all(
      ["first-new", "second-new"].map((password) =>
        change(account, { current_password: "pw", password, confirm_password: password }),
      ),
    );
    const won = answers.findIndex((a) => a.status === 200);
    expect(won).toBeGreaterThanOrEqual(0);
    expect(answers[1 - won]).toEqual(refused("wrong_password"));
    const winner = won === 0 ? "first-new" : "second-new";
    const loser = won === 0 ? "second-new" : "first-new";
    expect((await signIn(account.email, winner)).status).toBe(200);
    expect(await signIn(account.email, loser)).toEqual(refused("wrong_password"));
    expect(await signIn(account.email, "pw")).toEqual(refused("wrong_password"));
  });
});

describeEachDatabase("change password under the abuse limits on $name", (getDatabase) => {
  let db: AppDb;
  beforeAll(() => {
    db = getDatabase().database.db;
  });

  test("wrong current passwords count with call 2's: after 5, the next change and the next sign-in from that address wait", async () => {
    const api = createTestHandler(db, { rateLimits: DEFAULT_RATE_LIMITS });
    const ip = "198.51.100.77";
    const email = uniqueEmail("limited");
    const created = await callApi(
      api,
      "/aml-authentication",
      { email, password: "pw", passwordConfirmed: "pw" },
      { ip },
    );
    const twelveWords = (created.body.twelveWords as string[]).join(" ");
    const attempt = (current: string) =>
      callApi(
        api,
        PATH,
        { email, twelveWords, current_password: current, password: "pw-2", confirm_password: "pw-2" },
        { ip },
      );
    for (let i = 0; i < 5; i++) expect((await attempt(`guess ${i}`)).status).toBe(401);
    // Even the right current password is not checked while the backoff runs.
    const limited = await attempt("pw");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("too_many_attempts");
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/u);
    const signIn = await callApi(api, "/aml-authorization", { email, password: "pw" }, { ip });
    expect(signIn.status).toBe(429);
    // Nothing changed: the old password is the password.
    const row = await userRow(db, email);
    const other = createTestHandler(db);
    expect(
      (await callApi(other, "/aml-authorization", { email, password: "pw" }, { ip: "192.0.2.1" })).status,
    ).toBe(200);
    expect(await userRow(db, email)).toEqual(row);
  });
});
