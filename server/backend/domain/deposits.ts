// Deposits as the chain names them (issue 16 item 4, record 040): one row per
// chain output, keyed on (coin, txid, output index), whatever wallet anyone
// says it belongs to. The address decides the wallet: it must be one of ours.
// An output with fewer confirmations than the coin's policy waits 'pending'
// (shown as 'Unconfirmed', not in the balance) and is credited, exactly once,
// when a report brings enough; the ledger transfer then takes the row's id.
//
// Every refusal writes nothing. The callers (ops deposit, deposits import,
// credit) add their audit row inside the same transaction.
import { and, desc, eq } from "drizzle-orm";
import { decodeXAddress, validateAddress, type UsdtNetwork } from "../../../common/addresses.ts";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import type { AppDb } from "../db/index.ts";
import { chainDeposits, users, wallets } from "../db/schema.ts";
import { retryOnUniqueViolation } from "./accounts.ts";
import { formatAmount, normaliseUsd } from "./amounts.ts";
import { activePause, type ActivePause } from "./controls.ts";
import {
  checkChainOutput,
  creditDeposit,
  creditPendingDeposit,
  findChainDeposit,
  insertChainDeposit,
  LedgerInputError,
  MAX_OUTPUT_INDEX,
  type CreditDepositResult,
  type DepositRecord,
} from "./ledger.ts";

export { MAX_OUTPUT_INDEX };
/** The most confirmations a report may carry. */
export const MAX_REPORTED_CONFIRMATIONS = 2 ** 31 - 1;

/** What the deployment's configuration says about deposits. */
export interface DepositPolicy {
  /** Confirmations needed before crediting, per coin (0: on first sight). */
  confirmations: Readonly<Record<Ticker, number>>;
  usdtNetwork: UsdtNetwork;
}

export interface RecordDepositInput {
  coin: Ticker;
  txid: string;
  /** Output index (UTXO coins) or log / event index (tokens); 0..2^31-1. */
  outputIndex: number;
  /** The address it paid, as the chain shows it (checked and put in canonical form here). */
  address: string;
  /** Base units; > 0. */
  units: bigint;
  /** Confirmations so far (0: in the mempool / not yet in a block). */
  confirmations: number;
  /** Its USD value at the time, a plain decimal. */
  amountUsd?: string | null;
}

export type DepositOutcome =
  /** Credited by this report (first sight with enough confirmations, or a pending one that got them). */
  | "credited"
  /** Recorded or updated, still waiting for confirmations. */
  | "pending"
  /** Pending, and this report brings no more confirmations than known: nothing written. */
  | "unchanged"
  /** Credited before: nothing written. */
  | "already-credited";

export type RecordDepositResult =
  | {
      ok: true;
      outcome: DepositOutcome;
      deposit: DepositRecord;
      /** Confirmations known now, and the coin's policy. */
      confirmations: number | null;
      required: number;
      userId: string;
      /** True when this report recorded the output for the first time. */
      firstSeen: boolean;
    }
  | {
      ok: false;
      reason: "invalid-address" | "not-ours" | "paused" | "conflict";
      /** One sentence for the operator; nothing was written. */
      message: string;
      pause?: ActivePause;
    };

/** The audit action of a report that changed something: credited, first seen, or more confirmations. */
export function depositAuditAction(r: { outcome: "credited" | "pending"; firstSeen: boolean }): string {
  if (r.outcome === "credited") return "deposit.credit";
  return r.firstSeen ? "deposit.pending" : "deposit.confirmations";
}

/** Who a pause stops, for its message. */
export function pauseScope(pause: ActivePause): string {
  return pause.coin !== null ? pause.coin : "this user";
}

export function pausedMessage(pause: ActivePause): string {
  return `Deposits are paused for ${pauseScope(pause)}: ${pause.reason}. Nothing written.`;
}

/** The canonical form of an address of ours-to-be, or the sentence saying why it is none. */
export function canonicalDepositAddress(
  coin: Ticker,
  address: string,
  usdtNetwork: UsdtNetwork,
): { ok: true; address: string } | { ok: false; message: string } {
  const checked = validateAddress(coin, address, { usdtNetwork });
  if (!checked.ok) return { ok: false, message: checked.reason };
  // An X-address carries a destination tag; our XRP wallets are classic addresses of their own.
  if (coin === "XRP" && checked.address.startsWith("X")) {
    const decoded = decodeXAddress(checked.address);
    if (decoded) return { ok: true, address: decoded.address };
  }
  return { ok: true, address: checked.address };
}

function checkInput(input: RecordDepositInput): string | null {
  checkChainOutput(input.txid, input.outputIndex);
  if (typeof input.units !== "bigint" || input.units <= 0n) {
    throw new LedgerInputError("amount must be a positive bigint");
  }
  const c = input.confirmations;
  if (!Number.isSafeInteger(c) || c < 0 || c > MAX_REPORTED_CONFIRMATIONS) {
    throw new LedgerInputError(
      `confirmations must be a whole number from 0 to ${MAX_REPORTED_CONFIRMATIONS}`,
    );
  }
  if (input.amountUsd === undefined || input.amountUsd === null) return null;
  const usd = normaliseUsd(input.amountUsd);
  if (usd === undefined) throw new LedgerInputError("amountUsd must be a plain non-negative decimal");
  return usd;
}

/**
 * Records one chain output paying one of our addresses (rule set in the file
 * comment). Opens its own transaction (a savepoint inside the caller's), so a
 * refusal or a lost race writes nothing.
 */
export async function recordDeposit(
  db: AppDb,
  input: RecordDepositInput,
  policy: DepositPolicy,
): Promise<RecordDepositResult> {
  const amountUsd = checkInput(input);
  const { coin, txid, outputIndex } = input;
  const canonical = canonicalDepositAddress(coin, input.address, policy.usdtNetwork);
  if (!canonical.ok) {
    return { ok: false, reason: "invalid-address", message: `Refused: ${canonical.message}` };
  }
  const address = canonical.address;
  const required = policy.confirmations[coin];
  const output = `${coin} output ${txid}:${outputIndex}`;

  const attempt = () =>
    db.transaction(async (tx): Promise<RecordDepositResult> => {
      const [wallet] = await tx
        .select({ id: wallets.id, userId: wallets.userId })
        .from(wallets)
        .where(and(eq(wallets.coin, coin), eq(wallets.address, address)));
      if (!wallet) {
        return {
          ok: false,
          reason: "not-ours",
          message: `Refused: ${address} is not our address (no ${coin} wallet has it). Nothing written.`,
        };
      }
      const pause = await activePause(tx, "deposits", { coin, userId: wallet.userId });
      if (pause) return { ok: false, reason: "paused", message: pausedMessage(pause), pause };

      const known = { userId: wallet.userId, required, firstSeen: false };
      // Locked: of concurrent reports of one output, one decides at a time.
      const existing = await findChainDeposit(tx, coin, txid, outputIndex, true);
      if (!existing) {
        const credited = input.confirmations >= required;
        const deposit = await insertChainDeposit(tx, {
          walletId: wallet.id,
          units: input.units,
          txid,
          outputIndex,
          address,
          confirmations: input.confirmations,
          status: credited ? "credited" : "pending",
          amountUsd,
        });
        return {
          ok: true,
          outcome: credited ? "credited" : "pending",
          deposit,
          confirmations: input.confirmations,
          ...known,
          firstSeen: true,
        };
      }

      // Only the chain's own data is returned, not the lookup's extras.
      const { id, address: knownAddress, confirmations: knownConfirmations, ...deposit } = existing;
      const differs: string[] = [];
      if (knownAddress !== address) differs.push(`address ${knownAddress}, not ${address}`);
      if (existing.units !== input.units) {
        differs.push(
          `amount ${formatAmount(coin, existing.units)} ${coin}, not ${formatAmount(coin, input.units)} ${coin}`,
        );
      }
      if (differs.length > 0) {
        return {
          ok: false,
          reason: "conflict",
          message: `Refused: ${output} is already recorded with ${differs.join(" and ")}. Nothing written.`,
        };
      }
      if (existing.status === "credited") {
        return {
          ok: true,
          outcome: "already-credited",
          deposit,
          confirmations: knownConfirmations,
          ...known,
        };
      }
      // Pending. A report with fewer confirmations than known (another node, a reorg) lowers nothing.
      const before = knownConfirmations ?? 0;
      const confirmations = Math.max(before, input.confirmations);
      if (confirmations >= required) {
        const credited = await creditPendingDeposit(tx, id, { confirmations, amountUsd });
        if (!credited) throw new Error("locked pending deposit was not pending");
        return { ok: true, outcome: "credited", deposit: credited, confirmations, ...known };
      }
      if (confirmations === before && (amountUsd === null || amountUsd === existing.amountUsd)) {
        return { ok: true, outcome: "unchanged", deposit, confirmations, ...known };
      }
      await tx
        .update(chainDeposits)
        .set({ confirmations, amountUsd: amountUsd ?? existing.amountUsd })
        .where(eq(chainDeposits.id, id));
      return {
        ok: true,
        outcome: "pending",
        deposit: { ...deposit, amountUsd: amountUsd ?? existing.amountUsd },
        confirmations,
        ...known,
      };
    });

  // A concurrent first report of the same output won its key: now there is a row to follow.
  return retryOnUniqueViolation(attempt);
}

export interface VouchInput {
  walletId: string;
  units: bigint;
  txid: string;
  outputIndex: number;
  amountUsd: string | null;
}

export type VouchResult =
  CreditDepositResult | { ok: false; reason: "paused"; message: string; pause: ActivePause };

/**
 * An operator vouching for a deposit to a wallet (ops credit): credited at
 * once, unless deposits are paused for its coin or its user.
 */
export async function vouchDeposit(db: AppDb, input: VouchInput): Promise<VouchResult> {
  return db.transaction(async (tx): Promise<VouchResult> => {
    const [wallet] = await tx
      .select({ coin: wallets.coin, userId: wallets.userId })
      .from(wallets)
      .where(eq(wallets.id, input.walletId));
    if (wallet && isTicker(wallet.coin)) {
      const pause = await activePause(tx, "deposits", { coin: wallet.coin, userId: wallet.userId });
      if (pause) return { ok: false, reason: "paused", message: pausedMessage(pause), pause };
    }
    return creditDeposit(tx, {
      walletId: input.walletId,
      units: input.units,
      externalTxId: input.txid,
      outputIndex: input.outputIndex,
      amountUsd: input.amountUsd,
    });
  });
}

export interface DepositListing {
  id: string;
  coin: Ticker;
  txid: string;
  outputIndex: number;
  address: string;
  walletId: string;
  email: string;
  units: bigint;
  confirmations: number | null;
  status: "pending" | "credited";
  amountUsd: string | null;
  createdAt: Date;
  creditedAt: Date | null;
}

/** The newest deposits (pending ones only when asked), newest first. */
export async function listDeposits(
  db: AppDb,
  opts: { pendingOnly?: boolean; limit?: number } = {},
): Promise<DepositListing[]> {
  const rows = await db
    .select({
      id: chainDeposits.id,
      coin: chainDeposits.coin,
      txid: chainDeposits.txid,
      outputIndex: chainDeposits.outputIndex,
      address: chainDeposits.address,
      walletId: chainDeposits.walletId,
      email: users.email,
      units: chainDeposits.amount,
      confirmations: chainDeposits.confirmations,
      status: chainDeposits.status,
      amountUsd: chainDeposits.amountUsd,
      createdAt: chainDeposits.createdAt,
      creditedAt: chainDeposits.creditedAt,
    })
    .from(chainDeposits)
    .innerJoin(wallets, eq(wallets.id, chainDeposits.walletId))
    .innerJoin(users, eq(users.id, wallets.userId))
    .where(opts.pendingOnly ? eq(chainDeposits.status, "pending") : undefined)
    .orderBy(desc(chainDeposits.createdAt), desc(chainDeposits.id))
    .limit(opts.limit ?? 100);
  return rows.map((row) => {
    if (!isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
    if (row.status !== "pending" && row.status !== "credited") {
      throw new Error(`unknown deposit status in the database: ${row.status}`);
    }
    return {
      ...row,
      coin: row.coin,
      status: row.status,
      outputIndex: Number(row.outputIndex),
      confirmations: row.confirmations === null ? null : Number(row.confirmations),
    };
  });
}
