// npm run bench: builds the app (package.json), then for each database in
// BENCH_DB seeds a fresh one, starts the production server on it and runs the
// sections; then prints a report, writes bench-results/<date>.json and, with
// BENCH_WRITE=1, the generated block of BENCHMARKS.md. BENCHMARKS.md says what
// each section measures and how; the settings are read below.
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { runCapacity, type CapacitySettings } from "./capacity.ts";
import {
  cleanupAll,
  log,
  machine,
  onCleanup,
  root,
  startServer,
  throwAwayDatabase,
  type ServerHandle,
} from "./lib.ts";
import { measureHello, runPages, type PageSettings } from "./pages.ts";
import {
  renderMarkdown,
  writeBenchmarksBlock,
  type BenchResults,
  type DatabaseRun,
  type WeightReport,
} from "./report.ts";
import {
  messageRaiser,
  PASSWORD,
  seedCapacityAccounts,
  seedPageUser,
  seedSenders,
  type SeededUser,
  type Sender,
} from "./seed.ts";
import { mintSessions, signInThroughForm, type MintOptions } from "./sessions.ts";
import { runSends, type SendSettings } from "./sends.ts";
import { runHosts } from "./hosts.ts";
import { runChain, type ChainSettings } from "./chain.ts";
import { startSmtpSink } from "../../tests/support/smtp-sink.ts";

// ---------------------------------------------------------------------------
// Settings (environment).
// ---------------------------------------------------------------------------

function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
}

function listEnv(name: string, fallback: string): string[] {
  return (process.env[name] || fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

type Section = "capacity" | "pages" | "sends" | "weight" | "hosts" | "chain";
const SECTIONS: Section[] = ["capacity", "pages", "sends", "weight", "hosts", "chain"];
const databases = listEnv("BENCH_DB", "postgres,pglite");
for (const d of databases) if (d !== "postgres" && d !== "pglite") throw new Error(`BENCH_DB: unknown ${d}`);
const only = listEnv("BENCH_ONLY", SECTIONS.join(","));
for (const s of only) if (!SECTIONS.includes(s as Section)) throw new Error(`BENCH_ONLY: unknown ${s}`);
const wants = (name: Section) => only.includes(name);
/** The sections measured on each database's seeded server (hosts and chain make databases of their own). */
const perDatabase = (["capacity", "pages", "sends", "weight"] as const).some(wants);

const capacitySettings: CapacitySettings = {
  levels: listEnv("BENCH_CAPACITY_LEVELS", "500,1000,2000,4000,8000,10000,12000,16000,20000").map(Number),
  warmupSeconds: numberEnv("BENCH_CAPACITY_WARMUP", 3),
  seconds: numberEnv("BENCH_CAPACITY_SECONDS", 20),
  bisectSteps: numberEnv("BENCH_CAPACITY_BISECT", 2),
  p99LimitMs: numberEnv("BENCH_CAPACITY_P99_MS", 200),
  sockets: numberEnv("BENCH_CAPACITY_SOCKETS", 256),
  maxOutstanding: numberEnv("BENCH_CAPACITY_MAX_OUTSTANDING", 2000),
  pauseSeconds: numberEnv("BENCH_CAPACITY_PAUSE", 3),
  streams: (process.env.BENCH_CAPACITY_STREAMS ?? "1") !== "0",
  eventEverySeconds: numberEnv("BENCH_CAPACITY_EVENT_EVERY", 3),
  eventLateMs: numberEnv("BENCH_CAPACITY_EVENT_LATE_MS", 2000),
};
/** Accounts the capacity users share (each user has its own session); see BENCHMARKS.md. */
const capacityAccounts = numberEnv("BENCH_CAPACITY_ACCOUNTS", 200);
/** How many capacity users sign in through the real login form (the rest: the app's own session code). */
const formSignIns = numberEnv("BENCH_FORM_SIGNINS", 20);
const pageSettings: PageSettings = {
  connections: numberEnv("BENCH_PAGES_CONNECTIONS", 50),
  seconds: numberEnv("BENCH_PAGES_SECONDS", 8),
  warmupSeconds: numberEnv("BENCH_PAGES_WARMUP", 1),
  helloPort: numberEnv("BENCH_HELLO_PORT", 3299),
};
const sendSettings: SendSettings = {
  clients: numberEnv("BENCH_SENDS_CLIENTS", 32),
  seconds: numberEnv("BENCH_SENDS_SECONDS", 15),
  pgbenchScale: numberEnv("BENCH_PGBENCH_SCALE", 10),
};
const senderCount = numberEnv("BENCH_SENDERS", 200);
const pageTransactions = numberEnv("BENCH_PAGE_TRANSACTIONS", 1000);
const port = numberEnv("BENCH_PORT", 3290);
// The chain section (issue 30, scripts/bench/chain.ts).
const chainSettings: ChainSettings = {
  wallets: numberEnv("BENCH_CHAIN_WALLETS", 100_000),
  blocks: numberEnv("BENCH_CHAIN_BLOCKS", 30),
  perBlock: numberEnv("BENCH_CHAIN_PER_BLOCK", 1000),
  ours: numberEnv("BENCH_CHAIN_OURS", 0.1),
  blockEverySeconds: numberEnv("BENCH_CHAIN_BLOCK_EVERY", 2),
  levels: {
    postgres: listEnv("BENCH_CHAIN_LEVELS", "2000,4000,8000").map(Number),
    pglite: listEnv("BENCH_CHAIN_PGLITE_LEVELS", "1000,2000,4000").map(Number),
  },
  capacity: capacitySettings,
  accounts: numberEnv("BENCH_CAPACITY_ACCOUNTS", 200),
  withCapacity: (process.env.BENCH_CHAIN_CAPACITY ?? "1") !== "0",
  fallbackBatch: numberEnv("BENCH_CHAIN_FALLBACK_BATCH", 10),
  profile: process.env.BENCH_CHAIN_PROFILE === "1",
  ports: { server: port + 20, node: port + 21, metrics: port + 22 },
};
// BENCH_SMTP=sink (issue 28): the server mails through a real SMTP server in this process and
// every seeded holder's address is verified, so sends and sign-ins queue real mails; compare a
// run with it against one without (BENCH_SMTP=off, the default) to see what the sender costs.
const smtpMode = process.env.BENCH_SMTP ?? "off";
if (smtpMode !== "off" && smtpMode !== "sink") throw new Error("BENCH_SMTP: off or sink");
const sink = smtpMode === "sink" ? await startSmtpSink() : undefined;
if (sink) onCleanup(() => sink.close());
const write = process.env.BENCH_WRITE === "1" || process.env.BENCH_WRITE === "true";

// ---------------------------------------------------------------------------
// Results.
// ---------------------------------------------------------------------------

const started = performance.now();
const results: BenchResults = {
  date: new Date().toISOString(),
  command: [
    ...Object.entries(process.env)
      .filter(([k]) => k.startsWith("BENCH_"))
      .map(([k, v]) => `${k}=${v ?? ""}`),
    "npm run bench",
  ].join(" "),
  machine: machine(),
  loadAverageAtStart: os.loadavg().map((n) => Math.round(n * 100) / 100),
  settings: {
    databases,
    sections: only,
    capacity: { ...capacitySettings, accounts: capacityAccounts, formSignIns },
    pages: pageSettings,
    sends: { ...sendSettings, senders: senderCount },
    ...(wants("chain") ? { chain: { ...chainSettings, capacity: undefined } } : {}),
    pageTransactions,
    smtp: smtpMode,
  },
  runs: [],
};

async function section<T>(name: string, body: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await body();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`${name} failed: ${message}`);
    process.exitCode = 1;
    return { error: message };
  }
}

/** The weight and Lighthouse modules are written separately; until they exist, "not available". */
async function optionalModule<T>(file: string, name: string): Promise<T | undefined> {
  try {
    const loaded = (await import(new URL(file, import.meta.url).href)) as Record<string, unknown>;
    return typeof loaded[name] === "function" ? (loaded[name] as T) : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw error;
  }
}

type MeasureWeight = (
  root: string,
) => Promise<Array<{ route: string; jsGzipBytes: number; cssGzipBytes: number }>>;
type RunLighthouse = (
  baseURL: string,
  pages: Array<{ name: string; path: string; cookie?: string }>,
) => Promise<Array<{ name: string; performance: number; accessibility: number }>>;

async function measureWeightAndLighthouse(base: string, cookie: string): Promise<WeightReport> {
  const report: WeightReport = { perRoute: "not available", lighthouse: "not available" };
  const measureWeight = await optionalModule<MeasureWeight>("./weight.ts", "measureWeight");
  if (measureWeight) {
    try {
      report.perRoute = await measureWeight(root);
      log(
        `weight: ${report.perRoute.map((r) => `${r.route} JS ${(r.jsGzipBytes / 1024).toFixed(1)} KB`).join(", ")}`,
      );
    } catch (error) {
      report.perRoute = `failed: ${error instanceof Error ? error.message : String(error)}`;
      process.exitCode = 1;
    }
  } else log("weight: scripts/bench/weight.ts not available");
  const runLighthouse = await optionalModule<RunLighthouse>("./lighthouse.ts", "runLighthouse");
  if (runLighthouse) {
    try {
      report.lighthouse = await runLighthouse(base, [
        { name: "landing", path: "/" },
        { name: "login", path: "/login" },
        { name: "home", path: "/home", cookie },
        { name: "wallet BTC", path: "/wallet/btc", cookie },
      ]);
      log(
        `lighthouse: ${report.lighthouse.map((r) => `${r.name} ${r.performance}/${r.accessibility}`).join(", ")}`,
      );
    } catch (error) {
      report.lighthouse = `failed: ${error instanceof Error ? error.message : String(error)}`;
      process.exitCode = 1;
    }
  } else log("lighthouse: scripts/bench/lighthouse.ts not available");
  return report;
}

// ---------------------------------------------------------------------------
// One database: seed, serve, measure.
// ---------------------------------------------------------------------------

async function benchDatabase(kind: "postgres" | "pglite", suffix: string): Promise<DatabaseRun> {
  log(`=== ${kind} ===`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `coinkeep-bench-${kind}-`));
  onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  const databaseUrl = kind === "postgres" ? await throwAwayDatabase(`coinkeep_bench_${suffix}`) : undefined;
  const sessionSecret = randomBytes(32).toString("base64url");
  const backendSecret = randomBytes(32).toString("base64url");
  // PostgreSQL: one server process per core (WORKERS, record 018); PGlite serves one process.
  const workers = kind === "postgres" ? Number(process.env.BENCH_WORKERS ?? os.cpus().length) : 1;
  const serverOptions = {
    port,
    dataDir,
    databaseUrl,
    sessionSecret,
    backendSecret,
    workers,
    // Each server process keeps its own figures for the capacity levels (issue 29).
    benchStats: true,
    env: sink ? { SMTP_URL: sink.url, PUBLIC_URL: `http://127.0.0.1:${port}` } : {},
  };
  const mintOptions: MintOptions = {
    sessionSecret,
    cookieSecure: true, // NODE_ENV=production
    idleMs: 30 * 60_000,
    maxMs: 12 * 3_600_000,
  };
  const doCapacity = wants("capacity");
  const doSends = wants("sends") && kind === "postgres";

  // --- Seed, through the domain functions.
  const seedStart = performance.now();
  let database = await openDatabase({ databaseUrl, dataDir });
  const ctx = { db: database.db, keys: deriveServerKeys(backendSecret) };
  const pageUser = await seedPageUser(ctx, "page@bench.example", pageTransactions);
  log(`seeded the page user: 9 wallets, ${pageTransactions} transactions`);
  let accounts: SeededUser[] = [];
  let senders: Sender[] = [];
  if (doCapacity) {
    accounts = await seedCapacityAccounts(ctx, capacityAccounts, 6);
    log(`seeded ${accounts.length} capacity accounts`);
  }
  if (doSends) {
    senders = await seedSenders(ctx, senderCount, 6);
    log(`seeded ${senders.length} senders`);
  }
  // Capacity users 0..formSignIns-1 sign in through the form once the server is up; the rest
  // get sessions from the app's own code, minted here before the server holds the database.
  const minted: string[] = [];
  const accountOf = (user: number) => accounts[user % accounts.length] as SeededUser;
  const mintUpTo = async (users: number) => {
    const from = formSignIns + minted.length;
    const wanted = Array.from({ length: Math.max(0, users - from) }, (_, i) => accountOf(from + i));
    if (wanted.length === 0) return;
    const t = performance.now();
    minted.push(...(await mintSessions(database.db, mintOptions, wanted, kind === "postgres" ? 8 : 1)));
    log(`minted ${wanted.length} sessions in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  if (doCapacity) await mintUpTo(capacitySettings.levels.filter((n) => n <= 2000).at(-1) ?? 0);
  if (sink) {
    await database.db.execute(sql`UPDATE users SET email_verified_at = now()`);
    log("every seeded address verified: the server mails through the bench's SMTP server");
  }
  const seedSeconds = Math.round((performance.now() - seedStart) / 100) / 10;
  await database.close();

  const dbRun: DatabaseRun = { database: kind, seedSeconds };
  let server: ServerHandle = await startServer(serverOptions);
  try {
    log(`server up on ${server.base} (${kind})`);
    const pageCookie = await signInThroughForm(server.base, pageUser.email, PASSWORD);

    if (doCapacity) {
      const formCookies: string[] = [];
      for (let user = 0; user < formSignIns; user++) {
        formCookies.push(await signInThroughForm(server.base, accountOf(user).email, PASSWORD));
      }
      let delivered = 0;
      // The capacity figure is per 1,000 hello-world req/s of the same run (machines differ ~3×).
      dbRun.capacityHello = await section("capacity hello world", () => measureHello(pageSettings));
      // A change the users' pages are told about: a message to one account, made as operators
      // make it (PostgreSQL: the domain function on its own connection, as `npm run ops` does;
      // PGlite: through the running server's ops socket).
      const changes = kind === "postgres" ? await openDatabase({ databaseUrl, dataDir }) : undefined;
      onCleanup(() => changes?.close());
      const raiseEvent = messageRaiser(accounts, changes ? { db: changes.db } : { dataDir });
      dbRun.capacity = await section("capacity", () =>
        runCapacity(
          {
            base: server.base,
            accounts: accounts.length,
            raiseEvent,
            serverPid: () => server.pid,
            serverStats: (reset) => server.stats(reset),
            async ensureSessions(users) {
              if (formSignIns + minted.length < users) {
                if (kind === "pglite") {
                  // The embedded database is one process's: stop the server to add sessions.
                  await server.stop();
                  database = await openDatabase({ dataDir });
                  await mintUpTo(users);
                  await database.close();
                  server = await startServer(serverOptions);
                } else {
                  database = await openDatabase({ databaseUrl, dataDir });
                  await mintUpTo(users);
                  await database.close();
                }
              }
              const all = [...formCookies, ...minted];
              // The minted sessions must work exactly as signed-in ones: check a sample.
              for (const cookie of all.slice(delivered, users).filter((_, i) => i % 97 === 0)) {
                const answer = await fetch(`${server.base}/unread-count.data?_routes=routes%2Funread-count`, {
                  headers: { cookie },
                  redirect: "manual",
                });
                await answer.arrayBuffer();
                if (answer.status !== 200) throw new Error(`a session was refused (${answer.status})`);
              }
              const added = all.slice(delivered, users);
              delivered += added.length;
              return added;
            },
          },
          capacitySettings,
        ),
      );
    }

    if (wants("pages")) {
      dbRun.pages = await section("pages", () =>
        runPages(
          server.base,
          [
            { name: "landing", path: "/" },
            { name: "login", path: "/login" },
            { name: "home", path: "/home", cookie: pageCookie },
            { name: "wallet BTC", path: "/wallet/btc", cookie: pageCookie },
          ],
          pageSettings,
        ),
      );
    }

    if (doSends && databaseUrl) {
      const pgbenchUrl = await throwAwayDatabase(`coinkeep_pgbench_${suffix}`);
      dbRun.sends = await section("sends", () =>
        runSends(server.base, databaseUrl, pgbenchUrl, senders, sendSettings),
      );
    }

    if (wants("weight") && !results.weight) {
      results.weight = await measureWeightAndLighthouse(server.base, pageCookie);
    }
  } finally {
    await server.stop();
  }
  return dbRun;
}

// ---------------------------------------------------------------------------
// Main.
// ---------------------------------------------------------------------------

try {
  const suffix = randomBytes(4).toString("hex");
  if (databases.includes("postgres")) {
    const { admin } = await import("./lib.ts");
    const [version] = await admin<{ server_version: string }>("show server_version");
    results.machine.postgres = version?.server_version;
  }
  for (const kind of perDatabase ? databases : []) {
    try {
      results.runs.push(await benchDatabase(kind as "postgres" | "pglite", suffix));
    } catch (error) {
      // One database failing (say, its server would not start) does not lose the others' figures.
      const message = error instanceof Error ? error.message : String(error);
      log(`${kind} failed: ${message}`);
      process.exitCode = 1;
      results.runs.push({
        database: kind as "postgres" | "pglite",
        seedSeconds: 0,
        error: message.slice(0, 500),
      });
    }
  }
  // Two hosts behind nginx beside one host, on PostgreSQL (scripts/bench/hosts.ts, record 051).
  if (wants("hosts") && databases.includes("postgres")) {
    results.hosts = await section("hosts", () =>
      runHosts({
        capacity: {
          ...capacitySettings,
          levels: listEnv("BENCH_HOSTS_LEVELS", capacitySettings.levels.join(",")).map(Number),
        },
        accounts: capacityAccounts,
        workersPerHost: numberEnv("BENCH_HOSTS_WORKERS", 2),
        ports: { first: port + 10, second: port + 11, nginx: port + 12 },
      }),
    );
  }
  // The chain watcher beside 100,000 issued addresses, and the capacity beside it (issue 30).
  if (wants("chain")) {
    results.chain = await section("chain", () =>
      runChain(databases as Array<"postgres" | "pglite">, {
        settings: chainSettings,
        hello: () => measureHello(pageSettings),
      }),
    );
  }
  if (wants("weight") && !results.weight) {
    // No server run above (BENCH_DB empty): nothing to point Lighthouse at.
    results.weight = { perRoute: "not measured", lighthouse: "not measured" };
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  if (sink) {
    results.mailsReceived = sink.mails.length;
    log(`the bench's SMTP server received ${sink.mails.length} mails`);
  }
  await cleanupAll();
}

results.totalSeconds = Math.round((performance.now() - started) / 1000);
const markdown = renderMarkdown(results);
console.log(`\n${markdown}`);
const outDir = path.join(root, "bench-results");
mkdirSync(outDir, { recursive: true });
const outFile = path.join(outDir, `${results.date.replaceAll(":", "-").slice(0, 19)}.json`);
writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
log(`results written to ${path.relative(root, outFile)}`);
if (write) {
  const file = path.join(root, "BENCHMARKS.md");
  // Formatted as `npm run lint` expects it (prettier aligns the tables).
  const prettier = await import("prettier");
  const options = (await prettier.resolveConfig(file)) ?? {};
  const text = writeBenchmarksBlock(readFileSync(file, "utf8"), markdown);
  writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
  log("BENCHMARKS.md updated");
}
