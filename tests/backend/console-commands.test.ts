// The console's reach into the operator commands (server/ops/console.ts):
// the command line it builds for a member's action, the role check before
// anything runs, and that a console action is audited as the member — on a
// real database (PGlite, and PostgreSQL when TEST_DATABASE_URL is set).
import { tmpdir } from "node:os";
import { count, desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsoleServices, StaffRole } from "../../common/contract/console.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { auditLog, messages, users } from "../../server/backend/db/schema.ts";
import { loadConfig } from "../../server/config.ts";
import { OpsError } from "../../server/ops/commands/define.ts";
import { consoleArgv, consoleServices } from "../../server/ops/console.ts";
import { parseCommandLine } from "../../server/ops/registry.ts";
import { BACKEND_SECRET, databaseTargets, insertUser, type OpenedDatabase } from "./helpers.ts";

const SLOW = { timeout: 60_000 };
const support = { email: "support@staff.example", roles: ["support"] as StaffRole[] };
const compliance = { email: "compliance@staff.example", roles: ["compliance"] as StaffRole[] };
const treasury = { email: "treasury@staff.example", roles: ["treasury"] as StaffRole[] };

describe("consoleArgv", () => {
  test("options as --name=value, the member as --as, the arguments after --", () => {
    expect(
      consoleArgv("message --to", { options: { to: "a@example.com" }, args: ["hello"] }, "s@x.example"),
    ).toEqual(["message", "--to=a@example.com", "--json", "--as=s@x.example", "--", "hello"]);
  });

  test("a scope flag other than the key's is refused: no --all smuggled into message --to", () => {
    expect(() =>
      consoleArgv(
        "message --to",
        { options: { to: "a@example.com", all: true }, args: ["hi"] },
        "s@x.example",
      ),
    ).toThrow(OpsError);
    expect(() =>
      consoleArgv(
        "message --to",
        { options: { to: "a@example.com", all: true }, args: ["hi"] },
        "s@x.example",
      ),
    ).toThrow(/--all does not go with message --to/);
    // The key's own scope must be given.
    expect(() => consoleArgv("message --to", { args: ["hi"] }, "s@x.example")).toThrow(/needs a value/);
    // --as, --json and --help are the console's alone.
    for (const key of ["as", "json", "help"]) {
      expect(() => consoleArgv("users", { options: { [key]: "x" } }, "s@x.example")).toThrow(OpsError);
    }
  });

  test("an option value or an argument starting with '-' stays a value", () => {
    const argv = consoleArgv(
      "pause --user",
      { options: { user: "u@example.com", reason: "--coin=BTC" }, args: ["sends"] },
      "c@x.example",
    );
    expect(argv).toContain("--reason=--coin=BTC");
    const parsed = parseCommandLine(argv);
    expect(parsed.kind).toBe("run");
    const text = parseCommandLine(
      consoleArgv("message --to", { options: { to: "-x@example.com" }, args: ["--all"] }, "s@x.example"),
    );
    expect(text.kind).toBe("run");
  });
});

for (const target of databaseTargets()) {
  describe(`console services on ${target.name}`, () => {
    let opened: OpenedDatabase;
    let db: AppDb;
    let services: ConsoleServices;
    let email: string;
    let userId: string;
    const auditRows = async () => (await db.select({ n: count() }).from(auditLog))[0]?.n ?? 0;

    beforeAll(async () => {
      opened = await target.open();
      db = opened.database.db;
      const config = loadConfig({ BACKEND_SECRET, SESSION_SECRET: BACKEND_SECRET, DATA_DIR: tmpdir() });
      services = consoleServices({ db, config });
      userId = await insertUser(db, "console");
      const [row] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
      email = row?.email ?? "";
    }, 120_000);
    afterAll(async () => {
      await opened?.dispose();
    });

    test("a support member is refused approve: forbidden, needs approver; nothing runs", SLOW, async () => {
      const before = await auditRows();
      const outcome = await services.run(support, "approve", {
        args: ["00000000-0000-4000-8000-000000000000"],
      });
      expect(outcome).toEqual({ ok: false, kind: "forbidden", needs: "approver" });
      // A scope the key does not name is refused before the command runs, for any role.
      expect(await services.run(support, "message --all", { options: { all: true }, args: ["x"] })).toEqual({
        ok: false,
        kind: "forbidden",
        needs: "compliance",
      });
      expect(await auditRows()).toBe(before);
    });

    test(
      "message --to cannot reach everyone: --all is refused, a text '--all' goes to the one user",
      SLOW,
      async () => {
        const before = (await db.select({ n: count() }).from(messages))[0]?.n ?? 0;
        const smuggled = await services.run(support, "message --to", {
          options: { to: email, all: true },
          args: ["to everyone?"],
        });
        expect(smuggled).toMatchObject({ ok: false, kind: "refused" });
        expect((await db.select({ n: count() }).from(messages))[0]?.n).toBe(before);

        const sent = await services.run(support, "message --to", { options: { to: email }, args: ["--all"] });
        expect(sent).toMatchObject({ ok: true, data: { to: email } });
        const rows = await db.select().from(messages).where(eq(messages.message, "--all"));
        expect(rows).toHaveLength(1);
        expect(rows[0]?.userId).toBe(userId);
      },
    );

    test("an option value starting with '-' stays the value (pause --user --reason)", SLOW, async () => {
      const paused = await services.run(compliance, "pause --user", {
        options: { user: email, reason: "--coin=BTC -5" },
        args: ["sends"],
      });
      expect(paused).toMatchObject({
        ok: true,
        data: { what: "sends", coin: null, userId, reason: "--coin=BTC -5" },
      });
      const resumed = await services.run(compliance, "resume --user", {
        options: { user: userId, reason: "-" },
        args: ["sends"],
      });
      expect(resumed).toMatchObject({ ok: true, data: { reason: "-" } });
    });

    test("the audit row of a console action names the member as actor", SLOW, async () => {
      const outcome = await services.run(compliance, "message --to", {
        options: { to: email },
        args: ["Please confirm your address."],
      });
      expect(outcome.ok).toBe(true);
      const id = (outcome as { data: { messageId: string } }).data.messageId;
      const [row] = await db.select().from(auditLog).where(eq(auditLog.subject, id));
      expect(row).toMatchObject({ action: "message.send", actor: compliance.email });
    });

    test("a command whose verb is an argument runs from the console (holdings set)", SLOW, async () => {
      const outcome = await services.run(treasury, "holdings set", {
        args: ["ETH", "0"],
        options: { source: "node" },
      });
      expect(outcome).toMatchObject({
        ok: true,
        data: { coin: "ETH", holdings: { amount: "0", source: "node" } },
      });
      // Its audit row names the member and the roles they acted with.
      const [row] = await db
        .select()
        .from(auditLog)
        .where(eq(auditLog.action, "holdings.set"))
        .orderBy(desc(auditLog.id))
        .limit(1);
      expect(row).toMatchObject({ actor: "treasury@staff.example", actorRoles: ["treasury"] });
      // The key is the whole command: "staff" cannot run "staff add".
      const admin = { email: "admin@staff.example", roles: ["admin"] as StaffRole[] };
      expect(await services.run(admin, "staff", { args: ["add", "x@staff.example"] })).toMatchObject({
        ok: false,
        kind: "refused",
      });
    });

    test(
      "a support member finds a user (users --find) and reads them in full (user); nothing written",
      SLOW,
      async () => {
        const before = await auditRows();
        const part = email.slice(0, email.indexOf("@")).toUpperCase();
        const found = await services.run(support, "users", { options: { find: part } });
        expect(found.ok).toBe(true);
        const rows = (found as { data: { userId: string; email: string; wallets: unknown[] }[] }).data;
        expect(rows.length).toBeLessThanOrEqual(50);
        expect(rows).toContainEqual(expect.objectContaining({ userId, email, wallets: [] }));
        expect(
          await services.run(support, "users", { options: { find: "no-such-holder-anywhere" } }),
        ).toEqual({
          ok: true,
          data: [],
        });

        for (const who of [userId, email]) {
          const one = await services.run(support, "user", { args: [who] });
          expect(one).toMatchObject({
            ok: true,
            data: {
              userId,
              email,
              wallets: [],
              transactions: [],
              login: { failures: 0, locked: false },
              pauses: [],
              sessions: 0,
            },
          });
          expect(Array.isArray((one as { data: { messages: unknown } }).data.messages)).toBe(true);
        }
        const missing = "00000000-0000-4000-8000-000000000000";
        expect(await services.run(support, "user", { args: [missing] })).toEqual({
          ok: false,
          kind: "refused",
          message: `No user with id ${missing}.`,
        });
        // user is support's and compliance's, not treasury's.
        expect(await services.run(treasury, "user", { args: [userId] })).toEqual({
          ok: false,
          kind: "forbidden",
          needs: "support or compliance",
        });
        expect(await auditRows()).toBe(before);
      },
    );

    test("reconcile --dry-run from the console writes nothing", SLOW, async () => {
      const before = await auditRows();
      const outcome = await services.run(treasury, "reconcile", { options: { "dry-run": true } });
      expect(outcome.ok).toBe(true);
      const rows = (outcome as { data: { coin: string; pausedNow: boolean; wouldPause: boolean }[] }).data;
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.pausedNow).toBe(false);
      expect(await auditRows()).toBe(before);
    });
  });
}
