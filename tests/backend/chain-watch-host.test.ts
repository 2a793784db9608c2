// Issue 30 (record 053): the EVM deposit watcher in real server processes (`node
// server/host/host.ts`, scripts/host.ts spawnHost), reading a real local node (Hardhat's EDR,
// tests/support/evm-node.ts) through a small JSON-RPC proxy of the test's own, which can pass
// the node's answers on, answer garbage of the wrong shape, lie, or be down. The endpoint the
// servers are given carries a provider's key in its path: no server log may show it.
//   1. kill -9 while a watcher catches up (PGlite and PostgreSQL): after every kill the database
//      holds exactly the deposits of the blocks up to the cursor, credited ones credited once;
//      at the end every deposit exactly once, pending ones with their confirmations.
//  1b. kill -9 inside a step's transaction, on both databases, for certain: a child process
//      (tests/support/chain-watch-child.ts) runs the watcher with a database handle that pauses
//      before the cursor's UPDATE (every deposit of the batch written, none committed), or
//      after the second deposit of a later batch, and is killed while it waits.
//   2. two processes on one PostgreSQL: one holds the network's advisory lock and reads; it is
//      killed with -9 and the other takes over and records what came after.
//   3. faults: garbage, a node that answers the head but not its blocks, a node down; /readyz
//      stays ready, `ops chains` and the metric say what is wrong; the watcher recovers. Lies: a
//      transfer to an address never issued, a log that does not decode, a failed transaction
//      naming value: none recorded. A misconfigured endpoint or token stops the start.
//   4. `ops chains` (text and --json) and `ops chains rescan`: nothing doubled.
// Needs the production build; item 2 needs PostgreSQL (TEST_DATABASE_URL).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { and, asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, freshDataDir, spawnHost, type HostEnv, type HostProcess } from "../../scripts/host.ts";
import { TRANSFER_TOPIC } from "../../server/backend/chains/evm-source.ts";
import { openDatabase, rowsOf, type AppDb, type Database } from "../../server/backend/db/index.ts";
import { auditLog, chainBlocks, chainDeposits, ledgerTransfers } from "../../server/backend/db/schema.ts";
import { CHAIN_LEADER_LOCK, listCursors } from "../../server/backend/domain/chain-watch.ts";
import { walletBalance } from "../../server/backend/domain/ledger.ts";
import { startEvmNode, type EvmNode } from "../support/evm-node.ts";
import { fundedWallet, insertUser, openTempPostgres, randomAddress, type OpenedDatabase } from "./helpers.ts";
import { processEnv, runOps } from "./host-suite.ts";

const adminUrl = process.env.TEST_DATABASE_URL;
const NODE_PORT = 8750;
const PROXY_PORT = 8751;
/** The servers' ports (3950–3969 are this file's). */
const PORTS = { killPglite: 3950, killPostgres: 3951, a: 3952, b: 3953, faults: 3954, refused: 3955 };
const METRICS_TOKEN = "chain-host-metrics-token-0123456789abcdef";
/** What a provider's endpoint holds in its path: never to be logged. */
const RPC_KEY = `key${randomBytes(12).toString("hex")}`;
const REQUIRED = { ETH: 3, USDT: 2 } as const;
const RPC_ORIGIN = `http://127.0.0.1:${PROXY_PORT}`;

type Coin = keyof typeof REQUIRED;
type Address = `0x${string}`;

// ---------------------------------------------------------------------------
// A JSON-RPC proxy in front of the node.
// ---------------------------------------------------------------------------

/**
 * pass: the node's answers. garbage: every answer a result of the wrong shape. garbage-blocks:
 * the head answered, blocks not. lie: the node's answers with a transfer to an address never
 * issued added to every block, and a Transfer log that does not decode (no value) to `lieTo`
 * added to every eth_getLogs answer.
 */
type ProxyMode = "pass" | "garbage" | "garbage-blocks" | "lie";

interface RpcCall {
  jsonrpc: "2.0";
  id: number | string;
  method: string;
  params?: unknown[];
}

interface RpcProxy {
  /** The endpoint the servers are given: the proxy's, with the key in its path. */
  url: string;
  mode: ProxyMode;
  lieTo: Address | undefined;
  /** The node stopped: nothing listens on the port (connections refused). */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

const hex32 = () => `0x${randomBytes(32).toString("hex")}`;
const topicOf = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;

async function startRpcProxy(port: number, target: string): Promise<RpcProxy> {
  const sockets = new Set<Socket>();
  const forward = async (call: RpcCall): Promise<{ result?: unknown; error?: unknown }> => {
    const answer = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
    });
    return (await answer.json()) as { result?: unknown };
  };

  async function handle(call: RpcCall): Promise<unknown> {
    if (
      proxy.mode === "garbage" ||
      (proxy.mode === "garbage-blocks" && call.method === "eth_getBlockByNumber")
    ) {
      return { jsonrpc: "2.0", id: call.id, result: { number: "twelve", transactions: "none" } };
    }
    const answer = await forward(call);
    if (proxy.mode === "lie" && answer.result) {
      if (call.method === "eth_getBlockByNumber" && call.params?.[1] === true) {
        const block = answer.result as { transactions: unknown[] };
        block.transactions.push({ hash: hex32(), to: randomAddress("ETH"), value: "0xde0b6b3a7640000" });
      }
      const filter = call.params?.[0] as { fromBlock?: string } | undefined;
      if (call.method === "eth_getLogs" && filter?.fromBlock && proxy.lieTo) {
        const first = await forward({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_getBlockByNumber",
          params: [filter.fromBlock, false],
        });
        const hash = (first.result as { hash: string } | null)?.hash;
        if (hash) {
          (answer.result as unknown[]).push({
            address: token,
            topics: [TRANSFER_TOPIC, topicOf(node.accounts[0] ?? ""), topicOf(proxy.lieTo)],
            data: "0x",
            blockNumber: filter.fromBlock,
            blockHash: hash,
            transactionHash: hex32(),
            logIndex: "0x63",
            removed: false,
          });
        }
      }
    }
    return { jsonrpc: "2.0", id: call.id, ...answer };
  }

  async function serveRpc(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const calls = JSON.parse(Buffer.concat(chunks).toString()) as RpcCall | RpcCall[];
      const answers = await Promise.all((Array.isArray(calls) ? calls : [calls]).map(handle));
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
    } catch {
      response.writeHead(502).end();
    }
  }

  const server = createServer((request, response) => void serveRpc(request, response));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  const unlisten = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  await listen();
  const proxy: RpcProxy = {
    url: `${RPC_ORIGIN}/v3/${RPC_KEY}`,
    mode: "pass",
    lieTo: undefined,
    down: unlisten,
    up: listen,
    close: () => (server.listening ? unlisten() : Promise.resolve()),
  };
  return proxy;
}

// ---------------------------------------------------------------------------
// The node, the token, the servers.
// ---------------------------------------------------------------------------

let node: EvmNode;
let token: Address;
let proxy: RpcProxy;

beforeAll(async () => {
  if (!built) return;
  node = await startEvmNode({ port: NODE_PORT });
  token = await node.deployToken();
  await node.setAutomine(false);
  proxy = await startRpcProxy(PROXY_PORT, node.rpcUrl);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await node?.stop();
});

/** A server's settings: the watcher on the proxy, fast polls, small policies, metrics by token. */
function chainEnv(databaseUrl?: string): HostEnv {
  return {
    ...processEnv(databaseUrl),
    CHAIN_RPC_ETH: proxy.url,
    CHAIN_TOKEN_USDT: token,
    CHAIN_POLL_MS: "100",
    CONFIRMATIONS_ETH: String(REQUIRED.ETH),
    CONFIRMATIONS_USDT: String(REQUIRED.USDT),
    METRICS_TOKEN,
  };
}

/** The JSON log lines a server printed (stdout and stderr). */
function logLines(host: HostProcess): { message: string; [field: string]: unknown }[] {
  return `${host.output.stdout}\n${host.output.stderr}`.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      return [JSON.parse(line) as { message: string }];
    } catch {
      return [];
    }
  });
}

const said = (host: HostProcess, message: string) => logLines(host).filter((l) => l.message === message);

async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(10);
  }
}

interface Figures {
  head?: number;
  cursor?: number;
  lag?: number;
  failing?: number;
}

/** coinkeep_chain_blocks{network="ETH"} from the server's /metrics (empty when it does not answer). */
async function figures(host: HostProcess): Promise<Figures> {
  try {
    const answer = await fetch(`${host.base}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await answer.text();
    const figure = (name: string) => {
      const found = new RegExp(
        `^coinkeep_chain_blocks\\{network="ETH",figure="${name}"\\} (\\d+)$`,
        "mu",
      ).exec(text);
      return found ? Number(found[1]) : undefined;
    };
    return { head: figure("head"), cursor: figure("cursor"), lag: figure("lag"), failing: figure("failing") };
  } catch {
    return {};
  }
}

/** Until the server's watcher has read and recorded the node's head. */
async function caughtUp(host: HostProcess, timeoutMs = 60_000) {
  const head = await node.blockNumber();
  await until(`the cursor at ${head}`, async () => (await figures(host)).cursor === head, timeoutMs);
}

async function kill9(host: HostProcess) {
  host.child.kill("SIGKILL");
  await host.exited;
}

/** Nothing the server printed holds the endpoint's path (its key). */
function expectNoKey(host: HostProcess) {
  expect(host.output.stdout).not.toContain(RPC_KEY);
  expect(host.output.stderr).not.toContain(RPC_KEY);
}

// ---------------------------------------------------------------------------
// Holders, deposits and what the database must say about them.
// ---------------------------------------------------------------------------

interface Holder {
  ETH: { walletId: string; address: Address };
  USDT: { walletId: string; address: Address };
}

async function makeHolders(db: AppDb, count: number): Promise<Holder[]> {
  const holders: Holder[] = [];
  for (let i = 0; i < count; i++) {
    const user = await insertUser(db, "chain-host");
    const eth = await fundedWallet(db, user, "ETH");
    const usdt = await fundedWallet(db, user, "USDT");
    holders.push({
      ETH: { walletId: eth.walletId, address: eth.address as Address },
      USDT: { walletId: usdt.walletId, address: usdt.address as Address },
    });
  }
  return holders;
}

interface Deposit {
  coin: Coin;
  txid: string;
  outputIndex: number;
  walletId: string;
  amount: bigint;
  block: number;
}

let sequence = 0;

/**
 * One block paying `holders`: `tokens` token transfers and `natives` ETH transfers (some to
 * the same address twice) and one ETH transfer to a stranger; what it paid us.
 */
async function depositBlock(holders: readonly Holder[], natives: number, tokens: number): Promise<Deposit[]> {
  const n = ++sequence;
  const pick = (k: number) => {
    const holder = holders[(n + k) % holders.length];
    if (!holder) throw new Error("no holder");
    return holder;
  };
  const tokenTxs: { hash: string; holder: Holder; units: bigint }[] = [];
  for (let k = 0; k < tokens; k++) {
    const holder = pick(k);
    const units = BigInt(n * 100 + k + 1) * 1_000n;
    tokenTxs.push({ hash: await node.sendToken(token, holder.USDT.address, units), holder, units });
  }
  const transfers = Array.from({ length: natives }, (_, k) => ({
    // Two of them to the same address when there are three.
    to: pick(k === 2 ? 0 : k).ETH.address,
    value: BigInt(n * 1_000 + k + 1) * 10n ** 12n,
  }));
  const block = await node.sendBatch([
    ...transfers,
    { to: randomAddress("ETH") as Address, value: 10n ** 15n },
  ]);
  const found: Deposit[] = [];
  const mined = await node.client.getBlock({ blockNumber: BigInt(block), includeTransactions: true });
  const byAddress = new Map(holders.map((h) => [h.ETH.address.toLowerCase(), h]));
  for (const tx of mined.transactions) {
    const holder = tx.to ? byAddress.get(tx.to.toLowerCase()) : undefined;
    if (!holder) continue;
    found.push({
      coin: "ETH",
      txid: tx.hash,
      outputIndex: 0,
      walletId: holder.ETH.walletId,
      amount: tx.value,
      block,
    });
  }
  expect(found).toHaveLength(natives);
  for (const t of tokenTxs) {
    const receipt = await node.client.getTransactionReceipt({ hash: t.hash as Address });
    expect([receipt.status, Number(receipt.blockNumber)]).toEqual(["success", block]);
    const [entry] = receipt.logs;
    if (!entry) throw new Error("a token transfer without its log");
    found.push({
      coin: "USDT",
      txid: t.hash,
      outputIndex: entry.logIndex,
      walletId: t.holder.USDT.walletId,
      amount: t.units,
      block,
    });
  }
  return found;
}

/** `count` blocks paying us, `gap` empty blocks after each but the last. */
async function depositBlocks(holders: readonly Holder[], count: number, gap: number): Promise<Deposit[]> {
  const found: Deposit[] = [];
  for (let i = 0; i < count; i++) {
    found.push(...(await depositBlock(holders, 2 + (i % 2), 1 + (i % 3 === 0 ? 1 : 0))));
    if (i < count - 1) await node.mine(gap);
  }
  return found;
}

const key = (d: { coin: string; txid: string; outputIndex: number }) =>
  `${d.coin}:${d.txid}:${d.outputIndex}`;

/**
 * What the database must hold with its cursor at block c: exactly the deposits of blocks up to
 * c, each once; credited those with c - block + 1 confirmations at their policy, each by one
 * ledger transfer of its amount and one deposit.credit row; the others pending with exactly
 * c - block + 1; every wallet's balance the sum of its credited deposits. Returns c.
 */
async function expectRecorded(db: AppDb, expected: readonly Deposit[], walletIds: readonly string[]) {
  const [cursor] = await listCursors(db);
  if (!cursor) throw new Error("no cursor");
  const c = cursor.blockNumber;
  const rows = await db
    .select({
      coin: chainDeposits.coin,
      txid: chainDeposits.txid,
      outputIndex: chainDeposits.outputIndex,
      walletId: chainDeposits.walletId,
      amount: chainDeposits.amount,
      block: chainDeposits.blockNumber,
      status: chainDeposits.status,
      confirmations: chainDeposits.confirmations,
      transferId: chainDeposits.transferId,
      orphanedAt: chainDeposits.orphanedAt,
    })
    .from(chainDeposits)
    .orderBy(asc(chainDeposits.createdAt));
  const status = (d: Deposit) => (c - d.block + 1 >= REQUIRED[d.coin] ? "credited" : "pending");
  const want = expected
    .filter((d) => d.block <= c)
    .map((d) => ({ ...d, status: status(d), orphanedAt: null }))
    .toSorted((x, y) => key(x).localeCompare(key(y)));
  expect(
    rows
      .map(({ confirmations: _c, transferId: _t, ...row }) => row)
      .toSorted((x, y) => key(x).localeCompare(key(y))),
  ).toEqual(want);
  for (const row of rows) {
    const needed = REQUIRED[row.coin as Coin];
    const seen = c - (row.block ?? 0) + 1;
    if (row.status === "pending") {
      expect([key(row), row.confirmations, row.transferId]).toEqual([key(row), seen, null]);
    } else {
      expect([key(row), (row.confirmations ?? 0) >= needed, row.transferId !== null]).toEqual([
        key(row),
        true,
        true,
      ]);
    }
  }
  const credited = rows.filter((r) => r.status === "credited");
  const transfers = await db
    .select({ id: ledgerTransfers.id, amount: ledgerTransfers.amount })
    .from(ledgerTransfers)
    .where(eq(ledgerTransfers.kind, "deposit"));
  expect(new Map(transfers.map((t) => [t.id, t.amount]))).toEqual(
    new Map(credited.map((r) => [r.transferId, r.amount])),
  );
  const [audited] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(auditLog)
    .where(eq(auditLog.action, "deposit.credit"));
  expect(audited?.n).toBe(credited.length);
  for (const walletId of walletIds) {
    const sum = credited.filter((r) => r.walletId === walletId).reduce((total, r) => total + r.amount, 0n);
    expect([walletId, await walletBalance(db, walletId)]).toEqual([walletId, sum]);
  }
  return { cursor: c, credited: credited.length, pending: rows.length - credited.length };
}

const walletIdsOf = (holders: readonly Holder[]) => holders.flatMap((h) => [h.ETH.walletId, h.USDT.walletId]);

// ---------------------------------------------------------------------------
// 1. kill -9 while catching up.
// ---------------------------------------------------------------------------

interface KillTarget {
  name: "pglite" | "postgres";
  port: number;
  prepare(): Promise<{
    where: { dataDir?: string; databaseUrl?: string };
    /** Runs `fn` on the database while no server holds it (the embedded one is opened and closed). */
    withDb<T>(fn: (db: AppDb) => Promise<T>): Promise<T>;
    dispose(): Promise<void>;
  }>;
}

const killTargets: KillTarget[] = [
  {
    name: "pglite",
    port: PORTS.killPglite,
    async prepare() {
      const data = await freshDataDir("coinkeep-chain-kill-");
      return {
        where: { dataDir: data.dataDir },
        async withDb(fn) {
          const database = await openDatabase({ dataDir: data.dataDir });
          try {
            return await fn(database.db);
          } finally {
            await database.close();
          }
        },
        dispose: data.remove,
      };
    },
  },
];
if (adminUrl) {
  killTargets.push({
    name: "postgres",
    port: PORTS.killPostgres,
    async prepare() {
      const opened = await openTempPostgres(adminUrl);
      return {
        where: { databaseUrl: opened.databaseUrl },
        withDb: (fn) => fn(opened.database.db),
        dispose: opened.dispose,
      };
    },
  });
}

const KILLS = 4;

describe.skipIf(!built).each(killTargets)("kill -9 while the watcher catches up ($name)", (target) => {
  test("after each kill the deposits up to the cursor are recorded once and nothing above it; at the end all of them", async () => {
    const prepared = await target.prepare();
    const hosts: HostProcess[] = [];
    const start = async () => {
      const host = await spawnHost({
        port: target.port,
        ...(prepared.where.dataDir ? { dataDir: prepared.where.dataDir } : {}),
        env: chainEnv(prepared.where.databaseUrl),
      });
      hosts.push(host);
      return host;
    };
    try {
      const holders = await prepared.withDb((db) => makeHolders(db, 4));
      const walletIds = walletIdsOf(holders);

      // The first start places the cursor at the head (less the deepest policy) and reads on.
      const first = await start();
      await first.ready();
      await caughtUp(first);
      await kill9(first);

      // 30 blocks paying us over ~150 blocks while no server runs; each round adds 3 more.
      const expected = await depositBlocks(holders, 30, 4);
      const cursors: number[] = [];
      for (let round = 1; round <= KILLS; round++) {
        await node.mine(4);
        expected.push(...(await depositBlocks(holders, 3, 4)));
        const host = await start();
        await until("the watcher to lead", () => said(host, "chain watcher leads").length > 0);
        const recorded = () => said(host, "chain deposit credited").length;
        if (round % 2 === 1) {
          // Just after the n-th deposit logged: between batches, or into the next one.
          const n = 1 + Math.floor(Math.random() * 12);
          await until(`${n} deposits recorded`, () => recorded() >= n);
          await sleep(Math.floor(Math.random() * 120));
        } else {
          // Anywhere after the first batch: reading blocks, asking for receipts, inside a transaction.
          await until("a first batch recorded", () => recorded() > 0);
          await sleep(Math.floor(Math.random() * 400));
        }
        await kill9(host);
        const state = await prepared.withDb((db) => expectRecorded(db, expected, walletIds));
        cursors.push(state.cursor);
      }
      console.log(
        `${target.name}: cursors after the ${KILLS} kills`,
        cursors,
        "head",
        await node.blockNumber(),
      );
      // The cursor never went back.
      expect(cursors).toEqual(cursors.toSorted((x, y) => x - y));

      // Once more, left to finish: everything once, the last blocks' deposits still pending.
      const last = await start();
      await last.ready();
      await caughtUp(last);
      await last.stop();
      const head = await node.blockNumber();
      const end = await prepared.withDb((db) => expectRecorded(db, expected, walletIds));
      expect(end.cursor).toBe(head);
      expect(end.credited + end.pending).toBe(expected.length);
      expect(end.pending).toBe(expected.filter((d) => head - d.block + 1 < REQUIRED[d.coin]).length);
      expect(end.pending).toBeGreaterThan(0);
      for (const host of hosts) expectNoKey(host);
    } finally {
      for (const host of hosts) await host.stop({ signal: "SIGKILL" });
      await prepared.dispose();
    }
  }, 180_000);
});

// ---------------------------------------------------------------------------
// 1b. kill -9 inside a step's transaction (a child running the watcher that pauses there).
// ---------------------------------------------------------------------------

const CHILD = path.resolve(import.meta.dirname, "../support/chain-watch-child.ts");

interface Child {
  /** Until a line starting with `prefix` is printed; that line. */
  line(prefix: string, timeoutMs?: number): Promise<string>;
  kill9(): Promise<void>;
}

/** tests/support/chain-watch-child.ts on `where`, pausing as `pause` says (CHILD_PAUSE, CHILD_PAUSE_AFTER). */
function startChild(where: string, pause: string, after = 0): Child {
  const child = spawn(process.execPath, [CHILD], {
    env: {
      PATH: process.env.PATH,
      CHILD_DB: where,
      CHILD_RPC: node.rpcUrl,
      CHILD_TOKEN: token,
      CHILD_CONFIRMATIONS: JSON.stringify(REQUIRED),
      CHILD_BATCH: "5",
      CHILD_PAUSE: pause,
      CHILD_PAUSE_AFTER: String(after),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    async line(prefix, timeoutMs = 30_000) {
      let found: string | undefined;
      await until(
        `the child's "${prefix}" line`,
        () => {
          if (child.exitCode !== null) throw new Error(`the child ended: ${err}`);
          found = out.split("\n").find((l) => l.startsWith(prefix));
          return found !== undefined;
        },
        timeoutMs,
      );
      return found ?? "";
    },
    async kill9() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** "mid <from>-<to> deposits <k>": the paused batch's blocks and the deposits it had recorded. */
function midOf(line: string): { from: number; to: number; deposits: number } {
  const found = /^mid (\d+)-(\d+) deposits (\d+)$/u.exec(line);
  if (!found) throw new Error(`not a mid line: ${line}`);
  return { from: Number(found[1]), to: Number(found[2]), deposits: Number(found[3]) };
}

const cursorOf = (db: AppDb) => listCursors(db).then(([c]) => c?.blockNumber);

/** How many block hashes are kept from block `from` on. */
const blocksFrom = (db: AppDb, from: number) =>
  db
    .select({ n: sql<number>`count(*)::int` })
    .from(chainBlocks)
    .where(sql`${chainBlocks.number} >= ${from}`)
    .then(([row]) => row?.n);

describe.skipIf(!built).each(killTargets)("kill -9 inside a step's transaction ($name)", (target) => {
  test("killed while a batch's deposits are written but not committed: none of them is there, the cursor is before the batch; restarted, each once", async () => {
    const prepared = await target.prepare();
    const where = prepared.where.dataDir ?? prepared.where.databaseUrl ?? "";
    const children: Child[] = [];
    const start = (pause: string, after = 0) => {
      const child = startChild(where, pause, after);
      children.push(child);
      return child;
    };
    try {
      const holders = await prepared.withDb((db) => makeHolders(db, 3));
      const walletIds = walletIdsOf(holders);

      // The cursor placed and caught up; then 12 blocks paying us, one empty block after each.
      const first = start("none");
      await first.line(`step caught-up ${await node.blockNumber()}`);
      await first.kill9();
      const expected = await depositBlocks(holders, 12, 1);

      // (a) The first batch paused before the cursor's UPDATE, its last statement: every
      // deposit of the batch written in the transaction, none committed.
      const before = await prepared.withDb(cursorOf);
      const a = start("cursor");
      const atCursor = midOf(await a.line("mid "));
      await a.kill9();
      expect(atCursor.from).toBe((before ?? 0) + 1);
      expect(atCursor.deposits).toBeGreaterThan(0);
      await prepared.withDb(async (db) => {
        const state = await expectRecorded(db, expected, walletIds);
        expect(state.cursor).toBe(before);
        expect(await blocksFrom(db, atCursor.from)).toBe(0);
      });

      // (b) One batch committed, the next paused after its second deposit's write.
      const b = start("deposit:2", 1);
      const atDeposit = midOf(await b.line("mid "));
      await b.kill9();
      expect(atDeposit.from).toBeGreaterThan(atCursor.from);
      expect(atDeposit.deposits).toBe(2);
      await prepared.withDb(async (db) => {
        const state = await expectRecorded(db, expected, walletIds);
        expect(state.cursor).toBe(atDeposit.from - 1);
        expect(await blocksFrom(db, atDeposit.from)).toBe(0);
      });

      // (c) Left to finish: every deposit once, the last ones still counting.
      const last = start("none");
      const head = await node.blockNumber();
      await last.line(`step caught-up ${head}`, 60_000);
      await last.kill9();
      const end = await prepared.withDb((db) => expectRecorded(db, expected, walletIds));
      expect(end.cursor).toBe(head);
      expect(end.credited + end.pending).toBe(expected.length);
    } finally {
      for (const child of children) await child.kill9();
      await prepared.dispose();
    }
  }, 180_000);
});

// ---------------------------------------------------------------------------
// 2. Two processes on one PostgreSQL.
// ---------------------------------------------------------------------------

/** Who holds the ETH watcher's session lock on `db`'s database (PostgreSQL's pids). */
async function leaderLocks(db: AppDb): Promise<number[]> {
  const lockKey = CHAIN_LEADER_LOCK.ETH;
  const rows = rowsOf<{ pid: number }>(
    await db.execute(sql`
      SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 1
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND classid = ${Number(lockKey >> 32n)}::bigint::oid
        AND objid = ${Number(lockKey & 0xffffffffn)}::bigint::oid`),
  );
  return rows.map((r) => r.pid);
}

describe.skipIf(!built || !adminUrl)("two server processes on one PostgreSQL: one watcher at a time", () => {
  let opened: OpenedDatabase;
  let holders: Holder[];
  const hosts: HostProcess[] = [];

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    holders = await makeHolders(opened.database.db, 2);
  }, 60_000);
  afterAll(async () => {
    for (const host of hosts) await host.stop({ signal: "SIGKILL" });
    await opened?.dispose();
  });

  /** Until every deposit of `expected` is in the database, credited. */
  const creditedAll = (expected: readonly Deposit[]) =>
    until("the deposits credited", async () => {
      const rows = await opened.database.db
        .select({
          coin: chainDeposits.coin,
          txid: chainDeposits.txid,
          outputIndex: chainDeposits.outputIndex,
        })
        .from(chainDeposits)
        .where(eq(chainDeposits.status, "credited"));
      const have = new Set(rows.map(key));
      return expected.every((d) => have.has(key(d)));
    });

  test("one leads and reads; killed with -9, the other takes over and records what came after", async () => {
    const db = opened.database.db;
    const start = (port: number) => spawnHost({ port, env: chainEnv(opened.databaseUrl) });
    const [a, b] = await Promise.all([start(PORTS.a), start(PORTS.b)]);
    if (!a || !b) throw new Error("no hosts");
    hosts.push(a, b);
    await Promise.all([a.ready(), b.ready()]);
    await caughtUp(a);

    const expected = await depositBlocks(holders, 4, 1);
    await node.mine(REQUIRED.ETH);
    await creditedAll(expected);
    const leaders = [a, b].filter((h) => said(h, "chain watcher leads").length > 0);
    expect(leaders).toHaveLength(1);
    const [leader] = leaders;
    const other = leader === a ? b : a;
    expect(said(leader ?? a, "chain watcher leads")).toEqual([
      expect.objectContaining({ level: "info", network: "ETH", rpc: RPC_ORIGIN }),
    ]);
    // Only the leader recorded; the database holds each deposit once.
    expect(said(other, "chain deposit credited")).toEqual([]);
    expect(said(leader ?? a, "chain deposit credited")).toHaveLength(expected.length);
    expect(await leaderLocks(db)).toHaveLength(1);
    await expectRecordedLive(expected);

    // The leader dies mid-poll; deposits keep coming; the other takes over within a few polls.
    await kill9(leader ?? a);
    const after = await depositBlocks(holders, 3, 1);
    await node.mine(REQUIRED.ETH);
    await until("the other to lead", () => said(other, "chain watcher leads").length === 1, 30_000);
    await creditedAll(after);
    expect(await leaderLocks(db)).toHaveLength(1);
    await expectRecordedLive([...expected, ...after]);

    // The killed one back: it does not lead while the other lives, and nothing is doubled.
    const back = await start(leader === a ? PORTS.a : PORTS.b);
    hosts.push(back);
    await back.ready();
    const later = await depositBlocks(holders, 2, 1);
    await node.mine(REQUIRED.ETH);
    await creditedAll(later);
    expect(said(back, "chain watcher leads")).toEqual([]);
    expect(said(other, "chain watcher leads")).toHaveLength(1);
    expect(await leaderLocks(db)).toHaveLength(1);
    await expectRecordedLive([...expected, ...after, ...later]);
    for (const host of [a, b, back]) expectNoKey(host);
  }, 120_000);

  /** expectRecorded while the servers run: the deposits as they stand with the cursor read now. */
  async function expectRecordedLive(expected: readonly Deposit[]) {
    const head = await node.blockNumber();
    await until(
      "the cursor at the head",
      async () => (await listCursors(opened.database.db))[0]?.blockNumber === head,
    );
    await expectRecorded(opened.database.db, expected, walletIdsOf(holders));
  }
});

// ---------------------------------------------------------------------------
// 3 and 4. Faults, lies and the operator's commands (one server, on PGlite).
// ---------------------------------------------------------------------------

describe.skipIf(!built)("a node that fails or lies, and ops chains (pglite)", () => {
  let data: Awaited<ReturnType<typeof freshDataDir>>;
  let holders: Holder[];
  /** An ETH wallet whose address is the token contract: ETH sent there fails (it has no payable function). */
  let contractWallet: { walletId: string; address: Address };
  let host: HostProcess;
  const expected: Deposit[] = [];
  const ops = (...args: string[]) => runOps({ DATA_DIR: data.dataDir }, ...args);

  beforeAll(async () => {
    data = await freshDataDir("coinkeep-chain-faults-");
    const database: Database = await openDatabase({ dataDir: data.dataDir });
    try {
      holders = await makeHolders(database.db, 2);
      const user = await insertUser(database.db, "contract");
      const wallet = await fundedWallet(database.db, user, "ETH", { address: token });
      contractWallet = { walletId: wallet.walletId, address: wallet.address as Address };
    } finally {
      await database.close();
    }
    host = await spawnHost({ port: PORTS.faults, dataDir: data.dataDir, env: chainEnv() });
    await host.ready();
    await caughtUp(host);
  }, 120_000);
  afterAll(async () => {
    proxy.mode = "pass";
    proxy.lieTo = undefined;
    await host?.stop({ signal: "SIGKILL" });
    await data?.remove();
  });

  test("lies: a transfer to an address never issued, a Transfer log that does not decode, a failed transaction naming value: none recorded", async () => {
    const [holder] = holders;
    if (!holder) throw new Error("no holder");
    proxy.lieTo = holder.USDT.address;
    proxy.mode = "lie";
    const paid = await depositBlock(holders, 2, 1);
    // 21,000 gas: the contract runs out at its first instruction; the transaction fails, mined.
    const failedBlock = await node.sendBatch([{ to: contractWallet.address, value: 5n * 10n ** 17n }]);
    const failed = await node.client.getBlock({
      blockNumber: BigInt(failedBlock),
      includeTransactions: true,
    });
    const [failedTx] = failed.transactions;
    expect(failedTx?.to?.toLowerCase()).toBe(contractWallet.address.toLowerCase());
    expect(failedTx?.value).toBe(5n * 10n ** 17n);
    expect((await node.client.getTransactionReceipt({ hash: failedTx?.hash ?? "0x" })).status).toBe(
      "reverted",
    );
    await node.mine(REQUIRED.ETH);
    await caughtUp(host);
    proxy.mode = "pass";
    expected.push(...paid);
    // The junk log was seen (and logged, named by its transaction) and skipped.
    const skipped = said(host, "chain log skipped: not a decodable Transfer");
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped[0]).toMatchObject({ level: "warn", network: "ETH", logIndex: 0x63 });
    // What was recorded is checked with the rest once the server stops (the last test).
  }, 60_000);

  test("a node down, a node answering the head but not its blocks, garbage: /readyz stays ready; ops chains and the metric say so; then it recovers", async () => {
    await caughtUp(host);
    const before = await node.blockNumber();
    const ready = async () => {
      const answer = await fetch(`${host.base}/readyz`);
      return [answer.status, await answer.text()];
    };

    // The node stopped: connections refused. Deposits keep coming meanwhile.
    await proxy.down();
    await until("the step failing", async () => (await figures(host)).failing === 1);
    expect(await figures(host)).toEqual({ head: before, cursor: before, lag: 0, failing: 1 });
    const downError = lastError(await ops("chains", "--json"));
    expect(downError).toBe("HTTP request failed.");
    expect(await ready()).toEqual([200, "ready\n"]);
    const [first, second] = holders;
    if (!first || !second) throw new Error("no holders");
    const ethTx = await node.sendEth(first.ETH.address, 7n * 10n ** 15n);
    const tokenTx = await node.sendToken(token, second.USDT.address, 7_000n);
    await node.mine(5);
    const [ethReceipt, tokenReceipt] = await Promise.all(
      [ethTx, tokenTx].map((hash) => node.client.getTransactionReceipt({ hash })),
    );
    const block = Number(ethReceipt?.blockNumber);
    expect([block, Number(tokenReceipt?.blockNumber)]).toEqual([before + 1, before + 1]);
    expected.push(
      {
        coin: "ETH",
        txid: ethTx,
        outputIndex: 0,
        walletId: first.ETH.walletId,
        amount: 7n * 10n ** 15n,
        block,
      },
      {
        coin: "USDT",
        txid: tokenTx,
        outputIndex: tokenReceipt?.logs[0]?.logIndex ?? -1,
        walletId: second.USDT.walletId,
        amount: 7_000n,
        block,
      },
    );

    // Back, answering the head but garbage for blocks: 5 blocks behind, and it says so.
    proxy.mode = "garbage-blocks";
    await proxy.up();
    let blocksError: string | null | undefined;
    await until(
      "the blocks' error",
      async () => {
        blocksError = lastError(await ops("chains", "--json"));
        return blocksError !== downError;
      },
      30_000,
    );
    expect(blocksError).toBe(
      "eth_getBlockByNumber: the node's answer has the wrong shape (number: not a hex quantity)",
    );
    expect(await figures(host)).toEqual({ head: before + 5, cursor: before, lag: 5, failing: 1 });
    expect(await ready()).toEqual([200, "ready\n"]);
    const json = JSON.parse(await ops("chains", "--json")) as { networks: { lastErrorAt: string }[] };
    const shown = `${blocksError ?? ""} (${json.networks[0]?.lastErrorAt ?? ""})`;
    const head = String(before + 5);
    expect(head.length).toBeLessThanOrEqual(4);
    expect(await ops("chains")).toBe(
      [
        `NETWORK  COINS     RPC                    HEAD  CURSOR  LAG  ${"LAST ERROR".padEnd(shown.length)}`.trimEnd(),
        `-------  --------  ---------------------  ----  ------  ---  ${"-".repeat(shown.length)}`,
        `ETH      ETH USDT  ${RPC_ORIGIN}  ${head.padStart(4)}  ${String(before).padStart(6)}    5  ${shown}`,
        "",
        "BNB deposits are not watched (CHAIN_RPC_BNB is not set).",
        "",
      ].join("\n"),
    );

    // Garbage to everything, the head too.
    proxy.mode = "garbage";
    await until(
      "the garbage error",
      async () => lastError(await ops("chains", "--json")) !== blocksError,
      30_000,
    );
    expect(lastError(await ops("chains", "--json"))).toBe(
      "eth_blockNumber: the node's answer has the wrong shape (answer: Invalid input: expected string, received object)",
    );
    expect(await figures(host)).toEqual({ head: before + 5, cursor: before, lag: 5, failing: 1 });
    expect(await ready()).toEqual([200, "ready\n"]);

    // Healthy again: the watcher reads what came meanwhile.
    proxy.mode = "pass";
    await caughtUp(host, 90_000);
    const now = await node.blockNumber();
    expect(await figures(host)).toEqual({ head: now, cursor: now, lag: 0, failing: 0 });
    expect(lastError(await ops("chains", "--json"))).toBeNull();
    // The first failure was logged (then every tenth), without the endpoint's path.
    expect(said(host, "chain watcher step failed").map((l) => [l.level, l.error, l.failures])).toEqual([
      ["warn", downError, 1],
    ]);
    expect(said(host, "chain deposit credited").map((l) => l.txid)).toEqual(
      expect.arrayContaining([ethTx, tokenTx]),
    );
  }, 120_000);

  test("ops chains and its --json; ops chains rescan ETH --from …: an audit row, nothing recorded twice", async () => {
    await caughtUp(host);
    const head = await node.blockNumber();
    expect(head).toBeLessThan(10_000);
    expect(await ops("chains")).toBe(
      [
        "NETWORK  COINS     RPC                    HEAD  CURSOR  LAG  LAST ERROR",
        "-------  --------  ---------------------  ----  ------  ---  ----------",
        `ETH      ETH USDT  ${RPC_ORIGIN}  ${String(head).padStart(4)}  ${String(head).padStart(6)}    0`,
        "",
        "BNB deposits are not watched (CHAIN_RPC_BNB is not set).",
        "",
      ].join("\n"),
    );
    expect(JSON.parse(await ops("chains", "--json"))).toEqual({
      networks: [
        {
          network: "ETH",
          rpc: RPC_ORIGIN,
          coins: ["ETH", "USDT"],
          head,
          cursor: head,
          lag: 0,
          lastError: null,
          lastErrorAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u),
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u),
        },
      ],
      orphaned: [],
      unwatched: ["BNB deposits are not watched (CHAIN_RPC_BNB is not set)"],
    });

    // Read again from the first block that paid us: every deposit found a second time.
    const from = Math.min(...expected.map((d) => d.block));
    expect(await ops("chains", "rescan", "ETH", "--from", String(from), "--as", "tester")).toBe(
      `The ETH watcher reads again from block ${from} (its cursor was at ${head}).\n`,
    );
    await caughtUp(host);
    await host.stop();
    expectNoKey(host);

    const database = await openDatabase({ dataDir: data.dataDir });
    try {
      const db = database.db;
      const end = await expectRecorded(db, expected, [...walletIdsOf(holders), contractWallet.walletId]);
      expect(end).toEqual({ cursor: head, credited: expected.length, pending: 0 });
      // The failed transaction to the contract's wallet recorded nothing.
      expect(await walletBalance(db, contractWallet.walletId)).toBe(0n);
      const rescans = await db
        .select({ actor: auditLog.actor, subject: auditLog.subject, details: auditLog.details })
        .from(auditLog)
        .where(eq(auditLog.action, "chain.rescan"));
      expect(rescans).toEqual([
        { actor: "tester", subject: "ETH", details: { network: "ETH", from, cursorBefore: head } },
      ]);
      // Every deposit was seen twice: credited once, and no other audit row but its pending and credit.
      const perDeposit = await db
        .select({ action: auditLog.action, n: sql<number>`count(*)::int` })
        .from(auditLog)
        .where(and(eq(auditLog.actor, "chain-watcher")))
        .groupBy(auditLog.action)
        .orderBy(asc(auditLog.action));
      expect(perDeposit.find((r) => r.action === "deposit.credit")?.n).toBe(expected.length);
    } finally {
      await database.close();
    }
  }, 120_000);

  test("misconfigured: CHAIN_RPC_ETH not http(s)/ws(s), CHAIN_TOKEN_USDT not an address: the start stops naming the variable", async () => {
    for (const [name, value, message] of [
      [
        "CHAIN_RPC_ETH",
        `ftp://user:${RPC_KEY}@127.0.0.1/v3/${RPC_KEY}`,
        "CHAIN_RPC_ETH: must be the http(s):// or ws(s):// URL of the network's JSON-RPC endpoint",
      ],
      ["CHAIN_TOKEN_USDT", "0x12", "CHAIN_TOKEN_USDT: must be the token contract's 0x address. "],
    ] as const) {
      const refused = await spawnHost({ port: PORTS.refused, env: { ...chainEnv(), [name]: value } });
      const code = await refused.exited;
      await refused.stop();
      expect([name, code]).toEqual([name, 1]);
      expect(refused.output.stderr).toMatch(/^Invalid configuration:\n {2}/u);
      expect(refused.output.stderr.split("\n")[1]).toContain(message);
      expect(refused.output.stderr).not.toMatch(/\n\s+at /u);
      expect(refused.output.stderr).not.toContain(RPC_KEY);
      expect(refused.output.stdout).toBe("");
    }
  }, 60_000);
});

/** The ETH network's last error in `ops chains --json`. */
function lastError(json: string): string | null | undefined {
  return (JSON.parse(json) as { networks: { network: string; lastError: string | null }[] }).networks.find(
    (n) => n.network === "ETH",
  )?.lastError;
}
