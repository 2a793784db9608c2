// Does a send's commit reach the disk before its HTTP answer leaves? (issue 12, hole 9; record 020)
//
//   npm run build && node scripts/durability-trace.ts [pglite|postgres|both] [sends] [--json]
//
// Needs Linux, strace and root (to trace, and to run a throw-away PostgreSQL
// cluster as the postgres user). For each database it seeds one user with a
// funded ETH wallet, starts the production server (`node server/host/host.ts`),
// attaches strace to the server (and, for PostgreSQL, to a throw-away cluster
// of its own on port 4790, started with initdb/pg_ctl as the postgres user),
// makes `sends` sends (default 5) through POST /api/request-transaction, and
// reports, per send, between the server reading the request and writing the
// HTTP answer: the fsync-family calls and on which files, the writes to WAL
// files, and whether a WAL sync happened before the database answered the
// server. Nothing is changed on the machine's own PostgreSQL.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { openDatabase } from "../server/backend/db/index.ts";
import { deriveServerKeys } from "../server/backend/domain/crypto.ts";
import { ethAddress, seedEthHolder } from "./eth-holder.ts";
import { built, spawnHost, type HostProcess } from "./host.ts";

const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const json = process.argv.includes("--json");
const which = positional[0] ?? "both";
const sendCount = Number(positional[1] ?? 5);
/** What was measured; printed as one JSON line with --json (tests/backend/durability.test.ts). */
const results: Record<string, unknown> = {};
const say = (...args: unknown[]) => {
  if (!json) console.log(...args);
};
const SERVER_PORT = 4780;
const PG_PORT = 4790;
const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const BACKEND_SECRET = randomBytes(32).toString("hex");
const SYNC_CALLS = ["fsync", "fdatasync", "sync_file_range", "msync", "syncfs", "sync"];

if (!built) {
  console.error("No build: run npm run build first.");
  process.exit(1);
}
if (spawnSync("strace", ["-V"]).status !== 0) {
  console.error("strace is not installed.");
  process.exit(1);
}

/** A user with an ETH wallet holding 10 ETH. */
async function seed(databaseUrl: string | undefined, dataDir: string) {
  const database = await openDatabase({ databaseUrl, dataDir });
  try {
    return await seedEthHolder(
      { db: database.db, keys: deriveServerKeys(BACKEND_SECRET) },
      {
        email: `durability-${randomBytes(4).toString("hex")}@example.com`,
        password: "durability-pw",
        units: 10n * 10n ** 18n,
        externalTxId: `durability-${randomBytes(8).toString("hex")}`,
      },
    );
  } finally {
    await database.close();
  }
}

/** The threads of a process and of its descendants (Linux /proc). */
function tasksOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`).map(Number);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] === String(pid)) {
        tasks.push(...tasksOf(Number(entry)));
      }
    } catch {
      // gone meanwhile
    }
  }
  return tasks;
}

async function startStrace(pids: number[], output: string): Promise<ChildProcess> {
  const args = ["-f", "-ttt", "-yy", "-s", "120", "-o", output];
  args.push(
    "-e",
    `trace=${[...SYNC_CALLS, "read", "recvfrom", "write", "writev", "sendto", "pwrite64", "pwritev"].join(",")}`,
  );
  for (const pid of pids) args.push("-p", String(pid));
  const strace = spawn("strace", args, { stdio: ["ignore", "ignore", "pipe"] });
  let attached = 0;
  strace.stderr?.on("data", (chunk: Buffer) => {
    attached += chunk.toString().split("attached").length - 1;
  });
  for (let i = 0; attached < pids.length && i < 100; i++) await sleep(50);
  await sleep(300);
  return strace;
}

async function startServer(env: Record<string, string>, dataDir: string): Promise<HostProcess> {
  const server = await spawnHost({
    port: SERVER_PORT,
    dataDir,
    env: { BACKEND_SECRET, SESSION_SECRET: randomBytes(32).toString("hex"), RATE_LIMITS: "off", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return server.ready({ path: "/api/currencies", timeoutMs: 60_000 });
}

async function sends(person: Awaited<ReturnType<typeof seed>>) {
  for (let i = 0; i < sendCount; i++) {
    const response = await fetch(`http://127.0.0.1:${SERVER_PORT}/api/request-transaction`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body: JSON.stringify({
        platform: "CK",
        email: person.email,
        twelveWords: person.twelveWords,
        amount: "0.001",
        amount_in_usd: "0",
        receiver_wallet_address: ethAddress(),
        wallet_id: person.walletId,
        idempotency_key: randomBytes(16).toString("hex"),
      }),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`send ${i + 1}: HTTP ${response.status}`);
    await sleep(200);
  }
}

interface Line {
  pid: number;
  time: number;
  call: string;
  text: string;
}

function parse(file: string): Line[] {
  const lines: Line[] = [];
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const match = /^(\d+)\s+(\d+\.\d+)\s+(?:<\.\.\. )?(\w+)/u.exec(raw);
    if (match) lines.push({ pid: Number(match[1]), time: Number(match[2]), call: match[3] ?? "", text: raw });
  }
  return lines.toSorted((a, b) => a.time - b.time);
}

const fileOf = (text: string) => /\(\d+<([^>]+)>/u.exec(text)?.[1] ?? "?";
const isWal = (text: string) => fileOf(text).includes("/pg_wal/");

/** One row per send: what happened between the request read and the answer written. */
function analyse(lines: Line[], serverPids: Set<number>) {
  const rows = [];
  for (let i = 0; i < lines.length; i++) {
    const request = lines[i];
    if (!request || !serverPids.has(request.pid) || !/^(read|recvfrom)$/u.test(request.call)) continue;
    if (!request.text.includes("POST /api/request-transaction")) continue;
    const answerIndex = lines.findIndex(
      (l, j) =>
        j > i &&
        serverPids.has(l.pid) &&
        /^(write|writev|sendto)$/u.test(l.call) &&
        l.text.includes('"HTTP/1.1 '),
    );
    const answer = lines[answerIndex];
    if (!answer) continue;
    const between = lines.slice(i + 1, answerIndex);
    const syncs = between.filter((l) => SYNC_CALLS.includes(l.call) && !l.text.includes("resumed>"));
    const walWrites = between.filter(
      (l) => /^(write|writev|pwrite64|pwritev)$/u.test(l.call) && isWal(l.text),
    );
    const walSyncs = syncs.filter((l) => isWal(l.text));
    rows.push({
      status: /HTTP\/1\.1 (\d+)/u.exec(answer.text)?.[1],
      ms: Math.round((answer.time - request.time) * 10000) / 10,
      syncCalls: syncs.length,
      syncs: syncs.map((l) => `${l.call}(${path.basename(fileOf(l.text))})`).join(" "),
      walWrites: walWrites.length,
      walSyncBeforeAnswer: walSyncs.length > 0 && walSyncs.every((l) => l.time < answer.time),
    });
    i = answerIndex;
  }
  return rows;
}

async function stop(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM") {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

async function tracePglite() {
  const work = mkdtempSync(path.join(os.tmpdir(), "coinkeep-durability-"));
  const dataDir = path.join(work, "data");
  let server: HostProcess | undefined;
  let strace: ChildProcess | undefined;
  try {
    const person = await seed(undefined, dataDir);
    server = await startServer({}, dataDir);
    const output = path.join(work, "strace.txt");
    strace = await startStrace(tasksOf(server.child.pid ?? 0), output);
    await sends(person);
    await sleep(300);
    await stop(strace, "SIGINT");
    const rows = analyse(parse(output), new Set(tasksOf(server.child.pid ?? 0)));
    results.pglite = { sends: rows };
    say("\nPGlite (embedded; DATA_DIR on this machine's disk)");
    if (!json) for (const [i, row] of rows.entries()) console.log(`  send ${i + 1}:`, row);
  } finally {
    await stop(strace, "SIGINT");
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function asPostgres(command: string, ...args: string[]) {
  const result = spawnSync("runuser", ["-u", "postgres", "--", path.join(PG_BIN, command), ...args], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
}

async function tracePostgres() {
  const work = mkdtempSync(path.join(os.tmpdir(), "coinkeep-durability-pg-"));
  const pgdata = path.join(work, "pgdata");
  const sockets = path.join(work, "sock");
  let server: HostProcess | undefined;
  let strace: ChildProcess | undefined;
  let started = false;
  try {
    chownSync(work, Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim()), 0);
    asPostgres("initdb", "-D", pgdata, "-A", "trust", "-U", "postgres", "--no-instructions");
    spawnSync("runuser", ["-u", "postgres", "--", "mkdir", sockets]);
    asPostgres(
      "pg_ctl",
      "-D",
      pgdata,
      "-l",
      path.join(work, "postgres.log"),
      "-o",
      `-p ${PG_PORT} -k ${sockets} -c listen_addresses=127.0.0.1`,
      "-w",
      "start",
    );
    started = true;
    const databaseUrl = `postgres://postgres@127.0.0.1:${PG_PORT}/postgres`;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const settings: Record<string, string> = {};
    for (const name of ["fsync", "synchronous_commit", "wal_sync_method", "full_page_writes"]) {
      settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    }
    await client.end();
    const person = await seed(databaseUrl, work);
    const postmaster = Number(readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0]);
    // strace on the cluster first: the server's connections are forked (and traced) after.
    const output = path.join(work, "strace.txt");
    strace = await startStrace(tasksOf(postmaster), output);
    server = await startServer({ DATABASE_URL: databaseUrl }, work);
    await stop(strace, "SIGINT");
    strace = await startStrace([...tasksOf(postmaster), ...tasksOf(server.child.pid ?? 0)], output);
    await sends(person);
    await sleep(300);
    await stop(strace, "SIGINT");
    const rows = analyse(parse(output), new Set(tasksOf(server.child.pid ?? 0)));
    results.postgres = { settings, sends: rows };
    say(`\nPostgreSQL 15, throw-away cluster on port ${PG_PORT}:`, settings);
    if (!json) for (const [i, row] of rows.entries()) console.log(`  send ${i + 1}:`, row);
  } finally {
    await stop(strace, "SIGINT");
    await server?.stop();
    if (started)
      spawnSync("runuser", [
        "-u",
        "postgres",
        "--",
        path.join(PG_BIN, "pg_ctl"),
        "-D",
        pgdata,
        "-m",
        "fast",
        "-w",
        "stop",
      ]);
    rmSync(work, { recursive: true, force: true });
  }
}

if (which === "pglite" || which === "both") await tracePglite();
if (which === "postgres" || which === "both") await tracePostgres();
if (json) console.log(JSON.stringify(results));
