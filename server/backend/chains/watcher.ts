// The deposit watcher of one EVM network (issue 30, record 053). In every backend process;
// one of them at a time reads the network: the one holding the network's session-level
// advisory lock (CHAIN_LEADER_LOCK) on a connection of its own. Should two ever overlap,
// each step still compares the cursor before moving it (server/backend/domain/chain-watch.ts),
// and deposits are keyed on (coin, txid, index): nothing is recorded twice.
//
// A step: the head; the blocks after the cursor (up to BATCH_BLOCKS), each the parent of the
// next and the first the child of the cursor's block — else a reorganisation, walked back to
// the common ancestor; native transfers to our issued addresses (that succeeded: receipt
// status 1) and the token's Transfer logs to them; all recorded in one transaction with the
// cursor. A node that is down or answers garbage: the step is retried with backoff (2 s
// doubling, at most a minute), the error kept for ops chains and the metrics; /readyz does not
// depend on it.
import { decodeEventLog, parseAbi } from "viem";
import type { Ticker } from "../../../common/coins.ts";
import { log } from "../../../common/log.ts";
import type { AppDb, HeldLock } from "../db/index.ts";
import {
  CHAIN_LEADER_LOCK,
  ChainStepRefused,
  issuedAmong,
  noteProgress,
  readCursor,
  recordBlocks,
  rewind,
  startCursor,
  storedBlocks,
  type FoundTransfer,
  type ReadBlock,
} from "../domain/chain-watch.ts";
import type { DepositPolicy } from "../domain/deposits.ts";
import { evmSource, RpcShapeError, type ChainBlock, type EvmSource } from "./evm-source.ts";
import { rpcOrigin, type ChainNetworkSetting, type ChainSettings } from "./settings.ts";

/** Blocks read per step (and per transaction). */
export const BATCH_BLOCKS = 20;
/** Hashes kept below the newest block beyond the deepest policy, for walking back. */
const KEEP_MARGIN = 64;
const MAX_BACKOFF_MS = 60_000;
/** Full blocks asked in one JSON-RPC batch. */
const BLOCKS_PER_REQUEST = 4;
/** Transfers to us recorded in one step's transaction (at least one block's, however many). */
const MAX_TRANSFERS_PER_STEP = 500;

const ERC20 = parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"]);

export interface ChainWatcherOptions {
  db: AppDb;
  setting: ChainNetworkSetting;
  policy: DepositPolicy;
  pollMs: number;
  /** Takes the network's leadership lock, or null when another process holds it. */
  holdLock: (key: bigint) => Promise<HeldLock | null>;
  /** Tests: a source other than the RPC URL's. */
  source?: EvmSource;
  /** Tests: how many blocks a step reads. */
  batchBlocks?: number;
  /** Tests: how many transfers to us a step records at most (MAX_TRANSFERS_PER_STEP). */
  maxTransfersPerStep?: number;
}

export interface ChainWatcher {
  start(): void;
  stop(): Promise<void>;
  /** Tests and the bench: one step now (when leader), resolving once done. */
  step(): Promise<StepOutcome>;
  /** Whether this process reads the network now. */
  leading(): boolean;
}

export type StepOutcome = "not-leader" | "caught-up" | "read" | "rewound" | "raced" | "failed";

class ChainMoved extends Error {}

export function createChainWatcher(opts: ChainWatcherOptions): ChainWatcher {
  const { db, setting, policy } = opts;
  const network = setting.network;
  const coins: Ticker[] = [setting.native, ...(setting.token ? [setting.token.coin] : [])];
  /** The deepest confirmations policy of the network's coins: where a fresh watcher starts, and what it keeps. */
  const deepest = Math.max(...coins.map((c) => policy.confirmations[c]));
  const keep = deepest + KEEP_MARGIN;
  const batch = opts.batchBlocks ?? BATCH_BLOCKS;
  const maxTransfers = opts.maxTransfersPerStep ?? MAX_TRANSFERS_PER_STEP;
  const source = opts.source ?? evmSource(setting.rpcUrl);
  let lock: HeldLock | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<StepOutcome> | undefined;
  let failures = 0;
  /** The head the step under way has read (a step that fails after reading it still notes it). */
  let headSeen: number | undefined;

  async function lead(): Promise<boolean> {
    if (lock && !lock.lost()) return true;
    lock = await opts.holdLock(CHAIN_LEADER_LOCK[network]);
    if (lock) log.info("chain watcher leads", { network, rpc: rpcOrigin(setting.rpcUrl) });
    return lock !== null;
  }

  async function readBlocks(from: number, to: number): Promise<ChainBlock[]> {
    const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    // A few blocks per request: over http the calls of one turn go as one JSON-RPC batch, and
    // twenty full blocks of 1,000 transactions (13 MB) pass viem's 10 MiB answer limit.
    const blocks: (ChainBlock | null)[] = [];
    for (let i = 0; i < numbers.length; i += BLOCKS_PER_REQUEST) {
      blocks.push(
        ...(await Promise.all(numbers.slice(i, i + BLOCKS_PER_REQUEST).map((n) => source.block(n)))),
      );
    }
    const read: ChainBlock[] = [];
    for (const block of blocks) {
      // A node behind its own head, or a reorganisation while we read: stop at the gap.
      if (!block) break;
      const previous = read.at(-1);
      if (previous && block.parentHash !== previous.hash) break;
      read.push(block);
    }
    return read;
  }

  /** The transfers to our addresses in `blocks`: native ones that succeeded, and the token's. */
  async function transfersIn(blocks: ChainBlock[]): Promise<FoundTransfer[]> {
    const byNumber = new Map(blocks.map((b) => [b.number, b]));
    const found: FoundTransfer[] = [];
    const candidates = blocks.flatMap((b) =>
      b.transactions.filter((t) => t.to !== null && t.value > 0n).map((t) => ({ block: b, tx: t })),
    );
    const ours = await issuedAmong(
      db,
      setting.native,
      candidates.map((c) => c.tx.to ?? ""),
    );
    const paying = candidates.filter((c) => c.tx.to !== null && ours.has(c.tx.to));
    // A transaction that failed moved no value, though it names one. Asked together: over http
    // viem sends them as JSON-RPC batches.
    const receipts = await Promise.all(paying.map((c) => source.receipt(c.tx.hash)));
    for (const [i, { block, tx }] of paying.entries()) {
      const receipt = receipts[i];
      if (!receipt) throw new ChainMoved(`no receipt for ${tx.hash}`);
      if (receipt.blockHash !== block.hash) throw new ChainMoved(`${tx.hash} moved to another block`);
      if (!receipt.ok || !tx.to) continue;
      found.push({
        coin: setting.native,
        txid: tx.hash,
        outputIndex: 0,
        address: tx.to,
        units: tx.value,
        block: header(block),
      });
    }
    if (setting.token) {
      const first = blocks[0];
      const last = blocks.at(-1);
      if (first && last) {
        const logs = await source.transferLogs(setting.token.address, first.number, last.number);
        const decoded: { to: string; value: bigint; log: (typeof logs)[number] }[] = [];
        for (const entry of logs) {
          const block = byNumber.get(entry.blockNumber);
          if (!block || block.hash !== entry.blockHash)
            throw new ChainMoved(`log of block ${entry.blockNumber} from another chain`);
          try {
            const event = decodeEventLog({
              abi: ERC20,
              data: entry.data,
              topics: entry.topics as [`0x${string}`, ...`0x${string}`[]],
            });
            if (event.args.value > 0n)
              decoded.push({ to: event.args.to, value: event.args.value, log: entry });
          } catch {
            // Not a standard Transfer (a token that indexes differently, or junk): logged, skipped.
            log.warn("chain log skipped: not a decodable Transfer", {
              network,
              txid: entry.transactionHash,
              logIndex: entry.logIndex,
            });
          }
        }
        const tokenOurs = await issuedAmong(
          db,
          setting.token.coin,
          decoded.map((d) => d.to),
        );
        for (const d of decoded) {
          if (!tokenOurs.has(d.to)) continue;
          const block = byNumber.get(d.log.blockNumber);
          if (!block) continue;
          found.push({
            coin: setting.token.coin,
            txid: d.log.transactionHash,
            outputIndex: d.log.logIndex,
            address: d.to,
            units: d.value,
            block: header(block),
          });
        }
      }
    }
    return found;
  }

  /** The chain's block at the cursor is not ours: walk back to the newest block both agree on. */
  async function walkBack(cursor: { blockNumber: number; blockHash: string | null }): Promise<StepOutcome> {
    const stored = await storedBlocks(db, network, cursor.blockNumber, keep + 1);
    let ancestor: { number: number; hash: string } | null = null;
    for (const mine of stored) {
      const theirs = await source.header(mine.number);
      if (theirs && theirs.hash === mine.hash) {
        ancestor = mine;
        break;
      }
    }
    // The node says block n+1's parent is not block n, yet block n is still the one we read:
    // its answers disagree with each other (a node mid-import, or a broken one). Nothing to
    // rewind; a failure, so the step is retried with backoff instead of at once, forever.
    if (ancestor && ancestor.number === cursor.blockNumber) {
      throw new ChainMoved(
        `the node's block ${cursor.blockNumber + 1} does not follow its block ${cursor.blockNumber}, which is unchanged`,
      );
    }
    const result = await rewind(db, { network, coins, expected: cursor, ancestor });
    if (!result.moved) return "raced";
    if (!ancestor) {
      log.error("chain reorganised deeper than the blocks kept; deposits paused", {
        network,
        paused: result.paused.join(" "),
      });
      return "rewound";
    }
    log.warn("chain reorganisation", {
      network,
      from: cursor.blockNumber,
      ancestor: ancestor.number,
      withdrawn: result.withdrawn,
      orphaned: result.orphaned.length,
    });
    for (const d of result.orphaned) {
      log.error("credited deposit's block reorganised away; deposits paused", {
        network,
        coin: d.coin,
        txid: d.txid,
        outputIndex: d.outputIndex,
        walletId: d.walletId,
      });
    }
    return "rewound";
  }

  async function step(): Promise<StepOutcome> {
    if (!(await lead())) return "not-leader";
    const head = await source.head();
    headSeen = head;
    const cursor = (await readCursor(db, network)) ?? (await startCursor(db, network, head - deepest, head));
    if (cursor.blockNumber >= head) {
      // Caught up; a head below the cursor is a node behind, or a chain rewound past us.
      if (cursor.blockNumber > head && cursor.blockHash) {
        const ours = await source.header(cursor.blockNumber);
        if (!ours || ours.hash !== cursor.blockHash) return walkBack(cursor);
      }
      if (cursor.head !== head || cursor.lastError !== null)
        await noteProgress(db, network, { head, error: null });
      return "caught-up";
    }
    const blocks = await readBlocks(cursor.blockNumber + 1, Math.min(head, cursor.blockNumber + batch));
    const first = blocks[0];
    if (!first) throw new ChainMoved(`block ${cursor.blockNumber + 1} not served yet`);
    if (cursor.blockHash && first.parentHash !== cursor.blockHash) return walkBack(cursor);
    const found = await transfersIn(blocks);
    // One transaction records what a step read; on PGlite it holds the only connection, so a
    // step with many deposits stops at the block that passes MAX_TRANSFERS_PER_STEP (the rest
    // is read again by the next step).
    let kept = blocks.length;
    for (let i = 0, count = 0; i < blocks.length; i++) {
      const number = blocks[i]?.number;
      count += found.filter((t) => t.block.number === number).length;
      if (count > maxTransfers && i > 0) {
        kept = i;
        break;
      }
    }
    const recordedBlocks = blocks.slice(0, kept);
    const last = recordedBlocks.at(-1)?.number ?? first.number;
    const transfers = found.filter((t) => t.block.number <= last);
    const result = await recordBlocks(db, {
      network,
      expected: cursor,
      blocks: recordedBlocks.map(header),
      transfers,
      head,
      policy,
      keep,
    });
    if (!result.moved) return "raced";
    for (const r of result.recorded) {
      if (r.outcome === "credited" || (r.outcome === "pending" && r.firstSeen)) {
        log.info(r.outcome === "credited" ? "chain deposit credited" : "chain deposit seen", {
          network,
          coin: r.deposit.coin,
          txid: r.deposit.externalTxId,
          outputIndex: r.deposit.outputIndex,
          confirmations: r.confirmations,
          required: r.required,
        });
      }
    }
    return "read";
  }

  async function guardedStep(): Promise<StepOutcome> {
    headSeen = undefined;
    try {
      const outcome = await step();
      failures = 0;
      return outcome;
    } catch (error) {
      failures++;
      const message = describe(error);
      // The same error again is logged once per ten, so a node down for hours does not flood the log.
      if (failures === 1 || failures % 10 === 0)
        log.warn("chain watcher step failed", { network, error: message, failures });
      try {
        // With the head when it was read: a node that answers the head but not its blocks leaves
        // the watcher behind, and the lag (ops chains, the metrics) must say by how much.
        await noteProgress(db, network, {
          error: message,
          ...(headSeen === undefined ? {} : { head: headSeen }),
        });
      } catch {
        // The database is unreachable too: the next step tries again.
      }
      if (lock?.lost()) lock = null;
      return "failed";
    }
  }

  function schedule(outcome: StepOutcome) {
    if (stopped) return;
    const wait =
      outcome === "read" || outcome === "rewound" || outcome === "raced"
        ? 0
        : outcome === "failed"
          ? Math.min(2_000 * 2 ** Math.min(failures - 1, 10), MAX_BACKOFF_MS)
          : outcome === "not-leader"
            ? // Each ask opens a connection: a follower asks at most once a second.
              Math.max(opts.pollMs, 1_000)
            : opts.pollMs;
    timer = setTimeout(loop, wait);
    timer.unref();
  }

  function loop() {
    running = guardedStep();
    void running.then(schedule);
  }

  return {
    start() {
      stopped = false;
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await lock?.release().catch(() => {});
      lock = null;
      await source.close();
    },
    async step() {
      await running;
      running = guardedStep();
      return running;
    },
    leading: () => lock !== null && !lock.lost(),
  };
}

const header = (b: ChainBlock): ReadBlock => ({ number: b.number, hash: b.hash, parentHash: b.parentHash });

/** One line for the log and ops chains: never the RPC URL (it may hold a provider's key). */
function describe(error: unknown): string {
  if (error instanceof ChainStepRefused || error instanceof ChainMoved || error instanceof RpcShapeError) {
    return error.message;
  }
  if (error instanceof Error) {
    // viem's messages name the URL; keep the first line's cause without it.
    const first = (error as { shortMessage?: string }).shortMessage ?? error.name;
    return first.replace(/https?:\/\/\S+|wss?:\/\/\S+/gu, "(the RPC endpoint)");
  }
  return "unknown error";
}

export interface ChainWatchersOptions {
  db: AppDb;
  settings: ChainSettings;
  policy: DepositPolicy;
  holdLock: (key: bigint) => Promise<HeldLock | null>;
}

/** Every configured network's watcher, the start log saying what is and is not watched. */
export function createChainWatchers(opts: ChainWatchersOptions): { start(): void; stop(): Promise<void> } {
  const watchers = opts.settings.networks.map((setting) =>
    createChainWatcher({
      db: opts.db,
      setting,
      policy: opts.policy,
      pollMs: opts.settings.pollMs,
      holdLock: opts.holdLock,
    }),
  );
  return {
    start() {
      for (const setting of opts.settings.networks) {
        log.info("chain watched", {
          network: setting.network,
          rpc: rpcOrigin(setting.rpcUrl),
          coins: [setting.native, ...(setting.token ? [setting.token.coin] : [])].join(" "),
          ...(setting.token ? { token: setting.token.address } : {}),
        });
      }
      for (const sentence of opts.settings.unwatched) log.info(sentence);
      for (const watcher of watchers) watcher.start();
    },
    async stop() {
      await Promise.all(watchers.map((w) => w.stop()));
    },
  };
}
