// Sends: the ones waiting for a decision, approving and declining them.
import { isTicker, TICKERS } from "../../../common/coins.ts";
import { formatAmount, normaliseUsd } from "../../backend/domain/amounts.ts";
import type {
  ApproveResult,
  DecisionFacts,
  DecisionRefusal,
  DeclineResult,
} from "../../backend/domain/decisions.ts";
import type { OpsCommand } from "./define.ts";
import { audit, checkId, defineCommand, OpsError, plural, table } from "./define.ts";

/** As server/backend/domain/ledger.ts MAX_REASON (which checks it again, also in UTF-16 code units). */
const MAX_REASON = 1000;

/** How long ago, for people: "45 s", "3 min", "2 h", "4 d" (rounded down). */
function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** Who decided, for the answers: " by <name>" when known (sends decided before issue 26 do not say). */
const byWhom = (decidedBy: string | null) => (decidedBy === null ? "" : ` by ${decidedBy}`);

/** " with destination tag N" for an XRP send that has one, else "". */
function tagText(tag: number | null): string {
  return tag === null ? "" : ` with destination tag ${tag}`;
}

/** The refusals of a decision, one sentence each; nothing was written. */
function refusal(sendId: string, result: DecisionRefusal): OpsError {
  switch (result.reason) {
    case "send-not-found":
      return new OpsError(`No send with id ${sendId}.`);
    case "already-decided":
      return new OpsError(
        `The send ${sendId} was already ${result.status}${byWhom(result.decidedBy)} at ` +
          `${result.decidedAt.toISOString()}; nothing changed.`,
      );
    case "already-approved":
      return new OpsError(
        `You approved the send ${sendId} already (at ${result.approvedAt.toISOString()}); ` +
          "it needs a second approval by someone else. Nothing changed.",
      );
  }
}

/** What approve and decline print with --json about the send they decided. */
function decisionJson(
  facts: DecisionFacts,
  status: "pending" | "Confirmed" | "Declined",
  decided: { decidedAt: Date; decidedBy: string } | null,
) {
  const { send } = facts;
  return {
    sendId: send.sendId,
    status,
    email: send.email,
    coin: send.coin,
    amount: formatAmount(send.coin, send.units),
    amountUsd: send.amountUsd,
    address: send.address,
    destinationTag: send.destinationTag,
    threshold: { usd: facts.threshold.usd, source: facts.threshold.source },
    approvals: facts.approvals.map((a) => ({ approver: a.approver, at: a.at.toISOString() })),
    needed: facts.needed,
    decidedAt: decided ? decided.decidedAt.toISOString() : null,
    decidedBy: decided ? decided.decidedBy : null,
  };
}

/** The audit details of a decision: the send, and where its approvals stand. */
function decisionDetails(facts: DecisionFacts, extra: object) {
  const { send } = facts;
  return {
    userId: send.userId,
    walletId: send.walletId,
    coin: send.coin,
    amount: formatAmount(send.coin, send.units),
    units: send.units.toString(),
    amountUsd: send.amountUsd,
    address: send.address,
    ...(send.destinationTag === null ? {} : { destinationTag: send.destinationTag }),
    threshold: facts.threshold.usd,
    approvals: facts.approvals.length,
    needed: facts.needed,
    approvers: facts.approvals.map((a) => a.approver),
    ...extra,
  };
}

type Approved = Extract<ApproveResult, { ok: true }>;
type Declined = Extract<DeclineResult, { ok: true }>;

/** How many of the account's last sends and deposits the queue shows with each send. */
const RECENT = 3;

/** A required --reason, trimmed: 1 to MAX_REASON characters saying why `why`. */
function requiredReason(given: string | undefined, command: string, why: string): string {
  if (given === undefined) {
    throw new OpsError(`${command} needs --reason <text>: why ${why} (1 to ${MAX_REASON} characters).`);
  }
  const reason = given.trim();
  if (reason === "") throw new OpsError(`--reason is empty: say why ${why} (1 to ${MAX_REASON} characters).`);
  if (reason.length > MAX_REASON) {
    throw new OpsError(`--reason is too long: ${reason.length} characters, at most ${MAX_REASON}.`);
  }
  return reason;
}

/** "0.5 ETH to <address> for <email>", as the answers name a send. */
const sendText = (facts: DecisionFacts) =>
  `${formatAmount(facts.send.coin, facts.send.units)} ${facts.send.coin} to ${facts.send.address}` +
  `${tagText(facts.send.destinationTag)} for ${facts.send.email}`;

/** A send's USD value, for people: "1500.25 USD", or "USD value unknown". */
const usdValueText = (usd: string | null) => (usd === null ? "USD value unknown" : `${usd} USD`);

export const SEND_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "sends",
    summary: [["sends", "sends waiting for a decision"]],
    usage: `Usage: node server/ops/cli.ts sends [--json]

Lists the sends users requested that wait for a decision, oldest first:
requested at, age, user e-mail, coin, amount, USD value when requested ("-"
when unknown), destination address, XRP destination tag (send to the address
WITH this tag; "-" when there is none), approvals so far of those needed, send
id. The amount is already held from the wallet. Answer each one with approve or
decline. A send worth its coin's threshold or more (see thresholds), or of
unknown USD value, needs two approvals by two different approvers (record 047).
--json adds each send's threshold, approvers, the account's age and its last 3
sends and deposits.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const [{ pendingSends }, decisions] = await Promise.all([
        import("../../backend/domain/wallets.ts"),
        import("../../backend/domain/decisions.ts"),
      ]);
      const rows = await pendingSends(ctx.db);
      const ids = rows.map((r) => r.sendId);
      const [thresholds, approvals, activity] = await Promise.all([
        decisions.listThresholds(ctx.db, ctx.config.fourEyesUsd),
        decisions.approvalsOf(ctx.db, ids),
        // One more than shown: a send's own row leaves its account's list.
        decisions.recentActivity(
          ctx.db,
          rows.map((r) => r.userId),
          RECENT + 1,
        ),
      ]);
      const byCoin = new Map(thresholds.map((t) => [t.coin, t]));
      return rows.map((r) => {
        const threshold = byCoin.get(r.coin);
        if (!threshold) throw new Error(`no threshold for ${r.coin}`);
        return {
          ...r,
          threshold,
          needed: decisions.approvalsNeeded(r.amountUsd, threshold.usd),
          approvals: approvals.get(r.sendId) ?? [],
          activity: activity.get(r.userId),
          recentSends: (activity.get(r.userId)?.sends ?? [])
            .filter((s) => s.sendId !== r.sendId)
            .slice(0, RECENT),
          recentDeposits: (activity.get(r.userId)?.deposits ?? []).slice(0, RECENT),
        };
      });
    },
    json: (rows) =>
      rows.map((r) => ({
        sendId: r.sendId,
        walletId: r.walletId,
        userId: r.userId,
        email: r.email,
        coin: r.coin,
        amount: formatAmount(r.coin, r.units),
        amountUsd: r.amountUsd,
        address: r.address,
        destinationTag: r.destinationTag,
        requestedAt: r.requestedAt.toISOString(),
        ageSeconds: r.ageSeconds,
        threshold: { usd: r.threshold.usd, source: r.threshold.source },
        needed: r.needed,
        approvals: r.approvals.map((a) => ({ approver: a.approver, at: a.at.toISOString() })),
        accountCreatedAt: r.activity?.userCreatedAt.toISOString() ?? null,
        recentSends: r.recentSends.map((s) => ({
          sendId: s.sendId,
          coin: s.coin,
          amount: formatAmount(s.coin, s.units),
          amountUsd: s.amountUsd,
          status: s.status,
          at: s.at.toISOString(),
        })),
        recentDeposits: r.recentDeposits.map((d) => ({
          id: d.id,
          coin: d.coin,
          amount: formatAmount(d.coin, d.units),
          amountUsd: d.amountUsd,
          at: d.at.toISOString(),
        })),
      })),
    text: (rows) =>
      rows.length === 0
        ? "No sends are waiting for a decision."
        : table(
            [
              "REQUESTED AT",
              "AGE",
              "E-MAIL",
              "COIN",
              "AMOUNT",
              "USD",
              "ADDRESS",
              "TAG",
              "APPROVALS",
              "SEND ID",
            ],
            rows.map((r) => [
              r.requestedAt.toISOString(),
              age(r.ageSeconds),
              r.email,
              r.coin,
              formatAmount(r.coin, r.units),
              r.amountUsd ?? "-",
              r.address,
              r.destinationTag === null ? "-" : String(r.destinationTag),
              `${r.approvals.length} of ${r.needed}`,
              r.sendId,
            ]),
            new Set([4, 5, 7]),
          ) +
          `\n\n${plural(rows.length, "send")} waiting. Answer with: approve <sendId> | decline <sendId> --reason <text>`,
  }),

  defineCommand({
    name: "approve",
    summary: [["approve <sendId>", "approve a send (Confirmed once it has the approvals it needs)"]],
    usage: `Usage: node server/ops/cli.ts approve <sendId> [--as <name>] [--json]

Approves a pending send. A send worth less than its coin's threshold (see
thresholds) is posted at once: its held amount leaves the wallet for good and
its status becomes Confirmed. A send worth the threshold or more, or of unknown
USD value, needs two approvals by two different approvers (record 047): the
first is recorded and the send stays pending ("1 of 2 approvals"); the second,
by someone else, posts it. The same approver approving again is refused. A
decided send is decided once: approving or declining it again says who decided
it and changes nothing (exit 1). Writes one audit_log row (action send.approve).`,
    changes: true,
    arguments: 1,
    check(args) {
      const [sendId = ""] = args;
      checkId(sendId, "send");
      return sendId;
    },
    async run(ctx, sendId): Promise<Approved> {
      const { approveSend } = await import("../../backend/domain/decisions.ts");
      const result = await approveSend(
        ctx.db,
        { sendId, approver: ctx.actor, defaultUsd: ctx.config.fourEyesUsd },
        (tx, done) =>
          audit(
            ctx,
            tx,
            "send.approve",
            done.send.sendId,
            decisionDetails(
              done,
              done.outcome === "waiting"
                ? { before: { status: "pending" }, after: { status: "pending" } }
                : {
                    before: { status: "pending" },
                    after: { status: "Confirmed" },
                    transferId: done.transferId,
                  },
            ),
          ),
      );
      if (!result.ok) throw refusal(sendId, result);
      return result;
    },
    json: (done) =>
      done.outcome === "waiting"
        ? decisionJson(done, "pending", null)
        : decisionJson(done, "Confirmed", done),
    text(done) {
      if (done.outcome === "waiting") {
        return (
          `Approved the send ${done.send.sendId}: ${sendText(done)} (${usdValueText(done.send.amountUsd)}, ` +
          `threshold ${done.threshold.usd} USD). 1 of 2 approvals; waiting for a second approver. Status: pending.`
        );
      }
      const both =
        done.needed === 2 ? ` 2 of 2 approvals (${done.approvals.map((a) => a.approver).join(", ")}).` : "";
      return `Approved the send ${done.send.sendId}: ${sendText(done)}.${both} Status: Confirmed.`;
    },
  }),

  defineCommand({
    name: "decline",
    summary: [["decline <sendId> --reason <text>", "decline a send: its amount returns to the wallet"]],
    usage: `Usage: node server/ops/cli.ts decline <sendId> --reason <text> [--as <name>] [--json]

Declines a pending send, whatever approvals it has: its held amount returns to
the user's wallet and the send's status becomes Declined. --reason (required, 1
to ${MAX_REASON} characters) says why; it is stored with the send. A send is decided
once: deciding it again says who decided it and changes nothing (exit 1).
Writes one audit_log row (action send.decline).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check(args, options) {
      const [sendId = ""] = args;
      checkId(sendId, "send");
      return { sendId, reason: requiredReason(options.reason, "decline", "the send is declined") };
    },
    async run(ctx, { sendId, reason }): Promise<Declined> {
      const { declineSend } = await import("../../backend/domain/decisions.ts");
      const result = await declineSend(
        ctx.db,
        { sendId, decider: ctx.actor, reason, defaultUsd: ctx.config.fourEyesUsd },
        (tx, done) =>
          audit(
            ctx,
            tx,
            "send.decline",
            done.send.sendId,
            decisionDetails(done, {
              reason,
              before: { status: "pending" },
              after: { status: "Declined" },
              transferId: done.transferId,
            }),
          ),
      );
      if (!result.ok) throw refusal(sendId, result);
      return result;
    },
    json: (done, { reason }) => ({
      ...decisionJson(done, "Declined", done),
      reason,
      balance: formatAmount(done.send.coin, done.balance),
    }),
    text: (done, { reason }) =>
      `Declined the send ${done.send.sendId}: ${formatAmount(done.send.coin, done.send.units)} ${done.send.coin} returned to ` +
      `${done.send.email}'s ${done.send.coin} wallet (available balance now ${formatAmount(done.send.coin, done.balance)} ${done.send.coin}). ` +
      `Reason: ${reason}`,
  }),

  defineCommand({
    name: "thresholds",
    summary: [["thresholds", "the four-eyes threshold of each coin, in USD"]],
    usage: `Usage: node server/ops/cli.ts thresholds [--json]

Lists each coin's four-eyes threshold (record 047): a send worth this many USD
or more when requested needs two approvals by two different approvers. A coin
without its own threshold (set with threshold set) has the configured default,
FOUR_EYES_USD (source "default"); the coin's own shows who set it and when.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const { listThresholds } = await import("../../backend/domain/decisions.ts");
      return listThresholds(ctx.db, ctx.config.fourEyesUsd);
    },
    json: (rows) =>
      rows.map((t) => ({
        coin: t.coin,
        usd: t.usd,
        source: t.source,
        updatedBy: t.updatedBy,
        updatedAt: t.updatedAt?.toISOString() ?? null,
      })),
    text: (rows) =>
      table(
        ["COIN", "USD", "SOURCE", "SET BY", "SET AT"],
        rows.map((t) => [t.coin, t.usd, t.source, t.updatedBy ?? "-", t.updatedAt?.toISOString() ?? "-"]),
        new Set([1]),
      ) + "\n\nA send worth its coin's USD or more, or of unknown USD value, needs two approvers.",
  }),

  defineCommand({
    name: "threshold set",
    summary: [
      ["threshold set <coin> <usd>", "set a coin's four-eyes threshold in USD"],
      ["    --reason <text>", "why (required)"],
    ],
    usage: `Usage: node server/ops/cli.ts threshold set <coin> <usd> --reason <text> [--as <name>] [--json]

Sets the coin's four-eyes threshold (record 047) to <usd>, a plain decimal like
25000 or 2500.50: from now on, deciding one of its sends worth that much or
more when requested needs two approvals by two different approvers (sends
already waiting included). --reason (required, 1 to ${MAX_REASON} characters) says why.
Writes one audit_log row (action threshold.set).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 2,
    check(args, options) {
      const [coinText = "", usdText = ""] = args;
      const coin = coinText.toUpperCase();
      if (!isTicker(coin)) throw new OpsError(`Unknown coin "${coinText}": one of ${TICKERS.join(", ")}.`);
      const usd = normaliseUsd(usdText);
      if (usd === undefined)
        throw new OpsError(`Invalid USD "${usdText}": a plain decimal like 25000 or 2500.50.`);
      return { coin, usd, reason: requiredReason(options.reason, "threshold set", "the threshold changes") };
    },
    async run(ctx, { coin, usd, reason }) {
      const { setThreshold } = await import("../../backend/domain/decisions.ts");
      return ctx.db.transaction(async (tx) => {
        const changed = await setThreshold(tx, {
          coin,
          usd,
          by: ctx.actor,
          defaultUsd: ctx.config.fourEyesUsd,
        });
        await audit(ctx, tx, "threshold.set", coin, {
          coin,
          before: { usd: changed.before.usd, source: changed.before.source },
          after: { usd: changed.after.usd },
          reason,
        });
        return changed;
      });
    },
    json: ({ before, after }, { reason }) => ({
      coin: after.coin,
      usd: after.usd,
      source: after.source,
      updatedBy: after.updatedBy,
      updatedAt: after.updatedAt?.toISOString() ?? null,
      before: { usd: before.usd, source: before.source },
      reason,
    }),
    text: ({ before, after }) =>
      `The four-eyes threshold of ${after.coin} is now ${after.usd} USD (was ${before.usd} USD, ${before.source}).`,
  }),
];
