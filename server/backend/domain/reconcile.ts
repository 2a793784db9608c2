// Reconciliation (issue 16, record 041): per coin, what we owe holders against
// what the provider says it holds. Operators record holdings (`ops holdings
// set`, from their node or custodian statement; append-only, the newest row
// counts) and read the comparison (`ops reconcile`). A coin whose holdings fall
// below what is owed plus what is held for pending sends pauses its sends by
// itself, in the same transaction as the check, until an operator resumes them.
import { sql } from "drizzle-orm";
import { TICKERS, type Ticker } from "../../../common/coins.ts";
import { type AppDb, rowsOf } from "../db/index.ts";
import { auditLog, custodyHoldings } from "../db/schema.ts";
import { formatAmount, parseAmount } from "./amounts.ts";
import { activePause, pause, type ActivePause } from "./controls.ts";

/** The actor of an automatic pause (and of its audit row). */
export const RECONCILE_ACTOR = "reconcile";
export const MAX_HOLDINGS_SOURCE = 500;

export class ReconcileInputError extends Error {}

export interface Holdings {
  units: bigint;
  source: string;
  actor: string;
  recordedAt: Date;
}

export interface CoinReconciliation {
  coin: Ticker;
  /** Owed to holders: the sum of the wallet accounts' available balances. */
  owed: bigint;
  /** Held for pending sends: the balance of the coin's withdrawals_pending account. */
  held: bigint;
  /** The same, summed over the pending withdrawals themselves (must equal held). */
  heldBySends: bigint;
  /** The newest recorded holdings, or undefined when none were recorded. */
  holdings: Holdings | undefined;
  /** holdings − (owed + held); undefined without holdings. */
  difference: bigint | undefined;
  /** The sends pause in force for the coin after this check, if any. */
  sendsPause: ActivePause | undefined;
  /** True when this check itself paused the coin's sends. */
  pausedNow: boolean;
  /** A dry run only: true when a real check would pause the coin's sends now (short, not yet paused). */
  wouldPause: boolean;
}

/** A coin's figures alone, before any pause they cause. */
type Figures = Omit<CoinReconciliation, "sendsPause" | "pausedNow" | "wouldPause">;

/**
 * Parses holdings: a plain decimal of the coin with at most its decimals; zero
 * is a valid holding (parseAmount refuses it only for sends and deposits).
 */
export function parseHoldings(coin: Ticker, text: string): bigint {
  const parsed = parseAmount(coin, text);
  if (parsed.ok) return parsed.units;
  if (parsed.problem === "zero") return 0n;
  throw new ReconcileInputError(parsed.reason);
}

function byCoin<T extends { coin: string }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((r) => [r.coin, r]));
}

/** The figures of every supported coin, read inside db (the caller's transaction when given one). */
async function figures(db: AppDb, only?: Ticker): Promise<Figures[]> {
  // Owed: wallets' running balances. Held: credits − debits of each pending account's transfers.
  const owedRows = rowsOf<{ coin: string; owed: string }>(
    await db.execute(sql`
      SELECT coin, COALESCE(SUM(balance), 0)::text AS owed FROM ledger_accounts
      WHERE kind = 'wallet' GROUP BY coin`),
  );
  const heldRows = rowsOf<{ coin: string; held: string }>(
    await db.execute(sql`
      SELECT a.coin, COALESCE(SUM(CASE WHEN t.credit_account_id = a.id THEN t.amount ELSE -t.amount END), 0)::text AS held
      FROM ledger_accounts a JOIN ledger_transfers t ON t.credit_account_id = a.id OR t.debit_account_id = a.id
      WHERE a.kind = 'withdrawals_pending' AND a.wallet_id IS NULL GROUP BY a.coin`),
  );
  const sendRows = rowsOf<{ coin: string; held: string }>(
    await db.execute(sql`
      SELECT w.coin, COALESCE(SUM(x.amount), 0)::text AS held
      FROM withdrawals x JOIN wallets w ON w.id = x.wallet_id
      WHERE x.status = 'pending' GROUP BY w.coin`),
  );
  const holdingRows = rowsOf<{
    coin: string;
    amount: string;
    source: string;
    actor: string;
    created_at: string;
  }>(
    await db.execute(sql`
      SELECT DISTINCT ON (coin) coin, amount::text AS amount, source, actor,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
      FROM ${custodyHoldings} ORDER BY coin, created_at DESC, id DESC`),
  );
  const owed = byCoin(owedRows);
  const held = byCoin(heldRows);
  const sends = byCoin(sendRows);
  const holdings = byCoin(holdingRows);
  return (only ? [only] : TICKERS).map((coin) => {
    const o = BigInt(owed.get(coin)?.owed ?? "0");
    const h = BigInt(held.get(coin)?.held ?? "0");
    const row = holdings.get(coin);
    const recorded: Holdings | undefined = row
      ? {
          units: BigInt(row.amount),
          source: row.source,
          actor: row.actor,
          recordedAt: new Date(row.created_at),
        }
      : undefined;
    return {
      coin,
      owed: o,
      held: h,
      heldBySends: BigInt(sends.get(coin)?.held ?? "0"),
      holdings: recorded,
      difference: recorded ? recorded.units - (o + h) : undefined,
    };
  });
}

/** Why an automatic pause was set, with the figures (exact decimals). */
function shortfallReason(f: Figures): string {
  const c = f.coin;
  const units = (u: bigint) => `${formatAmount(c, u)} ${c}`;
  return (
    `Reconciliation shortfall: holdings ${units(f.holdings?.units ?? 0n)} are below ` +
    `owed ${units(f.owed)} + held for pending sends ${units(f.held)} (difference ${units(f.difference ?? 0n)}).`
  );
}

/**
 * Compares, and pauses the sends of each coin short of its liabilities (a
 * `pauses` row, automatic, actor 'reconcile', with its audit row); a coin
 * already paused stays as it is. Run inside one transaction: the figures and
 * the pauses they cause are written together or not at all. With `dryRun`,
 * the same figures and nothing written: each short coin not yet paused says
 * it would be (wouldPause).
 */
async function check(
  db: AppDb,
  operator: string,
  trigger: string,
  { only, dryRun = false }: { only?: Ticker; dryRun?: boolean } = {},
): Promise<CoinReconciliation[]> {
  return db.transaction(async (tx) => {
    const all = await figures(tx, only);
    const out: CoinReconciliation[] = [];
    for (const f of all) {
      const short = f.difference !== undefined && f.difference < 0n;
      let pausedNow = false;
      let wouldPause = false;
      if (short && dryRun) {
        wouldPause = (await activePause(tx, "sends", { coin: f.coin })) === undefined;
      } else if (short) {
        const result = await pause(tx, {
          what: "sends",
          scope: { coin: f.coin },
          reason: `${shortfallReason(f)} Found by ${trigger} (run by ${operator}).`,
          actor: RECONCILE_ACTOR,
          automatic: true,
        });
        pausedNow = result.ok;
      }
      out.push({ ...f, sendsPause: await activePause(tx, "sends", { coin: f.coin }), pausedNow, wouldPause });
    }
    return out;
  });
}

/**
 * `ops reconcile`: every coin's figures; short coins' sends pause. With
 * `dryRun` (`reconcile --dry-run`), the same figures and nothing written.
 */
export async function reconcile(
  db: AppDb,
  operator: string,
  { dryRun = false }: { dryRun?: boolean } = {},
): Promise<CoinReconciliation[]> {
  return check(db, operator, "reconcile", { dryRun });
}

export interface SetHoldingsInput {
  coin: Ticker;
  units: bigint;
  /** Where the figure comes from (a node, a custodian statement); 1..500 characters once trimmed. */
  source: string;
  actor: string;
  /** A staff member's roles when the console runs it (the audit log's actor_roles). */
  actorRoles?: readonly string[] | undefined;
}

/**
 * `ops holdings set`: appends the coin's holdings with its audit row
 * ("holdings.set"), then checks the coin as reconcile does — all in one
 * transaction. Answers the coin's figures after the change.
 */
export async function setHoldings(db: AppDb, input: SetHoldingsInput): Promise<CoinReconciliation> {
  const source = input.source.trim();
  if (source.length === 0 || source.length > MAX_HOLDINGS_SOURCE) {
    throw new ReconcileInputError(`The source must be 1 to ${MAX_HOLDINGS_SOURCE} characters.`);
  }
  if (input.units < 0n) throw new ReconcileInputError("Holdings cannot be negative.");
  return db.transaction(async (tx) => {
    const before = (await figures(tx, input.coin))[0]?.holdings;
    const [row] = await tx
      .insert(custodyHoldings)
      .values({ coin: input.coin, amount: input.units, source, actor: input.actor })
      .returning({ id: custodyHoldings.id });
    if (!row) throw new Error("holdings insert returned nothing");
    await tx.insert(auditLog).values({
      actor: input.actor,
      actorRoles: input.actorRoles ? [...input.actorRoles] : null,
      action: "holdings.set",
      subject: input.coin,
      details: {
        holdingsId: row.id,
        coin: input.coin,
        amount: formatAmount(input.coin, input.units),
        source,
        before: before ? { amount: formatAmount(input.coin, before.units), source: before.source } : null,
      },
    });
    const [coin] = await check(tx, input.actor, "holdings set", { only: input.coin });
    if (!coin) throw new Error("reconciliation of the coin missing");
    return coin;
  });
}
