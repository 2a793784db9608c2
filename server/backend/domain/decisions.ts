// Deciding sends (record 047): the four-eyes rule, in one place for both faces
// (the operator commands and the staff console, which runs the same commands).
//
// A pending send whose USD value (amount_usd, its value when requested) is at
// or above its coin's threshold needs two approvals by two different
// approvers: the first is recorded (send_approvals) and the send stays
// pending; the second, by someone else, posts it. Below the threshold one
// approval posts it. A send of unknown USD value (amount_usd null) needs two:
// a value nobody knows cannot be shown to be small. A decline by anyone ends
// the send, however many approvals it has.
//
// Every decision locks the send's row first (as the ledger does), in the
// transaction that writes it: two approvers at once are taken one after the
// other, so the second sees the first's approval. Of two second approvals
// only one posts, and one approver is never counted twice. The threshold is
// read at each decision, so a changed threshold applies to sends already waiting.
//
// Approvers are compared trimmed and without case ("Alice@x" is alice@x).
// Who approves is as the caller says: the console's signed-in staff member,
// or the command line's --as, which nothing verifies (record 047).
import { asc, eq, inArray, sql } from "drizzle-orm";
import { isTicker, TICKERS, type Ticker } from "../../../common/coins.ts";
import { compare, parseDecimal } from "../../../common/decimal.ts";
import { type AppDb, rowsOf } from "../db/index.ts";
import { fourEyesThresholds, sendApprovals, users, withdrawals } from "../db/schema.ts";
import { normaliseUsd } from "./amounts.ts";
import { isUuid, postWithdrawal, voidWithdrawal, walletBalance, type WithdrawalStatus } from "./ledger.ts";
import { findSend, type SendInfo } from "./wallets.ts";

/** A programming mistake in the arguments (the commands check their input first). */
export class DecisionInputError extends Error {}

// ---------------------------------------------------------------------------
// Thresholds
// ---------------------------------------------------------------------------

export interface Threshold {
  coin: Ticker;
  /** USD, a normalised plain decimal. */
  usd: string;
  /** 'set': the coin's own (four_eyes_thresholds); 'default': the configured FOUR_EYES_USD. */
  source: "default" | "set";
  updatedBy: string | null;
  updatedAt: Date | null;
}

function checkedUsd(usd: string, what: string): string {
  const normal = normaliseUsd(usd);
  if (normal === undefined) throw new DecisionInputError(`${what} must be a plain decimal of USD`);
  return normal;
}

/** Every coin's threshold, in the coins' order: its own, else `defaultUsd`. */
export async function listThresholds(db: AppDb, defaultUsd: string): Promise<Threshold[]> {
  const fallback = checkedUsd(defaultUsd, "the default threshold");
  const rows = await db.select().from(fourEyesThresholds);
  const own = new Map(rows.map((r) => [r.coin, r]));
  return TICKERS.map((coin) => {
    const row = own.get(coin);
    return row
      ? { coin, usd: row.usd, source: "set", updatedBy: row.updatedBy, updatedAt: row.updatedAt }
      : { coin, usd: fallback, source: "default", updatedBy: null, updatedAt: null };
  });
}

/** One coin's threshold. */
export async function thresholdFor(db: AppDb, coin: Ticker, defaultUsd: string): Promise<Threshold> {
  const [row] = await db.select().from(fourEyesThresholds).where(eq(fourEyesThresholds.coin, coin));
  if (row) return { coin, usd: row.usd, source: "set", updatedBy: row.updatedBy, updatedAt: row.updatedAt };
  return {
    coin,
    usd: checkedUsd(defaultUsd, "the default threshold"),
    source: "default",
    updatedBy: null,
    updatedAt: null,
  };
}

/** Sets a coin's threshold; answers the one in force before and the new one. */
export async function setThreshold(
  db: AppDb,
  input: { coin: Ticker; usd: string; by: string; defaultUsd: string },
): Promise<{ before: Threshold; after: Threshold }> {
  if (!isTicker(input.coin)) throw new DecisionInputError("unknown coin");
  const usd = checkedUsd(input.usd, "usd");
  const before = await thresholdFor(db, input.coin, input.defaultUsd);
  const [row] = await db
    .insert(fourEyesThresholds)
    .values({ coin: input.coin, usd, updatedBy: input.by })
    .onConflictDoUpdate({
      target: fourEyesThresholds.coin,
      set: { usd, updatedBy: input.by, updatedAt: sql`now()` },
    })
    .returning();
  if (!row) throw new Error("threshold not written");
  return {
    before,
    after: {
      coin: input.coin,
      usd: row.usd,
      source: "set",
      updatedBy: row.updatedBy,
      updatedAt: row.updatedAt,
    },
  };
}

/** How many approvals a send of this USD value needs under this threshold: 2 at or above it, or unknown. */
export function approvalsNeeded(amountUsd: string | null, thresholdUsd: string): 1 | 2 {
  const value = amountUsd === null ? undefined : parseDecimal(amountUsd);
  const threshold = parseDecimal(thresholdUsd);
  if (!threshold) throw new DecisionInputError("the threshold must be a plain decimal");
  if (!value) return 2;
  return compare(value, threshold) >= 0 ? 2 : 1;
}

// ---------------------------------------------------------------------------
// Approvals of the sends waiting
// ---------------------------------------------------------------------------

export interface Approval {
  approver: string;
  at: Date;
}

/** The approvals of these sends, oldest first per send. */
export async function approvalsOf(db: AppDb, sendIds: readonly string[]): Promise<Map<string, Approval[]>> {
  const found = new Map<string, Approval[]>();
  const ids = sendIds.filter(isUuid);
  if (ids.length === 0) return found;
  const rows = await db
    .select()
    .from(sendApprovals)
    .where(inArray(sendApprovals.withdrawalId, ids))
    .orderBy(asc(sendApprovals.createdAt), asc(sendApprovals.approver));
  for (const r of rows) {
    const list = found.get(r.withdrawalId) ?? [];
    list.push({ approver: r.approver, at: r.createdAt });
    found.set(r.withdrawalId, list);
  }
  return found;
}

// ---------------------------------------------------------------------------
// Deciding
// ---------------------------------------------------------------------------

const sameApprover = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

export type DecisionRefusal =
  | { ok: false; reason: "send-not-found" }
  /** Decided before (by decidedBy, null for sends decided before issue 26); nothing written. */
  | {
      ok: false;
      reason: "already-decided";
      status: Exclude<WithdrawalStatus, "pending">;
      decidedBy: string | null;
      decidedAt: Date;
    }
  /** This approver approved it already and it waits for another; nothing written. */
  | { ok: false; reason: "already-approved"; approvedAt: Date; needed: 2 };

export interface DecisionFacts {
  send: SendInfo;
  threshold: Threshold;
  needed: 1 | 2;
  /** The approvals so far, this one included (for a decline: those it ended). */
  approvals: Approval[];
}

export type ApproveResult =
  | DecisionRefusal
  /** First of two: recorded, the send still pending. */
  | ({ ok: true; outcome: "waiting" } & DecisionFacts)
  /** Posted: the send is Confirmed. balance: the wallet's available balance after it. */
  | ({
      ok: true;
      outcome: "posted";
      transferId: string;
      decidedAt: Date;
      decidedBy: string;
      balance: bigint;
    } & DecisionFacts);

export type DeclineResult =
  | DecisionRefusal
  | ({
      ok: true;
      outcome: "declined";
      transferId: string;
      decidedAt: Date;
      decidedBy: string;
      balance: bigint;
    } & DecisionFacts);

/** What the caller writes with the decision, in its transaction (the audit row). */
export type RecordDecision<R> = (tx: AppDb, result: Extract<R, { ok: true }>) => Promise<void>;

interface Locked {
  status: WithdrawalStatus;
  decidedBy: string | null;
  decidedAt: Date | null;
}

/** Locks the send's row for the rest of the transaction; undefined when there is no such send. */
async function lockSend(tx: AppDb, sendId: string): Promise<Locked | undefined> {
  const [row] = await tx
    .select({
      status: withdrawals.status,
      decidedBy: withdrawals.decidedBy,
      decidedAt: withdrawals.decidedAt,
    })
    .from(withdrawals)
    .where(eq(withdrawals.id, sendId))
    .for("no key update");
  return row ? { ...row, status: row.status as WithdrawalStatus } : undefined;
}

function decided(row: Locked): DecisionRefusal | undefined {
  if (row.status === "pending") return undefined;
  if (!row.decidedAt) throw new Error("decided send without decided_at");
  return {
    ok: false,
    reason: "already-decided",
    status: row.status,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
  };
}

/**
 * The start of every decision, in its transaction: the send's row locked, a
 * send decided before refused, then the facts the decision and its audit row
 * need (the send, its threshold, the approvals it needs and has).
 */
async function pendingFacts(
  tx: AppDb,
  sendId: string,
  defaultUsd: string,
): Promise<DecisionRefusal | { ok: true; facts: DecisionFacts }> {
  const row = await lockSend(tx, sendId);
  if (!row) return { ok: false, reason: "send-not-found" };
  const refused = decided(row);
  if (refused) return refused;
  const send = await findSend(tx, sendId);
  if (!send) throw new Error("locked send not found");
  const threshold = await thresholdFor(tx, send.coin, defaultUsd);
  const needed = approvalsNeeded(send.amountUsd, threshold.usd);
  const approvals = (await approvalsOf(tx, [send.sendId])).get(send.sendId) ?? [];
  return { ok: true, facts: { send, threshold, needed, approvals } };
}

/** After a post or a void in this transaction: when it was decided, and the wallet's balance now. */
async function afterDecision(tx: AppDb, send: SendInfo): Promise<{ decidedAt: Date; balance: bigint }> {
  const after = await lockSend(tx, send.sendId);
  if (!after?.decidedAt) throw new Error("decided send without decided_at");
  return { decidedAt: after.decidedAt, balance: await walletBalance(tx, send.walletId) };
}

/**
 * One approval of a pending send by `approver`: recorded, and the send posted
 * when it has the approvals its value needs (see the rule at the top).
 * `record` runs in the same transaction when something was written.
 */
export async function approveSend(
  db: AppDb,
  input: { sendId: string; approver: string; defaultUsd: string },
  record: RecordDecision<ApproveResult>,
): Promise<ApproveResult> {
  const approver = input.approver.trim();
  if (approver === "") throw new DecisionInputError("approver is empty");
  if (!isUuid(input.sendId)) return { ok: false, reason: "send-not-found" };
  return db.transaction(async (tx): Promise<ApproveResult> => {
    const pending = await pendingFacts(tx, input.sendId, input.defaultUsd);
    if (!pending.ok) return pending;
    const { send, needed, approvals: earlier } = pending.facts;
    const mine = earlier.find((a) => sameApprover(a.approver, approver));
    // A send needing one approval has none recorded while pending; a repeated approval waits for another.
    if (mine) return { ok: false, reason: "already-approved", approvedAt: mine.at, needed: 2 };
    const [inserted] = await tx
      .insert(sendApprovals)
      .values({ withdrawalId: send.sendId, approver })
      .returning({ at: sendApprovals.createdAt });
    if (!inserted) throw new Error("approval not inserted");
    const facts = { ...pending.facts, approvals: [...earlier, { approver, at: inserted.at }] };
    let result: ApproveResult;
    if (facts.approvals.length < needed) {
      result = { ok: true, outcome: "waiting", ...facts };
    } else {
      const posted = await postWithdrawal(tx, send.sendId, { decidedBy: approver });
      if (!posted.ok) throw new Error(`locked pending send not posted: ${posted.reason}`);
      result = {
        ok: true,
        outcome: "posted",
        transferId: posted.transferId,
        decidedBy: approver,
        ...(await afterDecision(tx, send)),
        ...facts,
      };
    }
    await record(tx, result);
    return result;
  });
}

/** Declines a pending send (by anyone, whatever its approvals): its amount returns to the wallet. */
export async function declineSend(
  db: AppDb,
  input: { sendId: string; decider: string; reason: string; defaultUsd: string },
  record: RecordDecision<DeclineResult>,
): Promise<DeclineResult> {
  const decider = input.decider.trim();
  if (decider === "") throw new DecisionInputError("decider is empty");
  if (!isUuid(input.sendId)) return { ok: false, reason: "send-not-found" };
  return db.transaction(async (tx): Promise<DeclineResult> => {
    const pending = await pendingFacts(tx, input.sendId, input.defaultUsd);
    if (!pending.ok) return pending;
    const { send } = pending.facts;
    const voided = await voidWithdrawal(tx, send.sendId, input.reason, { decidedBy: decider });
    if (!voided.ok) throw new Error(`locked pending send not voided: ${voided.reason}`);
    const result: DeclineResult = {
      ok: true,
      outcome: "declined",
      transferId: voided.transferId,
      decidedBy: decider,
      ...(await afterDecision(tx, send)),
      ...pending.facts,
    };
    await record(tx, result);
    return result;
  });
}

// ---------------------------------------------------------------------------
// The account behind a send, for the queue
// ---------------------------------------------------------------------------

export interface RecentActivity {
  userCreatedAt: Date;
  /** The account's last sends, newest first. */
  sends: {
    sendId: string;
    coin: Ticker;
    units: bigint;
    amountUsd: string | null;
    status: string;
    at: Date;
  }[];
  /** Its last credited deposits, newest first. */
  deposits: { id: string; coin: Ticker; units: bigint; amountUsd: string | null; at: Date }[];
}

/**
 * For each user: when the account was made, and its last `n` sends and
 * credited deposits — one read of each, by window, for all the users.
 */
export async function recentActivity(
  db: AppDb,
  userIds: readonly string[],
  n: number,
): Promise<Map<string, RecentActivity>> {
  const found = new Map<string, RecentActivity>();
  const ids = [...new Set(userIds.filter(isUuid))];
  if (ids.length === 0) return found;
  const people = await db
    .select({ id: users.id, createdAt: users.createdAt })
    .from(users)
    .where(inArray(users.id, ids));
  for (const p of people) found.set(p.id, { userCreatedAt: p.createdAt, sends: [], deposits: [] });
  const idList = sql.join(
    ids.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  interface SendRow {
    user_id: string;
    id: string;
    coin: string;
    amount: string;
    amount_usd: string | null;
    status: string;
    at: string;
  }
  const sends = await db.execute(sql`
    SELECT user_id, id, coin, amount::text AS amount, amount_usd, status, at FROM (
      SELECT wl.user_id, w.id, wl.coin, w.amount, w.amount_usd, w.status,
             to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
             row_number() OVER (PARTITION BY wl.user_id ORDER BY w.created_at DESC, w.id DESC) AS n
      FROM withdrawals w JOIN wallets wl ON wl.id = w.wallet_id
      WHERE wl.user_id IN (${idList})
    ) t WHERE n <= ${n} ORDER BY user_id, at DESC, id DESC`);
  interface DepositRow {
    user_id: string;
    id: string;
    coin: string;
    amount: string;
    amount_usd: string | null;
    at: string;
  }
  const deposits = await db.execute(sql`
    SELECT user_id, id, coin, amount::text AS amount, amount_usd, at FROM (
      SELECT wl.user_id, t.id, t.coin, t.amount, t.amount_usd,
             to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
             row_number() OVER (PARTITION BY wl.user_id ORDER BY t.created_at DESC, t.id DESC) AS n
      FROM ledger_transfers t
      JOIN ledger_accounts a ON a.id = t.credit_account_id
      JOIN wallets wl ON wl.id = a.wallet_id
      WHERE t.kind = 'deposit' AND wl.user_id IN (${idList})
    ) d WHERE n <= ${n} ORDER BY user_id, at DESC, id DESC`);
  for (const r of rowsOf<SendRow>(sends)) {
    found.get(r.user_id)?.sends.push({
      sendId: r.id,
      coin: tickerOf(r.coin),
      units: BigInt(r.amount),
      amountUsd: r.amount_usd,
      status: r.status,
      at: new Date(r.at),
    });
  }
  for (const r of rowsOf<DepositRow>(deposits)) {
    found.get(r.user_id)?.deposits.push({
      id: r.id,
      coin: tickerOf(r.coin),
      units: BigInt(r.amount),
      amountUsd: r.amount_usd,
      at: new Date(r.at),
    });
  }
  return found;
}

function tickerOf(c: string): Ticker {
  if (!isTicker(c)) throw new Error(`unknown coin in the database: ${c}`);
  return c;
}
