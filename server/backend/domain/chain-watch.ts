// What a chain watcher writes (issue 30, record 053), each step one transaction:
//
// - `recordBlocks`: the blocks read since the cursor, the deposits they paid us (through
//   recordDeposit, the path of `ops deposit`), the confirmations of the network's pending
//   deposits counted from the newest block read, and the cursor moved: all or nothing. The
//   cursor is compared before it is moved, so a step that raced another watcher, a rescan or
//   a rewind writes nothing.
// - `rewind`: a reorganisation. Back to the common ancestor: a pending deposit from a block
//   that is gone is deleted (its holder stops seeing it); a credited one is marked orphaned
//   and the coin's deposits are paused (record 041's kill switch), never debited silently.
// - `rescan` (ops chains rescan): the cursor moved back so a range is read again; what was
//   recorded stays recorded once, since deposits are keyed on (coin, txid, index).
//
// Each takes the network's transaction-level advisory lock first (CHAIN_WRITE_LOCK), so the
// three never interleave on one network, whichever process runs them.
import { and, asc, desc, eq, gt, gte, inArray, isNotNull, lt, sql } from "drizzle-orm";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import { log } from "../../../common/log.ts";
import type { EvmNetwork } from "../chains/settings.ts";
import type { AppDb } from "../db/index.ts";
import { auditLog, chainBlocks, chainCursors, chainDeposits, wallets } from "../db/schema.ts";
import { activePause, pause } from "./controls.ts";
import {
  depositAuditAction,
  recordDeposit,
  type DepositPolicy,
  type RecordDepositResult,
} from "./deposits.ts";

/** The actor of the watcher's audit rows and pauses. */
export const WATCHER_ACTOR = "chain-watcher";

/** Advisory lock keys ("CKCH" + the network in ASCII): the watcher's leadership (session lock)… */
export const CHAIN_LEADER_LOCK: Readonly<Record<EvmNetwork, bigint>> = {
  ETH: 0x434b4348_00455448n,
  BNB: 0x434b4348_00424e42n,
};
/** …and its writes (transaction lock), which a rescan from another process takes too. */
const CHAIN_WRITE_LOCK: Readonly<Record<EvmNetwork, bigint>> = {
  ETH: 0x434b4357_00455448n,
  BNB: 0x434b4357_00424e42n,
};

export interface ChainCursor {
  network: EvmNetwork;
  blockNumber: number;
  blockHash: string | null;
  head: number | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  updatedAt: Date;
}

export interface ReadBlock {
  number: number;
  hash: string;
  parentHash: string;
}

/** One transfer to one of our addresses, found in a block read. */
export interface FoundTransfer {
  coin: Ticker;
  txid: string;
  /** 0 for a native transfer; the log's index for a token's. */
  outputIndex: number;
  address: string;
  units: bigint;
  block: ReadBlock;
}

/** The watcher could not record a block's deposits: nothing was written. */
export class ChainStepRefused extends Error {}

const isNetwork = (value: string): value is EvmNetwork => value === "ETH" || value === "BNB";

function toCursor(row: typeof chainCursors.$inferSelect): ChainCursor {
  if (!isNetwork(row.network)) throw new Error(`unknown network in the database: ${row.network}`);
  return { ...row, network: row.network };
}

async function writeLock(tx: AppDb, network: EvmNetwork) {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${CHAIN_WRITE_LOCK[network].toString()}::bigint)`);
}

/** The network's write lock, then its cursor row, locked; undefined before the watcher's first start. */
async function lockCursor(tx: AppDb, network: EvmNetwork) {
  await writeLock(tx, network);
  const [cursor] = await tx
    .select()
    .from(chainCursors)
    .where(eq(chainCursors.network, network))
    .for("update");
  return cursor;
}

/** lockCursor, when the cursor is still where a step read it from; undefined when it moved. */
async function cursorWhereExpected(
  tx: AppDb,
  network: EvmNetwork,
  expected: { blockNumber: number; blockHash: string | null },
) {
  const cursor = await lockCursor(tx, network);
  return cursor && cursor.blockNumber === expected.blockNumber && cursor.blockHash === expected.blockHash
    ? cursor
    : undefined;
}

export async function readCursor(db: AppDb, network: EvmNetwork): Promise<ChainCursor | undefined> {
  const [row] = await db.select().from(chainCursors).where(eq(chainCursors.network, network));
  return row ? toCursor(row) : undefined;
}

export async function listCursors(db: AppDb): Promise<ChainCursor[]> {
  const rows = await db.select().from(chainCursors).orderBy(asc(chainCursors.network));
  return rows.map(toCursor);
}

/**
 * The cursor of a network read for the first time: just before `fromBlock` (the head less the
 * deepest policy, so deposits still confirming are seen). Another process's first cursor wins.
 */
export async function startCursor(db: AppDb, network: EvmNetwork, fromBlock: number, head: number) {
  await db
    .insert(chainCursors)
    .values({ network, blockNumber: Math.max(fromBlock, 0) - 1, blockHash: null, head })
    .onConflictDoNothing();
  const cursor = await readCursor(db, network);
  if (!cursor) throw new Error("chain cursor neither written nor found");
  return cursor;
}

/** The head last seen and the last error (null: the last step went through), for ops chains and the metrics. */
export async function noteProgress(
  db: AppDb,
  network: EvmNetwork,
  figures: { head?: number; error?: string | null },
): Promise<void> {
  const set: Partial<typeof chainCursors.$inferInsert> = { updatedAt: new Date() };
  if (figures.head !== undefined) set.head = figures.head;
  if (figures.error !== undefined) {
    set.lastError = figures.error === null ? null : figures.error.slice(0, 500);
    if (figures.error !== null) set.lastErrorAt = new Date();
  }
  await db.update(chainCursors).set(set).where(eq(chainCursors.network, network));
}

async function audit(tx: AppDb, action: string, subject: string, details: Record<string, unknown>) {
  await tx.insert(auditLog).values({
    actor: WATCHER_ACTOR,
    action,
    subject,
    userId: typeof details.userId === "string" ? details.userId : null,
    reason: typeof details.reason === "string" ? details.reason : null,
    details,
  });
}

type Recorded = Extract<RecordDepositResult, { ok: true }>;

/** recordDeposit for the watcher: a pause or an error stops the step (nothing written); a transfer that is not ours is skipped. */
async function record(
  tx: AppDb,
  network: EvmNetwork,
  t: Omit<FoundTransfer, "block"> & { confirmations: number },
  policy: DepositPolicy,
): Promise<Recorded | undefined> {
  const r = await recordDeposit(tx, t, policy);
  if (r.ok) {
    if (r.outcome === "credited" || r.outcome === "pending") {
      await audit(
        tx,
        depositAuditAction({ outcome: r.outcome, firstSeen: r.firstSeen }),
        r.deposit.walletId,
        {
          network,
          coin: t.coin,
          txid: t.txid,
          outputIndex: t.outputIndex,
          walletId: r.deposit.walletId,
          userId: r.userId,
          units: t.units.toString(),
          confirmations: r.confirmations,
          required: r.required,
          outcome: r.outcome,
        },
      );
    }
    return r;
  }
  // An address that is not ours (any more): nothing to record.
  if (r.reason === "not-ours" || r.reason === "invalid-address") return undefined;
  // The same output reported by hand with another address or amount: the chain says otherwise.
  // Stopping here would stop every deposit of the network for one operator's typo, so the
  // watcher records the disagreement (an audit row, and the log) and goes on; the operator
  // settles that one output.
  if (r.reason === "conflict") {
    log.error("chain deposit disagrees with the one recorded by hand; not recorded", {
      network,
      coin: t.coin,
      txid: t.txid,
      outputIndex: t.outputIndex,
    });
    await audit(tx, "deposit.conflict", t.txid, {
      network,
      coin: t.coin,
      txid: t.txid,
      outputIndex: t.outputIndex,
      units: t.units.toString(),
      address: t.address,
      reason: r.message,
    });
    return undefined;
  }
  // A pause stops the step: the cursor stays before this block, so nothing is missed meanwhile.
  throw new ChainStepRefused(r.message);
}

export interface RecordBlocksInput {
  network: EvmNetwork;
  /** The cursor the blocks were read from: the step writes nothing if it has moved. */
  expected: { blockNumber: number; blockHash: string | null };
  /** Consecutive blocks from expected.blockNumber + 1, each the parent of the next. */
  blocks: ReadBlock[];
  transfers: FoundTransfer[];
  head: number;
  policy: DepositPolicy;
  /** How many blocks' hashes to keep below the newest (the deepest confirmations policy and more). */
  keep: number;
}

export interface RecordBlocksResult {
  /** False: the cursor had moved (another watcher, a rescan, a rewind); nothing written. */
  moved: boolean;
  recorded: Recorded[];
}

export async function recordBlocks(db: AppDb, input: RecordBlocksInput): Promise<RecordBlocksResult> {
  const { network, blocks, policy } = input;
  const tip = blocks.at(-1);
  if (!tip) return { moved: true, recorded: [] };
  return db.transaction(async (tx) => {
    if (!(await cursorWhereExpected(tx, network, input.expected))) return { moved: false, recorded: [] };
    await tx
      .insert(chainBlocks)
      .values(blocks.map((b) => ({ network, number: b.number, hash: b.hash, parentHash: b.parentHash })))
      .onConflictDoUpdate({
        target: [chainBlocks.network, chainBlocks.number],
        set: { hash: sql`excluded.hash`, parentHash: sql`excluded.parent_hash` },
      });

    const recorded: Recorded[] = [];
    for (const t of input.transfers) {
      const r = await record(tx, network, { ...t, confirmations: tip.number - t.block.number + 1 }, policy);
      if (!r) continue;
      recorded.push(r);
      // Where it was seen; a credited deposit seen again after a reorganisation is no longer orphaned.
      await tx
        .update(chainDeposits)
        .set({ network, blockNumber: t.block.number, blockHash: t.block.hash, orphanedAt: null })
        .where(
          and(
            eq(chainDeposits.coin, t.coin),
            eq(chainDeposits.txid, t.txid),
            eq(chainDeposits.outputIndex, t.outputIndex),
            sql`(${chainDeposits.blockHash} IS DISTINCT FROM ${t.block.hash} OR ${chainDeposits.orphanedAt} IS NOT NULL)`,
          ),
        );
    }

    // The network's pending deposits in earlier blocks have one confirmation more per block read.
    const waiting = await tx
      .select({
        id: chainDeposits.id,
        coin: chainDeposits.coin,
        txid: chainDeposits.txid,
        outputIndex: chainDeposits.outputIndex,
        address: chainDeposits.address,
        units: chainDeposits.amount,
        blockNumber: chainDeposits.blockNumber,
        confirmations: chainDeposits.confirmations,
      })
      .from(chainDeposits)
      .where(
        and(
          eq(chainDeposits.network, network),
          eq(chainDeposits.status, "pending"),
          lt(chainDeposits.blockNumber, blocks[0]?.number ?? tip.number),
        ),
      );
    // Those that reach their coin's policy are credited through recordDeposit (which checks the
    // pauses and writes the audit row); the others only count, in one statement, without an audit
    // row per block (the watcher's count is the chain's, not an operator's report).
    const counting: string[] = [];
    for (const w of waiting) {
      if (!isTicker(w.coin) || w.blockNumber === null) continue;
      const confirmations = tip.number - w.blockNumber + 1;
      if (confirmations <= (w.confirmations ?? 0)) continue;
      if (confirmations < policy.confirmations[w.coin]) {
        counting.push(w.id);
        continue;
      }
      const r = await record(tx, network, { ...w, coin: w.coin, confirmations }, policy);
      if (r) recorded.push(r);
    }
    if (counting.length > 0) {
      await tx
        .update(chainDeposits)
        .set({ confirmations: sql`${tip.number}::bigint - ${chainDeposits.blockNumber} + 1` })
        .where(inArray(chainDeposits.id, counting));
    }

    await tx
      .delete(chainBlocks)
      .where(and(eq(chainBlocks.network, network), lt(chainBlocks.number, tip.number - input.keep)));
    await tx
      .update(chainCursors)
      .set({
        blockNumber: tip.number,
        blockHash: tip.hash,
        head: input.head,
        lastError: null,
        updatedAt: new Date(),
      })
      .where(eq(chainCursors.network, network));
    return { moved: true, recorded };
  });
}

/** The stored hashes from `from` down, newest first (walking back to a common ancestor). */
export async function storedBlocks(db: AppDb, network: EvmNetwork, below: number, limit: number) {
  return db
    .select({ number: chainBlocks.number, hash: chainBlocks.hash })
    .from(chainBlocks)
    .where(and(eq(chainBlocks.network, network), lt(chainBlocks.number, below + 1)))
    .orderBy(desc(chainBlocks.number))
    .limit(limit);
}

/** What rewind reads back of a deposit whose block is gone. */
const GONE_COLUMNS = {
  coin: chainDeposits.coin,
  txid: chainDeposits.txid,
  outputIndex: chainDeposits.outputIndex,
  walletId: chainDeposits.walletId,
  units: chainDeposits.amount,
  blockNumber: chainDeposits.blockNumber,
};

/** The audit row's details of a deposit whose block is gone. */
function goneDetails(
  network: EvmNetwork,
  d: {
    coin: string;
    txid: string;
    outputIndex: number;
    walletId: string;
    units: bigint;
    blockNumber: number | null;
  },
  what: string,
) {
  return {
    network,
    coin: d.coin,
    txid: d.txid,
    outputIndex: d.outputIndex,
    walletId: d.walletId,
    units: d.units.toString(),
    block: d.blockNumber,
    reason: `${what} ${d.blockNumber} was reorganised away`,
  };
}

export interface RewindResult {
  moved: boolean;
  /** Pending deposits deleted: their blocks are gone. */
  withdrawn: number;
  /** Credited deposits whose blocks are gone: marked orphaned, their coins' deposits paused. */
  orphaned: { coin: Ticker; txid: string; outputIndex: number; walletId: string; units: bigint }[];
  paused: Ticker[];
}

/**
 * A reorganisation: every block above `ancestor` is gone. `ancestor` null: no stored block
 * matches (a reorganisation deeper than the hashes kept): the network's coins are paused and
 * the cursor stays, for an operator to look at (ops chains).
 */
export async function rewind(
  db: AppDb,
  input: {
    network: EvmNetwork;
    coins: readonly Ticker[];
    expected: { blockNumber: number; blockHash: string | null };
    ancestor: { number: number; hash: string } | null;
  },
): Promise<RewindResult> {
  const { network } = input;
  return db.transaction(async (tx) => {
    const cursor = await cursorWhereExpected(tx, network, input.expected);
    if (!cursor) return { moved: false, withdrawn: 0, orphaned: [], paused: [] };
    const paused: Ticker[] = [];
    const pauseCoin = async (coin: Ticker, reason: string) => {
      if (await activePause(tx, "deposits", { coin })) return;
      const r = await pause(tx, {
        what: "deposits",
        scope: { coin },
        reason,
        actor: WATCHER_ACTOR,
        automatic: true,
      });
      if (r.ok) paused.push(coin);
    };
    if (!input.ancestor) {
      for (const coin of input.coins) {
        await pauseCoin(
          coin,
          `${network} reorganised below every block hash kept (the cursor was at block ${cursor.blockNumber}); check ops chains, rescan from before the fork, then resume`,
        );
      }
      return { moved: true, withdrawn: 0, orphaned: [], paused };
    }
    const above = and(
      eq(chainDeposits.network, network),
      gt(chainDeposits.blockNumber, input.ancestor.number),
    );
    const gone = await tx
      .delete(chainDeposits)
      .where(and(above, eq(chainDeposits.status, "pending")))
      .returning(GONE_COLUMNS);
    for (const d of gone) {
      await audit(tx, "deposit.withdrawn", d.walletId, goneDetails(network, d, "block"));
    }
    const orphanedRows = await tx
      .update(chainDeposits)
      .set({ orphanedAt: new Date() })
      .where(and(above, eq(chainDeposits.status, "credited")))
      .returning(GONE_COLUMNS);
    const orphaned: RewindResult["orphaned"] = [];
    for (const d of orphanedRows) {
      if (!isTicker(d.coin)) continue;
      orphaned.push({ ...d, coin: d.coin });
      await audit(tx, "deposit.orphaned", d.walletId, goneDetails(network, d, "credited, then block"));
      await pauseCoin(
        d.coin,
        `a credited deposit's block was reorganised away (${d.txid}:${d.outputIndex}, block ${d.blockNumber}); see ops chains`,
      );
    }
    await tx
      .delete(chainBlocks)
      .where(and(eq(chainBlocks.network, network), gt(chainBlocks.number, input.ancestor.number)));
    await tx
      .update(chainCursors)
      .set({ blockNumber: input.ancestor.number, blockHash: input.ancestor.hash, updatedAt: new Date() })
      .where(eq(chainCursors.network, network));
    return { moved: true, withdrawn: gone.length, orphaned, paused };
  });
}

export type RescanResult = { ok: true; from: number; before: number } | { ok: false; message: string };

/** ops chains rescan: the cursor set just before `from`, so the range is read again. */
export async function rescan(
  db: AppDb,
  input: { network: EvmNetwork; from: number; actor: string; actorRoles?: readonly string[] | undefined },
): Promise<RescanResult> {
  const { network, from } = input;
  return db.transaction(async (tx) => {
    const cursor = await lockCursor(tx, network);
    if (!cursor) {
      return {
        ok: false,
        message: `Refused: the ${network} watcher has not started on this database yet (set CHAIN_RPC_${network} and start the server). Nothing written.`,
      };
    }
    if (from > cursor.blockNumber + 1) {
      return {
        ok: false,
        message: `Refused: --from ${from} is beyond the next block to read (${cursor.blockNumber + 1}); a rescan reads again, it never skips blocks. Nothing written.`,
      };
    }
    const [below] = await tx
      .select({ hash: chainBlocks.hash })
      .from(chainBlocks)
      .where(and(eq(chainBlocks.network, network), eq(chainBlocks.number, from - 1)));
    await tx.delete(chainBlocks).where(and(eq(chainBlocks.network, network), gte(chainBlocks.number, from)));
    await tx
      .update(chainCursors)
      .set({ blockNumber: from - 1, blockHash: below?.hash ?? null, updatedAt: new Date() })
      .where(eq(chainCursors.network, network));
    await tx.insert(auditLog).values({
      actor: input.actor,
      actorRoles: input.actorRoles ? [...input.actorRoles] : null,
      action: "chain.rescan",
      subject: network,
      details: { network, from, cursorBefore: cursor.blockNumber },
    });
    return { ok: true, from, before: cursor.blockNumber };
  });
}

export interface OrphanedDeposit {
  coin: string;
  txid: string;
  outputIndex: number;
  walletId: string;
  units: bigint;
  blockNumber: number | null;
  orphanedAt: Date;
}

/** Credited deposits whose block is gone, oldest first: what ops chains and reconcile show. */
export async function orphanedDeposits(db: AppDb): Promise<OrphanedDeposit[]> {
  const rows = await db
    .select({ ...GONE_COLUMNS, orphanedAt: chainDeposits.orphanedAt })
    .from(chainDeposits)
    .where(isNotNull(chainDeposits.orphanedAt))
    .orderBy(asc(chainDeposits.orphanedAt));
  return rows.flatMap((r) => (r.orphanedAt ? [{ ...r, orphanedAt: r.orphanedAt }] : []));
}

/** Which of `addresses` are issued to wallets of `coin` (one query per block, whatever its size). */
export async function issuedAmong(
  db: AppDb,
  coin: Ticker,
  addresses: readonly string[],
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db
    .select({ address: wallets.address })
    .from(wallets)
    .where(
      and(
        eq(wallets.coin, coin),
        sql`${wallets.address} = ANY(${sql.param([...new Set(addresses)])}::text[])`,
      ),
    );
  return new Set(rows.flatMap((r) => (r.address ? [r.address] : [])));
}
