// Backups (issue 32, record 055): one file that holds a consistent snapshot of the database and
// the two secrets, encrypted with age to an operator's recipient or passphrase, and its restore.
//
// The file: a first line "coinkeep-backup 1", a second line of JSON in the clear (the schema
// version, the moment, which database, the SHA-256 of the rest), then the age-encrypted
// payload: a line of JSON (the manifest: the same fields, the row count of every table, the
// secrets) and the database's own dump (PGlite: its gzip tarball of the data folder;
// PostgreSQL: pg_dump's custom format). The clear line lets an operator see what a file is
// without its key; the checksum tells a damaged file from a wrong key; the manifest, being
// encrypted and authenticated, is what restore trusts, and it must repeat the clear fields.
import { createHash, randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { gzip } from "node:zlib";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { Decrypter } from "age-encryption";
import type { Database, RawQuery } from "../backend/db/index.ts";
import { migrationsFolder } from "../backend/db/index.ts";
import { secretCheckValue, type SecretName } from "../backend/db/secret-checks.ts";
import { OpsError } from "./commands/define.ts";

const MAGIC = "coinkeep-backup 1";

/** How the file is encrypted: to an age recipient (age1…), or with a passphrase. */
export type BackupKey = { recipient: string } | { passphrase: string };
/** How it is decrypted: age identities (AGE-SECRET-KEY-1…), or the passphrase. */
export type RestoreKey = { identities: string[] } | { passphrase: string };

/** What the clear line says. */
interface Header {
  /** How many migrations the database had applied, and the last one's name. */
  schema: number;
  schemaName: string;
  taken: string;
  database: "pglite" | "postgres";
  sha256: string;
}

interface Manifest extends Omit<Header, "sha256"> {
  /** Rows per table ("schema.table"), counted in the snapshot itself. */
  counts: Record<string, number>;
  secrets: Record<SecretName, string>;
}

/** The code's migrations, in order (drizzle's journal). */
async function codeMigrations(): Promise<{ when: number; tag: string }[]> {
  const journal = JSON.parse(
    await readFile(path.join(migrationsFolder, "meta", "_journal.json"), "utf8"),
  ) as {
    entries: { when: number; tag: string }[];
  };
  return journal.entries;
}

/** A name quoted as an SQL identifier. */
const ident = (name: unknown) => `"${String(name).replaceAll('"', '""')}"`;

/** A statement for the row count of every table of ours and drizzle's, in one answer. */
async function countRows(query: RawQuery): Promise<Record<string, number>> {
  const tables = await query(
    "SELECT schemaname AS s, tablename AS t FROM pg_tables WHERE schemaname IN ('public', 'drizzle') ORDER BY 1, 2",
  );
  if (tables.length === 0) return {};
  const rows = await query(
    tables
      .map(
        ({ s, t }) =>
          `SELECT '${String(s)}.${String(t).replaceAll("'", "''")}' AS name, count(*)::text AS n FROM ${ident(s)}.${ident(t)}`,
      )
      .join(" UNION ALL "),
  );
  return Object.fromEntries(rows.map((r) => [String(r.name), Number(r.n)]));
}

/** What a backup reads inside its snapshot: the schema version, the counts, the secrets' check values. */
async function readSnapshot(query: RawQuery) {
  const [applied] = await query(
    "SELECT count(*)::int AS n, max(created_at)::text AS last FROM drizzle.__drizzle_migrations",
  );
  const checks = await query("SELECT name, check_value FROM secret_checks");
  return {
    schema: Number(applied?.n ?? 0),
    lastMigration: applied?.last === null || applied?.last === undefined ? null : Number(applied.last),
    counts: await countRows(query),
    checks: new Map(checks.map((r) => [String(r.name), String(r.check_value)])),
  };
}

/** The PostgreSQL connection settings as libpq's variables: nothing of the URL goes on a command line. */
function libpqEnv(databaseUrl: string): { env: NodeJS.ProcessEnv; dbname: string } {
  const url = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE", "PGSERVICE"]) {
    delete env[name];
  }
  if (url.hostname) env.PGHOST = decodeURIComponent(url.hostname.replace(/^\[|\]$/gu, ""));
  if (url.port) env.PGPORT = url.port;
  if (url.username) env.PGUSER = decodeURIComponent(url.username);
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  const host = url.searchParams.get("host");
  if (host) env.PGHOST = host;
  const sslmode = url.searchParams.get("sslmode");
  if (sslmode) env.PGSSLMODE = sslmode;
  const dbname = decodeURIComponent(url.pathname.replace(/^\//u, "")) || "postgres";
  env.PGDATABASE = dbname;
  return { env, dbname };
}

/** Runs pg_dump or pg_restore: its stdout, or an OpsError with the first line it said. */
function runTool(
  tool: "pg_dump" | "pg_restore",
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: Uint8Array,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        new OpsError(
          error.code === "ENOENT"
            ? `${tool} was not found: install PostgreSQL's client programs (Debian: postgresql-client) of the server's version or newer.`
            : `${tool} could not start: ${error.message}.`,
        ),
      ),
    );
    child.stdin.on("error", () => {});
    child.on("close", (code) => {
      if (code === 0) return resolve(Buffer.concat(out));
      const said =
        Buffer.concat(err)
          .toString("utf8")
          .split("\n")
          .find((l) => l.trim() !== "") ?? "";
      reject(
        new OpsError(
          `${tool} failed: ${said.replace(/^\S+: (error: )?/u, "").trim() || `exit code ${code}`}`,
        ),
      );
    });
    child.stdin.end(input ?? Buffer.alloc(0));
  });
}

/**
 * A consistent snapshot: PGlite's tarball taken in one turn with the counts read just before it
 * (Database.snapshot); PostgreSQL's pg_dump run on a snapshot exported by a repeatable-read
 * transaction that reads the counts, so both see the same moment while serving goes on.
 */
async function takeSnapshot(
  database: Database | undefined,
  databaseUrl: string | undefined,
): Promise<{ read: Awaited<ReturnType<typeof readSnapshot>>; dump: Uint8Array; driver: Header["database"] }> {
  if (!databaseUrl) {
    if (!database?.snapshot) throw new OpsError("backup needs the embedded database open in this process.");
    const { read, tarball } = await database.snapshot(readSnapshot);
    // Compressed off the event loop (zlib's threads), after the database's turn has ended.
    return { read, dump: await promisify(gzip)(tarball), driver: "pglite" };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const [exported] = (
      await client.query<{ id: string; version: string }>(
        "SELECT pg_export_snapshot() AS id, current_setting('server_version_num') AS version",
      )
    ).rows;
    if (!exported) throw new OpsError("PostgreSQL exported no snapshot.");
    const read = await readSnapshot(async (text) => (await client.query<Record<string, unknown>>(text)).rows);
    const { env, dbname } = libpqEnv(databaseUrl);
    const dump = await runTool(
      "pg_dump",
      ["--format=custom", "--no-owner", "--no-privileges", `--snapshot=${exported.id}`, `--dbname=${dbname}`],
      env,
    );
    await client.query("COMMIT");
    return { read, dump, driver: "postgres" };
  } finally {
    await client.end().catch(() => {});
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  seconds: number;
  sha256: string;
  schema: number;
  schemaName: string;
  taken: string;
  rows: number;
}

/**
 * Takes a backup into `file`: written under a temporary name in the same folder, synced, then
 * renamed, so an interrupted backup leaves no file under the given name.
 */
export async function backup(opts: {
  file: string;
  key: BackupKey;
  database: Database | undefined;
  databaseUrl: string | undefined;
  secrets: Record<SecretName, string>;
}): Promise<BackupResult> {
  const started = performance.now();
  const file = path.resolve(opts.file);
  const folder = path.dirname(file);
  const folderInfo = await stat(folder).catch(() => undefined);
  if (!folderInfo?.isDirectory()) throw new OpsError(`${folder} is not a folder.`);
  if ((await stat(file).catch(() => undefined))?.isDirectory()) throw new OpsError(`${file} is a folder.`);

  const taken = new Date().toISOString();
  const { read, dump, driver } = await takeSnapshot(opts.database, opts.databaseUrl);
  // The secrets written into the file must be the ones this database was started with.
  for (const [name, value] of Object.entries(opts.secrets) as [SecretName, string][]) {
    if (read.checks.get(name) !== secretCheckValue(name, value)) {
      throw new OpsError(
        `${name} of this process is not the one this database was started with; no backup written.`,
      );
    }
  }
  const migrations = await codeMigrations();
  const known = migrations.findIndex((m) => m.when === read.lastMigration);
  const schemaName = known === -1 ? "newer than this code" : (migrations[known]?.tag ?? "");
  const manifest: Manifest = {
    schema: read.schema,
    schemaName,
    taken,
    database: driver,
    counts: read.counts,
    secrets: opts.secrets,
  };
  const plain = Buffer.concat([Buffer.from(`${JSON.stringify(manifest)}\n`, "utf8"), dump]);
  const payload = await encryptAside(plain, opts.key);
  const header: Header = {
    schema: manifest.schema,
    schemaName,
    taken,
    database: driver,
    sha256: createHash("sha256").update(payload).digest("hex"),
  };
  const whole = Buffer.concat([Buffer.from(`${MAGIC}\n${JSON.stringify(header)}\n`, "utf8"), payload]);

  const temporary = path.join(folder, `.${path.basename(file)}.${randomBytes(6).toString("hex")}.partial`);
  try {
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(whole);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new OpsError(`Cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  // The rename itself is durable once the folder is.
  const dir = await open(folder, "r");
  await dir.sync().catch(() => {});
  await dir.close();
  return {
    file,
    bytes: whole.length,
    seconds: (performance.now() - started) / 1000,
    sha256: createHash("sha256").update(whole).digest("hex"),
    schema: manifest.schema,
    schemaName,
    taken,
    rows: Object.values(read.counts).reduce((a, b) => a + b, 0),
  };
}

/**
 * age encryption in a worker thread: a passphrase's scrypt (work factor 2^18) is 2 s of CPU in
 * JavaScript, and the server doing an embedded database's backup must go on serving meanwhile.
 */
function encryptAside(plain: Uint8Array, key: BackupKey): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./backup-encrypt.ts", import.meta.url), {
      workerData: { plain, key },
    });
    worker.once("message", (payload: Uint8Array) => resolve(payload));
    worker.once("error", (error) =>
      reject(new OpsError(`The backup could not be encrypted: ${error.message}.`)),
    );
    worker.once("exit", (code) => {
      if (code !== 0) reject(new OpsError(`The backup could not be encrypted (exit code ${code}).`));
    });
  });
}

/** Reads and checks a backup file up to its decrypted manifest; nothing is written. */
async function openBackup(file: string, key: RestoreKey): Promise<{ manifest: Manifest; dump: Uint8Array }> {
  let whole: Buffer;
  try {
    whole = await readFile(file);
  } catch (error) {
    throw new OpsError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  const first = whole.indexOf(0x0a);
  const second = first === -1 ? -1 : whole.indexOf(0x0a, first + 1);
  if (first === -1 || whole.subarray(0, first).toString("utf8") !== MAGIC) {
    throw new OpsError(`${file} is not a Coinkeep backup.`);
  }
  const damaged = `${file} is damaged: its checksum does not match (the file was truncated or altered); nothing written.`;
  let header: Header;
  try {
    if (second === -1) throw new Error("no header");
    header = JSON.parse(whole.subarray(first + 1, second).toString("utf8")) as Header;
  } catch {
    throw new OpsError(damaged);
  }
  const payload = whole.subarray(second + 1);
  if (createHash("sha256").update(payload).digest("hex") !== header.sha256) throw new OpsError(damaged);
  const decrypter = new Decrypter();
  if ("passphrase" in key) decrypter.addPassphrase(key.passphrase);
  else for (const identity of key.identities) decrypter.addIdentity(identity);
  let plain: Uint8Array;
  try {
    plain = await decrypter.decrypt(payload);
  } catch {
    throw new OpsError(
      `Cannot decrypt ${file} with this ${"passphrase" in key ? "passphrase" : "identity"}: it is not the one the backup was made with; nothing written.`,
    );
  }
  const end = plain.indexOf(0x0a);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(Buffer.from(plain.subarray(0, end)).toString("utf8")) as Manifest;
  } catch {
    throw new OpsError(damaged);
  }
  if (
    manifest.schema !== header.schema ||
    manifest.taken !== header.taken ||
    manifest.database !== header.database ||
    manifest.schemaName !== header.schemaName
  ) {
    throw new OpsError(damaged);
  }
  return { manifest, dump: plain.subarray(end + 1) };
}

/** A folder that does not exist or holds nothing. */
async function emptyFolder(folder: string): Promise<boolean> {
  try {
    return (await readdir(folder)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw new OpsError(`Cannot read ${folder}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
}

/** A PostgreSQL database with nothing of anyone's in it. */
async function emptyDatabase(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new OpsError(
      `Cannot connect to the --database-url: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  try {
    const [row] = (
      await client.query<{ n: string }>(`
      SELECT count(*)::text AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
      WHERE s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\\_to%'
        AND s.nspname NOT LIKE 'pg\\_temp%'`)
    ).rows;
    return row?.n === "0";
  } finally {
    await client.end().catch(() => {});
  }
}

export interface RestoreResult {
  file: string;
  target: string;
  schema: number;
  schemaName: string;
  taken: string;
  /** Migrations of this code applied after the backup's. */
  applied: number;
  tables: number;
  rows: number;
  transfers: number;
  /** The holder whose phrase was decrypted with the restored secret (--check-holder). */
  holderChecked: string | undefined;
  seconds: number;
}

/**
 * Restores a backup into an empty folder (PGlite) or an empty PostgreSQL database, the secrets
 * into the folder; applies this code's newer migrations; then verifies (row counts, secrets,
 * the ledger) before it answers. A refusal before the first write leaves nothing behind.
 */
export async function restore(opts: {
  file: string;
  key: RestoreKey;
  dataDir: string;
  databaseUrl: string | undefined;
  /** A holder (an operator's own test account) whose phrase must decrypt: e-mail and password. */
  holder?: { email: string; password: string } | undefined;
}): Promise<RestoreResult> {
  const started = performance.now();
  const file = path.resolve(opts.file);
  const dataDir = path.resolve(opts.dataDir);
  const { manifest, dump } = await openBackup(file, opts.key);
  const migrations = await codeMigrations();
  if (manifest.schema > migrations.length || manifest.schemaName === "newer than this code") {
    throw new OpsError(
      `${file} holds schema version ${manifest.schema}, newer than this code's ${migrations.length} (${migrations.at(-1)?.tag ?? ""}): restore it with the Coinkeep that made it, or a newer one; nothing written.`,
    );
  }
  if (manifest.database === "pglite" && opts.databaseUrl) {
    throw new OpsError(`${file} is a backup of an embedded database: restore it with --data-dir alone.`);
  }
  if (manifest.database === "postgres" && !opts.databaseUrl) {
    throw new OpsError(
      `${file} is a backup of a PostgreSQL database: restore it with --database-url and --data-dir (for the secrets).`,
    );
  }
  if (!(await emptyFolder(dataDir)))
    throw new OpsError(`${dataDir} is not empty: restore into an empty folder.`);
  if (opts.databaseUrl && !(await emptyDatabase(opts.databaseUrl))) {
    throw new OpsError("The --database-url database is not empty: restore into an empty database.");
  }

  // From here on, things are written.
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  let counts: Record<string, number>;
  if (manifest.database === "pglite") {
    const { PGlite } = await import("@electric-sql/pglite");
    const pglite = await PGlite.create(path.join(dataDir, "pglite"), {
      loadDataDir: new Blob([Buffer.from(dump)]),
    });
    try {
      counts = await countRows(async (text) => (await pglite.query<Record<string, unknown>>(text)).rows);
    } finally {
      await pglite.close();
    }
  } else {
    const databaseUrl = opts.databaseUrl ?? "";
    const { env, dbname } = libpqEnv(databaseUrl);
    await runTool(
      "pg_restore",
      ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", `--dbname=${dbname}`],
      env,
      dump,
    );
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on("error", () => {});
    await client.connect();
    try {
      counts = await countRows(async (text) => (await client.query<Record<string, unknown>>(text)).rows);
    } finally {
      await client.end().catch(() => {});
    }
  }
  for (const [name, value] of Object.entries(manifest.secrets) as [SecretName, string][]) {
    const where = path.join(dataDir, name === "BACKEND_SECRET" ? "backend-secret" : "session-secret");
    const handle = await open(where, "wx", 0o600);
    await handle.writeFile(`${value}\n`);
    await handle.sync();
    await handle.close();
  }

  // Verification: the counts of the snapshot, then this code's migrations, the secrets, the ledger.
  const problems: string[] = [];
  const names = new Set([...Object.keys(manifest.counts), ...Object.keys(counts)]);
  for (const name of [...names].toSorted()) {
    if (manifest.counts[name] !== counts[name]) {
      problems.push(
        `${name} has ${counts[name] ?? 0} rows, the backup's manifest ${manifest.counts[name] ?? 0}.`,
      );
    }
  }
  const { openDatabase, rowsOf } = await import("../backend/db/index.ts");
  const database = await openDatabase({ databaseUrl: opts.databaseUrl, dataDir });
  let transfers = 0;
  try {
    const { sql } = await import("drizzle-orm");
    const checks = rowsOf<{ name: string; check_value: string }>(
      await database.db.execute(sql`SELECT name, check_value FROM secret_checks`),
    );
    for (const [name, value] of Object.entries(manifest.secrets) as [SecretName, string][]) {
      if (checks.find((c) => c.name === name)?.check_value !== secretCheckValue(name, value)) {
        problems.push(`${name} in the backup does not match the database's check value.`);
      }
    }
    const { checkLedger } = await import("../backend/domain/ledger-checks.ts");
    const ledger = await checkLedger(database.db);
    problems.push(...ledger.problems);
    transfers = ledger.transfers;
    // One phrase, decrypted as a sign-in does: the holder's password and the restored
    // BACKEND_SECRET (record 002). No audit row is written; the words are never shown.
    if (opts.holder) {
      const [{ login }, { deriveServerKeys }] = await Promise.all([
        import("../backend/domain/accounts.ts"),
        import("../backend/domain/crypto.ts"),
      ]);
      const keys = deriveServerKeys(manifest.secrets.BACKEND_SECRET);
      const answer = await login({ db: database.db, keys }, opts.holder.email, opts.holder.password).catch(
        () => undefined,
      );
      if (!answer) {
        problems.push(
          `The phrase of ${opts.holder.email} does not decrypt with the restored BACKEND_SECRET.`,
        );
      } else if (!answer.ok) {
        problems.push(
          `The phrase of ${opts.holder.email} could not be checked: ${answer.reason === "not-found" ? "no such holder in the backup" : "the password is not that holder's"}.`,
        );
      } else if (answer.words.length !== 12) {
        problems.push(
          `The phrase of ${opts.holder.email} decrypted to ${answer.words.length} words, not 12.`,
        );
      }
    }
  } finally {
    await database.close();
  }
  if (problems.length > 0) {
    throw new OpsError(
      `Restored into ${opts.databaseUrl ? "the database" : dataDir}, but it failed verification: ${problems.join(" ")} Do not serve from it.`,
    );
  }
  return {
    file,
    target: opts.databaseUrl ? `the --database-url database (secrets in ${dataDir})` : dataDir,
    schema: manifest.schema,
    schemaName: manifest.schemaName,
    taken: manifest.taken,
    applied: migrations.length - manifest.schema,
    tables: Object.keys(counts).length,
    rows: Object.values(counts).reduce((a, b) => a + b, 0),
    transfers,
    holderChecked: opts.holder?.email,
    seconds: (performance.now() - started) / 1000,
  };
}
