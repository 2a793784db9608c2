// The operator commands, in the order the help lists them, and how a command
// line becomes one of them. Used by the command line (server/ops/cli.ts) and by
// the server, which runs commands for operators on its ops socket
// (server/host/ops-socket.ts). A new command is one defineCommand() in its
// group's module under server/ops/commands/.
import { parseArgs } from "node:util";
import os from "node:os";
import path from "node:path";
import type { Config } from "../config.ts";
import type { AppDb, Database } from "../backend/db/index.ts";
import { OpsError, type OpsCommand, type PreparedRun } from "./commands/define.ts";
import { CONTROL_COMMANDS } from "./commands/controls.ts";
import { LOGIN_COMMANDS } from "./commands/logins.ts";
import { CUSTODY_COMMANDS } from "./commands/custody.ts";
import { MESSAGE_COMMANDS } from "./commands/messages.ts";
import { SEND_COMMANDS } from "./commands/sends.ts";
import { WALLET_COMMANDS } from "./commands/wallets.ts";
import { DEPOSIT_COMMANDS } from "./commands/deposits.ts";
import { CHAIN_COMMANDS } from "./commands/chains.ts";
import { STAFF_COMMANDS } from "./commands/staff.ts";
import { AUDIT_COMMANDS } from "./commands/audit.ts";
import { HOLDER_COMMANDS } from "./commands/holders.ts";
import { MAIL_COMMANDS } from "./commands/mail.ts";
import { RATE_COMMANDS } from "./commands/rates.ts";
import { BACKUP_COMMANDS } from "./commands/backup.ts";

export const COMMANDS: readonly OpsCommand[] = [
  ...WALLET_COMMANDS,
  ...CUSTODY_COMMANDS,
  ...DEPOSIT_COMMANDS,
  ...CHAIN_COMMANDS,
  ...SEND_COMMANDS,
  ...CONTROL_COMMANDS,
  ...MESSAGE_COMMANDS,
  ...LOGIN_COMMANDS,
  ...HOLDER_COMMANDS,
  ...RATE_COMMANDS,
  ...AUDIT_COMMANDS,
  ...STAFF_COMMANDS,
  ...MAIL_COMMANDS,
  ...BACKUP_COMMANDS,
];

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

/** Options every command takes. */
const COMMON_OPTIONS = {
  as: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

// An option belongs to the commands that declare it, all alike (decline, issuing,
// pause and resume share --reason; credit and deposit --usd), so "--x goes with <commands> only" has one answer.
const OWNERS = new Map<string, { type: string; names: string[] }>();
for (const c of COMMANDS) {
  if (BY_NAME.get(c.name) !== c) throw new Error(`Two operator commands are named ${c.name}.`);
  for (const [option, spec] of Object.entries(c.options)) {
    const owner = OWNERS.get(option);
    if (Object.hasOwn(COMMON_OPTIONS, option) || (owner && owner.type !== spec.type)) {
      throw new Error(`The option --${option} of ${c.name} is taken.`);
    }
    if (owner) owner.names.push(c.name);
    else OWNERS.set(option, { type: spec.type, names: [c.name] });
  }
}

/** "a", "a and b", "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1) ?? ""}`;
}

const commandList = COMMANDS.flatMap((c) => c.summary)
  .map(([synopsis, what]) => `  ${synopsis.padEnd(34)}  ${what}`)
  .join("\n");

export const USAGE = `Usage: node server/ops/cli.ts <command> [options]   (npm run ops -- <command> [options])

Coinkeep operator commands, on the configured database: DATABASE_URL, or else
the embedded database in DATA_DIR (default ./data). The embedded database serves
one process: while the server runs, it carries out these commands for you
(through DATA_DIR/ops.sock, reachable only by the server's own user).

Commands:
${commandList}

Options:
  --as <name>   who you are, for the audit log (default: $OPERATOR, else your OS user name)
  --json        machine-readable output (JSON on stdout)
  -h, --help    this help; "<command> --help" explains one command

Every change is written to the audit log in the same transaction as the change.
Exit status: 0 on success, 1 with one line on stderr otherwise (nothing written).`;

/** Whether a command-line word is an option that takes the next word as its value. */
function takesValue(arg: string | undefined): boolean {
  return arg === "--as" || (arg?.startsWith("--") === true && OWNERS.get(arg.slice(2))?.type === "string");
}

/** What a command line asks for: a help text, or a checked command to run. */
export type Invocation =
  | { kind: "help"; text: string }
  | {
      kind: "run";
      command: OpsCommand;
      actor: string;
      json: boolean;
      run: PreparedRun;
      /** The command line to hand a running server: file arguments made absolute. */
      forward: string[];
    };

function resolveActor(as: string | undefined): string {
  let name = as ?? process.env.OPERATOR;
  if (name === undefined || name === "") {
    try {
      name = os.userInfo().username;
    } catch {
      name = "";
    }
  }
  return checkedActor(name, "Say who you are with --as <name> (1 to 100 printable characters) or OPERATOR.");
}

/** An actor's name, trimmed: 1 to 100 printable characters, else refused with `refusal`. */
function checkedActor(given: string, refusal: string): string {
  const name = given.trim();
  // oxlint-disable-next-line no-control-regex
  if (name === "" || name.length > 100 || /[\u0000-\u001f\u007f]/u.test(name)) throw new OpsError(refusal);
  return name;
}

/**
 * Reads a command line and checks everything that needs no database: the
 * command, its options and arguments, who acts. Throws OpsError on a mistake.
 */
export function parseCommandLine(argv: string[]): Invocation {
  for (const c of COMMANDS) if (c.screen && argv.includes(c.name)) c.screen(argv);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...COMMON_OPTIONS,
        ...Object.fromEntries(COMMANDS.flatMap((c) => Object.entries(c.options))),
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new OpsError(`${message.replace(/\.$/u, "")}. See --help.`);
  }
  const values: Readonly<Record<string, string | boolean | undefined>> = parsed.values;
  const [first, ...rest] = parsed.positionals;
  if (first === undefined) {
    if (values.help) return { kind: "help", text: USAGE };
    throw new OpsError("No command given. See --help.");
  }
  // A two-word command ("deposits import") before the one-word one it starts with.
  const pair = rest[0] === undefined ? undefined : BY_NAME.get(`${first} ${rest[0]}`);
  const command = pair ?? BY_NAME.get(first);
  const args = pair ? rest.slice(1) : rest;
  if (!command) throw new OpsError(`Unknown command "${first}". See --help.`);
  if (values.help) return { kind: "help", text: command.usage };
  for (const other of COMMANDS) {
    if (other === command) continue;
    const given = Object.keys(other.options).filter(
      (o) => values[o] !== undefined && !Object.hasOwn(command.options, o),
    );
    if (given.length === 0) continue;
    const shared = given.find((o) => (OWNERS.get(o)?.names.length ?? 0) > 1);
    if (shared !== undefined) {
      throw new OpsError(`--${shared} goes with ${listed(OWNERS.get(shared)?.names.toSorted() ?? [])} only.`);
    }
    const own = Object.keys(other.options).filter((o) => OWNERS.get(o)?.names.length === 1);
    const all = own.map((o) => `--${o}`);
    throw new OpsError(`${all.join(" and ")} ${all.length === 1 ? "goes" : "go"} with ${other.name} only.`);
  }
  const run = command.prepare(args, values);
  const as = typeof values.as === "string" ? values.as : undefined;
  const actor = command.changes ? resolveActor(as) : "";
  // parseArgs keeps no positions: a file argument is the argv entry equal to it that no option takes.
  const files = new Set(command.files.map((i) => args[i]));
  const fileOption = (a: string | undefined) => command.fileOptions.some((o) => a === `--${o}`);
  const forward = argv.map((a, i) => {
    if (fileOption(argv[i - 1])) return path.resolve(a);
    const inline = command.fileOptions.find((o) => a.startsWith(`--${o}=`));
    if (inline !== undefined) return `--${inline}=${path.resolve(a.slice(inline.length + 3))}`;
    return files.has(a) && !takesValue(argv[i - 1]) ? path.resolve(a) : a;
  });
  return { kind: "run", command, actor, json: values.json === true, run, forward };
}

/**
 * Runs a checked command on an open database and returns what it prints. The staff console
 * passes who acts (the signed-in staff member's e-mail and roles), which then wins over --as.
 */
export async function execute(
  invocation: Extract<Invocation, { kind: "run" }>,
  server: { db: AppDb; config: Config; actor?: string; actorRoles?: readonly string[]; database?: Database },
): Promise<string> {
  const { db, config, database } = server;
  const result = await invocation.run({
    db,
    config,
    actor:
      server.actor === undefined || !invocation.command.changes
        ? invocation.actor
        : checkedActor(
            server.actor,
            "The staff member acting must be named (1 to 100 printable characters).",
          ),
    actorRoles: server.actorRoles,
    database,
  });
  return `${invocation.json ? JSON.stringify(result.json(), null, 2) : result.text()}\n`;
}

/** The one line on stderr for a failed command. */
export function errorLine(error: unknown): string {
  let text: string;
  if (error instanceof Error) {
    // A drizzle query error's message carries the whole statement; its driver cause says what went wrong.
    const shown =
      error.message.startsWith("Failed query:") && error.cause instanceof Error ? error.cause : error;
    text = shown.message;
  } else {
    text = String(error);
  }
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
  return `error: ${line}\n`;
}

/** For the ops socket: runs one command on the server's database and returns what it printed. */
export async function runInServer(
  argv: string[],
  server: { db: AppDb; config: Config; actor?: string; actorRoles?: readonly string[]; database?: Database },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const invocation = parseCommandLine(argv);
    if (invocation.kind === "run" && invocation.command.alone) {
      throw new OpsError(`${invocation.command.name} runs on its own, not through a server.`);
    }
    const stdout = invocation.kind === "help" ? `${invocation.text}\n` : await execute(invocation, server);
    return { code: 0, stdout, stderr: "" };
  } catch (error) {
    return { code: 1, stdout: "", stderr: errorLine(error) };
  }
}
