// Kill switches and reconciliation (issue 16, record 041): pause and resume
// sends, deposits or issuing for a coin or a user, list the pauses in force,
// record what the provider holds and compare it with what holders are owed.
import { isTicker, TICKERS, type Ticker } from "../../../common/coins.ts";
import type { ActivePause, PauseScope, PauseWhat } from "../../backend/domain/controls.ts";
import type { CoinReconciliation } from "../../backend/domain/reconcile.ts";
import { formatAmount } from "../../backend/domain/amounts.ts";
import { caughtUpText, policyOf } from "./custody.ts";
import {
  defineCommand,
  OpsError,
  plural,
  resolveUser,
  table,
  type CommandContext,
  type OpsCommand,
} from "./define.ts";

/** As server/backend/domain/controls.ts MAX_PAUSE_REASON (which checks it again). */
const MAX_REASON = 1000;
/** As server/backend/domain/reconcile.ts MAX_HOLDINGS_SOURCE. */
const MAX_SOURCE = 500;
const WHATS: readonly PauseWhat[] = ["sends", "deposits", "issuing"];

const SCOPE_OPTIONS = {
  coin: { type: "string" },
  user: { type: "string" },
  reason: { type: "string" },
} as const;

interface SwitchInput {
  what: PauseWhat;
  scope: { coin: Ticker } | { user: string };
  reason: string;
}

function ticker(text: string): Ticker {
  const upper = text.trim().toUpperCase();
  if (!isTicker(upper)) throw new OpsError(`Unknown coin "${text}". Coins: ${TICKERS.join(", ")}.`);
  return upper;
}

function checkSwitch(
  name: "pause" | "resume",
  args: readonly string[],
  options: { coin?: string | undefined; user?: string | undefined; reason?: string | undefined },
): SwitchInput {
  const [what = ""] = args;
  if (!(WHATS as readonly string[]).includes(what)) {
    throw new OpsError(`${name} what? One of ${WHATS.join(", ")}; got "${what}".`);
  }
  if ((options.coin === undefined) === (options.user === undefined)) {
    throw new OpsError(
      `${name} needs exactly one of --coin <TICKER> (every user) or --user <e-mail or user id>.`,
    );
  }
  const scope =
    options.coin !== undefined ? { coin: ticker(options.coin) } : { user: (options.user ?? "").trim() };
  if ("user" in scope && scope.user === "")
    throw new OpsError("--user is empty: give an e-mail or a user id.");
  if (options.reason === undefined) {
    throw new OpsError(
      `${name} needs --reason <text>: why (1 to ${MAX_REASON} characters, kept in the audit log).`,
    );
  }
  const reason = options.reason.trim();
  if (reason === "") throw new OpsError(`--reason is empty: say why (1 to ${MAX_REASON} characters).`);
  if (reason.length > MAX_REASON) {
    throw new OpsError(`--reason is too long: ${reason.length} characters, at most ${MAX_REASON}.`);
  }
  return { what: what as PauseWhat, scope, reason };
}

interface Resolved {
  scope: PauseScope;
  /** "of BTC (every user)" or "for alice@example.com (every coin)". */
  label: string;
  email: string | null;
}

async function resolveScope(ctx: CommandContext, scope: SwitchInput["scope"]): Promise<Resolved> {
  if ("coin" in scope) return { scope, label: `of ${scope.coin} (every user)`, email: null };
  const user = await resolveUser(ctx, scope.user);
  return { scope: { userId: user.userId }, label: `for ${user.email} (every coin)`, email: user.email };
}

const capital = (what: string) => `${what[0]?.toUpperCase() ?? ""}${what.slice(1)}`;
const scopeFlag = (input: SwitchInput) =>
  "coin" in input.scope ? `--coin ${input.scope.coin}` : `--user ${input.scope.user}`;

function pauseJson(p: ActivePause, email: string | null) {
  return {
    id: p.id,
    what: p.what,
    coin: p.coin,
    userId: p.userId,
    email,
    since: p.createdAt.toISOString(),
    actor: p.actor,
    automatic: p.automatic,
    reason: p.reason,
  };
}

const switchUsage = (name: "pause" | "resume", body: string) =>
  `Usage: node server/ops/cli.ts ${name} <sends|deposits|issuing> (--coin <TICKER> | --user <e-mail or user id>)
         --reason <text> [--as <name>] [--json]

${body}
--coin: one coin, for every user. --user: one user (by e-mail or user id), for
every coin. --reason (required, 1 to ${MAX_REASON} characters) says why; it goes to the
audit log and to "pauses", never to users.`;

const amount = (coin: Ticker, units: bigint | undefined) =>
  units === undefined ? "not recorded" : formatAmount(coin, units);

/** `holdings set` figures and `reconcile` rows, for people. */
function reconcileText(rows: readonly CoinReconciliation[]): string {
  const lines = [
    table(
      ["COIN", "OWED TO HOLDERS", "HELD FOR SENDS", "HOLDINGS", "DIFFERENCE", "SENDS"],
      rows.map((r) => [
        r.coin,
        formatAmount(r.coin, r.owed),
        formatAmount(r.coin, r.held),
        amount(r.coin, r.holdings?.units),
        r.difference === undefined ? "-" : formatAmount(r.coin, r.difference),
        r.sendsPause ? `paused${r.sendsPause.automatic ? " (automatic)" : ""}` : "open",
      ]),
      new Set([1, 2, 3, 4]),
    ),
  ];
  const recorded = rows.filter((r) => r.holdings);
  if (recorded.length > 0) {
    lines.push(
      "",
      "Holdings as recorded (the newest per coin):",
      ...recorded.map(
        (r) =>
          `  ${r.coin}: ${formatAmount(r.coin, r.holdings?.units ?? 0n)} on ${r.holdings?.recordedAt.toISOString()} ` +
          `by ${r.holdings?.actor}, source: ${r.holdings?.source}`,
      ),
    );
  }
  for (const r of rows) {
    if (r.held !== r.heldBySends) {
      lines.push(
        "",
        `WARNING: ${r.coin}: the pending account holds ${formatAmount(r.coin, r.held)} but the pending sends ` +
          `add up to ${formatAmount(r.coin, r.heldBySends)}.`,
      );
    }
    if (r.difference === undefined || r.difference >= 0n) continue;
    const short = `${formatAmount(r.coin, -r.difference)} ${r.coin}`;
    lines.push(
      "",
      `SHORTFALL ${r.coin}: holdings are ${short} below what is owed plus held for sends. ` +
        (r.pausedNow
          ? `Sends of ${r.coin} are now paused (automatic).`
          : r.wouldPause
            ? `Sends of ${r.coin} would be paused (automatic) by reconcile without --dry-run.`
            : `Sends of ${r.coin} stay paused (since ${r.sendsPause?.createdAt.toISOString()}, by ${r.sendsPause?.actor}).`) +
        ` An automatic pause stays until an operator resumes it: resume sends --coin ${r.coin} --reason <text>`,
    );
  }
  return lines.join("\n");
}

function reconcileJson(r: CoinReconciliation) {
  return {
    coin: r.coin,
    owed: formatAmount(r.coin, r.owed),
    heldForSends: formatAmount(r.coin, r.held),
    pendingSends: formatAmount(r.coin, r.heldBySends),
    holdings: r.holdings
      ? {
          amount: formatAmount(r.coin, r.holdings.units),
          source: r.holdings.source,
          recordedAt: r.holdings.recordedAt.toISOString(),
          actor: r.holdings.actor,
        }
      : null,
    difference: r.difference === undefined ? null : formatAmount(r.coin, r.difference),
    shortfall: r.difference !== undefined && r.difference < 0n,
    sendsPaused: r.sendsPause ? pauseJson(r.sendsPause, null) : null,
    pausedNow: r.pausedNow,
    wouldPause: r.wouldPause,
  };
}

export const CONTROL_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "pause",
    summary: [
      ["pause <what> (--coin T|--user U)", "pause sends, deposits or issuing (kill switch)"],
      ["    --reason <text>", "why (audit log); U: an e-mail or a user id"],
    ],
    usage: switchUsage(
      "pause",
      `Turns a kill switch on. Paused sends are refused (users see that sends are
paused, on the send form and from the API); paused deposits and issuing stop
crediting deposits and handing out addresses. Pausing what is already paused
says so and changes nothing (exit 1). Writes one audit_log row (action pause).`,
    ),
    options: SCOPE_OPTIONS,
    changes: true,
    arguments: 1,
    check: (args, options) => checkSwitch("pause", args, options),
    async run(ctx, input) {
      const controls = await import("../../backend/domain/controls.ts");
      const resolved = await resolveScope(ctx, input.scope);
      const result = await controls.pause(ctx.db, {
        what: input.what,
        scope: resolved.scope,
        reason: input.reason,
        actor: ctx.actor,
        actorRoles: ctx.actorRoles,
      });
      if (!result.ok) {
        const p = result.pause;
        throw new OpsError(
          `${capital(input.what)} ${resolved.label} are already paused (since ${p.createdAt.toISOString()}, ` +
            `by ${p.actor}${p.automatic ? ", automatic" : ""}); nothing changed.`,
        );
      }
      return { pause: result.pause, resolved };
    },
    json: ({ pause, resolved }) => pauseJson(pause, resolved.email),
    text: ({ resolved }, input) =>
      `Paused ${input.what} ${resolved.label}. Reason: ${input.reason}\n` +
      `Lift with: resume ${input.what} ${scopeFlag(input)} --reason <text>`,
  }),

  defineCommand({
    name: "resume",
    summary: [
      ["resume <what> (--coin T|--user U)", "lift a pause (also an automatic one)"],
      ["    --reason <text>", "why (audit log)"],
    ],
    usage: switchUsage(
      "resume",
      `Turns a kill switch off, an operator's or reconciliation's (automatic pauses
are lifted only this way). Resuming what is not paused says so and changes
nothing (exit 1). Writes one audit_log row (action resume) naming the pause
lifted.`,
    ),
    options: SCOPE_OPTIONS,
    changes: true,
    arguments: 1,
    check: (args, options) => checkSwitch("resume", args, options),
    async run(ctx, input) {
      const [controls, issuing] = await Promise.all([
        import("../../backend/domain/controls.ts"),
        import("../../backend/domain/issuing.ts"),
      ]);
      const resolved = await resolveScope(ctx, input.scope);
      const result = await ctx.db.transaction(async (tx) => {
        const lifted = await controls.resume(tx, {
          what: input.what,
          scope: resolved.scope,
          reason: input.reason,
          actor: ctx.actor,
          actorRoles: ctx.actorRoles,
        });
        if (!lifted.ok || input.what !== "issuing") return { lifted, caught: [] };
        // Requests that waited for this pause are issued now, in the resume's own transaction.
        const policy = policyOf(ctx);
        const caught: string[] = [];
        for (const coin of lifted.pause.coin ? [lifted.pause.coin] : TICKERS) {
          const text = caughtUpText(coin, await issuing.issueWaiting(tx, coin, policy, "resume"));
          if (text) caught.push(text);
        }
        return { lifted, caught };
      });
      if (!result.lifted.ok)
        throw new OpsError(`${capital(input.what)} ${resolved.label} are not paused; nothing changed.`);
      return { pause: result.lifted.pause, resolved, caught: result.caught };
    },
    json: ({ pause, resolved }, input) => ({
      resumed: pauseJson(pause, resolved.email),
      reason: input.reason,
    }),
    text: ({ pause, resolved, caught }, input) =>
      `Resumed ${input.what} ${resolved.label}. Reason: ${input.reason}\n` +
      `The pause lifted was set on ${pause.createdAt.toISOString()} by ${pause.actor}` +
      `${pause.automatic ? " (automatic)" : ""}: ${pause.reason}` +
      caught.map((line) => `\n${line}`).join(""),
  }),

  defineCommand({
    name: "pauses",
    summary: [["pauses", "the pauses in force: what, scope, since, who, why"]],
    usage: `Usage: node server/ops/cli.ts pauses [--json]

Lists the kill switches that are on, newest first: what is paused (sends,
deposits, issuing), its scope (a coin for every user, or a user for every
coin), since when, who set it (an operator, or "reconcile"), whether it is
automatic, and why. Automatic pauses (a reconciliation shortfall) stay until
an operator resumes them.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const [{ listPauses }, { inArray }, { users }] = await Promise.all([
        import("../../backend/domain/controls.ts"),
        import("drizzle-orm"),
        import("../../backend/db/schema.ts"),
      ]);
      const all = await listPauses(ctx.db);
      const ids = all.flatMap((p) => (p.userId === null ? [] : [p.userId]));
      const emails = new Map<string, string>();
      if (ids.length > 0) {
        const rows = await ctx.db
          .select({ id: users.id, email: users.email })
          .from(users)
          .where(inArray(users.id, ids));
        for (const r of rows) emails.set(r.id, r.email);
      }
      return all.map((p) => ({ pause: p, email: p.userId === null ? null : (emails.get(p.userId) ?? null) }));
    },
    json: (rows) => rows.map((r) => pauseJson(r.pause, r.email)),
    text: (rows) =>
      rows.length === 0
        ? "Nothing is paused."
        : table(
            ["WHAT", "SCOPE", "SINCE", "BY", "AUTOMATIC", "REASON"],
            rows.map(({ pause: p, email }) => [
              p.what,
              p.coin !== null ? `coin ${p.coin}` : `user ${email ?? p.userId ?? ""}`,
              p.createdAt.toISOString(),
              p.actor,
              p.automatic ? "yes" : "no",
              p.reason,
            ]),
          ) +
          `\n\n${plural(rows.length, "pause")} in force.` +
          (rows.some((r) => r.pause.automatic)
            ? " Automatic pauses stay until an operator resumes them (resume … --reason <text>)."
            : ""),
  }),

  defineCommand({
    name: "holdings",
    summary: [
      ["holdings set <coin> <amount>", "record what the provider holds of a coin"],
      ["    --source <text>", "where the figure comes from (node, statement)"],
    ],
    usage: `Usage: node server/ops/cli.ts holdings set <coin> <amount> --source <text> [--as <name>] [--json]

Records what the provider holds of a coin (from its own node or a custodian
statement): <amount> is a plain decimal of the coin (at most its decimals; 0 is
allowed), --source (required, 1 to ${MAX_SOURCE} characters) says where the figure comes
from. The newest record counts; earlier ones stay. The coin is then reconciled
in the same transaction: holdings below what is owed to holders plus what is
held for pending sends pause the coin's sends (automatic; it stays until an
operator resumes it). Writes one audit_log row (action holdings.set), and one
more (action pause) when it pauses.`,
    options: { source: { type: "string" } },
    changes: true,
    arguments: 3,
    check(args, options) {
      const [verb = "", coinText = "", amountText = ""] = args;
      if (verb !== "set") throw new OpsError(`holdings takes "set"; got "${verb}". See holdings --help.`);
      const coin = ticker(coinText);
      if (options.source === undefined) {
        throw new OpsError(
          `holdings set needs --source <text>: where the figure comes from (1 to ${MAX_SOURCE} characters).`,
        );
      }
      const source = options.source.trim();
      if (source === "" || source.length > MAX_SOURCE) {
        throw new OpsError(`--source must be 1 to ${MAX_SOURCE} characters; got ${source.length}.`);
      }
      return { coin, amountText, source };
    },
    async run(ctx, { coin, amountText, source }) {
      const reconcile = await import("../../backend/domain/reconcile.ts");
      let units: bigint;
      try {
        units = reconcile.parseHoldings(coin, amountText);
      } catch (error) {
        if (error instanceof reconcile.ReconcileInputError)
          throw new OpsError(`Invalid amount: ${error.message}`);
        throw error;
      }
      return reconcile.setHoldings(ctx.db, {
        coin,
        units,
        source,
        actor: ctx.actor,
        actorRoles: ctx.actorRoles,
      });
    },
    json: (row) => reconcileJson(row),
    text: (row) => `Recorded holdings of ${row.coin}.\n\n${reconcileText([row])}`,
  }),

  defineCommand({
    name: "reconcile",
    summary: [
      ["reconcile", "owed vs holdings per coin; a shortfall pauses sends"],
      ["    --dry-run", "the same figures; writes nothing, says which coins would pause"],
    ],
    usage: `Usage: node server/ops/cli.ts reconcile [--dry-run] [--as <name>] [--json]

Per coin: owed to holders (the wallets' available balances), held for pending
sends, the holdings last recorded (holdings set; "not recorded" when none), and
the difference: holdings − (owed + held), exact. A coin whose holdings fall
below owed + held has its sends paused automatically, in the same transaction,
with an audit_log row (action pause, actor reconcile) naming the figures; the
pause stays until an operator resumes it. Without recorded holdings a coin is
not checked.

--dry-run computes the same figures and writes nothing: no pause, no audit
row. A short coin whose sends are not paused yet is reported as one that would
be paused (JSON: wouldPause true); run reconcile without it to pause them.`,
    options: { "dry-run": { type: "boolean" } },
    changes: true,
    arguments: 0,
    check: (_args, options) => ({ dryRun: options["dry-run"] === true }),
    async run(ctx, { dryRun }) {
      const [{ reconcile }, { orphanedDeposits }] = await Promise.all([
        import("../../backend/domain/reconcile.ts"),
        import("../../backend/domain/chain-watch.ts"),
      ]);
      const rows = await reconcile(ctx.db, ctx.actor, { dryRun });
      return { rows, orphaned: (await orphanedDeposits(ctx.db)).length };
    },
    json: ({ rows }) => rows.map(reconcileJson),
    text({ rows, orphaned }, { dryRun }) {
      const text = dryRun ? `Dry run: nothing was written.\n\n${reconcileText(rows)}` : reconcileText(rows);
      // Record 053: credited, then reorganised away — owed to holders, perhaps never received.
      return orphaned === 0
        ? text
        : `${text}\n\n${plural(orphaned, "credited deposit")} whose block was reorganised away: the figures above count them as owed. See ops chains.`;
    },
  }),
];
