// The staff console's back-office services (common/contract/console.ts), made
// by the host for the web tier when the backend's database is in this process.
// Sign-in and enrolment come from the staff domain; every list and action is
// an operator command run through the registry, as the member.
import type { CommandInput, ConsoleServices, StaffRole } from "../../common/contract/console.ts";
import { mayRun, rolesNeeded } from "../../common/contract/console.ts";
import type { AppDb } from "../backend/db/index.ts";
import * as staff from "../backend/domain/staff.ts";
import type { Config } from "../config.ts";
import { OpsError, type CommandContext } from "./commands/define.ts";
import { parseCommandLine } from "./registry.ts";

/**
 * The command line for one console action: the command's words, its options as
 * --name=value (so a value that starts with "-" stays a value), --json, the
 * member as --as, then "--" and the arguments (so none is read as an option).
 */
export function consoleArgv(command: string, input: CommandInput, email: string): string[] {
  const words = command.split(" ");
  const name = words.filter((w) => !w.startsWith("--"));
  // A key with a scope (message --to, pause --user) runs with that scope only: the role was
  // checked for it, so any other scope flag is refused.
  const scope = words.find((w) => w.startsWith("--"))?.slice(2);
  // The commands whose flags choose whom they reach (audit's --to and --user are filters).
  const scoped = SCOPED_COMMANDS.has(name[0] ?? "");
  const options: string[] = [];
  for (const [key, value] of Object.entries(input.options ?? {})) {
    if (value === undefined) continue;
    if (!/^[a-z][a-z-]*$/u.test(key) || key === "as" || key === "json" || key === "help") {
      throw new OpsError(`The console does not pass --${key}.`);
    }
    if (scoped && SCOPE_FLAGS.has(key) && key !== scope) {
      throw new OpsError(`--${key} does not go with ${command}.`);
    }
    options.push(value === true ? `--${key}` : `--${key}=${value}`);
  }
  if (scope !== undefined && input.options?.[scope] === undefined) {
    throw new OpsError(`${command} needs a value.`);
  }
  return [...name, ...options, "--json", `--as=${email}`, "--", ...(input.args ?? [])];
}

/** The flags that choose whom a command reaches; the console's table gives each its own roles. */
const SCOPE_FLAGS = new Set(["to", "all", "user", "coin"]);
const SCOPED_COMMANDS = new Set(["message", "pause", "resume"]);

export function consoleServices(server: { db: AppDb; config: Config }): ConsoleServices {
  const { db, config } = server;
  const secret = config.backendSecret;
  return {
    openEnrolment: async (token) => {
      const state = await staff.openEnrolment(db, secret, token);
      return state.ok
        ? {
            ok: true,
            email: state.email,
            roles: state.roles,
            secret: state.secret,
            otpauthUri: state.otpauthUri,
          }
        : state;
    },
    completeEnrolment: (input) => staff.completeEnrolment(db, secret, input),
    signInWithPassword: (input) => staff.signInWithPassword(db, input),
    signInWithCode: (input) => staff.signInWithCode(db, secret, input),
    readSession: (token, activity) => staff.readStaffSession(db, token, { activity }),
    endSession: (token, email) => staff.endStaffSession(db, token, email),
    async run(who, command, input = {}) {
      if (!mayRun(who.roles, command)) return { ok: false, kind: "forbidden", needs: rolesNeeded(command) };
      try {
        const invocation = parseCommandLine(consoleArgv(command, input, who.email));
        // The key's words name the command, or the command and its verb ("holdings set", "pool add").
        const key = command.split(" --")[0] ?? "";
        if (
          invocation.kind === "run" &&
          invocation.command.name !== key &&
          !key.startsWith(`${invocation.command.name} `)
        ) {
          throw new OpsError(`That is not ${command}.`);
        }
        if (invocation.kind !== "run") throw new OpsError("That is a help text, not a command.");
        const ctx: CommandContext & { actorRoles: readonly StaffRole[] } = {
          db,
          config,
          actor: who.email,
          actorRoles: who.roles,
        };
        const result = await invocation.run(ctx);
        return { ok: true, data: input.format === "text" ? result.text() : result.json() };
      } catch (error) {
        if (error instanceof OpsError) return { ok: false, kind: "refused", message: error.message };
        throw error;
      }
    },
  };
}
