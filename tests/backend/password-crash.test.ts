// A crash in the middle of a password change (issue 27: "a crash mid-change
// leaves exactly one of the two passwords working, never neither"), on PGlite
// and on PostgreSQL. A child process (tests/support/password-changer.ts)
// changes the passwords of a few accounts back and forth, A → B → A …, every
// account at once, and is killed with SIGKILL (kill -9): at a random moment,
// or just as a change's transaction has written the new password and is
// about to write its audit row and commit. After every kill, for every
// account: exactly one of A and B signs in; the phrase it opens is the
// account's own; and which one it is agrees with the number of
// 'auth.password.changed' rows (even: A), so the audit row and the change
// were committed together or not at all.
import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import { freshDataDir } from "../../scripts/host.ts";
import { openDatabase, type Database } from "../../server/backend/db/index.ts";
import { auditLog } from "../../server/backend/db/schema.ts";
import { createAccount, login, type AccountsContext } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { BACKEND_SECRET, createTempPostgres, uniqueEmail } from "./helpers.ts";

const CHILD = path.resolve(import.meta.dirname, "../support/password-changer.ts");
const KILLS = 4;
const ACCOUNTS = 3;

interface Target {
  name: "pglite" | "postgres";
  /** Where the database is (a folder or a URL), how to open it here, and how to throw it away. */
  prepare(): Promise<{ where: string; open(): Promise<Database>; dispose(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: "pglite",
    async prepare() {
      const { dataDir, remove } = await freshDataDir("coinkeep-crash-");
      return { where: dataDir, open: () => openDatabase({ dataDir }), dispose: remove };
    },
  },
];
const adminUrl = process.env.TEST_DATABASE_URL;
if (adminUrl) {
  targets.push({
    name: "postgres",
    async prepare() {
      const { url, drop } = await createTempPostgres(adminUrl);
      return { where: url, open: () => openDatabase({ databaseUrl: url, dataDir: tmpdir() }), dispose: drop };
    },
  });
}

interface Hammered {
  email: string;
  userId: string;
  a: string;
  b: string;
  phrase: string;
}

/** The child, with its output as lines as they come. */
function startChanger(where: string, accounts: Hammered[]) {
  const child: ChildProcess = spawn(process.execPath, [CHILD], {
    env: {
      PATH: process.env.PATH,
      CRASH_DB: where,
      CRASH_SECRET: BACKEND_SECRET,
      CRASH_ACCOUNTS: JSON.stringify(accounts.map(({ userId, a, b }) => ({ userId, a, b }))),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let errors = "";
  const waiters = new Set<() => void>();
  let pending = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    pending += chunk;
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    lines.push(...parts);
    for (const wake of Array.from(waiters)) wake();
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => (errors += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    lines,
    exited,
    /** Resolves once a line passes `test` (looking from line `from`); rejects after `ms`. */
    until(match: (line: string) => boolean, from = 0, ms = 60_000): Promise<number> {
      return new Promise((resolve, reject) => {
        const look = () => {
          const at = lines.findIndex((line, i) => i >= from && match(line));
          if (at < 0) return;
          waiters.delete(look);
          clearTimeout(timer);
          resolve(at);
        };
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`the changer did not get there: ${lines.slice(-5).join(" | ")} ${errors}`));
        }, ms);
        waiters.add(look);
        look();
      });
    },
  };
}

for (const target of targets) {
  describe(`kill -9 in the middle of password changes (${target.name})`, () => {
    test("after every kill exactly one of the two passwords works, it opens the account's phrase, and the audit log agrees", async () => {
      const keys = deriveServerKeys(BACKEND_SECRET);
      const store = await target.prepare();
      let database: Database | undefined = await store.open();
      try {
        const accounts: Hammered[] = [];
        for (let i = 0; i < ACCOUNTS; i++) {
          const email = uniqueEmail(`crash${i}`);
          const a = `password A ${i} ${crypto.randomUUID()}`;
          const created = await createAccount({ db: database.db, keys }, email, a);
          if (!created.ok) throw new Error("account not created");
          accounts.push({
            email,
            userId: created.userId,
            a,
            b: `password B ${i} ${crypto.randomUUID()}`,
            phrase: created.words.join(" "),
          });
        }
        // The embedded database serves one process at a time (record 019): the child's turn.
        await database.close();
        database = undefined;

        let killedInside = 0;
        let changes = 0;
        for (let kill = 0; kill < KILLS; kill++) {
          const changer = startChanger(store.where, accounts);
          await changer.until((line) => line === "ready");
          if (kill % 2 === 0) {
            // Just as a transaction has changed a password and not yet committed (or just after).
            const skip = Math.floor(Math.random() * 4);
            let from = 0;
            for (let n = 0; n <= skip; n++)
              from = (await changer.until((l) => l.startsWith("mid "), from)) + 1;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 6));
          } else {
            // Anywhere at all: while hashing, while verifying, between changes, in a commit.
            await changer.until((line) => line.startsWith("changed "));
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 400));
          }
          changer.child.kill("SIGKILL");
          await changer.exited;
          changes += changer.lines.filter((l) => l.startsWith("changed ")).length;
          // An account whose last word was "mid": killed between its change and its answer.
          for (const { userId } of accounts) {
            const last = changer.lines.findLast((l) => l.endsWith(userId));
            if (last?.startsWith("mid ")) killedInside++;
          }

          database = await store.open();
          const ctx: AccountsContext = { db: database.db, keys };
          for (const account of accounts) {
            const [withA, withB] = [
              await login(ctx, account.email, account.a),
              await login(ctx, account.email, account.b),
            ];
            // Exactly one works, never neither (nor both).
            expect([withA.ok, withB.ok].filter(Boolean), `${account.email} after kill ${kill}`).toHaveLength(
              1,
            );
            const working = withA.ok ? withA : withB;
            if (!working.ok) throw new Error("unreachable");
            expect(working.words.join(" ")).toBe(account.phrase);
            const [{ n } = { n: -1 }] = await database.db
              .select({ n: sql<number>`count(*)::int` })
              .from(auditLog)
              .where(and(eq(auditLog.action, "auth.password.changed"), eq(auditLog.subject, account.userId)));
            expect(n % 2 === 0 ? "a" : "b", `${account.email}: ${n} changes audited`).toBe(
              withA.ok ? "a" : "b",
            );
          }
          await database.close();
          database = undefined;
        }
        // The kills did land where it matters, not only between changes.
        expect(changes).toBeGreaterThan(0);
        expect(killedInside).toBeGreaterThan(0);
      } finally {
        await database?.close();
        await store.dispose();
      }
    }, 300_000);
  });
}
