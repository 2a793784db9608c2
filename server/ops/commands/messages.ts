// Messages: compliance messages to users, support and contact messages from them.
import type { SupportKind } from "../../backend/domain/messages.ts";
import { audit, defineCommand, OpsError, plural, UUID, wholeNumber, type OpsCommand } from "./define.ts";

/** As server/backend/domain/messages.ts MAX_MESSAGE (which checks it again). */
const MAX_MESSAGE = 5000;

/**
 * Text from users, made safe for a terminal: control characters (ESC, BEL, the
 * C1 range, bidi overrides…) are shown as \\uXXXX; newlines and tabs stay.
 */
export function terminalSafe(text: string): string {
  return text.replace(
    // oxlint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
    (c) => `\\u${c.codePointAt(0)?.toString(16).padStart(4, "0") ?? "????"}`,
  );
}

/** A compliance message's text (a message or a reply), trimmed; the domain checks it again. */
function messageText(given: string | undefined): string {
  const text = (given ?? "").trim();
  if (text.length === 0) throw new OpsError("The message is empty.");
  if (text.length > MAX_MESSAGE) {
    throw new OpsError(`The message is too long: ${text.length} characters, at most ${MAX_MESSAGE}.`);
  }
  return text;
}

export const MESSAGE_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "message",
    summary: [
      ["message --to <email> <text>", "send a compliance message to one user"],
      ["message --all <text>", "send a compliance message to every user"],
    ],
    usage: `Usage: node server/ops/cli.ts message (--to <email> | --all) <text> [--as <name>] [--json]

Sends a compliance message: to one user (--to, their account e-mail), or to
every user who has an account now (--all; users who sign up later do not get
it). The user sees it unread on /notifications and in the Notifications badge
until they open it. <text> is plain text, 1 to ${MAX_MESSAGE} characters; quote it, and
put -- before it when it starts with "-". Writes one audit_log row (action
message.send).`,
    options: { to: { type: "string" }, all: { type: "boolean" } },
    changes: true,
    arguments: 1,
    check(args, options): { to: string | "all"; text: string } {
      if ((options.to === undefined) === (options.all === undefined)) {
        throw new OpsError("Say who gets the message: --to <email> or --all (one of them).");
      }
      return { to: options.all ? "all" : (options.to ?? "").trim(), text: messageText(args[0]) };
    },
    async run(ctx, { to, text }) {
      const { findUserByEmail, sendMessage } = await import("../../backend/domain/messages.ts");
      let recipient: { userId: string; email: string } | "all" = "all";
      if (to !== "all") {
        const user = await findUserByEmail(ctx.db, to);
        if (!user) throw new OpsError(`No user with the e-mail ${to}.`);
        recipient = { userId: user.userId, email: user.email };
      }
      const sent = await ctx.db.transaction(async (tx) => {
        const result = await sendMessage(tx, {
          to: recipient === "all" ? "all" : { userId: recipient.userId },
          message: text,
        });
        if (!result.ok) throw new OpsError(`No user with the e-mail ${to}.`);
        await audit(ctx, tx, "message.send", result.message.id, {
          to: recipient === "all" ? "all" : recipient.email,
          userId: recipient === "all" ? null : recipient.userId,
          length: result.message.message.length,
          message: result.message.message,
        });
        return result.message;
      });
      return { sent, to: recipient === "all" ? "all" : recipient.email };
    },
    json: ({ sent, to }) => ({ messageId: sent.id, to, createdAt: sent.createdAt.toISOString() }),
    text: ({ sent, to }) =>
      to === "all" ? `Sent message ${sent.id} to every user.` : `Sent message ${sent.id} to ${to}.`,
  }),

  defineCommand({
    name: "support",
    summary: [
      ["support [--kind support|contact]", "support and contact messages, newest first"],
      ["    [--limit <n>]", "at most n of them (default 100)"],
    ],
    usage: `Usage: node server/ops/cli.ts support [--kind support|contact] [--limit <n>] [--json]

Lists the messages users sent from the support form (kind support: name, e-mail,
phone) and visitors from the contact form (kind contact: e-mail), newest first,
at most --limit (1 to 1000, default 100). Texts are shown exactly as sent, as
plain text: control characters are shown escaped (\\u001b …) so a message cannot
drive your terminal. --json prints them unescaped, as JSON strings.`,
    options: { kind: { type: "string" }, limit: { type: "string" } },
    changes: false,
    arguments: 0,
    check(_args, options): { kind: SupportKind | undefined; limit: number } {
      const given = options.kind;
      const kind = given === "support" || given === "contact" ? given : undefined;
      if (given !== undefined && kind === undefined) {
        throw new OpsError(`--kind is support or contact, not "${given}".`);
      }
      const limit = options.limit === undefined ? 100 : wholeNumber(options.limit, "--limit", 1, 1000);
      return { kind, limit };
    },
    async run(ctx, { kind, limit }) {
      const { listSupportMessages, repliesOf } = await import("../../backend/domain/messages.ts");
      const rows = await listSupportMessages(ctx.db, { limit, ...(kind ? { kind } : {}) });
      const replies = await repliesOf(
        ctx.db,
        rows.map((m) => m.id),
      );
      return rows.map((m) => ({ ...m, replies: replies.get(m.id) ?? [] }));
    },
    json: (rows) =>
      rows.map((m) => ({
        id: m.id,
        kind: m.kind,
        email: m.email,
        fullName: m.fullName,
        phone: m.phone,
        comment: m.comment,
        ip: m.ip,
        userId: m.userId,
        createdAt: m.createdAt.toISOString(),
        replies: m.replies.map((r) => ({
          id: r.id,
          author: r.author,
          at: r.at.toISOString(),
          text: r.text,
          messageId: r.messageId,
        })),
      })),
    text(rows, { kind }) {
      if (rows.length === 0) return kind ? `No ${kind} messages.` : "No support or contact messages.";
      const lines: string[] = [];
      for (const m of rows) {
        const who = [m.fullName, `<${m.email}>`, m.phone].filter(Boolean).map((p) => terminalSafe(String(p)));
        lines.push(
          `${m.createdAt.toISOString()}  ${m.kind.toUpperCase()}  ${who.join("  ")}  (${m.id}${m.ip ? `, from ${m.ip}` : ""})`,
          terminalSafe(m.comment)
            .split("\n")
            .map((line) => `    ${line}`)
            .join("\n"),
        );
        for (const r of m.replies) {
          lines.push(
            `    REPLY ${r.at.toISOString()} by ${terminalSafe(r.author)}:`,
            terminalSafe(r.text)
              .split("\n")
              .map((line) => `      ${line}`)
              .join("\n"),
          );
        }
        lines.push("");
      }
      lines.push(`${plural(rows.length, "message")}, newest first.`);
      return lines.join("\n");
    },
  }),

  defineCommand({
    name: "reply",
    summary: [["reply <supportMessageId> <text>", "answer a support or contact message in Notifications"]],
    usage: `Usage: node server/ops/cli.ts reply <supportMessageId> <text> [--as <name>] [--json]

Answers a support or contact message (ids: support --json): the reply reaches
the account holder as a compliance message, unread on /notifications and in
the Notifications badge, and is listed with the message by support. The holder
is the sender's account, or else the account whose e-mail the message gives; a
message from an e-mail no account uses cannot be answered here (write to the
e-mail instead). <text> is plain text, 1 to ${MAX_MESSAGE} characters; quote it, and
put -- before it when it starts with "-". Writes one audit_log row (action
support.reply).`,
    changes: true,
    arguments: 2,
    check(args) {
      const [supportMessageId = "", text] = args;
      if (!UUID.test(supportMessageId)) throw new OpsError(`No support message with id ${supportMessageId}.`);
      return { supportMessageId, text: messageText(text) };
    },
    async run(ctx, { supportMessageId, text }) {
      const { replyToSupportMessage } = await import("../../backend/domain/messages.ts");
      return ctx.db.transaction(async (tx) => {
        const result = await replyToSupportMessage(tx, { supportMessageId, author: ctx.actor, text });
        if (!result.ok) {
          throw new OpsError(
            result.reason === "no-account"
              ? `No account uses ${result.email}; a reply can only reach an account holder.`
              : `No support message with id ${supportMessageId}.`,
          );
        }
        await audit(ctx, tx, "support.reply", supportMessageId, {
          userId: result.to.userId,
          to: result.to.email,
          replyId: result.replyId,
          messageId: result.message.id,
          length: result.message.message.length,
          message: result.message.message,
        });
        return result;
      });
    },
    json: (r, { supportMessageId }) => ({
      replyId: r.replyId,
      supportMessageId,
      messageId: r.message.id,
      to: r.to.email,
      userId: r.to.userId,
      createdAt: r.createdAt.toISOString(),
    }),
    text: (r, { supportMessageId }) =>
      `Replied to ${supportMessageId}: message ${r.message.id} sent to ${r.to.email}.`,
  }),

  defineCommand({
    name: "forget-ips",
    summary: [["forget-ips [--days <n>]", "clear the sender addresses of messages older than n days (90)"]],
    usage: `Usage: node server/ops/cli.ts forget-ips [--days <n>] [--as <name>] [--json]

Clears the sender IP address kept with support and contact messages older than
n days (default 90, decision record 011); the messages themselves stay. Writes
one audit_log row (action support.forget-ips).`,
    options: { days: { type: "string" } },
    changes: true,
    arguments: 0,
    check: (_args, options) => ({
      days: options.days === undefined ? 90 : wholeNumber(options.days, "--days", 0, 36500),
    }),
    async run(ctx, { days }) {
      const { forgetSenderAddresses } = await import("../../backend/domain/messages.ts");
      const cutOff = new Date(Date.now() - days * 86_400_000);
      const cleared = await ctx.db.transaction(async (tx) => {
        const n = await forgetSenderAddresses(tx, cutOff);
        await audit(ctx, tx, "support.forget-ips", "support_messages", {
          olderThan: cutOff.toISOString(),
          cleared: n,
        });
        return n;
      });
      return { cleared, cutOff };
    },
    json: ({ cleared, cutOff }) => ({ cleared, olderThan: cutOff.toISOString() }),
    text: ({ cleared }, { days }) =>
      `Cleared the sender address of ${plural(cleared, "message")} older than ${days} days.`,
  }),
];
