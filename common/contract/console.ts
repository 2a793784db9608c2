// The staff console's reach into the back office (issue 26, record 047). The
// host hands the web tier an implementation (server/ops/console.ts) when the
// backend and its database run in the same process; the console's pages use
// nothing else. Every action and every list runs an operator command through
// the same registry as `npm run ops` — one rule, two faces.

export const STAFF_ROLES = ["support", "compliance", "approver", "treasury", "admin"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

/** What each role is for, as the console and the README say it. */
export const ROLE_DUTIES: Readonly<Record<StaffRole, string>> = {
  support:
    "find users; read their wallets, transactions and messages; read and answer support and contact messages; send a compliance message to one user",
  compliance:
    "everything support does, plus lock and unlock accounts, pause and resume a user, send a compliance message to everyone",
  approver: "decide sends (approve or decline)",
  treasury:
    "issuing (automatic or by hand, issue an address), pools, deposits (report one, import a CSV), holdings, reconciliation, coin switches",
  admin: "staff members and their roles, ending their sessions, the four-eyes thresholds, the audit log",
};

/**
 * Which roles may run each operator command from the console (any one of them
 * suffices). A command not listed here is not open to the console at all. The
 * console's pages ask the same table which links to show; the server asks it
 * again before it runs anything.
 */
export const COMMAND_ROLES = {
  users: ["support", "compliance"],
  user: ["support", "compliance"],
  support: ["support", "compliance"],
  reply: ["support", "compliance"],
  "message --to": ["support", "compliance"],
  "message --all": ["compliance"],
  locks: ["support", "compliance"],
  unlock: ["compliance"],
  "pause --user": ["compliance"],
  "resume --user": ["compliance"],
  pauses: ["support", "compliance", "treasury", "approver"],
  sends: ["approver"],
  approve: ["approver"],
  decline: ["approver"],
  thresholds: ["approver", "admin"],
  "threshold set": ["admin"],
  requests: ["treasury"],
  "issue-address": ["treasury"],
  pool: ["treasury"],
  "pool add": ["treasury"],
  issuing: ["treasury"],
  custody: ["treasury"],
  deposit: ["treasury"],
  deposits: ["treasury"],
  "deposits import": ["treasury"],
  credit: ["treasury"],
  "holdings set": ["treasury"],
  reconcile: ["treasury", "compliance"],
  chains: ["treasury", "compliance"],
  "pause --coin": ["treasury"],
  "resume --coin": ["treasury"],
  staff: ["admin"],
  "staff add": ["admin"],
  "staff link": ["admin"],
  "staff roles": ["admin"],
  "staff remove": ["admin"],
  "staff end-sessions": ["admin"],
  "staff unlock": ["admin"],
  audit: ["admin", "compliance"],
} as const satisfies Record<string, readonly StaffRole[]>;

export type ConsoleCommand = keyof typeof COMMAND_ROLES;

export function mayRun(roles: readonly StaffRole[], command: ConsoleCommand): boolean {
  const allowed: readonly StaffRole[] = COMMAND_ROLES[command];
  return allowed.some((r) => roles.includes(r));
}

/** "approver", "support or compliance": the roles a refusal names. */
export function rolesNeeded(command: ConsoleCommand): string {
  const allowed: readonly string[] = COMMAND_ROLES[command];
  return allowed.length <= 1
    ? (allowed[0] ?? "")
    : `${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1) ?? ""}`;
}

export interface ConsoleSession {
  staffId: string;
  email: string;
  roles: StaffRole[];
  stage: "password" | "signed-in";
  idleDeadline: number;
}

export type EnrolmentView =
  | { ok: true; email: string; roles: StaffRole[]; secret: string; otpauthUri: string }
  | { ok: false; reason: "unknown" | "used" | "expired" };

export type EnrolmentDone =
  | { ok: true; email: string; recoveryCodes: string[] }
  | { ok: false; reason: "unknown" | "used" | "expired" }
  | { ok: false; reason: "password"; message: string }
  | { ok: false; reason: "code" };

export type CommandOutcome =
  | { ok: true; data: unknown }
  /** The command refused (its one sentence, as the command line prints it after "error: "). */
  | { ok: false; kind: "refused"; message: string }
  /** The member lacks the role. */
  | { ok: false; kind: "forbidden"; needs: string };

export interface CommandInput {
  args?: readonly string[];
  /** "text": the outcome's data is what the command line prints without --json (a CSV export). */
  format?: "json" | "text";
  /** Option values by name without dashes; true for a flag. Undefined values are left out. */
  options?: Readonly<Record<string, string | true | undefined>>;
}

export interface ConsoleServices {
  openEnrolment(token: string): Promise<EnrolmentView>;
  completeEnrolment(input: { token: string; password: string; code: string }): Promise<EnrolmentDone>;
  signInWithPassword(input: {
    email: string;
    password: string;
  }): Promise<{ ok: true; token: string } | { ok: false; reason: "invalid" | "locked" }>;
  signInWithCode(input: {
    token: string;
    code: string;
  }): Promise<
    | { ok: true; token: string; email: string }
    | { ok: false; reason: "start-again" | "locked" | "invalid" | "replayed" }
  >;
  readSession(token: string, activity: boolean): Promise<ConsoleSession | null>;
  endSession(token: string, email?: string): Promise<void>;
  /**
   * Runs an operator command as this member, with its arguments and options
   * (never --as or --json; a scope flag such as --to only as the command's key
   * names it). Checks the role, then runs it through the registry with the
   * member as the actor.
   */
  run(
    who: { email: string; roles: readonly StaffRole[] },
    command: ConsoleCommand,
    input?: CommandInput,
  ): Promise<CommandOutcome>;
}
