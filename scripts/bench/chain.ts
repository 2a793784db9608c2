// Section "chain" (issue 30, record 053): the EVM deposit watcher under the issue's load, per
// database of BENCH_DB, on a fresh database of its own:
//
// 1. Set up (timed apart, not part of any figure): 100,000 issued ETH wallets (users, wallets
//    and their ledger accounts written in bulk SQL, addresses derived from their index), the
//    capacity accounts and sessions (as the hosts section makes them), a Hardhat node
//    (tests/support/evm-node.ts) and BENCH_CHAIN_BLOCKS blocks of BENCH_CHAIN_PER_BLOCK native
//    transfers each, a share (BENCH_CHAIN_OURS) to our issued addresses, the rest to strangers.
// 2. The read: a watcher in this process (createChainWatcher, as the tests drive it, with the
//    server's default confirmations) whose cursor is just before those blocks, stepped until it
//    has read the head. Blocks and transfers per second of its wall time; the time split by
//    wrapping what it is given, without changing what it does: its EvmSource (every RPC call,
//    their answers' checking included) and its database's `transaction` (the step's one
//    write transaction, recordBlocks); the rest is the step's other queries (the cursor, the
//    issued-address lookup) and its own code.
//    The watcher's own batch (BATCH_BLOCKS) is tried first; should its step fail (20 blocks of
//    1,000 transfers come back as one JSON-RPC batch over viem's 10 MiB limit), that is
//    reported and the same blocks are read with BENCH_CHAIN_FALLBACK_BATCH blocks a step.
// 3. Capacity beside it: the node makes a block of the same kind every BENCH_CHAIN_BLOCK_EVERY
//    seconds during both arms; the production server without CHAIN_RPC_ETH, then with it (its
//    cursor first set to the head, as a watcher that had kept up), each through the capacity
//    section's machinery (capacity.ts) at the levels BENCH_CHAIN_LEVELS (stopping at the first
//    failed one, no bisection). The only difference between the arms is the watcher.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import pg from "pg";
import { getAddress, keccak256, toHex } from "viem";
import { BATCH_BLOCKS, createChainWatcher, type StepOutcome } from "../../server/backend/chains/watcher.ts";
import { evmSource, type EvmSource } from "../../server/backend/chains/evm-source.ts";
import { openDatabase, rowsOf, type AppDb, type Database } from "../../server/backend/db/index.ts";
import { listCursors, startCursor } from "../../server/backend/domain/chain-watch.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import type { DepositPolicy } from "../../server/backend/domain/deposits.ts";
import { DEFAULT_CONFIRMATIONS } from "../../server/config.ts";
import { startEvmNode, type EvmNode } from "../../tests/support/evm-node.ts";
import { runCapacity, type CapacityReport, type CapacitySettings } from "./capacity.ts";
import { printProfile } from "./cpu-profile.ts";
import {
  log,
  onCleanup,
  processCpuMs,
  root,
  round,
  startServer,
  throwAwayDatabase,
  type ServerHandle,
} from "./lib.ts";
import type { CannonFigures } from "./pages.ts";
import { messageRaiser, seedCapacityAccounts, type SeededUser } from "./seed.ts";
import { mintSessions } from "./sessions.ts";

export interface ChainSettings {
  /** Issued ETH wallets (BENCH_CHAIN_WALLETS). */
  wallets: number;
  /** Blocks made before the read (BENCH_CHAIN_BLOCKS). */
  blocks: number;
  /** Native transfers per block (BENCH_CHAIN_PER_BLOCK). */
  perBlock: number;
  /** The share of each block's transfers paid to our issued addresses (BENCH_CHAIN_OURS). */
  ours: number;
  /** During the capacity arms, a block every this many seconds (BENCH_CHAIN_BLOCK_EVERY). */
  blockEverySeconds: number;
  /** The capacity levels of each arm, per database (BENCH_CHAIN_LEVELS, BENCH_CHAIN_PGLITE_LEVELS). */
  levels: { postgres: number[]; pglite: number[] };
  /** The capacity section's settings (levels and bisection are this section's). */
  capacity: CapacitySettings;
  /** Accounts the capacity users share. */
  accounts: number;
  /** 0: no capacity arms (the read only). */
  withCapacity: boolean;
  /** Blocks a step reads when the watcher's own batch (BATCH_BLOCKS) fails (BENCH_CHAIN_FALLBACK_BATCH). */
  fallbackBatch: number;
  /** Write a CPU profile of this process over the read (BENCH_CHAIN_PROFILE=1; it slows the read). */
  profile: boolean;
  ports: { server: number; node: number; metrics: number };
}

export interface ChainTarget {
  settings: ChainSettings;
  /** The hello world of the same run (pages.ts measureHello). */
  hello(): Promise<CannonFigures>;
}

interface Made {
  blocks: number;
  transfers: number;
  ours: number;
}

export interface ChainRead {
  /** Blocks a step reads (the watcher's own BATCH_BLOCKS unless that failed). */
  batchBlocks: number;
  blocks: number;
  transfers: number;
  ours: number;
  steps: number;
  seconds: number;
  blocksPerSecond: number;
  transfersPerSecond: number;
  /** What the database holds afterwards: every transfer of ours is one deposit. */
  deposits: { recorded: number; credited: number; pending: number };
  /** Wall seconds: an RPC call in flight; inside the write transaction (recordBlocks); the rest. */
  split: {
    rpc: number;
    record: number;
    other: number;
    byMethod: Record<string, { calls: number; seconds: number }>;
    recordTransactions: number;
    /** Statements sent to PostgreSQL over the read (null on PGlite: not counted). */
    statements: number | null;
  };
  /** The watcher's log lines over the read (one per deposit seen or credited; dropped, as the server's stdout is). */
  logLines: number;
  /** CPU seconds over the read: this process (the watcher, its drivers), the node. */
  cpu: { bench: number; node: number };
  profile?: string;
}

export interface ChainArm {
  name: "watcher off" | "watcher on";
  capacity: CapacityReport | { error: string };
  produced: Made;
  seconds: number;
  nodeCpuSeconds: number;
  /** With the watcher: how it kept up (the server's coinkeep_chain_blocks, every 2 s). */
  watcher?: { blocksRead: number; lagEnd: number; lagMax: number; depositsRecorded: number };
  /** The server's stderr lines about the chain (the watcher's failures), and the last of them. */
  serverSaid?: { lines: number; last: string };
}

export interface ChainRun {
  database: "postgres" | "pglite";
  setup: { wallets: number; seedSeconds: number; generateSeconds: number; made: Made };
  hello: CannonFigures | { error: string };
  read: ChainRead | { error: string };
  /** The read with the watcher's own batch, when it failed (then `read` is with BENCH_CHAIN_FALLBACK_BATCH). */
  readAtDefault?: { batchBlocks: number; error: string };
  capacityHello?: CannonFigures | { error: string };
  arms?: ChainArm[];
}

export interface ChainReport {
  settings: Omit<ChainSettings, "capacity" | "ports"> & { seconds: number; warmupSeconds: number };
  runs: Array<ChainRun | { database: string; error: string }>;
}

const errorOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The policy the server uses by default (server/config.ts): USDT follows ETH's. */
const POLICY: DepositPolicy = {
  confirmations: { ...DEFAULT_CONFIRMATIONS, USDT: DEFAULT_CONFIRMATIONS.ETH },
  usdtNetwork: "erc20",
};

/** The i-th issued address (or stranger's): a hash of its index, in the form the watcher reads (EIP-55). */
function benchAddress(kind: "ours" | "stranger", i: number): `0x${string}` {
  return getAddress(`0x${keccak256(toHex(`coinkeep-bench-chain-${kind}-${i}`)).slice(-40)}`);
}

/** `count` issued ETH wallets (users, wallets, ledger accounts) in bulk; their addresses. */
async function seedIssuedWallets(db: AppDb, count: number): Promise<`0x${string}`[]> {
  const addresses = Array.from({ length: count }, (_, i) => benchAddress("ours", i));
  const chunk = 10_000;
  for (let from = 0; from < count; from += chunk) {
    const part = addresses.slice(from, from + chunk);
    // Nobody signs in as these users: their password and phrase columns hold placeholders.
    await db.execute(sql`
      WITH input AS (
        SELECT address, ${from}::int + i::int AS n FROM unnest(${sql.param(part)}::text[]) WITH ORDINALITY AS t(address, i)
      ), u AS (
        INSERT INTO users (email, password_hash, phrase_hmac, phrase_ciphertext, phrase_kdf_salt)
        SELECT 'chain-' || n || '@bench.example', 'bench', 'bench', 'bench', 'bench' FROM input
        RETURNING id, email
      ), w AS (
        INSERT INTO wallets (user_id, coin, address, issued_at, address_source)
        SELECT u.id, 'ETH', input.address, now(), 'manual'
        FROM u JOIN input ON u.email = 'chain-' || input.n || '@bench.example'
        RETURNING id
      )
      INSERT INTO ledger_accounts (coin, kind, wallet_id, balance) SELECT 'ETH', 'wallet', id, 0 FROM w`);
  }
  return addresses;
}

/** Makes blocks on the node: `perBlock` native transfers from its dev accounts, mined as one. */
class BlockMaker {
  private strangers = 0;
  private sent = 0;
  readonly made: Made = { blocks: 0, transfers: 0, ours: 0 };
  private readonly node: EvmNode;
  private readonly ours: readonly `0x${string}`[];
  private readonly settings: Pick<ChainSettings, "perBlock" | "ours">;
  constructor(
    node: EvmNode,
    ours: readonly `0x${string}`[],
    settings: Pick<ChainSettings, "perBlock" | "ours">,
  ) {
    this.node = node;
    this.ours = ours;
    this.settings = settings;
  }

  private async rpc(body: unknown): Promise<unknown> {
    const answer = await fetch(this.node.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return answer.json();
  }

  async start(): Promise<void> {
    await this.node.setAutomine(false);
  }

  /** One block: the transfers sent as one JSON-RPC batch (the node signs for its dev accounts), then mined. */
  async block(): Promise<number> {
    const { perBlock } = this.settings;
    const oursCount = Math.round(perBlock * this.settings.ours);
    // Ours spread evenly through the block (every `every`-th), each to a random issued address.
    const every = oursCount > 0 ? Math.max(1, Math.floor(perBlock / oursCount)) : 0;
    let oursMade = 0;
    const batch = Array.from({ length: perBlock }, (_, k) => {
      const isOurs = every > 0 && k % every === 0 && oursMade < oursCount;
      if (isOurs) oursMade++;
      const to = isOurs
        ? (this.ours[Math.floor(Math.random() * this.ours.length)] as string)
        : benchAddress("stranger", this.strangers++);
      const value = (isOurs ? 10n ** 16n : 10n ** 12n) + BigInt(this.sent++);
      return {
        jsonrpc: "2.0",
        id: k,
        method: "eth_sendTransaction",
        params: [
          {
            from: this.node.accounts[k % this.node.accounts.length],
            to,
            value: `0x${value.toString(16)}`,
            gas: "0x5208",
          },
        ],
      };
    });
    const answers = (await this.rpc(batch)) as Array<{ error?: { message: string } }>;
    const refused = answers.filter((a) => a.error);
    if (refused.length > 0)
      throw new Error(`the node refused ${refused.length} transfers: ${refused[0]?.error?.message}`);
    const mined = (await this.rpc({ jsonrpc: "2.0", id: 1, method: "evm_mine", params: [] })) as {
      error?: { message: string };
    };
    if (mined.error) throw new Error(`evm_mine: ${mined.error.message}`);
    this.made.blocks++;
    this.made.transfers += perBlock;
    this.made.ours += oursMade;
    return this.node.blockNumber();
  }

  /** A block every `everyMs` until stopped; what it made meanwhile. */
  produce(everyMs: number): { stop(): Promise<Made> } {
    const before = { ...this.made };
    const control = { stopped: false };
    const loop = (async () => {
      while (!control.stopped) {
        const started = performance.now();
        await this.block();
        await sleep(Math.max(0, everyMs - (performance.now() - started)));
      }
    })();
    return {
      stop: async () => {
        control.stopped = true;
        await loop;
        return {
          blocks: this.made.blocks - before.blocks,
          transfers: this.made.transfers - before.transfers,
          ours: this.made.ours - before.ours,
        };
      },
    };
  }
}

/** Wall time with at least one call of `source` in flight, and each method's calls and time. */
function timedSource(inner: EvmSource) {
  let inFlight = 0;
  let since = 0;
  let busyMs = 0;
  const byMethod: Record<string, { calls: number; ms: number }> = {};
  const time =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      if (inFlight++ === 0) since = started;
      try {
        return await fn(...args);
      } finally {
        const now = performance.now();
        if (--inFlight === 0) busyMs += now - since;
        const m = (byMethod[name] ??= { calls: 0, ms: 0 });
        m.calls++;
        m.ms += now - started;
      }
    };
  const source: EvmSource = {
    head: time("eth_blockNumber", () => inner.head()),
    block: time("eth_getBlockByNumber (full)", (n: number) => inner.block(n)),
    header: time("eth_getBlockByNumber (header)", (n: number) => inner.header(n)),
    transferLogs: time("eth_getLogs", (token: string, from: number, to: number) =>
      inner.transferLogs(token, from, to),
    ),
    receipt: time("eth_getTransactionReceipt", (hash: string) => inner.receipt(hash)),
    close: () => inner.close(),
  };
  return { source, busyMs: () => busyMs, byMethod };
}

/** The database as given, but timing its `transaction` calls (the watcher's write step, recordBlocks). */
function timedTransactions(db: AppDb) {
  const clock = { ms: 0, calls: 0 };
  const proxy = new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== "transaction") return bound;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await bound(...args);
        } finally {
          clock.ms += performance.now() - started;
          clock.calls++;
        }
      };
    },
  });
  return { db: proxy, clock };
}

/**
 * Counts, while on, the statements sent to PostgreSQL by this process (every pg client's
 * `query`, the pool's included) and the watcher's log lines, which are dropped rather than
 * printed (the server's go to /dev/null). Nothing else changes.
 */
function countQueriesAndLogs() {
  const counts = { queries: 0, logLines: 0 };
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    counts.queries++;
    return query.apply(this, args);
  };
  const write = process.stdout.write;
  process.stdout.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === "string" && chunk.startsWith('{"time"')) {
      counts.logLines++;
      const callback = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      callback?.();
      return true;
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof process.stdout.write;
  return {
    counts,
    stop() {
      prototype.query = query;
      process.stdout.write = write;
    },
  };
}

async function depositCounts(db: AppDb): Promise<{ recorded: number; credited: number; pending: number }> {
  const [row] = rowsOf<{ recorded: number; credited: number; pending: number }>(
    await db.execute(sql`
      SELECT count(*)::int AS recorded,
             count(*) FILTER (WHERE status = 'credited')::int AS credited,
             count(*) FILTER (WHERE status = 'pending')::int AS pending
      FROM chain_deposits WHERE network = 'ETH'`),
  );
  return {
    recorded: Number(row?.recorded ?? 0),
    credited: Number(row?.credited ?? 0),
    pending: Number(row?.pending ?? 0),
  };
}

/** The watcher reads from just before `fromBlock` to the node's head. */
async function measureRead(
  database: Database,
  node: EvmNode,
  fromBlock: number,
  made: Made,
  profile: boolean,
  label: string,
  batchBlocks: number,
): Promise<ChainRead> {
  const head = await node.blockNumber();
  await startCursor(database.db, "ETH", fromBlock, head);
  const timed = timedSource(evmSource(node.rpcUrl));
  const { db, clock } = timedTransactions(database.db);
  const watcher = createChainWatcher({
    db,
    setting: { network: "ETH", rpcUrl: node.rpcUrl, native: "ETH" },
    policy: POLICY,
    pollMs: 2_000,
    holdLock: (key) => database.holdLock(key),
    source: timed.source,
    batchBlocks,
  });
  let session: Session | undefined;
  if (profile) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 500 });
    await session.post("Profiler.start");
  }
  const counting = countQueriesAndLogs();
  const cpuBefore = process.cpuUsage();
  const nodeBefore = processCpuMs(node.pid);
  const started = performance.now();
  let steps = 0;
  let outcome: StepOutcome = "read";
  try {
    while (outcome !== "caught-up") {
      outcome = await watcher.step();
      steps++;
      if (outcome === "failed" || outcome === "not-leader") {
        const [cursor] = await listCursors(database.db);
        throw new Error(`the watcher's step ${outcome}: ${cursor?.lastError ?? "no error kept"}`);
      }
    }
  } finally {
    await watcher.stop();
    counting.stop();
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const nodeMs = processCpuMs(node.pid) - nodeBefore;
  let profileFile: string | undefined;
  if (session) {
    const { profile: taken } = await session.post("Profiler.stop");
    session.disconnect();
    const dir = path.join(root, "bench-results");
    mkdirSync(dir, { recursive: true });
    profileFile = path.join(dir, `chain-watcher-${label}.cpuprofile`);
    writeFileSync(profileFile, JSON.stringify(taken));
    printProfile(profileFile, 30);
  }
  const rpcMs = timed.busyMs();
  const byMethod: ChainRead["split"]["byMethod"] = {};
  for (const [name, m] of Object.entries(timed.byMethod))
    byMethod[name] = { calls: m.calls, seconds: round(m.ms / 1000, 2) };
  const seconds = wallMs / 1000;
  return {
    ...made,
    batchBlocks,
    steps,
    seconds: round(seconds, 2),
    blocksPerSecond: round(made.blocks / seconds, 2),
    transfersPerSecond: round(made.transfers / seconds, 0),
    deposits: await depositCounts(database.db),
    split: {
      rpc: round(rpcMs / 1000, 2),
      record: round(clock.ms / 1000, 2),
      other: round((wallMs - rpcMs - clock.ms) / 1000, 2),
      byMethod,
      recordTransactions: clock.calls,
      statements: database.driver === "postgres" ? counting.counts.queries : null,
    },
    logLines: counting.counts.logLines,
    cpu: {
      bench: round((cpu.user + cpu.system) / 1e6, 2),
      node: round(nodeMs / 1000, 2),
    },
    ...(profileFile ? { profile: path.relative(root, profileFile) } : {}),
  };
}

/** The ETH watcher's cursor as the server's metrics show it (coinkeep_chain_blocks), or undefined. */
async function metricsCursor(metricsPort: number): Promise<number | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const match = /^coinkeep_chain_blocks\{network="ETH",figure="cursor"\} (\d+)$/mu.exec(text);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function runOne(kind: "postgres" | "pglite", target: ChainTarget): Promise<ChainRun> {
  const { settings } = target;
  log(`=== chain: ${kind} ===`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `coinkeep-bench-chain-${kind}-`));
  onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  const databaseUrl =
    kind === "postgres"
      ? await throwAwayDatabase(`coinkeep_bench_chain_${randomBytes(4).toString("hex")}`)
      : undefined;
  const sessionSecret = randomBytes(32).toString("base64url");
  const backendSecret = randomBytes(32).toString("base64url");
  const levels = settings.levels[kind];

  // --- Set up: the database (timed apart), the node and its blocks (timed apart).
  const seedStarted = performance.now();
  let database = await openDatabase({ databaseUrl, dataDir });
  let addresses: `0x${string}`[];
  let accounts: SeededUser[] = [];
  let cookies: string[] = [];
  try {
    addresses = await seedIssuedWallets(database.db, settings.wallets);
    log(
      `chain: ${settings.wallets} issued ETH wallets in ${round((performance.now() - seedStarted) / 1000, 1)} s`,
    );
    if (settings.withCapacity && levels.length > 0) {
      accounts = await seedCapacityAccounts(
        { db: database.db, keys: deriveServerKeys(backendSecret) },
        settings.accounts,
        kind === "postgres" ? 6 : 2,
      );
      cookies = await mintSessions(
        database.db,
        { sessionSecret, cookieSecure: true, idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 },
        Array.from({ length: Math.max(...levels) }, (_, i) => accounts[i % accounts.length] as SeededUser),
        kind === "postgres" ? 8 : 1,
      );
      log(`chain: ${accounts.length} capacity accounts, ${cookies.length} sessions`);
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);

  const node = await startEvmNode({ port: settings.ports.node });
  onCleanup(() => node.stop());
  const maker = new BlockMaker(node, addresses, settings);
  await maker.start();
  const generateStarted = performance.now();
  const fromBlock = (await node.blockNumber()) + 1;
  for (let i = 0; i < settings.blocks; i++) await maker.block();
  const generateSeconds = round((performance.now() - generateStarted) / 1000, 1);
  const made = { ...maker.made };
  log(
    `chain: ${made.blocks} blocks of ${settings.perBlock} transfers (${made.ours} to issued addresses) made in ${generateSeconds} s`,
  );
  const run: ChainRun = {
    database: kind,
    setup: { wallets: settings.wallets, seedSeconds, generateSeconds, made },
    hello: { error: "not measured" },
    read: { error: "not measured" },
  };

  // --- The read.
  try {
    run.hello = await target.hello().catch((error: unknown) => ({ error: errorOf(error) }));
    // The watcher's own batch first; should a step of it fail (nothing is recorded then, the
    // cursor stays), the same blocks again with a smaller batch, both reported.
    for (const batchBlocks of [BATCH_BLOCKS, settings.fallbackBatch]) {
      try {
        run.read = await measureRead(database, node, fromBlock, made, settings.profile, kind, batchBlocks);
        const r = run.read;
        log(
          `chain read (${kind}, ${batchBlocks} blocks a step): ${r.blocks} blocks in ${r.seconds} s: ${r.blocksPerSecond} blocks/s, ${r.transfersPerSecond} transfers/s; ` +
            `RPC ${r.split.rpc} s, write transaction ${r.split.record} s, other ${r.split.other} s; ` +
            `CPU bench ${r.cpu.bench} s, node ${r.cpu.node} s; deposits ${r.deposits.recorded} of ${r.ours} (${r.deposits.credited} credited)`,
        );
        break;
      } catch (error) {
        run.read = { error: errorOf(error) };
        log(`chain read (${kind}, ${batchBlocks} blocks a step) failed: ${run.read.error}`);
        process.exitCode = 1;
        if (batchBlocks !== BATCH_BLOCKS || settings.fallbackBatch >= BATCH_BLOCKS) break;
        run.readAtDefault = { batchBlocks, error: run.read.error };
      }
    }
  } finally {
    await database.close();
  }
  if (!settings.withCapacity || levels.length === 0) {
    await node.stop();
    return run;
  }

  // --- Capacity, the watcher off then on, the node making blocks in both.
  run.capacityHello = await target.hello().catch((error: unknown) => ({ error: errorOf(error) }));
  const changes = kind === "postgres" ? await openDatabase({ databaseUrl, dataDir }) : undefined;
  const forgetChanges = onCleanup(() => changes?.close());
  let server: ServerHandle | undefined;
  const raiseEvent = messageRaiser(accounts, changes ? { db: changes.db } : { dataDir });
  run.arms = [];
  try {
    for (const name of ["watcher off", "watcher on"] as const) {
      const watching = name === "watcher on";
      if (watching) {
        // As a watcher that had kept up: its cursor at the head (the blocks made while it was off
        // are not read), so the arm measures keeping up, not a backlog.
        database = await openDatabase({ databaseUrl, dataDir });
        try {
          const head = await node.client.getBlock({ blockTag: "latest" });
          await database.db.execute(
            sql`UPDATE chain_cursors SET block_number = ${Number(head.number)}, block_hash = ${head.hash}, head = ${Number(head.number)} WHERE network = 'ETH'`,
          );
        } finally {
          await database.close();
        }
      }
      const before = await chainState(kind, databaseUrl, dataDir);
      server = await startServer({
        port: settings.ports.server,
        dataDir,
        databaseUrl,
        sessionSecret,
        backendSecret,
        workers: kind === "postgres" ? Number(process.env.BENCH_WORKERS ?? os.cpus().length) : 1,
        benchStats: true,
        env: {
          METRICS_PORT: String(settings.ports.metrics),
          ...(watching ? { CHAIN_RPC_ETH: node.rpcUrl } : {}),
        },
      });
      const current = server;
      // What the server says about the chain (its warnings and errors go to stderr).
      const said: string[] = [];
      current.child.stderr?.on("data", (chunk: Buffer) => {
        for (const line of chunk.toString().split("\n")) if (/chain/iu.test(line)) said.push(line);
      });
      log(`chain: server up (${kind}, ${name})`);
      const nodeBefore = processCpuMs(node.pid);
      const started = performance.now();
      const producing = maker.produce(settings.blockEverySeconds * 1000);
      let lagMax = 0;
      const polling = { on: watching };
      const poll = (async () => {
        while (polling.on) {
          const cursor = await metricsCursor(settings.ports.metrics);
          // The node's head, not the one the watcher last saw (stale while a step is long).
          if (cursor !== undefined) lagMax = Math.max(lagMax, (await node.blockNumber()) - cursor);
          await sleep(2_000);
        }
      })();
      let capacity: CapacityReport | { error: string };
      let delivered = 0;
      try {
        capacity = await runCapacity(
          {
            base: current.base,
            accounts: accounts.length,
            raiseEvent,
            serverPid: () => current.pid,
            serverStats: (reset) => current.stats(reset),
            ensureSessions(users) {
              const added = cookies.slice(delivered, users);
              delivered += added.length;
              return Promise.resolve(added);
            },
          },
          { ...settings.capacity, levels, bisectSteps: 0 },
        );
      } catch (error) {
        capacity = { error: errorOf(error) };
        log(`chain: capacity (${name}) failed: ${capacity.error}`);
      }
      polling.on = false;
      await poll;
      const produced = await producing.stop();
      const headAtEnd = await node.blockNumber();
      const seconds = round((performance.now() - started) / 1000, 1);
      const nodeCpuSeconds = round((processCpuMs(node.pid) - nodeBefore) / 1000, 1);
      await server.stop();
      server = undefined;
      const arm: ChainArm = { name, capacity, produced, seconds, nodeCpuSeconds };
      if (said.length > 0) {
        log(
          `chain: the server said (${said.length} lines about the chain), the last: ${said.at(-1)?.slice(0, 300)}`,
        );
        arm.serverSaid = { lines: said.length, last: said.at(-1)?.slice(0, 300) ?? "" };
      }
      if (watching) {
        // From the database once the server has stopped (exact); the highest lag seen meanwhile
        // from the server's metrics, polled every 2 s.
        const after = await chainState(kind, databaseUrl, dataDir);
        const lagEnd = headAtEnd - after.cursor;
        arm.watcher = {
          blocksRead: after.cursor - before.cursor,
          lagEnd,
          lagMax: Math.max(lagMax, lagEnd),
          depositsRecorded: after.deposits - before.deposits,
        };
      }
      run.arms.push(arm);
      log(
        `chain: ${name}: ${"users" in capacity ? `${capacity.users} users carried` : "failed"}; ` +
          `${produced.blocks} blocks made in ${seconds} s (node CPU ${nodeCpuSeconds} s)` +
          (arm.watcher
            ? `; the watcher read ${arm.watcher.blocksRead} blocks, ${arm.watcher.depositsRecorded} deposits recorded, lag ${arm.watcher.lagEnd} at the end (max ${arm.watcher.lagMax})`
            : ""),
      );
    }
  } finally {
    await server?.stop();
    forgetChanges();
    await changes?.close();
    await node.stop();
  }
  return run;
}

/** The ETH deposits the watcher recorded so far and its cursor (its own connection; PGlite: only with no server up). */
async function chainState(kind: "postgres" | "pglite", databaseUrl: string | undefined, dataDir: string) {
  const database = await openDatabase({
    databaseUrl: kind === "postgres" ? databaseUrl : undefined,
    dataDir,
  });
  try {
    const [cursor] = await listCursors(database.db);
    return { deposits: (await depositCounts(database.db)).recorded, cursor: cursor?.blockNumber ?? 0 };
  } finally {
    await database.close();
  }
}

export async function runChain(
  databases: Array<"postgres" | "pglite">,
  target: ChainTarget,
): Promise<ChainReport> {
  const { capacity, ports: _ports, ...rest } = target.settings;
  const report: ChainReport = {
    settings: { ...rest, seconds: capacity.seconds, warmupSeconds: capacity.warmupSeconds },
    runs: [],
  };
  for (const kind of databases) {
    try {
      report.runs.push(await runOne(kind, target));
    } catch (error) {
      log(`chain (${kind}) failed: ${errorOf(error)}`);
      process.exitCode = 1;
      report.runs.push({ database: kind, error: errorOf(error) });
    }
  }
  return report;
}

// ---------------------------------------------------------------------------
// The report's lines (report.ts).
// ---------------------------------------------------------------------------

const n = (value: number) => value.toLocaleString("en-GB");
const perK = (value: number, hello: CannonFigures | { error: string } | undefined) =>
  hello && !("error" in hello) && hello.perSecond > 0
    ? round(value / (hello.perSecond / 1000), 3)
    : undefined;
const helloText = (hello: CannonFigures | { error: string } | undefined) =>
  !hello ? "not measured" : "error" in hello ? `failed: ${hello.error}` : `${n(hello.perSecond)} req/s`;

export function chainSection(report: ChainReport | { error: string } | undefined): string[] {
  if (report === undefined) return [];
  const lines = ["#### Chain watcher (issue 30): issued addresses, blocks of transfers", ""];
  if ("error" in report) return [...lines, `Failed: ${report.error}`, ""];
  const s = report.settings;
  lines.push(
    `${n(s.wallets)} issued ETH wallets; ${s.blocks} blocks of ${n(s.perBlock)} native transfers, ` +
      `${round(s.ours * 100, 1)} % of them to issued addresses (the rest to strangers), made on a Hardhat node ` +
      `before the read (the time to make them is not part of any figure). A watcher in the bench's process ` +
      `(createChainWatcher, the server's default confirmations: ETH ${POLICY.confirmations.ETH}) reads them from a ` +
      `cursor just before them to the head; the time split wraps its RPC source (an RPC call in flight, its answer's ` +
      `checking included) and its database's write transaction (recordBlocks); "other" is the rest of its steps ` +
      `(the cursor, the issued-address lookup, its own code).`,
    "",
  );
  for (const run of report.runs) {
    if ("error" in run) {
      lines.push(`**${run.database}**: failed: ${run.error}`, "");
      continue;
    }
    lines.push(
      `**${run.database}**: set up ${n(run.setup.wallets)} wallets (and the capacity accounts) in ${run.setup.seedSeconds} s; ` +
        `${run.setup.made.blocks} blocks (${n(run.setup.made.transfers)} transfers, ${n(run.setup.made.ours)} ours) made in ${run.setup.generateSeconds} s. ` +
        `Hello world before the read: ${helloText(run.hello)}.`,
      "",
    );
    const r = run.read;
    if (run.readAtDefault) {
      lines.push(
        `**With the watcher's own batch (${run.readAtDefault.batchBlocks} blocks a step) the read failed**: ` +
          `${run.readAtDefault.error} (every step, so its cursor never moved). ` +
          ("error" in r
            ? "With a smaller batch it failed too."
            : `The figures below read ${r.batchBlocks} blocks a step (createChainWatcher's batchBlocks).`),
        "",
      );
    }
    if ("error" in r) lines.push(`The read failed: ${r.error}`, "");
    else {
      const perKBlocks = perK(r.blocksPerSecond, run.hello);
      lines.push(
        "| blocks | transfers (ours) | steps | wall s | blocks/s | transfers/s | blocks/s per 1,000 hello req/s | RPC s | write transaction s | other s | CPU s: bench process / node | deposits recorded (credited, pending) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        `| ${r.blocks} | ${n(r.transfers)} (${n(r.ours)}) | ${r.steps} | ${r.seconds} | **${r.blocksPerSecond}** | **${n(r.transfersPerSecond)}** | ` +
          `${perKBlocks ?? "—"} | ${r.split.rpc} | ${r.split.record} | ${r.split.other} | ${r.cpu.bench} / ${r.cpu.node} | ` +
          `${n(r.deposits.recorded)} (${n(r.deposits.credited)}, ${n(r.deposits.pending)}) |`,
        "",
        `RPC calls: ${Object.entries(r.split.byMethod)
          .map(([name, m]) => `${name} ${n(m.calls)} (${m.seconds} s summed)`)
          .join(", ")}. ` +
          (r.split.statements === null
            ? "Statements not counted (PGlite)."
            : `Statements sent to PostgreSQL: ${n(r.split.statements)} (${round(r.split.statements / Math.max(1, r.deposits.recorded), 1)} per deposit recorded).`) +
          ` The watcher's log lines: ${n(r.logLines)}.`,
        "",
      );
    }
    if (run.arms && run.arms.length > 0) {
      lines.push(
        `Capacity beside it (hello world before the arms: ${helloText(run.capacityHello)}): the node makes a block ` +
          `like the above every ${s.blockEverySeconds} s in both arms; levels ${s.levels[run.database].join(", ")} ` +
          `(${s.seconds} s each after ${s.warmupSeconds} s, stopping at the first failed one, no bisection).`,
        "",
        "| arm | users carried | per 1,000 hello req/s | level: p99 ms, server CPU per request, machine busy | blocks made (node CPU s) | the watcher |",
        "| --- | ---: | ---: | --- | ---: | --- |",
      );
      for (const arm of run.arms) {
        const c = arm.capacity;
        const levelsText =
          "error" in c
            ? `failed: ${c.error}`
            : c.levels
                .map(
                  (l) =>
                    `${n(l.users)}: ${l.passed ? "pass" : "fail"}, ${l.clientP99} ms, ${l.cpu.serverMsPerRequest} ms, ${l.cpu.machinePct} %`,
                )
                .join("; ");
        const users = "error" in c ? undefined : c.users;
        const watcher = arm.watcher
          ? `read ${arm.watcher.blocksRead} blocks, ${n(arm.watcher.depositsRecorded)} deposits recorded; lag ${arm.watcher.lagEnd} blocks at the end (max ${arm.watcher.lagMax})`
          : "not running";
        lines.push(
          `| ${arm.name} | ${users === undefined ? "—" : users === 0 ? `< ${n(s.levels[run.database][0] ?? 0)} (the first level failed)` : n(users)} | ` +
            `${users === undefined || users === 0 ? "—" : (perK(users, run.capacityHello) ?? "—")} | ` +
            `${levelsText} | ${arm.produced.blocks} (${arm.nodeCpuSeconds}) | ${watcher} |`,
        );
      }
      lines.push("");
    }
  }
  return lines;
}
