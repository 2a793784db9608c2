// The README's backup figures (issue 32, record 055): on a copy of a data folder (the demo's,
// or any), a real server process; a signed-in page (/home) loaded by a few clients for a while
// without a backup, then for as long again while backups run back to back; the p50 and p99 of
// the page in each, and each backup's time and size; then a restore of the last backup and its
// time. With DATABASE_URL the database is that one (a copy is not made: use a throw-away one).
//
//   node scripts/backup-figures.ts <data folder> <holder e-mail> <password> [seconds] [clients]
//
// Needs the production build (npx react-router build). Prints one JSON object.
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { root, spawnHost } from "./host.ts";

const run = promisify(execFile);
const [from, email, password, secondsText = "10", clientsText = "4"] = process.argv.slice(2);
if (!from || !email || !password) {
  console.error(
    "Usage: node scripts/backup-figures.ts <data folder> <holder e-mail> <password> [seconds] [clients]",
  );
  process.exit(1);
}
const seconds = Number(secondsText);
const clients = Number(clientsText);
const databaseUrl = process.env.DATABASE_URL;

const scratch = await mkdtemp(path.join(tmpdir(), "coinkeep-backup-figures-"));
const dataDir = path.join(scratch, "data");
await cp(from, dataDir, { recursive: true });
const passphraseFile = path.join(scratch, "passphrase");
await writeFile(passphraseFile, "backup figures passphrase, not a secret\n", { mode: 0o600 });
const env = { PATH: process.env.PATH, DATA_DIR: dataDir, DATABASE_URL: databaseUrl };

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
const round = (n: number) => Math.round(n * 10) / 10;

const host = await spawnHost({ dataDir, env: { RATE_LIMITS: "off", DATABASE_URL: databaseUrl } });
try {
  await host.ready();
  const signedIn = await fetch(
    `${host.base}/fast-login?email=${encodeURIComponent(email)}&password=${encodeURIComponent(password)}`,
    { redirect: "manual" },
  );
  await signedIn.arrayBuffer();
  const cookie = signedIn.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");

  /** Loads /home from `clients` clients for `seconds`: the latencies (ms) and any non-200 status. */
  const load = async () => {
    const latencies: number[] = [];
    const bad: number[] = [];
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const started = performance.now();
          const answer = await fetch(`${host.base}/home`, { headers: { cookie }, redirect: "manual" });
          await answer.arrayBuffer();
          latencies.push(performance.now() - started);
          if (answer.status !== 200) bad.push(answer.status);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    return {
      pages: latencies.length,
      p50: round(quantile(latencies, 0.5)),
      p99: round(quantile(latencies, 0.99)),
      max: round(latencies.at(-1) ?? NaN),
      bad: bad.length,
    };
  };

  const without = await load();
  const backups: { ms: number; bytes: number; line: string }[] = [];
  const backingOff = { stop: false };
  let last = "";
  const backingUp = (async () => {
    for (let i = 0; !backingOff.stop; i++) {
      last = path.join(scratch, `figures-${i}.ckb`);
      const started = performance.now();
      const { stdout } = await run(
        process.execPath,
        [path.join(root, "server/ops/cli.ts"), "backup", last, "--passphrase-file", passphraseFile, "--json"],
        { cwd: root, env },
      );
      const result = JSON.parse(stdout) as { bytes: number; seconds: number };
      backups.push({
        ms: round(performance.now() - started),
        bytes: result.bytes,
        line: `${result.seconds.toFixed(2)} s in the ${databaseUrl ? "command" : "server"}`,
      });
    }
  })();
  const during = await load();
  backingOff.stop = true;
  await backingUp;
  await host.stop();

  const restoredDir = path.join(scratch, "restored");
  let restore: unknown;
  if (databaseUrl)
    restore = "not measured here: it needs an empty database (see tests/backend/backup.test.ts)";
  else {
    const started = performance.now();
    const { stdout } = await run(
      process.execPath,
      [
        path.join(root, "server/ops/cli.ts"),
        "restore",
        last,
        "--data-dir",
        restoredDir,
        "--passphrase-file",
        passphraseFile,
        "--json",
      ],
      { cwd: root, env: { PATH: process.env.PATH } },
    );
    const result = JSON.parse(stdout) as { seconds: number; rows: number; transfers: number };
    restore = {
      ms: round(performance.now() - started),
      inCommandSeconds: result.seconds,
      rows: result.rows,
      transfers: result.transfers,
    };
  }
  console.log(
    JSON.stringify(
      { database: databaseUrl ? "postgres" : "pglite", seconds, clients, without, during, backups, restore },
      null,
      2,
    ),
  );
} finally {
  await host.stop().catch(() => {});
  await rm(scratch, { recursive: true, force: true });
}
