// One account holder in full, for answering them: wallets, recent activity,
// messages, login lock, pauses and live sessions.
import { INCOMING_TRANSACTION } from "../../../common/literals.ts";
import { formatAmount } from "../../backend/domain/amounts.ts";
import type { HolderDetail } from "../../backend/domain/holders.ts";
import type { OpsCommand } from "./define.ts";
import { defineCommand, OpsError, plural, table } from "./define.ts";
import { terminalSafe } from "./messages.ts";

/** A deposit's row names no recipient: call 4's marker stands there. */
const isDepositRow = (t: HolderDetail["transactions"][number]) => t.recipient_wallet === INCOMING_TRANSACTION;

interface Detail extends HolderDetail {
  login: { failures: number; locked: boolean };
  /** The holder's two-factor authentication (record 048). */
  twoFactor: { on: boolean; removalDueAt: Date | null; recoveryCodesLeft: number };
}

/** The detail's transactions as the command prints them (call 4's rows, renamed for operators). */
function transactionJson(t: HolderDetail["transactions"][number], deposit: boolean) {
  return {
    kind: deposit ? "deposit" : "send",
    id: t.id,
    at: t.date,
    walletId: t.wallet_id,
    coin: t.transaction_crypto,
    amount: t.amount_in_crypto,
    amountUsd: t.amount_in_dollar,
    status: t.status,
    address: deposit ? null : t.recipient_wallet,
    destinationTag: t.destination_tag ?? null,
    txid: deposit ? t.transaction_id : null,
  };
}

export const HOLDER_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "user",
    summary: [["user <email|id>", "one holder: wallets, last transactions, messages, lock"]],
    usage: `Usage: node server/ops/cli.ts user <email|id> [--json]

Shows one account holder, by e-mail or user id: the account (id, e-mail,
created), each wallet (coin, address or "requested", available balance, sends
paused), the last 20 transactions (deposits and sends, with their status), the
last 20 messages they can see (opened or not), whether their password login is
locked (failures since their last login), whether two-factor authentication is
on (recovery codes left, a restore's waiting removal), the pauses set for them, and how many
web sessions are signed in as them now ("unknown" when the sessions are kept by
web tiers elsewhere, WEB_TIER_HOSTS). Find a holder with users --find <text>.`,
    changes: false,
    arguments: 1,
    check(args) {
      const who = (args[0] ?? "").trim();
      if (who === "") throw new OpsError("Say which holder: user <email|id>.");
      return who;
    },
    async run(ctx, who): Promise<Detail> {
      const [holders, { sessionOwner }, limits, { twoFactorSummary }] = await Promise.all([
        import("../../backend/domain/holders.ts"),
        import("../../../common/session-owner.ts"),
        import("../../backend/domain/rate-limits.ts"),
        import("../../backend/domain/two-factor.ts"),
      ]);
      const holder = await holders.findHolder(ctx.db, who);
      if (!holder) throw new OpsError(`No user with ${who.includes("@") ? "the e-mail" : "id"} ${who}.`);
      // Sessions are the web tier's: in this database, under this process's SESSION_SECRET, only
      // when the web tier runs here. A backend serving web tiers elsewhere cannot count them.
      const owner =
        ctx.config.webTierHosts.length > 0 ? null : sessionOwner(ctx.config.sessionSecret, holder.email);
      const detail = await holders.holderDetail(ctx.db, holder, { sessionOwner: owner });
      const limiter = limits.createRateLimiter({
        db: ctx.db,
        secret: ctx.config.backendSecret,
        policy: limits.DEFAULT_RATE_LIMITS,
      });
      const state = (await limiter.accountStates([holder.email])).get(holder.email);
      const twoFactor = await twoFactorSummary(ctx.db, holder.userId);
      return { ...detail, login: state ?? { failures: 0, locked: false }, twoFactor };
    },
    json: (d) => ({
      userId: d.userId,
      email: d.email,
      createdAt: d.createdAt.toISOString(),
      wallets: d.wallets.map((w) => ({
        id: w.walletId,
        coin: w.coin,
        state: w.address === null ? "requested" : "issued",
        address: w.address,
        balance: formatAmount(w.coin, w.units),
        sendsPaused: w.sendsPaused,
      })),
      transactions: d.transactions.map((t) => transactionJson(t, isDepositRow(t))),
      messages: d.messages.map((m) => ({
        id: m.id,
        createdAt: m.createdAt.toISOString(),
        message: m.message,
        opened: m.openedAt !== null,
        openedAt: m.openedAt?.toISOString() ?? null,
        toAll: m.toAll,
      })),
      login: d.login,
      twoFactor: {
        on: d.twoFactor.on,
        removalDueAt: d.twoFactor.removalDueAt?.toISOString() ?? null,
        recoveryCodesLeft: d.twoFactor.recoveryCodesLeft,
      },
      pauses: d.pauses.map((p) => ({
        id: p.id,
        what: p.what,
        reason: p.reason,
        actor: p.actor,
        automatic: p.automatic,
        createdAt: p.createdAt.toISOString(),
      })),
      sessions: d.sessions,
    }),
    text(d) {
      const lines = [
        `${d.email}  (user ${d.userId}, created ${d.createdAt.toISOString()})`,
        `Login: ${d.login.locked ? "LOCKED" : "open"}, ${plural(d.login.failures, "failed login")}.` +
          ` Live sessions: ${d.sessions ?? "unknown"}.`,
        `Two-factor: ${
          d.twoFactor.on
            ? `on, ${plural(d.twoFactor.recoveryCodesLeft, "recovery code")} left` +
              (d.twoFactor.removalDueAt
                ? `; removal after a restore without a code due ${d.twoFactor.removalDueAt.toISOString()} (sends refused until then)`
                : "")
            : "off"
        }.`,
        d.pauses.length === 0
          ? "Pauses: none for this holder."
          : `Pauses: ${d.pauses.map((p) => `${p.what} (${terminalSafe(p.reason)}, by ${p.actor})`).join("; ")}.`,
        "",
      ];
      lines.push(
        d.wallets.length === 0
          ? "No wallets."
          : table(
              ["COIN", "STATE", "ADDRESS", "BALANCE", "SENDS"],
              d.wallets.map((w) => [
                w.coin,
                w.address === null ? "requested" : "issued",
                w.address ?? "",
                formatAmount(w.coin, w.units),
                w.sendsPaused ? `paused (${w.sendsPaused})` : "open",
              ]),
              new Set([3]),
            ),
        "",
      );
      lines.push(
        d.transactions.length === 0
          ? "No transactions."
          : table(
              ["DATE", "KIND", "COIN", "AMOUNT", "USD", "STATUS", "TO / TXID"],
              d.transactions.map((t) => {
                const deposit = isDepositRow(t);
                return [
                  t.date,
                  deposit ? "deposit" : "send",
                  t.transaction_crypto,
                  t.amount_in_crypto,
                  t.amount_in_dollar ?? "-",
                  t.status,
                  deposit ? t.transaction_id : t.recipient_wallet,
                ];
              }),
              new Set([3, 4]),
            ),
        "",
      );
      if (d.messages.length === 0) lines.push("No messages.");
      for (const m of d.messages) {
        const text = terminalSafe(m.message).replaceAll("\n", " ");
        lines.push(
          `${m.createdAt.toISOString()}  ${m.openedAt ? "opened" : "UNREAD"}  ${m.toAll ? "(to all) " : ""}` +
            `${text.length > 100 ? `${text.slice(0, 100)}…` : text}`,
        );
      }
      return lines.join("\n");
    },
  }),
];
