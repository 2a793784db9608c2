// The audit log of security events (record 015), over each real database and
// through the API handler (what both deployment shapes run): every event writes
// exactly one row with its action, its actor (the account's e-mail or
// 'anonymous'), the client IP when known, and no secret.
import { gt } from "drizzle-orm";
import { beforeAll, expect, test } from "vitest";
import { createHttpClient, createInProcessClient } from "../../app/backend.server.ts";
import { runWithRequest } from "../../common/log.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { auditLog, type AuditEntry } from "../../server/backend/db/schema.ts";
import { createTestHandler, PLATFORM, uniqueEmail, type TestHandler } from "./helpers.ts";
import { callApi, describeEachDatabase } from "./api-suite.ts";

const IP = "203.0.113.7";

/** Exactly one row, as expected, holding none of the secrets. */
function expectOne(
  rows: AuditEntry[],
  expected: {
    action: string;
    actor: string;
    subject: string | null;
    reason?: string;
    ip?: string | null;
  },
  secrets: string[],
) {
  expect(rows).toHaveLength(1);
  const [row] = rows;
  expect(row?.action).toBe(expected.action);
  expect(row?.actor).toBe(expected.actor);
  expect(row?.subject).toBe(expected.subject);
  const details: Record<string, string> = {};
  if (expected.ip !== null) details.ip = expected.ip ?? IP;
  if (expected.reason) details.reason = expected.reason;
  expect(row?.details).toEqual(details);
  const text = JSON.stringify(row);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describeEachDatabase("security audit on $name", (getDatabase) => {
  let db: AppDb;
  let api: TestHandler;
  beforeAll(() => {
    db = getDatabase().database.db;
    api = createTestHandler(db);
  });

  const call = (path: string, body: Record<string, unknown>, ip: string | null = IP) =>
    callApi(api, path, body, { ip });

  async function lastId(): Promise<number> {
    const rows = await db.select({ id: auditLog.id }).from(auditLog);
    return rows.reduce((max, row) => Math.max(max, row.id), 0);
  }

  /** Runs `step` and returns the audit rows it wrote. */
  async function rowsOf(step: () => Promise<unknown>): Promise<AuditEntry[]> {
    const before = await lastId();
    await step();
    return db.select().from(auditLog).where(gt(auditLog.id, before));
  }

  async function account() {
    const email = uniqueEmail("audit");
    const password = `pw-audit-${crypto.randomUUID()}`;
    const created = await call("/aml-authentication", { email, password, passwordConfirmed: password });
    expect(created.status).toBe(200);
    const words = created.body.twelveWords as string[];
    return { email, password, words, userId: created.body.newUserId as string };
  }

  test("sign-ins: success, wrong password, unknown e-mail (typed e-mail not kept)", async () => {
    const user = await account();
    const secrets = [user.password, user.words.join(" "), user.words.slice(0, 3).join(" ")];
    expectOne(
      await rowsOf(() =>
        call("/aml-authorization", { email: user.email.toUpperCase(), password: user.password }),
      ),
      { action: "auth.login", actor: user.email, subject: user.userId },
      secrets,
    );
    expectOne(
      await rowsOf(() => call("/aml-authorization", { email: user.email, password: "not-the-password" })),
      { action: "auth.login.failed", actor: user.email, subject: user.userId, reason: "wrong-password" },
      [...secrets, "not-the-password"],
    );
    // A password typed into the e-mail box must not end up in the log.
    const typed = "hunter2-typed@example.com";
    expectOne(
      await rowsOf(() => call("/aml-authorization", { email: typed, password: user.password })),
      { action: "auth.login.failed", actor: "anonymous", subject: null, reason: "unknown-email" },
      [...secrets, typed],
    );
    // Without a believed address there is no ip.
    expectOne(
      await rowsOf(() => call("/aml-authorization", { email: user.email, password: user.password }, null)),
      { action: "auth.login", actor: user.email, subject: user.userId, ip: null },
      secrets,
    );
  });

  test("phrase reveals (call 2 with purpose 'reveal') are told from sign-ins", async () => {
    const user = await account();
    const secrets = [user.password, user.words.join(" ")];
    expectOne(
      await rowsOf(async () => {
        const answer = await call("/aml-authorization", {
          email: user.email,
          password: user.password,
          purpose: "reveal",
        });
        expect(answer.status).toBe(200);
        expect((answer.body.user as { twelveWords: string }).twelveWords).toBe(user.words.join(" "));
      }),
      { action: "auth.reveal", actor: user.email, subject: user.userId },
      secrets,
    );
    expectOne(
      await rowsOf(() =>
        call("/aml-authorization", { email: user.email, password: "nope-nope", purpose: "reveal" }),
      ),
      { action: "auth.reveal.failed", actor: user.email, subject: user.userId, reason: "wrong-password" },
      [...secrets, "nope-nope"],
    );
    // Any other purpose is refused before anything is checked or written.
    const refused = await rowsOf(async () => {
      const answer = await call("/aml-authorization", {
        email: user.email,
        password: user.password,
        purpose: "x",
      });
      expect(answer.status).toBe(400);
    });
    expect(refused).toHaveLength(0);
  });

  test("the restore: lookup, phrase check, password change — each step and each refusal", async () => {
    const user = await account();
    const newPassword = `new-${crypto.randomUUID()}`;
    const secrets = [user.password, newPassword, user.words.join(" "), user.words.slice(0, 3).join(" ")];
    const probe = `probe-${crypto.randomUUID()}`;
    expectOne(
      await rowsOf(() =>
        call("/aml-authorization", { email: user.email, password: probe, purpose: "restore" }),
      ),
      { action: "restore.lookup", actor: user.email, subject: user.userId, reason: "wrong-password" },
      [...secrets, probe],
    );
    expectOne(
      await rowsOf(() =>
        call("/aml-authorization", { email: uniqueEmail("nobody"), password: probe, purpose: "restore" }),
      ),
      { action: "restore.lookup.failed", actor: "anonymous", subject: null, reason: "unknown-email" },
      [...secrets, probe],
    );

    const wrong = user.words.toReversed().join(" ");
    /** Call 11 for the user with the phrase given. */
    const changePassword = (twelveWords: string | string[], password: string, confirmPassword = password) =>
      call("/aml-client-change-password", { email: user.email, twelveWords, password, confirmPassword });
    expectOne(
      await rowsOf(() => call("/request-change-password", { email: user.email, twelveWords: wrong })),
      { action: "restore.phrase.failed", actor: user.email, subject: user.userId, reason: "wrong-phrase" },
      [...secrets, wrong],
    );
    expectOne(
      await rowsOf(() =>
        call("/request-change-password", { email: uniqueEmail("nobody"), twelveWords: wrong }),
      ),
      { action: "restore.phrase.failed", actor: "anonymous", subject: null, reason: "unknown-email" },
      [...secrets, wrong],
    );
    expectOne(
      await rowsOf(() => call("/request-change-password", { email: user.email, twelveWords: user.words })),
      { action: "restore.phrase", actor: user.email, subject: user.userId },
      secrets,
    );

    expectOne(
      await rowsOf(() => changePassword(wrong, newPassword)),
      {
        action: "auth.password.change.failed",
        actor: user.email,
        subject: user.userId,
        reason: "wrong-phrase",
      },
      [...secrets, wrong],
    );
    expectOne(
      await rowsOf(async () => {
        const answer = await changePassword(user.words, newPassword);
        expect(answer.status).toBe(200);
      }),
      { action: "auth.password.changed", actor: user.email, subject: user.userId },
      secrets,
    );
    // A mismatch is refused before anything is checked: no row.
    expect(await rowsOf(() => changePassword(user.words, "a-one", "a-two"))).toHaveLength(0);
  });

  for (const transport of ["in-process", "http"] as const) {
    test(`the web tier's client (${transport}) forwards the visitor's address of the request it runs under`, async () => {
      const user = await account();
      const client =
        transport === "in-process"
          ? createInProcessClient(api.services, PLATFORM, undefined)
          : createHttpClient({ baseUrl: "http://backend.invalid/api", platform: PLATFORM, fetch: api });
      const rows = await rowsOf(() =>
        runWithRequest({ requestId: "req-1", clientIp: "198.51.100.23" }, () =>
          client.login({ email: user.email, password: user.password, purpose: "reveal" }),
        ),
      );
      expectOne(
        rows,
        { action: "auth.reveal", actor: user.email, subject: user.userId, ip: "198.51.100.23" },
        [user.password, user.words.join(" ")],
      );
    });
  }

  test("other calls write nothing; rows cannot be changed or deleted", async () => {
    const user = await account();
    const rows = await rowsOf(async () => {
      await call("/check-if-logged-in", { email: user.email, twelveWords: user.words });
      await call("/aml-client-balances", { email: user.email, twelveWords: user.words });
      await call("/aml-new-messages-count", { email: user.email, twelvewords: user.words });
    });
    expect(rows).toHaveLength(0);
    for (const change of [db.delete(auditLog), db.update(auditLog).set({ actor: "someone" })]) {
      const error: unknown = await change.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(String((error as { cause?: unknown } | null)?.cause)).toContain("audit_log is append-only");
    }
  });
});
