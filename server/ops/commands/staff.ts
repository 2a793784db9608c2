// Staff members of the back office (issue 26, record 047): adding one prints
// their one-time enrolment link; roles, removal, ending sessions and lifting a
// sign-in lock. The console's admin pages run these same commands.
import type { Config } from "../../config.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
import { defineCommand, OpsError, table } from "./define.ts";

const ROLES_TEXT = "support, compliance, approver, treasury, admin";
const MAX_REASON = 1000;

/** The domain's StaffError as the commands' refusal. */
async function staffDomain() {
  return import("../../backend/domain/staff.ts");
}

async function refusing<T>(work: () => Promise<T>): Promise<T> {
  const { StaffError } = await staffDomain();
  try {
    return await work();
  } catch (error) {
    if (error instanceof StaffError) throw new OpsError(error.message);
    throw error;
  }
}

function who(ctx: CommandContext) {
  return {
    actor: ctx.actor,
    actorRoles: ctx.actorRoles,
  };
}

/** The console's address: PUBLIC_URL, else this server's own. */
export function consoleBase(config: Config): string {
  return config.publicUrl ?? `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}`;
}

/** The enrolment link: the token rides in the query (only paths are logged) and leaves the address bar at once. */
export function enrolmentUrl(config: Config, token: string): string {
  return `${consoleBase(config)}/ops/enrol?token=${token}`;
}

function rolesOption(text: string | undefined): string[] {
  if (text === undefined || text.trim() === "") {
    throw new OpsError(`Give the roles with --role <role[,role…]>: ${ROLES_TEXT}.`);
  }
  return [
    ...new Set(
      text
        .split(",")
        .map((r) => r.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

function reasonOption(text: string | undefined, what: string): string {
  const reason = text?.trim() ?? "";
  if (reason === "")
    throw new OpsError(`${what} needs --reason <text>: why (1 to ${MAX_REASON} characters).`);
  if (reason.length > MAX_REASON)
    throw new OpsError(`--reason is too long: ${reason.length} characters, at most ${MAX_REASON}.`);
  return reason;
}

function emailArg(args: readonly string[]): string {
  const email = (args[0] ?? "").trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/u.test(email) || email.length > 254) {
    throw new OpsError(`"${args[0] ?? ""}" is not an e-mail address.`);
  }
  return email;
}

const linkText = (email: string, url: string, expiresAt: Date) =>
  `Enrolment link for ${email} (valid until ${expiresAt.toISOString()}, usable once):\n${url}\n` +
  "Hand it to them privately: whoever opens it first sets the password and the authenticator.";

export const STAFF_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "staff",
    summary: [["staff", "staff members of the console: roles, enrolled, locked, sessions"]],
    usage: `Usage: node server/ops/cli.ts staff [--json]

Lists the console's staff members: e-mail, roles, whether they have enrolled
(password and authenticator set), whether their sign-in is locked (after 10
wrong passwords or codes in a row), and their live sessions.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    run: async (ctx) => (await staffDomain()).listStaff(ctx.db),
    json: (members) =>
      members.map((m) => ({
        email: m.email,
        roles: m.roles,
        enrolled: m.enrolled,
        locked: m.locked,
        failedSignIns: m.failedSignIns,
        sessions: m.sessions,
        createdAt: m.createdAt.toISOString(),
        createdBy: m.createdBy,
      })),
    text: (members) =>
      members.length === 0
        ? "No staff members yet. Add the first admin: staff add <email> --role admin"
        : table(
            ["E-MAIL", "ROLES", "ENROLLED", "SIGN-IN", "SESSIONS"],
            members.map((m) => [
              m.email,
              m.roles.join(","),
              m.enrolled ? "yes" : "no",
              m.locked ? "locked" : "open",
              String(m.sessions),
            ]),
            new Set([4]),
          ),
  }),

  defineCommand({
    name: "staff add",
    summary: [
      ["staff add <email> --role <roles>", "add a staff member; prints their one-time enrolment link"],
      ["      roles, comma-separated:", ROLES_TEXT],
    ],
    usage: `Usage: node server/ops/cli.ts staff add <email> --role <role[,role…]> [--as <name>] [--json]

Adds a member of the console's staff with the given roles (${ROLES_TEXT})
and prints a one-time enrolment link, valid 24 hours. Whoever opens it sets the
member's password and authenticator (TOTP), so hand it to them privately. The
link is stored as its hash only. Writes one audit_log row (action staff.add).`,
    options: { role: { type: "string" } },
    changes: true,
    arguments: 1,
    check: (args, options) => ({ email: emailArg(args), roles: rolesOption(options.role) }),
    run: async (ctx, input) => {
      const { addStaff } = await staffDomain();
      const link = await refusing(() => addStaff(ctx.db, input, who(ctx)));
      return { ...link, url: enrolmentUrl(ctx.config, link.token) };
    },
    json: (r) => ({
      email: r.member.email,
      roles: r.member.roles,
      enrolmentUrl: r.url,
      expiresAt: r.expiresAt.toISOString(),
    }),
    text: (r) =>
      `Added ${r.member.email} (${r.member.roles.join(", ")}).\n${linkText(r.member.email, r.url, r.expiresAt)}`,
  }),

  defineCommand({
    name: "staff link",
    summary: [["staff link <email>", "a new enrolment link for a member who has not enrolled"]],
    usage: `Usage: node server/ops/cli.ts staff link <email> [--as <name>] [--json]

Issues a new one-time enrolment link (valid 24 hours) for a member who has not
enrolled yet; their earlier link stops working. Writes one audit_log row
(action staff.link).`,
    changes: true,
    arguments: 1,
    check: (args) => emailArg(args),
    run: async (ctx, email) => {
      const { newEnrolmentLink } = await staffDomain();
      const link = await refusing(() => newEnrolmentLink(ctx.db, email, who(ctx)));
      return { ...link, url: enrolmentUrl(ctx.config, link.token) };
    },
    json: (r) => ({ email: r.member.email, enrolmentUrl: r.url, expiresAt: r.expiresAt.toISOString() }),
    text: (r) => linkText(r.member.email, r.url, r.expiresAt),
  }),

  defineCommand({
    name: "staff roles",
    summary: [["staff roles <email> --role <roles>", "set a member's roles (their sessions end)"]],
    usage: `Usage: node server/ops/cli.ts staff roles <email> --role <role[,role…]> --reason <text> [--as <name>] [--json]

Sets a member's roles to exactly those given (${ROLES_TEXT}). Their
sessions end: they sign in again under the new roles. Writes one audit_log row
(action staff.roles) with the roles before and after.`,
    options: { role: { type: "string" }, reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check: (args, options) => ({
      email: emailArg(args),
      roles: rolesOption(options.role),
      reason: reasonOption(options.reason, "staff roles"),
    }),
    run: async (ctx, input) => {
      const { setStaffRoles } = await staffDomain();
      return refusing(() => setStaffRoles(ctx.db, input, who(ctx)));
    },
    json: (m) => ({ email: m.email, roles: m.roles }),
    text: (m) => `${m.email} now has the roles ${m.roles.join(", ")}; their sessions ended.`,
  }),

  defineCommand({
    name: "staff remove",
    summary: [["staff remove <email> --reason <text>", "remove a staff member: no sign-in, sessions end"]],
    usage: `Usage: node server/ops/cli.ts staff remove <email> --reason <text> [--as <name>] [--json]

Removes a member: they can no longer sign in and every session of theirs ends
at once (their next request is refused). The record stays for the audit log.
The last admin cannot be removed. Writes one audit_log row (action staff.remove).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check: (args, options) => ({
      email: emailArg(args),
      reason: reasonOption(options.reason, "staff remove"),
    }),
    run: async (ctx, input) => {
      const { removeStaff } = await staffDomain();
      return refusing(() => removeStaff(ctx.db, input, who(ctx)));
    },
    json: (m) => ({ email: m.email, removed: true }),
    text: (m) => `Removed ${m.email}: they can no longer sign in; their sessions ended.`,
  }),

  defineCommand({
    name: "staff end-sessions",
    summary: [["staff end-sessions <email> --reason <text>", "sign a staff member out everywhere"]],
    usage: `Usage: node server/ops/cli.ts staff end-sessions <email> --reason <text> [--as <name>] [--json]

Ends every session of a member: each of their browsers is signed out on its
next request. Writes one audit_log row (action staff.end-sessions).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check: (args, options) => ({
      email: emailArg(args),
      reason: reasonOption(options.reason, "staff end-sessions"),
    }),
    run: async (ctx, input) => {
      const { endStaffSessions } = await staffDomain();
      return {
        email: input.email.trim().toLowerCase(),
        ended: await refusing(() => endStaffSessions(ctx.db, input, who(ctx))),
      };
    },
    json: (r) => r,
    text: (r) => `Ended ${r.ended} session${r.ended === 1 ? "" : "s"} of ${r.email}.`,
  }),

  defineCommand({
    name: "staff unlock",
    summary: [["staff unlock <email> --reason <text>", "lift a staff member's sign-in lock"]],
    usage: `Usage: node server/ops/cli.ts staff unlock <email> --reason <text> [--as <name>] [--json]

Lifts the sign-in lock a member reaches after 10 wrong passwords or codes in a
row. Check who asks first. Writes one audit_log row (action staff.unlock).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 1,
    check: (args, options) => ({
      email: emailArg(args),
      reason: reasonOption(options.reason, "staff unlock"),
    }),
    run: async (ctx, input) => {
      const { unlockStaff } = await staffDomain();
      return {
        email: input.email.trim().toLowerCase(),
        cleared: await refusing(() => unlockStaff(ctx.db, input, who(ctx))),
      };
    },
    json: (r) => r,
    text: (r) =>
      r.cleared === 0
        ? `${r.email} had no failed sign-ins; nothing to unlock.`
        : `Unlocked ${r.email} (${r.cleared} failures cleared).`,
  }),
];
