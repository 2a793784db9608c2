// The e-mail outbox (issue 28, record 049): what waits, what went, what keeps failing and why;
// and sending one again now instead of after its backoff.
import type { OpsCommand } from "./define.ts";
import { audit, defineCommand, OpsError, plural, table } from "./define.ts";

const outbox = () => import("../../backend/mail/outbox.ts");

const STATES = ["queued", "sent", "failing"] as const;
type State = (typeof STATES)[number];

export const MAIL_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "mail",
    summary: [["mail [--status queued|sent|failing] [--limit N]", "the e-mail outbox, newest first"]],
    usage: `Usage: node server/ops/cli.ts mail [--status queued|sent|failing] [--limit N] [--json]

Lists the e-mail outbox, newest first (default 50): each mail's id, kind,
recipient, state, attempts and when it was made; a failing mail (queued, its
last attempt refused by the server or not answered) with the server's last
words and when it is tried again. Mails are queued in the transaction of the
change they report and sent by the server's sender (SMTP_URL; without it they
wait). "mail retry <id>" tries a queued mail now.`,
    options: { status: { type: "string" }, limit: { type: "string" } },
    changes: false,
    arguments: 0,
    check(_args, options) {
      const status = options.status;
      if (status !== undefined && !(STATES as readonly string[]).includes(status))
        throw new OpsError("--status must be queued, sent or failing.");
      const limit = options.limit === undefined ? 50 : Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
        throw new OpsError("--limit must be a whole number from 1 to 10000.");
      return { status: status as State | undefined, limit };
    },
    async run(ctx, input) {
      const { listOutbox, outboxCounts } = await outbox();
      const [rows, counts] = await Promise.all([listOutbox(ctx.db, input), outboxCounts(ctx.db)]);
      return { rows, counts, smtp: ctx.config.smtp !== undefined };
    },
    json: ({ rows, counts, smtp }) => ({ emailOn: smtp, ...counts, mails: rows }),
    text({ rows, counts, smtp }) {
      const head = smtp
        ? `${plural(counts.queued, "mail")} waiting, ${counts.failing} failing.`
        : `E-mail is off (SMTP_URL is not set): ${plural(counts.queued, "mail")} waiting.`;
      if (rows.length === 0) return `${head}\nThe outbox is empty.`;
      const lines = table(
        ["ID", "KIND", "TO", "STATE", "ATTEMPTS", "MADE", "SENT / NEXT TRY"],
        rows.map((r) => [
          String(r.id),
          r.kind,
          r.to,
          r.status,
          String(r.attempts),
          r.createdAt,
          (r.status === "sent" ? r.sentAt : r.nextAttemptAt) ?? "",
        ]),
        new Set([0, 4]),
      );
      const errors = rows
        .filter((r) => r.status === "failing" && r.lastError)
        .map((r) => `  ${r.id}: ${r.lastError ?? ""}`);
      return `${head}\n\n${lines}${errors.length > 0 ? `\n\nLast errors:\n${errors.join("\n")}` : ""}`;
    },
  }),

  defineCommand({
    name: "mail retry",
    summary: [["mail retry <id>", "try a queued mail now, without waiting for its backoff"]],
    usage: `Usage: node server/ops/cli.ts mail retry <id> [--as <name>] [--json]

Makes a queued mail due now: the server's sender tries it within a second or
two (a mail sent already is never sent again). Writes one audit_log row
(action mail.retry).`,
    changes: true,
    arguments: 1,
    check(args) {
      const id = Number(args[0]);
      if (!Number.isSafeInteger(id) || id < 1)
        throw new OpsError("The id must be a mail's number (see: mail).");
      return { id };
    },
    async run(ctx, { id }) {
      const { retryNow } = await outbox();
      return ctx.db.transaction(async (tx) => {
        const state = await retryNow(tx, id);
        if (state === "missing") throw new OpsError(`No mail with the id ${id}.`);
        if (state === "sent") throw new OpsError(`Mail ${id} was sent already; it is not sent twice.`);
        await audit(ctx, tx, "mail.retry", String(id), {});
        return { id };
      });
    },
    json: ({ id }) => ({ id, due: true }),
    text: ({ id }) => `Mail ${id} is due now; the sender tries it within a few seconds.`,
  }),
];
