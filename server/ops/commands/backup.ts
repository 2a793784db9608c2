// backup and restore (issue 32, record 055): the work is in server/ops/backup.ts. backup runs
// where the database is open (in the server, through the ops socket, for the embedded one);
// restore runs alone in the operator's process and makes a new database.
import { defineCommand, OpsError, readTextFile, type OpsCommand } from "./define.ts";

/** An age recipient as age spells one (bech32, lower case). */
const RECIPIENT = /^age1[02-9ac-hj-np-z]{20,}$/u;
const MAX_KEY_FILE_BYTES = 64 * 1024;
const MIN_PASSPHRASE = 12;

/** A small file of a key, passphrase or password: its text, or why it cannot be read. */
const keyFileText = (file: string) =>
  readTextFile(
    file,
    MAX_KEY_FILE_BYTES,
    (error) => `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
  );

/** A file's one line (a final line break dropped): undefined when it holds more lines than one. */
const oneLine = (text: string) => {
  const line = text.replace(/\r?\n$/u, "");
  return line.includes("\n") ? undefined : line;
};

async function passphraseFrom(file: string): Promise<string> {
  const passphrase = oneLine(await keyFileText(file));
  if (passphrase === undefined || passphrase.length < MIN_PASSPHRASE) {
    throw new OpsError(
      `${file} must hold one passphrase of at least ${MIN_PASSPHRASE} characters on one line.`,
    );
  }
  return passphrase;
}

const sizeText = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;

export const BACKUP_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "backup",
    summary: [
      ["backup <file> --recipient <age1…>", "an encrypted backup of the database and its secrets"],
      ["    --passphrase-file <file>", "… encrypted with a passphrase instead"],
    ],
    usage: `Usage: node server/ops/cli.ts backup <file> (--recipient <age1…> | --passphrase-file <file>) [--json]

Writes one file holding a consistent snapshot of the database (the embedded
one through the running server, or DATABASE_URL's with pg_dump) and the two
secrets (BACKEND_SECRET and SESSION_SECRET), encrypted with age to the given
recipient (make a key pair with "backup-key" or age-keygen; keep the identity off the
backups) or with the passphrase in the file (its first line). The server goes
on serving meanwhile. The file is written under a temporary name in the same
folder and renamed when complete: an interrupted backup leaves no file under
the given name. Prints the schema version, the moment, the size, the time it
took and the file's SHA-256 (sha256sum prints the same). Restore it with
"restore". Changes nothing.`,
    options: { recipient: { type: "string" }, "passphrase-file": { type: "string" } },
    changes: false,
    arguments: 1,
    files: [0],
    fileOptions: ["passphrase-file"],
    check(args, options) {
      const [file = ""] = args;
      if (file === "") throw new OpsError("Name the backup file to write.");
      const { recipient } = options;
      const passphraseFile = options["passphrase-file"];
      if ((recipient === undefined) === (passphraseFile === undefined)) {
        throw new OpsError("Give one of --recipient <age1…> or --passphrase-file <file>.");
      }
      if (recipient !== undefined && !RECIPIENT.test(recipient)) {
        throw new OpsError("--recipient must be an age recipient (age1…, as age-keygen prints it).");
      }
      return { file, recipient, passphraseFile };
    },
    async run(ctx, { file, recipient, passphraseFile }) {
      if (ctx.config.backendUrl) {
        throw new OpsError("backup runs where the backend runs (this process has BACKEND_URL set).");
      }
      const key =
        recipient === undefined ? { passphrase: await passphraseFrom(passphraseFile ?? "") } : { recipient };
      const { backup } = await import("../backup.ts");
      return backup({
        file,
        key,
        database: ctx.database,
        databaseUrl: ctx.config.databaseUrl,
        secrets: { BACKEND_SECRET: ctx.config.backendSecret, SESSION_SECRET: ctx.config.sessionSecret },
      });
    },
    text: (r) =>
      [
        `Backed up to ${r.file}: schema ${r.schema} (${r.schemaName}), taken ${r.taken}, ${r.rows} rows.`,
        `Size ${sizeText(r.bytes)} (${r.bytes} bytes), took ${r.seconds.toFixed(2)} s.`,
        `SHA-256 ${r.sha256}`,
      ].join("\n"),
    json: (r) => r,
  }),

  defineCommand({
    name: "restore",
    summary: [
      ["restore <file> --data-dir <empty>", "restore a backup, apply newer migrations, verify"],
      ["    --database-url <url>", "… into an empty PostgreSQL database (secrets in --data-dir)"],
    ],
    usage: `Usage: node server/ops/cli.ts restore <file> --data-dir <empty folder> [--database-url <url>]
         (--identity-file <file> | --passphrase-file <file>)
         [--check-holder <e-mail> --password-file <file>] [--json]

Decrypts a backup (with the age identity in the file, as age-keygen wrote it,
or the passphrase in the file), restores it into an empty folder (an embedded
database's backup) or into an empty PostgreSQL database (--database-url; the
secrets then go into --data-dir, to set as BACKEND_SECRET and SESSION_SECRET or
to use as that host's DATA_DIR), applies this code's newer migrations, and then
verifies before it says done: every table's row count equals the backup's
manifest, the secrets match the database's check values, every transfer is
balanced, every wallet balance is the sum of its entries, and what is held for
pending sends is what the pending account holds; with --check-holder, that
holder's phrase decrypts with the restored secret and the password in the file
(keep a test account of your own for this). A wrong key, a damaged file,
a backup of a newer schema than this code and a target that is not empty are
refused before anything is written. Runs alone: no server is involved.`,
    options: {
      "data-dir": { type: "string" },
      "database-url": { type: "string" },
      "identity-file": { type: "string" },
      "passphrase-file": { type: "string" },
      "check-holder": { type: "string" },
      "password-file": { type: "string" },
    },
    changes: false,
    alone: true,
    arguments: 1,
    files: [0],
    check(args, options) {
      const [file = ""] = args;
      if (file === "") throw new OpsError("Name the backup file to restore.");
      const checkHolder = options["check-holder"];
      const passwordFile = options["password-file"];
      if ((checkHolder === undefined) !== (passwordFile === undefined)) {
        throw new OpsError("Give --check-holder <e-mail> and --password-file <file> together.");
      }
      const dataDir = options["data-dir"];
      if (dataDir === undefined || dataDir === "") {
        throw new OpsError(
          "Give --data-dir <empty folder>: the restored database (or, with --database-url, its secrets) goes there.",
        );
      }
      const identityFile = options["identity-file"];
      const passphraseFile = options["passphrase-file"];
      if ((identityFile === undefined) === (passphraseFile === undefined)) {
        throw new OpsError("Give one of --identity-file <file> or --passphrase-file <file>.");
      }
      const databaseUrl = options["database-url"];
      if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//u.test(databaseUrl)) {
        throw new OpsError("--database-url must be a postgres:// URL.");
      }
      return { file, dataDir, databaseUrl, identityFile, passphraseFile, checkHolder, passwordFile };
    },
    async run(_ctx, { file, dataDir, databaseUrl, identityFile, passphraseFile, checkHolder, passwordFile }) {
      let holder: { email: string; password: string } | undefined;
      if (checkHolder !== undefined && passwordFile !== undefined) {
        const password = oneLine(await keyFileText(passwordFile));
        if (password === undefined || password === "") {
          throw new OpsError(`${passwordFile} must hold the holder's password on one line.`);
        }
        holder = { email: checkHolder, password };
      }
      let key: { identities: string[] } | { passphrase: string };
      if (identityFile === undefined) key = { passphrase: await passphraseFrom(passphraseFile ?? "") };
      else {
        const text = await keyFileText(identityFile);
        const identities = text
          .split("\n")
          .map((l) => l.trim())
          .filter((l) => l.startsWith("AGE-SECRET-KEY-"));
        if (identities.length === 0)
          throw new OpsError(`${identityFile} holds no age identity (AGE-SECRET-KEY-1…).`);
        key = { identities };
      }
      const { restore } = await import("../backup.ts");
      return restore({ file, key, dataDir, databaseUrl, holder });
    },
    text: (r) =>
      [
        `Restored ${r.file} (schema ${r.schema}, ${r.schemaName}, taken ${r.taken}) into ${r.target}.`,
        `Applied ${r.applied} newer migration${r.applied === 1 ? "" : "s"}. Verified: ${r.rows} rows in ${r.tables} tables as in the manifest, the secrets' check values, ${r.transfers} transfers balanced and every balance the sum of its entries${r.holderChecked ? `, and the phrase of ${r.holderChecked} decrypts` : ""}.`,
        `Took ${r.seconds.toFixed(2)} s.`,
      ].join("\n"),
    json: (r) => r,
  }),

  defineCommand({
    name: "backup-key",
    summary: [["backup-key <identity file>", "make an age key pair for backups; prints the recipient"]],
    usage: `Usage: node server/ops/cli.ts backup-key <identity file> [--json]

Makes a new age key pair: writes the identity (the secret half, AGE-SECRET-KEY-1…)
into the file, which must not exist yet (mode 0600), and prints the recipient
(age1…) to give "backup --recipient". Keep the identity away from the host and
from the backups (a password manager, an offline copy): whoever holds it and a
backup holds the database and its secrets. The age-keygen tool makes the same.
Runs alone: no database is involved.`,
    changes: false,
    alone: true,
    arguments: 1,
    files: [0],
    check(args) {
      const [file = ""] = args;
      if (file === "") throw new OpsError("Name the file to write the identity into.");
      return { file };
    },
    async run(_ctx, { file }) {
      const [{ generateIdentity, identityToRecipient }, { open }, path] = await Promise.all([
        import("age-encryption"),
        import("node:fs/promises"),
        import("node:path"),
      ]);
      const identity = await generateIdentity();
      const recipient = await identityToRecipient(identity);
      const where = path.resolve(file);
      let handle;
      try {
        handle = await open(where, "wx", 0o600);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new OpsError(
          code === "EEXIST"
            ? `${where} exists already: name a new file.`
            : `Cannot write ${where}: ${code ?? String(error)}.`,
        );
      }
      try {
        await handle.writeFile(
          `# created: ${new Date().toISOString()}\n# public key: ${recipient}\n${identity}\n`,
        );
        await handle.sync();
      } finally {
        await handle.close();
      }
      return { file: where, recipient };
    },
    text: (r) => `Wrote the identity into ${r.file}.\nRecipient: ${r.recipient}`,
    json: (r) => r,
  }),
];
