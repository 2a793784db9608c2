// What an operator command is, declared once as data: its name, its lines in
// the general help and its own help, the options it takes, a check of its
// arguments that needs no database, the work it does on the backend's domain,
// and how its result prints (text for people, JSON with --json). The registry
// (server/ops/registry.ts) lists the commands; the command line and the
// server's ops socket both run them through it.
//
// The database and domain modules are imported inside run() only, so that
// --help and usage mistakes answer before any of them is loaded.
import { readFile, stat } from "node:fs/promises";
import type { Config } from "../../config.ts";
import { normaliseUsd } from "../../backend/domain/amounts.ts";
import type { AppDb, Database } from "../../backend/db/index.ts";

/** A refusal: printed as one line, "error: …", exit 1; nothing has been written. */
export class OpsError extends Error {}

/** An option a command takes, as node:util parseArgs declares it. */
export type OptionSpec = Readonly<Record<string, { type: "string" } | { type: "boolean" }>>;

/** The values parseArgs gives for a command's options. */
export type OptionValues<O extends OptionSpec> = {
  [K in keyof O]?: O[K] extends { type: "string" } ? string : boolean;
};

/** What a command runs with: the open database, the configuration and who acts (for the audit log). */
export interface CommandContext {
  db: AppDb;
  config: Config;
  /** Empty for commands that change nothing. */
  actor: string;
  /**
   * The staff member's roles when the staff console runs the command for them; absent on the
   * command line (an operator there has no roles, only the --as name, which nothing verifies).
   */
  actorRoles?: readonly string[] | undefined;
  /** The open database itself, for what goes beyond queries (backup's snapshot); absent in the staff console. */
  database?: Database | undefined;
}

interface CommandSpec<O extends OptionSpec, I, R> {
  name: string;
  /** Its lines in the general help: [synopsis, what it does]; a synopsis starting with spaces continues the one above. */
  summary: readonly (readonly [string, string])[];
  /** Its own help ("<command> --help"); the first line is quoted when the arguments are wrong. */
  usage: string;
  /** The options only this command takes (--as, --json and --help are everyone's). */
  options?: O;
  /** True when it writes: it then needs an actor and writes one audit_log row with its change. */
  changes: boolean;
  /** How many arguments it takes (besides options), or the counts it takes; another count is refused, quoting the usage. */
  arguments: number | readonly number[];
  /**
   * The arguments (by position) that name files: the command line makes them absolute before it
   * hands the command to a running server, whose working directory is not the operator's.
   */
  files?: readonly number[];
  /** The options whose values name files, made absolute likewise. */
  fileOptions?: readonly string[];
  /**
   * It runs in the operator's own process without the configured database (restore, which makes
   * a new one): never handed to a server, and its run() is given no database or configuration.
   */
  alone?: boolean;
  /** A look at the raw arguments before the options are parsed, when the command is named in them. */
  screen?(argv: readonly string[]): void;
  /** Checks the arguments alone (no database) and returns what run() needs. */
  check(args: readonly string[], options: OptionValues<O>): I;
  run(ctx: CommandContext, input: I): Promise<R>;
  text(result: R, input: I): string;
  json(result: R, input: I): unknown;
}

/** A command checked and ready to run; what it returns prints as text, or as JSON with --json. */
export type PreparedRun = (ctx: CommandContext) => Promise<{ text(): string; json(): unknown }>;

/** A command as the registry holds it, its input and result types sealed inside. */
export interface OpsCommand {
  readonly name: string;
  readonly summary: readonly (readonly [string, string])[];
  readonly usage: string;
  readonly options: OptionSpec;
  readonly changes: boolean;
  readonly files: readonly number[];
  readonly fileOptions: readonly string[];
  readonly alone: boolean;
  readonly screen?: ((argv: readonly string[]) => void) | undefined;
  prepare(
    args: readonly string[],
    values: Readonly<Record<string, string | boolean | undefined>>,
  ): PreparedRun;
}

export function defineCommand<I, R, O extends OptionSpec = Record<never, never>>(
  spec: CommandSpec<O, I, R>,
): OpsCommand {
  const options: OptionSpec = spec.options ?? {};
  return {
    name: spec.name,
    summary: spec.summary,
    usage: spec.usage,
    options,
    changes: spec.changes,
    files: spec.files ?? [],
    fileOptions: spec.fileOptions ?? [],
    alone: spec.alone ?? false,
    screen: spec.screen,
    prepare(args, values) {
      // parseArgs gave each option the type its declaration says; only this command's reach check().
      expectArgs(args, spec.arguments, spec.name, spec.usage);
      const own = Object.fromEntries(Object.keys(options).map((k) => [k, values[k]])) as OptionValues<O>;
      const input = spec.check(args, own);
      return async (ctx) => {
        const result = await spec.run(ctx, input);
        return { text: () => spec.text(result, input), json: () => spec.json(result, input) };
      };
    },
  };
}

// ---------------------------------------------------------------------------
// Helpers the commands share
// ---------------------------------------------------------------------------

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A plain text table; columns listed in right are right-aligned (amounts). */
export function table(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** Refuses a wrong number of arguments, quoting the first line of the command's usage. */
function expectArgs(args: readonly string[], count: number | readonly number[], name: string, usage: string) {
  const counts = typeof count === "number" ? [count] : count;
  if (!counts.includes(args.length)) {
    const first = usage.split("\n", 1)[0] ?? "";
    const takes =
      counts.length === 1
        ? plural(counts[0] ?? 0, "argument")
        : `${counts.slice(0, -1).join(", ")} or ${plural(counts.at(-1) ?? 0, "argument")}`;
    throw new OpsError(`${name} takes ${takes}, got ${args.length}. ${first}`);
  }
}

/** A uuid as the database spells one (any case): anything else names no row. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

/** Anything but a uuid names no row; say so without asking the database. */
export function checkId(id: string, what: "wallet" | "send") {
  if (!UUID.test(id)) throw new OpsError(`No ${what} with id ${id}.`);
}

export function wholeNumber(text: string, name: string, min: number, max: number): number {
  if (!/^\d{1,7}$/u.test(text) || Number(text) < min || Number(text) > max) {
    throw new OpsError(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return Number(text);
}

/** The --usd option: null when it is not given, else the normalised decimal; anything else is refused. */
export function usdOption(text: string | undefined): string | null {
  if (text === undefined) return null;
  const usd = normaliseUsd(text);
  if (usd === undefined) throw new OpsError(`Invalid --usd "${text}": a plain decimal like 1234.56.`);
  return usd;
}

/**
 * A text file read whole, refused (an OpsError) when it is no file or larger than `maxBytes`;
 * `cannotRead` words the refusal when reading itself fails.
 */
export async function readTextFile(
  file: string,
  maxBytes: number,
  cannotRead: (error: unknown) => string,
): Promise<string> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new OpsError(`${file} is not a file.`);
    if (info.size > maxBytes) {
      throw new OpsError(`${file} is larger than ${maxBytes / 1024 / 1024} MiB; split it.`);
    }
    return await readFile(file, "utf8");
  } catch (error) {
    if (error instanceof OpsError) throw error;
    throw new OpsError(cannotRead(error));
  }
}

/**
 * The audit_log row of a change, written in the change's own transaction (db is that transaction).
 * Besides the details, the columns the audit viewer filters by: the actor's roles (the console's),
 * the holder concerned (details.userId, when it is a uuid) and why (details.reason, when a string).
 */
export async function audit(
  ctx: CommandContext,
  db: AppDb,
  action: string,
  subject: string,
  details: object,
) {
  const { auditLog } = await import("../../backend/db/schema.ts");
  const { userId, reason } = details as { userId?: unknown; reason?: unknown };
  await db.insert(auditLog).values({
    actor: ctx.actor,
    actorRoles: ctx.actorRoles ? [...ctx.actorRoles] : null,
    action,
    subject,
    userId: typeof userId === "string" && UUID.test(userId) ? userId.toLowerCase() : null,
    reason: typeof reason === "string" ? reason : null,
    details,
  });
}

/** The user a --user names (an e-mail or a user id), with their e-mail. */
export async function resolveUser(
  ctx: CommandContext,
  user: string,
): Promise<{ userId: string; email: string }> {
  const [{ eq }, { users }, { findUserByEmail }] = await Promise.all([
    import("drizzle-orm"),
    import("../../backend/db/schema.ts"),
    import("../../backend/domain/messages.ts"),
  ]);
  if (UUID.test(user)) {
    const [row] = await ctx.db
      .select({ userId: users.id, email: users.email })
      .from(users)
      .where(eq(users.id, user.toLowerCase()));
    if (!row) throw new OpsError(`No user with id ${user}.`);
    return row;
  }
  const found = await findUserByEmail(ctx.db, user);
  if (!found) throw new OpsError(`No user with the e-mail ${user}.`);
  return { userId: found.userId, email: found.email };
}
