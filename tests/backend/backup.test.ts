// Backups you can restore (issue 32, record 055), on PGlite and (with TEST_DATABASE_URL) on
// PostgreSQL, with the operator's command line in its own process as operators run it.
//
// The drill: a real server process; sends (call 6) and deposits (ops credit) in a loop; a
// backup taken in the middle while they go on; a restore into a fresh place; a server started
// on it. Every send and deposit acknowledged before the backup began is there, none is half
// there, the ledger's invariants hold, a holder signs in and gets the same 12 words, and the
// operator commands work. Then each bad input: a wrong passphrase or identity, a truncated or
// altered file, a backup of a newer schema, a target that is not empty — each one sentence,
// exit code 1, nothing written — and kill -9 of the command or of the server mid-backup,
// which leaves no file under the given name that does not restore; and a backup made at the
// schema of one migration ago, which restore brings up to this code's before it verifies.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, root, spawnHost, TEST_SECRETS, type HostProcess } from "../../scripts/host.ts";
import { seedSenders, type Sender } from "../../scripts/bench/seed.ts";
import { sendBody } from "../../scripts/bench/sends.ts";
import { openDatabase, rowsOf, type Database, type RawQuery } from "../../server/backend/db/index.ts";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { checkLedger } from "../../server/backend/domain/ledger-checks.ts";
import { checkSecrets } from "../../server/backend/db/secret-checks.ts";
import { createAccount } from "../../server/backend/domain/accounts.ts";
import * as schema from "../../server/backend/db/schema.ts";
import { backup } from "../../server/ops/backup.ts";
import { migrationsBefore } from "./migration-helpers.ts";
import { rawCall } from "../security/support/http.ts";
import { createTempPostgres, phrasePairsIn } from "./helpers.ts";

const adminUrl = process.env.TEST_DATABASE_URL;
const PASSPHRASE = "a passphrase for the drill, long enough";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run ops -- …args` in its own process, on the database `where` names. */
function ops(
  where: { DATA_DIR?: string; DATABASE_URL?: string | undefined },
  ...args: string[]
): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, "server/ops/cli.ts"), ...args],
      { cwd: root, env: { PATH: process.env.PATH, OPERATOR: "tests", ...where }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface Place {
  /** The data folder (PGlite's database, or PostgreSQL's secrets). */
  dataDir: string;
  databaseUrl: string | undefined;
  open(): Promise<Database>;
  dispose(): Promise<void>;
}

/** A fresh place: a folder not made yet, and for PostgreSQL an empty database. */
async function freshPlace(driver: "pglite" | "postgres", scratch: string): Promise<Place> {
  const dataDir = path.join(scratch, `data-${randomBytes(4).toString("hex")}`);
  if (driver === "pglite") {
    return {
      dataDir,
      databaseUrl: undefined,
      open: () => openDatabase({ dataDir }),
      dispose: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const { url, drop } = await createTempPostgres(adminUrl ?? "", "ck_backup_");
  return {
    dataDir,
    databaseUrl: url,
    open: () => openDatabase({ databaseUrl: url, dataDir }),
    async dispose() {
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The secrets as the server keeps generated ones (DATA_DIR/…-secret), so the backup carries them. */
async function keepSecrets(dataDir: string) {
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(dataDir, "backend-secret"), `${TEST_SECRETS.BACKEND_SECRET}\n`, { mode: 0o600 });
  await writeFile(path.join(dataDir, "session-secret"), `${TEST_SECRETS.SESSION_SECRET}\n`, { mode: 0o600 });
}

/** Senders with funded ETH wallets, written before the server takes the database. */
async function seeded(place: Place, count: number): Promise<Sender[]> {
  await keepSecrets(place.dataDir);
  const database = await place.open();
  try {
    return await seedSenders(
      { db: database.db, keys: deriveServerKeys(TEST_SECRETS.BACKEND_SECRET) },
      count,
      count,
      `drill-${randomBytes(3).toString("hex")}`,
    );
  } finally {
    await database.close();
  }
}

const hostEnv = (place: Place) => ({ RATE_LIMITS: "off", DATABASE_URL: place.databaseUrl });
const where = (place: Place) => ({ DATA_DIR: place.dataDir, DATABASE_URL: place.databaseUrl });

const drivers: ("pglite" | "postgres")[] = adminUrl ? ["pglite", "postgres"] : ["pglite"];

let scratch = "";
let passphraseFile = "";
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "coinkeep-backup-"));
  passphraseFile = path.join(scratch, "passphrase");
  await writeFile(passphraseFile, `${PASSPHRASE}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

for (const driver of drivers) {
  describe.skipIf(!built)(`backup and restore drill (${driver})`, () => {
    test("sends and deposits go on through a backup; the restore holds every one acknowledged before it, whole, and serves", async () => {
      const source = await freshPlace(driver, scratch);
      const target = await freshPlace(driver, scratch);
      let host: HostProcess | undefined;
      let restored: HostProcess | undefined;
      try {
        const senders = await seeded(source, 3);
        host = await spawnHost({ dataDir: source.dataDir, env: hostEnv(source) });
        await host.ready();
        const port = host.port;

        const sends: { id: string; at: number }[] = [];
        const deposits: { txid: string; at: number }[] = [];
        const run = { stop: false, failure: undefined as Error | undefined };
        const sender = async (s: Sender) => {
          while (!run.stop) {
            const answer = await rawCall(
              port,
              "/request-transaction",
              sendBody(s, randomBytes(16).toString("hex")),
            );
            if (answer.status !== 200) {
              run.failure = new Error(`a send answered ${answer.status}: ${answer.text}`);
              return;
            }
            const { id } = (JSON.parse(answer.text) as { transaction: { id: string } }).transaction;
            sends.push({ id, at: performance.now() });
          }
        };
        const depositor = async () => {
          for (let i = 0; !run.stop; i++) {
            const txid = `0x${randomBytes(32).toString("hex")}`;
            const to = senders[i % senders.length]?.walletId ?? "";
            const credited = await ops(where(source), "credit", to, "0.5", txid);
            if (credited.code !== 0) {
              run.failure = new Error(`ops credit failed: ${credited.stderr}`);
              return;
            }
            deposits.push({ txid, at: performance.now() });
          }
        };
        const load = Promise.all([...senders.map((s) => sender(s)), depositor()]);
        const until = async (done: () => boolean) => {
          while (!done() && !run.failure) await new Promise((r) => setTimeout(r, 20));
        };

        await until(() => sends.length >= 30 && deposits.length >= 2);
        const file = path.join(scratch, `drill-${driver}.ckb`);
        const began = performance.now();
        const sendsBefore = sends.filter((s) => s.at < began).map((s) => s.id);
        const depositsBefore = deposits.filter((d) => d.at < began).map((d) => d.txid);
        const backedUp = await ops(where(source), "backup", file, "--passphrase-file", passphraseFile);
        const ended = performance.now();
        const sendsDuring = sends.filter((s) => s.at >= began && s.at < ended).length;
        // It keeps going after the backup, too.
        const after = sends.length;
        await until(() => sends.length >= after + 20);
        run.stop = true;
        await load;
        if (run.failure) throw run.failure;

        expect(backedUp.stderr).toBe("");
        expect(backedUp.code).toBe(0);
        expect(backedUp.stdout).toMatch(
          /^Backed up to .+: schema \d+ \(\d{4}_[a-z_]+\), taken \d{4}-\d\d-\d\dT[\d:.]+Z, \d+ rows\.\nSize [\d.]+ [KM]iB \(\d+ bytes\), took [\d.]+ s\.\nSHA-256 [0-9a-f]{64}\n$/u,
        );
        // The file alone says nothing of the secrets or the holders.
        const bytes = await readFile(file);
        expect(bytes.includes(TEST_SECRETS.BACKEND_SECRET)).toBe(false);
        expect(bytes.includes(senders[0]?.email ?? "?")).toBe(false);
        await host.stop();
        host = undefined;

        // The restore decrypts one holder's phrase too, with that holder's password in a file.
        const checked = senders[0];
        if (!checked) throw new Error("no holder");
        const passwordFile = path.join(scratch, `password-${driver}`);
        await writeFile(passwordFile, `${checked.password}\n`, { mode: 0o600 });
        const restoring = await ops(
          {},
          "restore",
          file,
          "--data-dir",
          target.dataDir,
          "--passphrase-file",
          passphraseFile,
          "--check-holder",
          checked.email,
          "--password-file",
          passwordFile,
          ...(target.databaseUrl ? ["--database-url", target.databaseUrl] : []),
        );
        expect(restoring.stderr).toBe("");
        expect(restoring.code).toBe(0);
        expect(restoring.stdout).toMatch(
          /^Restored .+\nApplied 0 newer migrations\. Verified: \d+ rows in \d+ tables as in the manifest, the secrets' check values, \d+ transfers balanced and every balance the sum of its entries, and the phrase of \S+ decrypts\.\nTook [\d.]+ s\.\n$/u,
        );
        expect(restoring.stdout).toContain(`the phrase of ${checked.email} decrypts.`);
        // The words are never printed (one word alone is no test: "into", "check", "balance" and
        // "example" are phrase words and in this output).
        expect(phrasePairsIn(restoring.stdout, checked.words.join(" "))).toEqual([]);

        // What the restored database holds, before a server takes it.
        const database = await target.open();
        try {
          const ids = sends.map((s) => s.id);
          const found = rowsOf<{ id: string; requests: number; hold: number }>(
            await database.db.execute(sql`
              SELECT w.id,
                (SELECT count(*)::int FROM send_requests r WHERE r.withdrawal_id = w.id) AS requests,
                (SELECT count(*)::int FROM ledger_transfers t WHERE t.id = w.hold_transfer_id) AS hold
              FROM withdrawals w WHERE w.id = ANY(${`{${ids.join(",")}}`}::uuid[])`),
          );
          const present = new Set(found.map((r) => r.id));
          // Every send acknowledged before the backup began is there …
          expect(sendsBefore.filter((id) => !present.has(id))).toEqual([]);
          // … and each one there is whole: its request and its hold.
          expect(found.every((r) => r.requests === 1 && r.hold === 1)).toBe(true);
          // Those acknowledged after the backup ended are not.
          const afterEnd = sends.filter((s) => s.at > ended).map((s) => s.id);
          expect(afterEnd.filter((id) => present.has(id))).toEqual([]);
          const credited = rowsOf<{ txid: string }>(
            await database.db.execute(
              sql`SELECT external_tx_id AS txid FROM ledger_transfers WHERE kind = 'deposit'
                  AND external_tx_id = ANY(${`{${deposits.map((d) => d.txid).join(",")}}`}::text[])`,
            ),
          );
          const creditedSet = new Set(credited.map((r) => r.txid));
          expect(depositsBefore.filter((txid) => !creditedSet.has(txid))).toEqual([]);
          const ledger = await checkLedger(database.db);
          expect(ledger.problems).toEqual([]);
          console.log(
            `backup drill (${driver}): ${sendsBefore.length} sends and ${depositsBefore.length} deposits before the backup, ${sendsDuring} sends during it (${((ended - began) / 1000).toFixed(2)} s), ${present.size} sends and ${ledger.transfers} transfers restored`,
          );
        } finally {
          await database.close();
        }

        // A server on the restored place: the holder signs in and gets the same 12 words.
        restored = await spawnHost({ dataDir: target.dataDir, env: hostEnv(target) });
        await restored.ready();
        const holder = senders[0];
        if (!holder) throw new Error("no holder");
        const signedIn = await rawCall(restored.port, "/aml-authorization", {
          email: holder.email,
          password: holder.password,
        });
        expect(signedIn.status).toBe(200);
        expect((JSON.parse(signedIn.text) as { user: { twelveWords: string } }).user.twelveWords).toBe(
          holder.words.join(" "),
        );
        // A send goes through on it, and the operator commands work (through its socket for PGlite).
        const again = await rawCall(
          restored.port,
          "/request-transaction",
          sendBody(holder, randomBytes(16).toString("hex")),
        );
        expect(again.status).toBe(200);
        const user = await ops(where(target), "user", holder.email, "--json");
        expect(user.code).toBe(0);
        expect((JSON.parse(user.stdout) as { email: string }).email).toBe(holder.email);
        const reconciled = await ops(where(target), "reconcile", "--dry-run");
        expect([reconciled.code, reconciled.stdout.split("\n")[0]]).toEqual([
          0,
          "Dry run: nothing was written.",
        ]);
      } finally {
        await host?.stop();
        await restored?.stop();
        await source.dispose();
        await target.dispose();
      }
    }, 300_000);
  });
}

describe("restore of a backup made by an older code", () => {
  test("applies this code's newer migrations, then verifies", async () => {
    const dataDir = path.join(scratch, `older-${randomBytes(4).toString("hex")}`);
    await mkdir(dataDir, { recursive: true });
    // A database as the code of one migration ago left it.
    const client = await PGlite.create(path.join(dataDir, "pglite"));
    try {
      const db = drizzlePglite({ client, schema });
      await migratePglite(db, { migrationsFolder: await migrationsBefore("0016_chain_watch") });
      await checkSecrets(db, [
        { name: "BACKEND_SECRET", value: TEST_SECRETS.BACKEND_SECRET },
        { name: "SESSION_SECRET", value: TEST_SECRETS.SESSION_SECRET },
      ]);
      // A holder (the current code's deposits write columns of 0016, so none here).
      const created = await createAccount(
        { db, keys: deriveServerKeys(TEST_SECRETS.BACKEND_SECRET) },
        "older@example.com",
        "older password 1",
      );
      expect(created.ok).toBe(true);
      // What Database.snapshot does, on this database that openDatabase would migrate.
      const snapshot = (async (read: (query: RawQuery) => Promise<unknown>) => {
        const seen = await read(async (text) => (await client.query<Record<string, unknown>>(text)).rows);
        const blob = await client.dumpDataDir("none");
        return { read: seen, tarball: new Uint8Array(await blob.arrayBuffer()) };
      }) as Database["snapshot"];
      const file = path.join(scratch, "older.ckb");
      const made = await backup({
        file,
        key: { passphrase: PASSPHRASE },
        database: { snapshot } as Database,
        databaseUrl: undefined,
        secrets: TEST_SECRETS,
      });
      expect([made.schema, made.schemaName]).toEqual([16, "0015_secret_checks"]);
      const target = path.join(scratch, `older-restored-${randomBytes(4).toString("hex")}`);
      const ran = await ops({}, "restore", file, "--data-dir", target, "--passphrase-file", passphraseFile);
      expect(ran.stderr).toBe("");
      expect(ran.stdout.split("\n").slice(0, 2)).toEqual([
        `Restored ${file} (schema 16, 0015_secret_checks, taken ${made.taken}) into ${target}.`,
        expect.stringMatching(
          /^Applied 1 newer migration\. Verified: \d+ rows in \d+ tables as in the manifest, the secrets' check values, 0 transfers balanced and every balance the sum of its entries\.$/u,
        ),
      ]);
    } finally {
      await client.close().catch(() => {});
    }
  }, 120_000);
});

/** Restores `backupFile` into a fresh folder: what it said, and whether the folder was made. */
const restoreInto = async (backupFile: string, ...key: string[]) => {
  const dataDir = path.join(scratch, `refused-${randomBytes(4).toString("hex")}`);
  const ran = await ops({}, "restore", backupFile, "--data-dir", dataDir, ...key);
  return { ...ran, written: existsSync(dataDir) };
};

describe("restore refuses bad input with one sentence and writes nothing", () => {
  let source: Place;
  let file = "";
  let identityFile = "";
  let recipientFile = "";
  let otherIdentityFile = "";
  let holder: Sender | undefined;
  beforeAll(async () => {
    source = await freshPlace("pglite", scratch);
    [holder] = await seeded(source, 1);
    file = path.join(scratch, "good.ckb");
    const made = await ops(where(source), "backup", file, "--passphrase-file", passphraseFile);
    if (made.stderr !== "") throw new Error(made.stderr);
    const identity = await generateIdentity();
    identityFile = path.join(scratch, "identity.txt");
    await writeFile(identityFile, `# the drill's key\n${identity}\n`, { mode: 0o600 });
    recipientFile = path.join(scratch, "recipient.ckb");
    const toKey = await ops(
      where(source),
      "backup",
      recipientFile,
      "--recipient",
      await identityToRecipient(identity),
    );
    if (toKey.stderr !== "") throw new Error(toKey.stderr);
    otherIdentityFile = path.join(scratch, "other-identity.txt");
    await writeFile(otherIdentityFile, `${await generateIdentity()}\n`, { mode: 0o600 });
  }, 120_000);
  afterAll(async () => {
    await source.dispose();
  });

  test("a backup to an age recipient restores with the identity, not with another", async () => {
    const wrong = await restoreInto(recipientFile, "--identity-file", otherIdentityFile);
    expect(wrong).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: Cannot decrypt ${recipientFile} with this identity: it is not the one the backup was made with; nothing written.\n`,
      written: false,
    });
    const right = await restoreInto(recipientFile, "--identity-file", identityFile);
    expect([right.code, right.stderr, right.written]).toEqual([0, "", true]);
  }, 120_000);

  test("--check-holder: the holder's phrase decrypts with the right password; a wrong one fails the verification", async () => {
    if (!holder) throw new Error("no holder");
    const { email } = holder;
    /** The good backup restored, checking the holder's phrase with the password in `passwordFile`. */
    const checking = (passwordFile: string) =>
      restoreInto(
        file,
        "--passphrase-file",
        passphraseFile,
        "--check-holder",
        email,
        "--password-file",
        passwordFile,
      );
    const right = path.join(scratch, "holder-password");
    await writeFile(right, `${holder.password}\n`, { mode: 0o600 });
    const ok = await checking(right);
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect(ok.stdout).toContain(`, and the phrase of ${holder.email} decrypts.`);

    const wrong = path.join(scratch, "holder-wrong-password");
    await writeFile(wrong, "not the holder's password\n", { mode: 0o600 });
    const refused = await checking(wrong);
    expect([refused.code, refused.stdout]).toEqual([1, ""]);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: Restored into .+, but it failed verification: The phrase of ${holder.email.replaceAll(".", "\\.")} could not be checked: the password is not that holder's\\. Do not serve from it\\.\n$`,
        "u",
      ),
    );

    const alone = await restoreInto(
      file,
      "--passphrase-file",
      passphraseFile,
      "--check-holder",
      holder.email,
    );
    expect(alone).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: Give --check-holder <e-mail> and --password-file <file> together.\n",
      written: false,
    });
  }, 120_000);

  test("a wrong passphrase", async () => {
    const wrongFile = path.join(scratch, "wrong-passphrase");
    await writeFile(wrongFile, "not the passphrase at all\n");
    expect(await restoreInto(file, "--passphrase-file", wrongFile)).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: Cannot decrypt ${file} with this passphrase: it is not the one the backup was made with; nothing written.\n`,
      written: false,
    });
  });

  test("a truncated file, and files altered in the payload or in the clear header", async () => {
    const whole = await readFile(file);
    const truncated = path.join(scratch, "truncated.ckb");
    await writeFile(truncated, whole.subarray(0, Math.floor(whole.length * 0.7)));
    const altered = path.join(scratch, "altered.ckb");
    const flipped = Buffer.from(whole);
    const at = whole.length - 1000;
    flipped[at] = (flipped[at] ?? 0) ^ 0x01;
    await writeFile(altered, flipped);
    const header = path.join(scratch, "header.ckb");
    await writeFile(
      header,
      Buffer.from(whole.toString("latin1").replace('"schema":17', '"schema":16'), "latin1"),
    );
    for (const damaged of [truncated, altered, header]) {
      expect(await restoreInto(damaged, "--passphrase-file", passphraseFile)).toEqual({
        code: 1,
        stdout: "",
        stderr: `error: ${damaged} is damaged: its checksum does not match (the file was truncated or altered); nothing written.\n`,
        written: false,
      });
    }
    const notOne = path.join(scratch, "not-a-backup.ckb");
    await writeFile(notOne, "hello\n");
    expect((await restoreInto(notOne, "--passphrase-file", passphraseFile)).stderr).toBe(
      `error: ${notOne} is not a Coinkeep backup.\n`,
    );
  });

  test("a backup of a newer schema than the code", async () => {
    const newer = await freshPlace("pglite", scratch);
    try {
      await seeded(newer, 1);
      const database = await newer.open();
      // A migration this code does not know, as a newer Coinkeep would have applied it.
      await database.db.execute(
        sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-the-future', 4102444800000)`,
      );
      await database.close();
      const newerFile = path.join(scratch, "newer.ckb");
      const made = await ops(where(newer), "backup", newerFile, "--passphrase-file", passphraseFile);
      expect(made.stdout).toMatch(/: schema 18 \(newer than this code\),/u);
      expect(await restoreInto(newerFile, "--passphrase-file", passphraseFile)).toEqual({
        code: 1,
        stdout: "",
        stderr: `error: ${newerFile} holds schema version 18, newer than this code's 17 (0016_chain_watch): restore it with the Coinkeep that made it, or a newer one; nothing written.\n`,
        written: false,
      });
    } finally {
      await newer.dispose();
    }
  }, 120_000);

  test("a folder that is not empty", async () => {
    const full = path.join(scratch, "full");
    await mkdir(full);
    await writeFile(path.join(full, "something"), "x");
    const ran = await ops({}, "restore", file, "--data-dir", full, "--passphrase-file", passphraseFile);
    expect([ran.code, ran.stderr]).toEqual([
      1,
      `error: ${full} is not empty: restore into an empty folder.\n`,
    ]);
    expect(await readdir(full)).toEqual(["something"]);
  });

  test.runIf(adminUrl)(
    "a PostgreSQL database that is not empty",
    async () => {
      const pgSource = await freshPlace("postgres", scratch);
      const pgTarget = await freshPlace("postgres", scratch);
      try {
        await seeded(pgSource, 1);
        const pgFile = path.join(scratch, "pg.ckb");
        const made = await ops(where(pgSource), "backup", pgFile, "--passphrase-file", passphraseFile);
        expect(made.stderr).toBe("");
        const database = await pgTarget.open(); // migrates: no longer empty
        await database.close();
        const ran = await ops(
          {},
          "restore",
          pgFile,
          "--data-dir",
          pgTarget.dataDir,
          "--database-url",
          pgTarget.databaseUrl ?? "",
          "--passphrase-file",
          passphraseFile,
        );
        expect([ran.code, ran.stderr]).toEqual([
          1,
          "error: The --database-url database is not empty: restore into an empty database.\n",
        ]);
      } finally {
        await pgSource.dispose();
        await pgTarget.dispose();
      }
    },
    120_000,
  );
});

describe.skipIf(!built)("an interrupted backup leaves no file under its name", () => {
  for (const victim of ["command", "server"] as const) {
    test(`kill -9 of the ${victim} mid-backup (pglite)`, async () => {
      const place = await freshPlace("pglite", scratch);
      let host: HostProcess | undefined;
      try {
        await seeded(place, 1);
        host = await spawnHost({ dataDir: place.dataDir, env: hostEnv(place) });
        await host.ready();
        const file = path.join(scratch, `killed-${victim}.ckb`);
        const command = spawn(
          process.execPath,
          [path.join(root, "server/ops/cli.ts"), "backup", file, "--passphrase-file", passphraseFile],
          {
            cwd: root,
            env: { PATH: process.env.PATH, DATA_DIR: place.dataDir },
            stdio: ["ignore", "ignore", "pipe"],
          },
        );
        let said = "";
        command.stderr?.on("data", (chunk: Buffer) => (said += chunk.toString()));
        const exited = new Promise((resolve) => command.once("exit", resolve));
        // The server is in the backup once the command has reached it (the dump takes seconds).
        await new Promise((r) => setTimeout(r, 1200));
        if (victim === "command") command.kill("SIGKILL");
        else {
          host.child.kill("SIGKILL");
          await host.exited;
        }
        await exited;
        await new Promise((r) => setTimeout(r, victim === "command" ? 4000 : 200));
        if (victim === "server") {
          // The server died before it renamed anything: no file, at most its temporary one.
          expect(existsSync(file)).toBe(false);
          expect(said).toBe(
            "error: The server stopped before it answered: backup may not have been carried out; check before running it again.\n",
          );
        } else if (existsSync(file)) {
          // The server carried on without the command: a whole file, which restores.
          const dataDir = path.join(scratch, `after-kill-${randomBytes(4).toString("hex")}`);
          const ran = await ops(
            {},
            "restore",
            file,
            "--data-dir",
            dataDir,
            "--passphrase-file",
            passphraseFile,
          );
          expect([ran.code, ran.stderr]).toEqual([0, ""]);
        }
        expect((await readdir(scratch)).filter((f) => f === path.basename(file))).toHaveLength(
          existsSync(file) ? 1 : 0,
        );
      } finally {
        await host?.stop();
        await place.dispose();
      }
    }, 120_000);
  }

  test.runIf(adminUrl)(
    "kill -9 of the command mid-backup (postgres: the command itself does the work)",
    async () => {
      const place = await freshPlace("postgres", scratch);
      try {
        await seeded(place, 1);
        for (const after of [300, 800, 1300]) {
          const file = path.join(scratch, `killed-postgres-${after}.ckb`);
          const command = spawn(
            process.execPath,
            [path.join(root, "server/ops/cli.ts"), "backup", file, "--passphrase-file", passphraseFile],
            { cwd: root, env: { PATH: process.env.PATH, ...where(place) }, stdio: "ignore" },
          );
          const exited = new Promise((resolve) => command.once("exit", resolve));
          await new Promise((r) => setTimeout(r, after));
          command.kill("SIGKILL");
          await exited;
          // Killed before its rename (the passphrase's scrypt alone takes seconds): no file by that name.
          expect(existsSync(file)).toBe(false);
        }
      } finally {
        await place.dispose();
      }
    },
    120_000,
  );
});
