// The audit log: searching it, page by page, as a table, JSON or CSV.
import { toCsv } from "../../../common/csv.ts";
import type { AuditEntry, AuditQuery } from "../../backend/domain/audit-log.ts";
import type { OpsCommand } from "./define.ts";
import { defineCommand, OpsError, plural, resolveUser, table, wholeNumber } from "./define.ts";
import { terminalSafe } from "./messages.ts";

/** As server/backend/domain/audit-log.ts MAX_AUDIT_PAGE (which checks it again). */
const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/u;

/**
 * An ISO 8601 date ("2026-11-27": that day's start, UTC) or date and time with its
 * zone ("2026-11-27T09:30:00Z"); `dayAfter` moves a date alone to the next day's
 * start, so --to 2026-11-27 takes in the whole of that day.
 */
function isoOption(text: string, name: string, dayAfter: boolean): Date {
  const match = ISO.exec(text);
  const date = new Date(match && match[4] === undefined ? `${text}T00:00:00Z` : text);
  // new Date() rolls 2026-02-30 over into March: the date must read back as written.
  const sameDay = match && date.toISOString().slice(0, 10) === text.slice(0, 10);
  if (!match || Number.isNaN(date.getTime()) || (match[4] === undefined && !sameDay)) {
    throw new OpsError(
      `Invalid ${name} "${text}": an ISO date like 2026-11-27, or a date and time like 2026-11-27T09:30:00Z.`,
    );
  }
  return match[4] === undefined && dayAfter ? new Date(date.getTime() + 86_400_000) : date;
}

/** A text filter, trimmed; given empty it is refused. */
function nonEmpty(text: string | undefined, name: string): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed === "") throw new OpsError(`--${name} is empty.`);
  return trimmed;
}

/** --before: an audit row's id, a whole number from 1. */
function auditId(text: string): number {
  if (!/^\d{1,15}$/u.test(text) || Number(text) < 1) {
    throw new OpsError(`Invalid --before "${text}": an audit row's id (a whole number from 1).`);
  }
  return Number(text);
}

interface AuditInput {
  actor?: string;
  user?: string;
  action?: string;
  from?: Date;
  to?: Date;
  before?: number;
  /** Undefined with --csv and no --limit: every matching row. */
  limit: number | undefined;
  csv: boolean;
}

const CSV_HEADER = ["id", "at", "actor", "roles", "action", "subject", "user_id", "reason", "details"];

function csvRow(e: AuditEntry): string[] {
  return [
    String(e.id),
    e.at.toISOString(),
    e.actor,
    (e.actorRoles ?? []).join(";"),
    e.action,
    e.subject ?? "",
    e.userId ?? "",
    e.reason ?? "",
    JSON.stringify(e.details),
  ];
}

export const AUDIT_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "audit",
    summary: [
      ["audit [--actor <name>]", "the audit log, newest first, a page at a time"],
      ["    [--user <email|id>]", "filters: who acted, the holder concerned,"],
      ["    [--action <a>]", "the action,"],
      ["    [--from <date>] [--to <date>]", "and when (ISO dates)"],
      ["    [--limit <n>] [--before <id>]", "a page of n rows (100), older than row id"],
      ["    [--csv]", "as CSV for spreadsheets (every row without --limit)"],
    ],
    usage: `Usage: node server/ops/cli.ts audit [--actor <name>] [--user <email|id>] [--action <action>]
         [--from <date>] [--to <date>] [--limit <n>] [--before <id>] [--csv] [--json]

Lists audit_log rows newest first: id, time, actor, the actor's roles (staff
console), action, subject, holder, reason. Filters: --actor exactly this name,
--user the rows concerning this holder (e-mail or user id), --action exactly
this action (send.approve, support.reply, …), --from at or after and --to
before an ISO date or date-time (a date alone: --to includes that whole day,
UTC). A page holds --limit rows (1 to ${MAX_PAGE}, default ${DEFAULT_PAGE}); the next page is
--before <the last id shown>. --csv prints CSV (RFC 4180, every cell quoted;
a cell starting with = + - @ or a tab or carriage return gets a leading ' so a
spreadsheet never runs it as a formula) and, without --limit, every matching
row, read page by page. --json: { entries, nextBefore }.`,
    options: {
      actor: { type: "string" },
      user: { type: "string" },
      action: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      limit: { type: "string" },
      before: { type: "string" },
      csv: { type: "boolean" },
    },
    changes: false,
    arguments: 0,
    check(_args, o): AuditInput {
      const from = o.from === undefined ? undefined : isoOption(o.from, "--from", false);
      const to = o.to === undefined ? undefined : isoOption(o.to, "--to", true);
      if (from && to && from >= to) throw new OpsError("--from must be before --to.");
      const actor = nonEmpty(o.actor, "actor");
      const user = nonEmpty(o.user, "user");
      const action = nonEmpty(o.action, "action");
      return {
        ...(actor === undefined ? {} : { actor }),
        ...(user === undefined ? {} : { user }),
        ...(action === undefined ? {} : { action }),
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to }),
        ...(o.before === undefined ? {} : { before: auditId(o.before) }),
        limit:
          o.limit === undefined
            ? o.csv
              ? undefined
              : DEFAULT_PAGE
            : wholeNumber(o.limit, "--limit", 1, MAX_PAGE),
        csv: o.csv === true,
      };
    },
    async run(ctx, input) {
      const { allAuditRows, searchAudit } = await import("../../backend/domain/audit-log.ts");
      const query: Omit<AuditQuery, "limit"> = {
        ...(input.actor === undefined ? {} : { actor: input.actor }),
        ...(input.user === undefined ? {} : { userId: (await resolveUser(ctx, input.user)).userId }),
        ...(input.action === undefined ? {} : { action: input.action }),
        ...(input.from === undefined ? {} : { from: input.from }),
        ...(input.to === undefined ? {} : { to: input.to }),
        ...(input.before === undefined ? {} : { before: input.before }),
      };
      if (input.limit !== undefined) {
        const entries = await searchAudit(ctx.db, { ...query, limit: input.limit });
        // A full page may have more behind it; the next page starts below its last id.
        return { entries, nextBefore: entries.length === input.limit ? (entries.at(-1)?.id ?? null) : null };
      }
      const entries: AuditEntry[] = [];
      for await (const entry of allAuditRows(ctx.db, query)) entries.push(entry);
      return { entries, nextBefore: null };
    },
    json: ({ entries, nextBefore }) => ({
      entries: entries.map((e) => ({
        id: e.id,
        at: e.at.toISOString(),
        actor: e.actor,
        actorRoles: e.actorRoles,
        action: e.action,
        subject: e.subject,
        userId: e.userId,
        reason: e.reason,
        details: e.details,
      })),
      nextBefore,
    }),
    text({ entries, nextBefore }, { csv }) {
      // CSV ends each line with CRLF; the command line adds the last line's LF after the text.
      if (csv) return toCsv([CSV_HEADER, ...entries.map(csvRow)]).replace(/\n$/u, "");
      if (entries.length === 0) return "No audit rows match.";
      const rows = entries.map((e) =>
        [
          String(e.id),
          e.at.toISOString(),
          e.actor,
          e.actorRoles?.join(",") ?? "-",
          e.action,
          e.subject ?? "-",
          e.reason ?? "",
        ].map((cell) => terminalSafe(cell).replaceAll("\n", " ")),
      );
      const more = nextBefore === null ? "" : ` More: --before ${nextBefore}`;
      return (
        table(["ID", "AT", "ACTOR", "ROLES", "ACTION", "SUBJECT", "REASON"], rows, new Set([0])) +
        `\n\n${plural(entries.length, "row")}, newest first.${more}`
      );
    },
  }),
];
