// Sends: the ones waiting for a decision, approving and declining them.
import { formatAmount } from "../../backend/domain/amounts.ts";
import type { DecideWithdrawalResult } from "../../backend/domain/ledger.ts";
import type { SendInfo } from "../../backend/domain/wallets.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
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

/** What approve and decline print with --json about the send they decided. */
function decidedJson(send: SendInfo, status: "Confirmed" | "Declined", decidedAt: Date) {
  return {
    sendId: send.sendId,
    status,
    email: send.email,
    coin: send.coin,
    amount: formatAmount(send.coin, send.units),
    address: send.address,
    destinationTag: send.destinationTag,
    decidedAt: decidedAt.toISOString(),
  };
}

/** " with destination tag N" for an XRP send that has one, else "". */
function tagText(tag: number | null): string {
  return tag === null ? "" : ` with destination tag ${tag}`;
}

type Decision = { status: "Confirmed" } | { status: "Declined"; reason: string };

interface Decided {
  send: SendInfo;
  transferId: string;
  decidedAt: Date;
  /** The wallet's available balance right after the decision. */
  balance: bigint;
}

type DecideOutcome =
  | Exclude<DecideWithdrawalResult, { ok: true }>
  | { ok: true; transferId: string; decidedAt: Date; balance: bigint };

const alreadyDecided = (sendId: string, status: string) =>
  new OpsError(`The send ${sendId} was already ${status}; nothing changed.`);

/**
 * Decides a pending send through the ledger, with its audit row in the same
 * transaction. The ledger locks the send's row, so of two concurrent decisions
 * the second waits, then finds the send decided: it is told so, and writes nothing.
 */
async function decideSend(ctx: CommandContext, sendId: string, decision: Decision): Promise<Decided> {
  const [wallets, ledger] = await Promise.all([
    import("../../backend/domain/wallets.ts"),
    import("../../backend/domain/ledger.ts"),
  ]);
  const send = await wallets.findSend(ctx.db, sendId);
  if (!send) throw new OpsError(`No send with id ${sendId}.`);
  if (send.status !== "pending") throw alreadyDecided(send.sendId, send.status);

  const result = await ctx.db.transaction(async (tx): Promise<DecideOutcome> => {
    const decided =
      decision.status === "Confirmed"
        ? await ledger.postWithdrawal(tx, send.sendId)
        : await ledger.voidWithdrawal(tx, send.sendId, decision.reason);
    if (!decided.ok) return decided;
    const after = await wallets.findSend(tx, send.sendId);
    if (!after?.decidedAt) throw new Error("decided send not found in its own transaction");
    await audit(ctx, tx, decision.status === "Confirmed" ? "send.approve" : "send.decline", send.sendId, {
      userId: send.userId,
      walletId: send.walletId,
      coin: send.coin,
      amount: formatAmount(send.coin, send.units),
      units: send.units.toString(),
      address: send.address,
      ...(send.destinationTag === null ? {} : { destinationTag: send.destinationTag }),
      ...(decision.status === "Declined" ? { reason: decision.reason } : {}),
      before: { status: "pending" },
      after: { status: decided.status },
      transferId: decided.transferId,
    });
    const balance = await ledger.walletBalance(tx, send.walletId);
    return { ok: true, transferId: decided.transferId, decidedAt: after.decidedAt, balance };
  });
  if (!result.ok) {
    if (result.reason === "already-decided") throw alreadyDecided(send.sendId, result.status);
    throw new OpsError(`No send with id ${sendId}.`);
  }
  return { send, transferId: result.transferId, decidedAt: result.decidedAt, balance: result.balance };
}

export const SEND_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "sends",
    summary: [["sends", "sends waiting for a decision"]],
    usage: `Usage: node server/ops/cli.ts sends [--json]

Lists the sends users requested that wait for a decision, oldest first:
requested at, age, user e-mail, coin, amount, destination address, XRP
destination tag (send to the address WITH this tag; "-" when there is none),
send id. The amount is already held from the wallet. Answer each one with
approve or decline.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const { pendingSends } = await import("../../backend/domain/wallets.ts");
      return pendingSends(ctx.db);
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
      })),
    text: (rows) =>
      rows.length === 0
        ? "No sends are waiting for a decision."
        : table(
            ["REQUESTED AT", "AGE", "E-MAIL", "COIN", "AMOUNT", "ADDRESS", "TAG", "SEND ID"],
            rows.map((r) => [
              r.requestedAt.toISOString(),
              age(r.ageSeconds),
              r.email,
              r.coin,
              formatAmount(r.coin, r.units),
              r.address,
              r.destinationTag === null ? "-" : String(r.destinationTag),
              r.sendId,
            ]),
            new Set([4, 6]),
          ) +
          `\n\n${plural(rows.length, "send")} waiting. Answer with: approve <sendId> | decline <sendId> --reason <text>`,
  }),

  defineCommand({
    name: "approve",
    summary: [["approve <sendId>", "approve a send (status Confirmed)"]],
    usage: `Usage: node server/ops/cli.ts approve <sendId> [--as <name>] [--json]

Approves a pending send: its held amount leaves the wallet for good and the
send's status becomes Confirmed. A send is decided once: approving or declining
it again says so and changes nothing (exit 1). Writes one audit_log row (action
send.approve).`,
    changes: true,
    arguments: 1,
    check(args) {
      const [sendId = ""] = args;
      checkId(sendId, "send");
      return sendId;
    },
    run: (ctx, sendId) => decideSend(ctx, sendId, { status: "Confirmed" }),
    json: ({ send, decidedAt }) => decidedJson(send, "Confirmed", decidedAt),
    text: ({ send }) =>
      `Approved the send ${send.sendId}: ${formatAmount(send.coin, send.units)} ${send.coin} to ${send.address}` +
      `${tagText(send.destinationTag)} for ${send.email}. Status: Confirmed.`,
  }),

  defineCommand({
    name: "decline",
    summary: [["decline <sendId> --reason <text>", "decline a send: its amount returns to the wallet"]],
    usage: `Usage: node server/ops/cli.ts decline <sendId> --reason <text> [--as <name>] [--json]

Declines a pending send: its held amount returns to the user's wallet and the
send's status becomes Declined. --reason (required, 1 to ${MAX_REASON} characters)
says why; it is stored with the send. A send is decided once: deciding it again
says so and changes nothing (exit 1). Writes one audit_log row (action
send.decline).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check(args, options) {
      const [sendId = ""] = args;
      checkId(sendId, "send");
      if (options.reason === undefined) {
        throw new OpsError(
          `decline needs --reason <text>: why the send is declined (1 to ${MAX_REASON} characters).`,
        );
      }
      const reason = options.reason.trim();
      if (reason === "") {
        throw new OpsError(
          `--reason is empty: say why the send is declined (1 to ${MAX_REASON} characters).`,
        );
      }
      if (reason.length > MAX_REASON) {
        throw new OpsError(`--reason is too long: ${reason.length} characters, at most ${MAX_REASON}.`);
      }
      return { sendId, reason };
    },
    run: (ctx, { sendId, reason }) => decideSend(ctx, sendId, { status: "Declined", reason }),
    json: ({ send, decidedAt, balance }, { reason }) => ({
      ...decidedJson(send, "Declined", decidedAt),
      reason,
      balance: formatAmount(send.coin, balance),
    }),
    text: ({ send, balance }, { reason }) =>
      `Declined the send ${send.sendId}: ${formatAmount(send.coin, send.units)} ${send.coin} returned to ` +
      `${send.email}'s ${send.coin} wallet (available balance now ${formatAmount(send.coin, balance)} ${send.coin}). ` +
      `Reason: ${reason}`,
  }),
];
