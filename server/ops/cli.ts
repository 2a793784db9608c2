// The operator command line: node server/ops/cli.ts <command> [options]
//
// It opens the configured database itself (DATABASE_URL, or the embedded one
// in DATA_DIR), goes through the same domain rules as the API, and writes one
// audit_log row in the same transaction as every change it makes. Read-only
// commands are not logged. Exit code 0 on success; 1 with one line on stderr
// ("error: …") otherwise, and then nothing has been written.
import os from "node:os";
import { parseArgs } from "node:util";
import { COINS, TICKERS, type Ticker } from "../../common/coins.ts";
import type { Config } from "../host/config.ts";
import type { AppDb, Database } from "../backend/db/index.ts";
import { formatAmount, normaliseUsd, parseAmount } from "../backend/domain/amounts.ts";
import type { CreditDepositResult, DecideWithdrawalResult } from "../backend/domain/ledger.ts";
import type { SendInfo } from "../backend/domain/wallets.ts";

// The database and domain modules load only once the arguments have passed the
// checks that need no database, so --help and typos answer at once.
async function loadBackend() {
  const [config, db, schema, addresses, ledger, wallets, messages, rateLimits] = await Promise.all([
    import("../host/config.ts"),
    import("../backend/db/index.ts"),
    import("../backend/db/schema.ts"),
    import("../backend/domain/addresses.ts"),
    import("../backend/domain/ledger.ts"),
    import("../backend/domain/wallets.ts"),
    import("../backend/domain/messages.ts"),
    import("../backend/domain/rate-limits.ts"),
  ]);
  return {
    loadConfig: config.loadConfig,
    openDatabase: db.openDatabase,
    auditLog: schema.auditLog,
    validateAddress: addresses.validateAddress,
    creditDeposit: ledger.creditDeposit,
    postWithdrawal: ledger.postWithdrawal,
    voidWithdrawal: ledger.voidWithdrawal,
    walletBalance: ledger.walletBalance,
    findWallet: wallets.findWallet,
    issueAddress: wallets.issueAddress,
    pendingWalletRequests: wallets.pendingWalletRequests,
    usersOverview: wallets.usersOverview,
    pendingSends: wallets.pendingSends,
    findSend: wallets.findSend,
    findUserByEmail: messages.findUserByEmail,
    sendMessage: messages.sendMessage,
    listSupportMessages: messages.listSupportMessages,
    forgetSenderAddresses: messages.forgetSenderAddresses,
    createRateLimiter: rateLimits.createRateLimiter,
    DEFAULT_RATE_LIMITS: rateLimits.DEFAULT_RATE_LIMITS,
    users: schema.users,
  };
}
type Backend = Awaited<ReturnType<typeof loadBackend>>;

/** As server/backend/domain/ledger.ts MAX_EXTERNAL_TX_ID (which checks it again). */
const MAX_TXID = 256;
/** As server/backend/domain/messages.ts MAX_MESSAGE (which checks it again). */
const MAX_MESSAGE = 5000;
/** As server/backend/domain/ledger.ts MAX_REASON (which checks it again, also in UTF-16 code units). */
const MAX_REASON = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;
/** The coin with the most decimals: an amount it refuses for any reason but decimals, every coin refuses. */
const WIDEST: Ticker = TICKERS.reduce((a, b) => (COINS[b].decimals > COINS[a].decimals ? b : a));

const USAGE = `Usage: node server/ops/cli.ts <command> [options]   (npm run ops -- <command> [options])

Coinkeep operator commands, on the configured database: DATABASE_URL, or else
the embedded database in DATA_DIR (default ./data). The embedded database serves
one process: while the server runs, it carries out these commands for you
(through DATA_DIR/ops.sock, reachable only by the server's own user).

Commands:
  requests                            wallet requests waiting for an address
  issue-address <walletId> <address>  give a requested wallet its deposit address
  credit <walletId> <amount> <txid>   credit a deposit, once per on-chain transaction id
      [--usd <decimal>]               its value in USD at the time
  users                               users with their wallets, addresses and balances
  sends                               sends waiting for a decision
  approve <sendId>                    approve a send (status Confirmed)
  decline <sendId> --reason <text>    decline a send: its amount returns to the wallet
  message --to <email> <text>         send a compliance message to one user
  message --all <text>                send a compliance message to every user
  support [--kind support|contact]    support and contact messages, newest first
      [--limit <n>]                   at most n of them (default 100)
  forget-ips [--days <n>]             clear the sender addresses of messages older than n days (90)
  locks                               accounts with failed password logins, and which are locked
  unlock <email>                      lift an account's login lock after checking who asks

Options:
  --as <name>   who you are, for the audit log (default: $OPERATOR, else your OS user name)
  --json        machine-readable output (JSON on stdout)
  -h, --help    this help; "<command> --help" explains one command

Every change is written to the audit log in the same transaction as the change.
Exit status: 0 on success, 1 with one line on stderr otherwise (nothing written).`;

const COMMAND_USAGE: Record<string, string> = {
  message: `Usage: node server/ops/cli.ts message (--to <email> | --all) <text> [--as <name>] [--json]

Sends a compliance message: to one user (--to, their account e-mail), or to
every user who has an account now (--all; users who sign up later do not get
it). The user sees it unread on /notifications and in the Notifications badge
until they open it. <text> is plain text, 1 to ${MAX_MESSAGE} characters; quote it, and
put -- before it when it starts with "-". Writes one audit_log row (action
message.send).`,
  support: `Usage: node server/ops/cli.ts support [--kind support|contact] [--limit <n>] [--json]

Lists the messages users sent from the support form (kind support: name, e-mail,
phone) and visitors from the contact form (kind contact: e-mail), newest first,
at most --limit (1 to 1000, default 100). Texts are shown exactly as sent, as
plain text: control characters are shown escaped (\\u001b …) so a message cannot
drive your terminal. --json prints them unescaped, as JSON strings.`,
  "forget-ips": `Usage: node server/ops/cli.ts forget-ips [--days <n>] [--as <name>] [--json]

Clears the sender IP address kept with support and contact messages older than
n days (default 90, decision record 011); the messages themselves stay. Writes
one audit_log row (action support.forget-ips).`,
  locks: `Usage: node server/ops/cli.ts locks [--json]

Lists the accounts with consecutive failed password logins since their last
successful login or restore, most first, and whether their password login is
locked (after 100; decision record 013). The backoff after 5 failures is kept
per account and address, so it is not shown here: it ends by itself.`,
  unlock: `Usage: node server/ops/cli.ts unlock <email> [--as <name>] [--json]

Lifts the login lock of an account that reached 100 consecutive failed
password logins: the account's failure count starts again at 0.
The owner can always lift it themselves by restoring with their 12 words; unlock
only after checking that the person asking owns the account. Counters of single
addresses stay. Writes one audit_log row (action account.unlock).`,
  requests: `Usage: node server/ops/cli.ts requests [--json]

Lists the wallets users requested that have no address yet, oldest first:
requested at, user e-mail, coin, wallet id. Give each one an address with
issue-address.`,
  "issue-address": `Usage: node server/ops/cli.ts issue-address <walletId> <address> [--as <name>] [--json]

Gives a requested wallet its deposit address. The address is checked for the
wallet's coin (USDT: the network of USDT_NETWORK, erc20 by default) and stored
in its canonical form. A wallet gets an address once; an address belongs to one
wallet of its coin. Writes one audit_log row (action wallet.issue-address).`,
  credit: `Usage: node server/ops/cli.ts credit <walletId> <amount> <txid> [--usd <decimal>] [--as <name>] [--json]

Credits a deposit to a wallet that has an address: <amount> in the coin, as a
plain decimal (e.g. 0.015, at most the coin's decimals), <txid> the on-chain
transaction id. The same txid of the same coin is credited once: repeating the
command says "already credited" and changes nothing (exit 0; exit 1 when the
earlier credit differs in wallet or amount). --usd records the deposit's value
in USD at the time. Writes one audit_log row (action ledger.credit-deposit).`,
  users: `Usage: node server/ops/cli.ts users [--json]

Lists every user with each wallet's coin, address state (requested or issued),
address and available balance (holds of pending sends already subtracted).`,
  sends: `Usage: node server/ops/cli.ts sends [--json]

Lists the sends users requested that wait for a decision, oldest first:
requested at, age, user e-mail, coin, amount, destination address, send id.
The amount is already held from the wallet. Answer each one with approve or
decline.`,
  approve: `Usage: node server/ops/cli.ts approve <sendId> [--as <name>] [--json]

Approves a pending send: its held amount leaves the wallet for good and the
send's status becomes Confirmed. A send is decided once: approving or declining
it again says so and changes nothing (exit 1). Writes one audit_log row (action
send.approve).`,
  decline: `Usage: node server/ops/cli.ts decline <sendId> --reason <text> [--as <name>] [--json]

Declines a pending send: its held amount returns to the user's wallet and the
send's status becomes Declined. --reason (required, 1 to ${MAX_REASON} characters)
says why; it is stored with the send. A send is decided once: deciding it again
says so and changes nothing (exit 1). Writes one audit_log row (action
send.decline).`,
};

class CliError extends Error {}

type Options = {
  as?: string | undefined;
  json?: boolean | undefined;
  help?: boolean | undefined;
  usd?: string | undefined;
  reason?: string | undefined;
  to?: string | undefined;
  all?: boolean | undefined;
  kind?: string | undefined;
  limit?: string | undefined;
  days?: string | undefined;
};

interface Context {
  db: AppDb;
  config: Config;
  backend: Backend;
  options: Options;
  actor: string;
}

// Where output goes: the terminal, or (a command run inside the server for the
// ops socket) a buffer sent back to the operator's terminal.
interface Sink {
  out(text: string): void;
  err(text: string): void;
}
const terminal: Sink = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
let sink: Sink = terminal;

function out(text: string) {
  sink.out(`${text}\n`);
}

function printJson(value: unknown) {
  out(JSON.stringify(value, null, 2));
}

/** A plain text table; columns listed in right are right-aligned (amounts). */
function table(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function resolveActor(options: Options): string {
  let name = options.as ?? process.env.OPERATOR;
  if (name === undefined || name === "") {
    try {
      name = os.userInfo().username;
    } catch {
      name = "";
    }
  }
  name = name.trim();
  // oxlint-disable-next-line no-control-regex
  if (name === "" || name.length > 100 || /[\u0000-\u001f\u007f]/u.test(name)) {
    throw new CliError("Say who you are with --as <name> (1 to 100 printable characters) or OPERATOR.");
  }
  return name;
}

function expectArgs(args: string[], count: number, name: string) {
  if (args.length !== count) {
    const usage = COMMAND_USAGE[name]?.split("\n", 1)[0] ?? "";
    throw new CliError(`${name} takes ${plural(count, "argument")}, got ${args.length}. ${usage}`);
  }
}

function checkWalletId(walletId: string) {
  // Anything but a uuid names no wallet; say so without asking the database.
  if (!UUID.test(walletId)) throw new CliError(`No wallet with id ${walletId}.`);
}

function checkSendId(sendId: string) {
  if (!UUID.test(sendId)) throw new CliError(`No send with id ${sendId}.`);
}

async function audit(ctx: Context, db: AppDb, action: string, subject: string, details: object) {
  await db.insert(ctx.backend.auditLog).values({ actor: ctx.actor, action, subject, details });
}

/**
 * A command: check() looks at the arguments alone (no database) and returns
 * what run() needs; run() does the work on the open database.
 */
interface Command<T> {
  changes: boolean;
  check(args: string[], options: Options): T;
  run(ctx: Context, input: T): Promise<void>;
}

function command<T>(c: Command<T>): Command<unknown> {
  return c as Command<unknown>;
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

const requestsCommand = command({
  changes: false,
  check: (args) => expectArgs(args, 0, "requests"),
  async run(ctx) {
    const rows = await ctx.backend.pendingWalletRequests(ctx.db);
    if (ctx.options.json) {
      printJson(
        rows.map((r) => ({
          walletId: r.walletId,
          email: r.email,
          coin: r.coin,
          requestedAt: r.requestedAt.toISOString(),
        })),
      );
      return;
    }
    if (rows.length === 0) {
      out("No wallet requests are waiting for an address.");
      return;
    }
    out(
      table(
        ["REQUESTED AT", "E-MAIL", "COIN", "WALLET ID"],
        rows.map((r) => [r.requestedAt.toISOString(), r.email, r.coin, r.walletId]),
      ),
    );
    out(`\n${plural(rows.length, "request")} waiting. Answer with: issue-address <walletId> <address>`);
  },
});

const issueAddressCommand = command({
  changes: true,
  check(args) {
    expectArgs(args, 2, "issue-address");
    const [walletId = "", address = ""] = args;
    checkWalletId(walletId);
    return { walletId, address };
  },
  async run(ctx, { walletId, address: rawAddress }: { walletId: string; address: string }) {
    const { backend } = ctx;
    const wallet = await backend.findWallet(ctx.db, walletId);
    if (!wallet) throw new CliError(`No wallet with id ${walletId}.`);
    if (wallet.address !== null) {
      throw new CliError(`The ${wallet.coin} wallet ${wallet.id} already has the address ${wallet.address}.`);
    }
    const checked = backend.validateAddress(wallet.coin, rawAddress, { usdtNetwork: ctx.config.usdtNetwork });
    if (!checked.ok) throw new CliError(`Address refused for ${wallet.coin}: ${checked.reason}`);
    const address = checked.address;

    const result = await ctx.db.transaction(async (tx) => {
      const issued = await backend.issueAddress(tx, wallet.id, address);
      if (!issued.ok) return issued;
      await audit(ctx, tx, "wallet.issue-address", wallet.id, {
        userId: wallet.userId,
        coin: wallet.coin,
        before: { address: null },
        after: { address },
      });
      return issued;
    });
    if (!result.ok) {
      switch (result.reason) {
        case "wallet-not-found":
          throw new CliError(`No wallet with id ${walletId}.`);
        case "already-issued":
          throw new CliError(
            `The ${wallet.coin} wallet ${wallet.id} already has the address ${result.address}.`,
          );
        case "address-taken":
          throw new CliError(`The address ${address} already belongs to another ${wallet.coin} wallet.`);
      }
    }
    if (ctx.options.json) {
      printJson({
        walletId: result.wallet.id,
        email: wallet.email,
        coin: result.wallet.coin,
        address: result.wallet.address,
        issuedAt: result.wallet.issuedAt?.toISOString(),
      });
      return;
    }
    out(`Issued ${address} to the ${wallet.coin} wallet ${wallet.id} of ${wallet.email}.`);
  },
});

interface CreditInput {
  walletId: string;
  rawAmount: string;
  txid: string;
  amountUsd: string | null;
}

function describeDeposit(coin: Ticker, d: { units: bigint; walletId: string; createdAt: Date }): string {
  return `${formatAmount(coin, d.units)} ${coin} to wallet ${d.walletId} on ${d.createdAt.toISOString()}`;
}

const creditCommand = command({
  changes: true,
  check(args, options): CreditInput {
    expectArgs(args, 3, "credit");
    const [walletId = "", rawAmount = "", txid = ""] = args;
    checkWalletId(walletId);
    // Whatever the coin: not a decimal, zero or huge is refused now; too many decimals once the coin is known.
    const early = parseAmount(WIDEST, rawAmount);
    if (!early.ok && early.problem !== "too-many-decimals") {
      throw new CliError(`Invalid amount "${rawAmount}": ${early.reason}`);
    }
    if (txid.length === 0 || txid.length > MAX_TXID || /\s/u.test(txid)) {
      throw new CliError(`Invalid txid: 1 to ${MAX_TXID} characters without spaces.`);
    }
    let amountUsd: string | null = null;
    if (options.usd !== undefined) {
      const usd = normaliseUsd(options.usd);
      if (usd === undefined)
        throw new CliError(`Invalid --usd "${options.usd}": a plain decimal like 1234.56.`);
      amountUsd = usd;
    }
    return { walletId, rawAmount, txid, amountUsd };
  },
  async run(ctx, { walletId, rawAmount, txid, amountUsd }: CreditInput) {
    const { backend } = ctx;
    const wallet = await backend.findWallet(ctx.db, walletId);
    if (!wallet) throw new CliError(`No wallet with id ${walletId}.`);
    const amount = parseAmount(wallet.coin, rawAmount);
    if (!amount.ok) throw new CliError(`Invalid amount "${rawAmount}": ${amount.reason}`);
    const noAddress = `The ${wallet.coin} wallet ${wallet.id} has no address yet; issue one first (issue-address).`;
    if (wallet.address === null) throw new CliError(noAddress);

    const result: CreditDepositResult = await ctx.db.transaction(async (tx) => {
      const credited = await backend.creditDeposit(tx, {
        walletId: wallet.id,
        units: amount.units,
        externalTxId: txid,
        amountUsd,
      });
      if (credited.ok && !credited.duplicate) {
        await audit(ctx, tx, "ledger.credit-deposit", wallet.id, {
          userId: wallet.userId,
          coin: wallet.coin,
          amount: formatAmount(wallet.coin, amount.units),
          units: amount.units.toString(),
          externalTxId: txid,
          amountUsd,
          transferId: credited.deposit.transferId,
        });
      }
      return credited;
    });
    if (!result.ok) {
      throw new CliError(result.reason === "no-address" ? noAddress : `No wallet with id ${walletId}.`);
    }
    const d = result.deposit;
    if (result.duplicate && (d.walletId !== wallet.id || d.units !== amount.units)) {
      throw new CliError(
        `Transaction ${txid} was already credited, differently: ${describeDeposit(wallet.coin, d)}. Nothing changed.`,
      );
    }
    const balance = await backend.walletBalance(ctx.db, wallet.id);
    if (ctx.options.json) {
      printJson({
        status: result.duplicate ? "already-credited" : "credited",
        transferId: d.transferId,
        walletId: d.walletId,
        coin: wallet.coin,
        amount: formatAmount(wallet.coin, d.units),
        units: d.units.toString(),
        txid: d.externalTxId,
        amountUsd: d.amountUsd,
        createdAt: d.createdAt.toISOString(),
        balance: formatAmount(wallet.coin, balance),
      });
      return;
    }
    if (result.duplicate) {
      out(`Transaction ${txid} was already credited: ${describeDeposit(wallet.coin, d)}. Nothing changed.`);
      return;
    }
    out(
      `Credited ${formatAmount(wallet.coin, d.units)} ${wallet.coin} to wallet ${wallet.id} (${wallet.email}), ` +
        `transaction ${txid}. Available balance: ${formatAmount(wallet.coin, balance)} ${wallet.coin}.`,
    );
  },
});

const usersCommand = command({
  changes: false,
  check: (args) => expectArgs(args, 0, "users"),
  async run(ctx) {
    const people = await ctx.backend.usersOverview(ctx.db);
    if (ctx.options.json) {
      printJson(
        people.map((p) => ({
          userId: p.userId,
          email: p.email,
          createdAt: p.createdAt.toISOString(),
          wallets: p.wallets.map((w) => ({
            id: w.id,
            coin: w.coin,
            state: w.address === null ? "requested" : "issued",
            address: w.address,
            balance: formatAmount(w.coin, w.units),
          })),
        })),
      );
      return;
    }
    if (people.length === 0) {
      out("No users yet.");
      return;
    }
    const rows: string[][] = [];
    for (const p of people) {
      if (p.wallets.length === 0) rows.push([p.email, "-", "no wallets", "", "", ""]);
      for (const w of p.wallets) {
        rows.push([
          p.email,
          w.coin,
          w.address === null ? "requested" : "issued",
          w.address ?? "",
          formatAmount(w.coin, w.units),
          w.id,
        ]);
      }
    }
    out(table(["E-MAIL", "COIN", "STATE", "ADDRESS", "BALANCE", "WALLET ID"], rows, new Set([4])));
    const walletCount = people.reduce((n, p) => n + p.wallets.length, 0);
    out(`\n${plural(people.length, "user")}, ${plural(walletCount, "wallet")}.`);
  },
});

/** How long ago, for people: "45 s", "3 min", "2 h", "4 d" (rounded down). */
function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

const sendsCommand = command({
  changes: false,
  check: (args) => expectArgs(args, 0, "sends"),
  async run(ctx) {
    const rows = await ctx.backend.pendingSends(ctx.db);
    if (ctx.options.json) {
      printJson(
        rows.map((r) => ({
          sendId: r.sendId,
          walletId: r.walletId,
          userId: r.userId,
          email: r.email,
          coin: r.coin,
          amount: formatAmount(r.coin, r.units),
          amountUsd: r.amountUsd,
          address: r.address,
          requestedAt: r.requestedAt.toISOString(),
          ageSeconds: r.ageSeconds,
        })),
      );
      return;
    }
    if (rows.length === 0) {
      out("No sends are waiting for a decision.");
      return;
    }
    out(
      table(
        ["REQUESTED AT", "AGE", "E-MAIL", "COIN", "AMOUNT", "ADDRESS", "SEND ID"],
        rows.map((r) => [
          r.requestedAt.toISOString(),
          age(r.ageSeconds),
          r.email,
          r.coin,
          formatAmount(r.coin, r.units),
          r.address,
          r.sendId,
        ]),
        new Set([4]),
      ),
    );
    out(
      `\n${plural(rows.length, "send")} waiting. Answer with: approve <sendId> | decline <sendId> --reason <text>`,
    );
  },
});

type Decision = { status: "Confirmed" } | { status: "Declined"; reason: string };

interface Decided {
  send: SendInfo;
  transferId: string;
  decidedAt: Date;
  /** The wallet's available balance right after the decision. */
  balance: bigint;
}

type DecideOutcome =
  | Exclude<DecideWithdrawalResult, { ok: true }>
  | { ok: true; transferId: string; decidedAt: Date; balance: bigint };

const alreadyDecided = (sendId: string, status: string) =>
  new CliError(`The send ${sendId} was already ${status}; nothing changed.`);

/**
 * Decides a pending send through the ledger, with its audit row in the same
 * transaction. The ledger locks the send's row, so of two concurrent decisions
 * the second waits, then finds the send decided: it is told so, and writes nothing.
 */
async function decideSend(ctx: Context, sendId: string, decision: Decision): Promise<Decided> {
  const { backend } = ctx;
  const send = await backend.findSend(ctx.db, sendId);
  if (!send) throw new CliError(`No send with id ${sendId}.`);
  if (send.status !== "pending") throw alreadyDecided(send.sendId, send.status);

  const result = await ctx.db.transaction(async (tx): Promise<DecideOutcome> => {
    const decided =
      decision.status === "Confirmed"
        ? await backend.postWithdrawal(tx, send.sendId)
        : await backend.voidWithdrawal(tx, send.sendId, decision.reason);
    if (!decided.ok) return decided;
    const after = await backend.findSend(tx, send.sendId);
    if (!after?.decidedAt) throw new Error("decided send not found in its own transaction");
    await audit(ctx, tx, decision.status === "Confirmed" ? "send.approve" : "send.decline", send.sendId, {
      userId: send.userId,
      walletId: send.walletId,
      coin: send.coin,
      amount: formatAmount(send.coin, send.units),
      units: send.units.toString(),
      address: send.address,
      ...(decision.status === "Declined" ? { reason: decision.reason } : {}),
      before: { status: "pending" },
      after: { status: decided.status },
      transferId: decided.transferId,
    });
    const balance = await backend.walletBalance(tx, send.walletId);
    return { ok: true, transferId: decided.transferId, decidedAt: after.decidedAt, balance };
  });
  if (!result.ok) {
    if (result.reason === "already-decided") throw alreadyDecided(send.sendId, result.status);
    throw new CliError(`No send with id ${sendId}.`);
  }
  return { send, transferId: result.transferId, decidedAt: result.decidedAt, balance: result.balance };
}

const approveCommand = command({
  changes: true,
  check(args) {
    expectArgs(args, 1, "approve");
    const [sendId = ""] = args;
    checkSendId(sendId);
    return sendId;
  },
  async run(ctx, sendId: string) {
    const { send, decidedAt } = await decideSend(ctx, sendId, { status: "Confirmed" });
    const amount = formatAmount(send.coin, send.units);
    if (ctx.options.json) {
      printJson({
        sendId: send.sendId,
        status: "Confirmed",
        email: send.email,
        coin: send.coin,
        amount,
        address: send.address,
        decidedAt: decidedAt.toISOString(),
      });
      return;
    }
    out(
      `Approved the send ${send.sendId}: ${amount} ${send.coin} to ${send.address} for ${send.email}. ` +
        "Status: Confirmed.",
    );
  },
});

interface DeclineInput {
  sendId: string;
  reason: string;
}

const declineCommand = command({
  changes: true,
  check(args, options): DeclineInput {
    expectArgs(args, 1, "decline");
    const [sendId = ""] = args;
    checkSendId(sendId);
    if (options.reason === undefined) {
      throw new CliError(
        `decline needs --reason <text>: why the send is declined (1 to ${MAX_REASON} characters).`,
      );
    }
    const reason = options.reason.trim();
    if (reason === "") {
      throw new CliError(`--reason is empty: say why the send is declined (1 to ${MAX_REASON} characters).`);
    }
    if (reason.length > MAX_REASON) {
      throw new CliError(`--reason is too long: ${reason.length} characters, at most ${MAX_REASON}.`);
    }
    return { sendId, reason };
  },
  async run(ctx, { sendId, reason }: DeclineInput) {
    const { send, decidedAt, balance } = await decideSend(ctx, sendId, { status: "Declined", reason });
    const amount = formatAmount(send.coin, send.units);
    const available = formatAmount(send.coin, balance);
    if (ctx.options.json) {
      printJson({
        sendId: send.sendId,
        status: "Declined",
        email: send.email,
        coin: send.coin,
        amount,
        address: send.address,
        decidedAt: decidedAt.toISOString(),
        reason,
        balance: available,
      });
      return;
    }
    out(
      `Declined the send ${send.sendId}: ${amount} ${send.coin} returned to ${send.email}'s ${send.coin} wallet ` +
        `(available balance now ${available} ${send.coin}). Reason: ${reason}`,
    );
  },
});

// ---------------------------------------------------------------------------
// Messages: compliance messages to users, support and contact messages from them
// ---------------------------------------------------------------------------

/**
 * Text from users, made safe for a terminal: control characters (ESC, BEL, the
 * C1 range, bidi overrides…) are shown as \\uXXXX; newlines and tabs stay.
 */
function terminalSafe(text: string): string {
  return text.replace(
    // oxlint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
    (c) => `\\u${c.codePointAt(0)?.toString(16).padStart(4, "0") ?? "????"}`,
  );
}

function wholeNumber(text: string, name: string, min: number, max: number): number {
  if (!/^\d{1,7}$/u.test(text) || Number(text) < min || Number(text) > max) {
    throw new CliError(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return Number(text);
}

interface MessageInput {
  to: string | "all";
  text: string;
}

const messageCommand = command({
  changes: true,
  check(args, options): MessageInput {
    expectArgs(args, 1, "message");
    if ((options.to === undefined) === (options.all === undefined)) {
      throw new CliError("Say who gets the message: --to <email> or --all (one of them).");
    }
    const text = (args[0] ?? "").trim();
    if (text.length === 0) throw new CliError("The message is empty.");
    if (text.length > MAX_MESSAGE) {
      throw new CliError(`The message is too long: ${text.length} characters, at most ${MAX_MESSAGE}.`);
    }
    return { to: options.all ? "all" : (options.to ?? "").trim(), text };
  },
  async run(ctx, { to, text }: MessageInput) {
    const { backend } = ctx;
    let recipient: { userId: string; email: string } | "all" = "all";
    if (to !== "all") {
      const user = await backend.findUserByEmail(ctx.db, to);
      if (!user) throw new CliError(`No user with the e-mail ${to}.`);
      recipient = { userId: user.userId, email: user.email };
    }
    const sent = await ctx.db.transaction(async (tx) => {
      const result = await backend.sendMessage(tx, {
        to: recipient === "all" ? "all" : { userId: recipient.userId },
        message: text,
      });
      if (!result.ok) throw new CliError(`No user with the e-mail ${to}.`);
      await audit(ctx, tx, "message.send", result.message.id, {
        to: recipient === "all" ? "all" : recipient.email,
        userId: recipient === "all" ? null : recipient.userId,
        length: result.message.message.length,
        message: result.message.message,
      });
      return result.message;
    });
    if (ctx.options.json) {
      printJson({
        messageId: sent.id,
        to: recipient === "all" ? "all" : recipient.email,
        createdAt: sent.createdAt.toISOString(),
      });
      return;
    }
    out(
      recipient === "all"
        ? `Sent message ${sent.id} to every user.`
        : `Sent message ${sent.id} to ${recipient.email}.`,
    );
  },
});

const supportCommand = command({
  changes: false,
  check(args, options) {
    expectArgs(args, 0, "support");
    const kind = options.kind;
    if (kind !== undefined && kind !== "support" && kind !== "contact") {
      throw new CliError(`--kind is support or contact, not "${kind}".`);
    }
    const limit = options.limit === undefined ? 100 : wholeNumber(options.limit, "--limit", 1, 1000);
    return { kind, limit };
  },
  async run(ctx, { kind, limit }: { kind: "support" | "contact" | undefined; limit: number }) {
    const rows = await ctx.backend.listSupportMessages(ctx.db, { limit, ...(kind ? { kind } : {}) });
    if (ctx.options.json) {
      printJson(
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
        })),
      );
      return;
    }
    if (rows.length === 0) {
      out(kind ? `No ${kind} messages.` : "No support or contact messages.");
      return;
    }
    for (const m of rows) {
      const who = [m.fullName, `<${m.email}>`, m.phone].filter(Boolean).map((p) => terminalSafe(String(p)));
      out(
        `${m.createdAt.toISOString()}  ${m.kind.toUpperCase()}  ${who.join("  ")}  (${m.id}${m.ip ? `, from ${m.ip}` : ""})`,
      );
      out(
        terminalSafe(m.comment)
          .split("\n")
          .map((line) => `    ${line}`)
          .join("\n"),
      );
      out("");
    }
    out(`${plural(rows.length, "message")}, newest first.`);
  },
});

const forgetIpsCommand = command({
  changes: true,
  check(args, options) {
    expectArgs(args, 0, "forget-ips");
    return { days: options.days === undefined ? 90 : wholeNumber(options.days, "--days", 0, 36500) };
  },
  async run(ctx, { days }: { days: number }) {
    const cutOff = new Date(Date.now() - days * 86_400_000);
    const cleared = await ctx.db.transaction(async (tx) => {
      const n = await ctx.backend.forgetSenderAddresses(tx, cutOff);
      await audit(ctx, tx, "support.forget-ips", "support_messages", {
        olderThan: cutOff.toISOString(),
        cleared: n,
      });
      return n;
    });
    if (ctx.options.json) {
      printJson({ cleared, olderThan: cutOff.toISOString() });
      return;
    }
    out(`Cleared the sender address of ${plural(cleared, "message")} older than ${days} days.`);
  },
});

function limiterFor(ctx: Context, db: AppDb) {
  return ctx.backend.createRateLimiter({
    db,
    secret: ctx.config.backendSecret,
    policy: ctx.backend.DEFAULT_RATE_LIMITS,
  });
}

const locksCommand = command({
  changes: false,
  check: (args) => expectArgs(args, 0, "locks"),
  async run(ctx) {
    // Counter keys are HMACs of the e-mail (record 013): look up every account's key.
    const emails = (await ctx.db.select({ email: ctx.backend.users.email }).from(ctx.backend.users)).map(
      (r) => r.email,
    );
    const limiter = limiterFor(ctx, ctx.db);
    const found: { email: string; failures: number; locked: boolean }[] = [];
    for (let i = 0; i < emails.length; i += 1000) {
      const states = await limiter.accountStates(emails.slice(i, i + 1000));
      for (const [email, state] of states)
        found.push({ email, failures: state.failures, locked: state.locked });
    }
    found.sort((a, b) => b.failures - a.failures || a.email.localeCompare(b.email));
    if (ctx.options.json) {
      printJson(found);
      return;
    }
    if (found.length === 0) {
      out("No account has failed logins.");
      return;
    }
    const rows = found.map((f) => [f.email, String(f.failures), f.locked ? "locked" : "open"]);
    out(table(["E-MAIL", "FAILURES", "STATE"], rows, new Set([1])));
    const locked = found.filter((f) => f.locked).length;
    out(`\n${plural(found.length, "account")} with failed logins, ${locked} locked.`);
  },
});

const unlockCommand = command({
  changes: true,
  check(args) {
    expectArgs(args, 1, "unlock");
    const email = (args[0] ?? "").trim();
    if (email.length === 0) throw new CliError("The e-mail is empty.");
    return { email };
  },
  async run(ctx, { email }: { email: string }) {
    const user = await ctx.backend.findUserByEmail(ctx.db, email);
    if (!user) throw new CliError(`No user with the e-mail ${email}.`);
    const cleared = await ctx.db.transaction(async (tx) => {
      const failures = await limiterFor(ctx, tx).unlockAccount(user.email);
      if (failures > 0) {
        await audit(ctx, tx, "account.unlock", user.userId, { email: user.email, failures });
      }
      return failures;
    });
    if (ctx.options.json) {
      printJson({ email: user.email, clearedFailures: cleared });
      return;
    }
    out(
      cleared === 0
        ? `${user.email} has no failed logins: nothing to unlock. Nothing changed.`
        : `Unlocked ${user.email}: cleared ${plural(cleared, "failed login")}.`,
    );
  },
});

const COMMANDS: Record<string, Command<unknown>> = {
  requests: requestsCommand,
  "issue-address": issueAddressCommand,
  credit: creditCommand,
  users: usersCommand,
  sends: sendsCommand,
  approve: approveCommand,
  decline: declineCommand,
  message: messageCommand,
  support: supportCommand,
  "forget-ips": forgetIpsCommand,
  locks: locksCommand,
  unlock: unlockCommand,
};

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

function oneLine(text: string): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // A drizzle query error's message carries the whole statement; its driver cause says what went wrong.
  const shown =
    error.message.startsWith("Failed query:") && error.cause instanceof Error ? error.cause : error;
  return oneLine(shown.message);
}

/**
 * Runs a command. `inServer` is the running server's own database, when the
 * command came through the ops socket; otherwise the command opens the
 * configured database, or hands the command to a server that holds the
 * embedded one.
 */
export async function main(argv: string[], inServer?: { db: AppDb; config: Config }): Promise<number> {
  let database: Database | undefined;
  try {
    // "-1" would otherwise read as an unknown option: say what is wrong with it. (The text given
    // to --as or --reason is no amount; parseArgs explains how to pass one that starts with "-".)
    const signed = argv.includes("credit")
      ? argv.find((a, i) => /^-[\d.]/u.test(a) && argv[i - 1] !== "--as" && argv[i - 1] !== "--reason")
      : undefined;
    if (signed !== undefined) {
      throw new CliError(`Invalid amount "${signed}": amounts are positive, without a sign.`);
    }
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: {
          as: { type: "string" },
          json: { type: "boolean" },
          help: { type: "boolean", short: "h" },
          usd: { type: "string" },
          reason: { type: "string" },
          to: { type: "string" },
          all: { type: "boolean" },
          kind: { type: "string" },
          limit: { type: "string" },
          days: { type: "string" },
        },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new CliError(`${message.replace(/\.$/u, "")}. See --help.`);
    }
    const options: Options = parsed.values;
    const [name, ...args] = parsed.positionals;
    if (name === undefined) {
      if (options.help) {
        out(USAGE);
        return 0;
      }
      throw new CliError("No command given. See --help.");
    }
    const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!cmd) throw new CliError(`Unknown command "${name}". See --help.`);
    if (options.help) {
      out(COMMAND_USAGE[name] ?? USAGE);
      return 0;
    }
    if (options.usd !== undefined && name !== "credit") throw new CliError("--usd goes with credit only.");
    if (options.reason !== undefined && name !== "decline") {
      throw new CliError("--reason goes with decline only.");
    }
    if ((options.to !== undefined || options.all !== undefined) && name !== "message") {
      throw new CliError("--to and --all go with message only.");
    }
    if ((options.kind !== undefined || options.limit !== undefined) && name !== "support") {
      throw new CliError("--kind and --limit go with support only.");
    }
    if (options.days !== undefined && name !== "forget-ips") {
      throw new CliError("--days goes with forget-ips only.");
    }
    const input = cmd.check(args, options);
    const actor = cmd.changes ? resolveActor(options) : "";

    const backend = await loadBackend();
    if (inServer) {
      await cmd.run({ db: inServer.db, config: inServer.config, backend, options, actor }, input);
      return 0;
    }
    const config = backend.loadConfig();
    if (!config.databaseUrl) {
      // The embedded database is held by a running server: let it run the command.
      const { callOpsSocket, opsSocketPath } = await import("../host/ops-socket.ts");
      // Who acts is settled here (the server's $OPERATOR and OS user are not the operator's). In
      // front, so that it stays an option even after a "--" that ends the options.
      const viaServer = await callOpsSocket(
        opsSocketPath(config.dataDir),
        cmd.changes ? [`--as=${actor}`, ...argv] : argv,
      );
      if (viaServer) {
        sink.out(viaServer.stdout);
        sink.err(viaServer.stderr);
        return viaServer.code;
      }
    }
    database = await backend.openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await cmd.run({ db: database.db, config, backend, options, actor }, input);
    return 0;
  } catch (error) {
    sink.err(`error: ${errorMessage(error)}\n`);
    return 1;
  } finally {
    await database?.close().catch(() => {});
  }
}

if (import.meta.main) {
  // A closed pipe (… | head) is not an error of the command.
  process.stdout.on("error", () => {});
  process.exitCode = await main(process.argv.slice(2));
}

/** For the ops socket: runs one command on the server's database and returns what it printed. */
export async function runInServer(
  argv: string[],
  server: { db: AppDb; config: Config },
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  sink = { out: (text) => (stdout += text), err: (text) => (stderr += text) };
  try {
    const code = await main(argv, server);
    return { code, stdout, stderr };
  } finally {
    sink = terminal;
  }
}
