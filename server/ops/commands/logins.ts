// Logins: accounts with failed password logins, and lifting a lock.
import type { AppDb } from "../../backend/db/index.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
import { audit, defineCommand, OpsError, plural, table } from "./define.ts";

async function limiterFor(ctx: CommandContext, db: AppDb) {
  const { createRateLimiter, DEFAULT_RATE_LIMITS } = await import("../../backend/domain/rate-limits.ts");
  return createRateLimiter({ db, secret: ctx.config.backendSecret, policy: DEFAULT_RATE_LIMITS });
}

export const LOGIN_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "locks",
    summary: [["locks", "accounts with failed password logins, and which are locked"]],
    usage: `Usage: node server/ops/cli.ts locks [--json]

Lists the accounts with consecutive failed password logins since their last
successful login or restore, most first, and whether their password login is
locked (after 100; decision record 013). The backoff after 5 failures is kept
per account and address, so it is not shown here: it ends by itself.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const { users } = await import("../../backend/db/schema.ts");
      // Counter keys are HMACs of the e-mail (record 013): look up every account's key.
      const emails = (await ctx.db.select({ email: users.email }).from(users)).map((r) => r.email);
      const limiter = await limiterFor(ctx, ctx.db);
      const found: { email: string; failures: number; locked: boolean }[] = [];
      for (let i = 0; i < emails.length; i += 1000) {
        const states = await limiter.accountStates(emails.slice(i, i + 1000));
        for (const [email, state] of states)
          found.push({ email, failures: state.failures, locked: state.locked });
      }
      found.sort((a, b) => b.failures - a.failures || a.email.localeCompare(b.email));
      return found;
    },
    json: (found) => found,
    text(found) {
      if (found.length === 0) return "No account has failed logins.";
      const rows = found.map((f) => [f.email, String(f.failures), f.locked ? "locked" : "open"]);
      const locked = found.filter((f) => f.locked).length;
      return (
        table(["E-MAIL", "FAILURES", "STATE"], rows, new Set([1])) +
        `\n\n${plural(found.length, "account")} with failed logins, ${locked} locked.`
      );
    },
  }),

  defineCommand({
    name: "unlock",
    summary: [["unlock <email>", "lift an account's login lock after checking who asks"]],
    usage: `Usage: node server/ops/cli.ts unlock <email> [--as <name>] [--json]

Lifts the login lock of an account that reached 100 consecutive failed
password logins: the account's failure count starts again at 0.
The owner can always lift it themselves by restoring with their 12 words; unlock
only after checking that the person asking owns the account. Counters of single
addresses stay. Writes one audit_log row (action account.unlock).`,
    changes: true,
    arguments: 1,
    check(args) {
      const email = (args[0] ?? "").trim();
      if (email.length === 0) throw new OpsError("The e-mail is empty.");
      return { email };
    },
    async run(ctx, { email }) {
      const { findUserByEmail } = await import("../../backend/domain/messages.ts");
      const user = await findUserByEmail(ctx.db, email);
      if (!user) throw new OpsError(`No user with the e-mail ${email}.`);
      const cleared = await ctx.db.transaction(async (tx) => {
        const failures = await (await limiterFor(ctx, tx)).unlockAccount(user.email);
        if (failures > 0) {
          await audit(ctx, tx, "account.unlock", user.userId, { email: user.email, failures });
        }
        return failures;
      });
      return { email: user.email, cleared };
    },
    json: ({ email, cleared }) => ({ email, clearedFailures: cleared }),
    text: ({ email, cleared }) =>
      cleared === 0
        ? `${email} has no failed logins: nothing to unlock. Nothing changed.`
        : `Unlocked ${email}: cleared ${plural(cleared, "failed login")}.`,
  }),
];
