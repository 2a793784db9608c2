// The secrets' check values (issue 29 item 3, record 051): the first process on a database
// writes a check value of BACKEND_SECRET and SESSION_SECRET; a later one with another value
// refuses to start with one sentence naming the variable, and writes nothing. On PGlite and,
// with TEST_DATABASE_URL, on PostgreSQL; then through real processes (the host, the operator
// commands, a web tier with BACKEND_URL).
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { built, root, spawnHost, TEST_SECRETS } from "../../scripts/host.ts";
import { openDatabase, type AppDb } from "../../server/backend/db/index.ts";
import { secretChecks } from "../../server/backend/db/schema.ts";
import {
  checkSecrets,
  SecretMismatchError,
  type CheckedSecret,
} from "../../server/backend/db/secret-checks.ts";
import { createTempPostgres, databaseTargets, type OpenedDatabase } from "./helpers.ts";

const run = promisify(execFile);

const BACKEND = "first-backend-secret-0123456789abcdefgh";
const SESSION = "first-session-secret-0123456789abcdefgh";
const OTHER = "other-secret-value-0123456789abcdefghijk";

const secrets = (backend: string, session: string): CheckedSecret[] => [
  { name: "BACKEND_SECRET", value: backend },
  { name: "SESSION_SECRET", value: session },
];

const mismatch = (name: string, source: string) =>
  `${name} does not match the one this database was first started with: give every host and process on this database the same ${name} (${source}).`;

async function rows(db: AppDb) {
  return (await db.select().from(secretChecks)).map((r) => ({ name: r.name, checkValue: r.checkValue }));
}

/** Every way a secret could show in a stored value: as is, in hex, in base64 (and base64url). */
function revealed(value: string, secret: string): boolean {
  const bytes = Buffer.from(secret, "utf8");
  return [secret, bytes.toString("hex"), bytes.toString("base64"), bytes.toString("base64url")].some((form) =>
    value.toLowerCase().includes(form.toLowerCase()),
  );
}

for (const target of databaseTargets()) {
  describe(`the secrets' check values (${target.name})`, () => {
    let opened: OpenedDatabase;
    beforeAll(async () => {
      opened = await target.open();
    }, 60_000);
    afterAll(async () => await opened?.dispose());

    test("the first start writes one check value per secret; the same secrets start again", async () => {
      const db = opened.database.db;
      expect(await rows(db)).toEqual([]);
      await checkSecrets(db, secrets(BACKEND, SESSION));
      const first = await rows(db);
      expect(first.map((r) => r.name).toSorted()).toEqual(["BACKEND_SECRET", "SESSION_SECRET"]);
      await checkSecrets(db, secrets(BACKEND, SESSION));
      expect(await rows(db)).toEqual(first);
    });

    test("another secret is refused with one sentence naming it, and nothing is written", async () => {
      const db = opened.database.db;
      const before = await rows(db);
      await expect(checkSecrets(db, secrets(OTHER, SESSION))).rejects.toThrow(
        new SecretMismatchError(
          mismatch("BACKEND_SECRET", "this process's BACKEND_SECRET is set in its environment"),
        ),
      );
      await expect(
        checkSecrets(db, [
          { name: "BACKEND_SECRET", value: BACKEND },
          { name: "SESSION_SECRET", value: OTHER, keptIn: "/srv/b/data/session-secret" },
        ]),
      ).rejects.toThrow(
        mismatch(
          "SESSION_SECRET",
          "this process has no SESSION_SECRET set and used the one generated into /srv/b/data/session-secret",
        ),
      );
      expect(await rows(db)).toEqual(before);
    });

    test("the check values hold nothing the secrets follow from", async () => {
      for (const row of await rows(opened.database.db)) {
        expect(row.checkValue).toMatch(/^[0-9a-f]{64}$/);
        for (const secret of [BACKEND, SESSION]) {
          expect(row.checkValue).not.toBe(secret);
          expect(revealed(row.checkValue, secret)).toBe(false);
        }
      }
      // Two secrets, two unrelated values.
      const [a, b] = await rows(opened.database.db);
      expect(a?.checkValue).not.toBe(b?.checkValue);
    });
  });
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("first starts at once (postgres)", () => {
  test("the migrations are applied once; one writes, the others compare: the same secret starts, another is refused", async () => {
    const { url, drop } = await createTempPostgres(process.env.TEST_DATABASE_URL ?? "", "hosts_");
    const dataDir = tmpdir();
    // Opened at once on the empty database: the migrations are applied once, under their lock.
    const open = () => openDatabase({ databaseUrl: url, dataDir });
    const [one, two, three] = await Promise.all([open(), open(), open()]);
    try {
      const results = await Promise.allSettled([
        checkSecrets(one.db, secrets(BACKEND, SESSION)),
        checkSecrets(two.db, secrets(OTHER, SESSION)),
        checkSecrets(three.db, secrets(BACKEND, SESSION)),
      ]);
      const kept = await rows(one.db);
      expect(kept.map((r) => r.name).toSorted()).toEqual(["BACKEND_SECRET", "SESSION_SECRET"]);
      // Whichever won, the two that agree both start or both are refused, and the odd one the opposite.
      const [first, second, third] = results.map((r) => r.status);
      expect(first).toBe(third);
      expect(second).not.toBe(first);
      const refused = results.find((r) => r.status === "rejected");
      expect(refused?.status === "rejected" && (refused.reason as Error).message).toBe(
        mismatch("BACKEND_SECRET", "this process's BACKEND_SECRET is set in its environment"),
      );
    } finally {
      await Promise.all([one.close(), two.close(), three.close()]);
      await drop();
    }
  }, 60_000);
});

// Real processes: what an operator sees on the terminal.
const adminUrl = process.env.TEST_DATABASE_URL;
describe.skipIf(!built)("a process started with another secret", () => {
  test("embedded database: a data folder moved under a wrong BACKEND_SECRET refuses to start", async () => {
    const host = await spawnHost({ env: TEST_SECRETS });
    await host.ready();
    const dataDir = host.dataDir;
    const keep = await mkdtemp(path.join(tmpdir(), "hosts-moved-"));
    try {
      // Stopped without deleting its folder: a copy of the folder is what is started again.
      host.child.kill("SIGTERM");
      await host.exited;
      await run("cp", ["-a", dataDir, path.join(keep, "data")]);
      const moved = await spawnHost({
        dataDir: path.join(keep, "data"),
        env: { ...TEST_SECRETS, BACKEND_SECRET: OTHER },
      });
      expect(await moved.exited).toBe(1);
      expect(moved.output.stderr).toBe(
        `${mismatch("BACKEND_SECRET", "this process's BACKEND_SECRET is set in its environment")}\n`,
      );
      // The right one still starts.
      const again = await spawnHost({ dataDir: path.join(keep, "data"), env: TEST_SECRETS });
      await again.ready();
      await again.stop();
    } finally {
      await host.stop();
      await rm(keep, { recursive: true, force: true });
    }
  }, 120_000);

  describe.skipIf(!adminUrl)("PostgreSQL: two hosts with their own data folders and no secrets set", () => {
    // Each test on a database of its own: the first process on each writes its secrets' values.
    let database: { url: string; drop(): Promise<void> };
    beforeEach(async () => {
      database = await createTempPostgres(adminUrl ?? "", "hosts_");
    });
    afterEach(async () => await database?.drop());

    test("the second refuses naming BACKEND_SECRET and the file it used; its operator commands too", async () => {
      const a = await spawnHost({ env: { DATABASE_URL: database.url } });
      await a.ready();
      const b = await spawnHost({ env: { DATABASE_URL: database.url } });
      try {
        expect(await b.exited).toBe(1);
        const kept = path.join(b.dataDir, "backend-secret");
        expect(b.output.stderr).toBe(
          `${mismatch("BACKEND_SECRET", `this process has no BACKEND_SECRET set and used the one generated into ${kept}`)}\n`,
        );
        // Given A's secrets, B starts.
        const same = await spawnHost({
          env: {
            DATABASE_URL: database.url,
            BACKEND_SECRET: (await readFile(path.join(a.dataDir, "backend-secret"), "utf8")).trim(),
            SESSION_SECRET: (await readFile(path.join(a.dataDir, "session-secret"), "utf8")).trim(),
          },
        });
        await same.ready();
        await same.stop();

        // An operator command opening the database itself with other secrets: refused the same way.
        const ops = await run(process.execPath, [path.join(root, "server/ops/cli.ts"), "users"], {
          cwd: root,
          env: { PATH: process.env.PATH, DATABASE_URL: database.url, ...TEST_SECRETS },
        }).then(
          () => ({ code: 0, stderr: "" }),
          (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
        );
        expect(ops).toEqual({
          code: 1,
          stderr: `error: ${mismatch("BACKEND_SECRET", "this process's BACKEND_SECRET is set in its environment")}\n`,
        });
      } finally {
        await b.stop();
        await a.stop();
      }
    }, 120_000);

    test("a web tier with BACKEND_URL on the same database: SESSION_SECRET is checked, BACKEND_SECRET is not its own", async () => {
      const backend = await spawnHost({ env: { DATABASE_URL: database.url } });
      await backend.ready();
      const session = (await readFile(path.join(backend.dataDir, "session-secret"), "utf8")).trim();
      try {
        const wrong = await spawnHost({
          env: { DATABASE_URL: database.url, BACKEND_URL: `${backend.base}/api`, ...TEST_SECRETS },
        });
        expect(await wrong.exited).toBe(1);
        expect(wrong.output.stderr).toBe(
          `${mismatch("SESSION_SECRET", "this process's SESSION_SECRET is set in its environment")}\n`,
        );
        // The backend's SESSION_SECRET, and a BACKEND_SECRET of its own (it derives nothing from it).
        const web = await spawnHost({
          env: {
            DATABASE_URL: database.url,
            BACKEND_URL: `${backend.base}/api`,
            SESSION_SECRET: session,
            BACKEND_SECRET: OTHER,
          },
        });
        await web.ready();
        await web.stop();
      } finally {
        await backend.stop();
      }
    }, 120_000);
  });
});
