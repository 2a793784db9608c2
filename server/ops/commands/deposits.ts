// Deposits keyed on the chain (record 040): one chain output reported by hand,
// a CSV of them imported in one transaction, and the list of recent ones.
// (`credit`, an operator vouching for a deposit to a wallet, is in wallets.ts.)
import { COINS, coinFor, type Ticker } from "../../../common/coins.ts";
import { formatAmount, parseAmount } from "../../backend/domain/amounts.ts";
import type { DepositPolicy, RecordDepositResult } from "../../backend/domain/deposits.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
import { audit, defineCommand, OpsError, plural, readTextFile, table, usdOption } from "./define.ts";

/** As MAX_EXTERNAL_TX_ID and MAX_OUTPUT_INDEX in server/backend/domain/ledger.ts (which check them again). */
const MAX_TXID = 256;
const MAX_INDEX = 2 ** 31 - 1;
/** A file this large is no hand-made export; refuse it before reading it whole. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MAX_LINES = 100_000;
/** How many bad lines a refusal lists (the count is always given). */
const MAX_LISTED = 50;
const HEADER = "coin,txid,output,address,amount,confirmations";

/** One chain output, checked without the database. */
interface OutputLine {
  coin: Ticker;
  txid: string;
  outputIndex: number;
  address: string;
  rawAmount: string;
  units: bigint;
  confirmations: number;
}

function whole(text: string, name: string, max: number): number | string {
  if (!/^\d{1,10}$/u.test(text) || Number(text) > max) {
    return `${name} must be a whole number from 0 to ${max}`;
  }
  return Number(text);
}

/** The checks a chain output passes before the database is asked: a problem sentence, or the output. */
function checkOutput(fields: {
  coin: string;
  txid: string;
  output: string;
  address: string;
  amount: string;
  confirmations: string;
}): OutputLine | string {
  const coin = coinFor(fields.coin)?.ticker;
  if (!coin) return `unknown coin "${fields.coin}"`;
  if (fields.txid.length === 0 || fields.txid.length > MAX_TXID || /\s/u.test(fields.txid)) {
    return `txid must be 1 to ${MAX_TXID} characters without spaces`;
  }
  const outputIndex = whole(fields.output, "output", MAX_INDEX);
  if (typeof outputIndex === "string") return outputIndex;
  const amount = parseAmount(coin, fields.amount);
  if (!amount.ok) {
    return amount.problem === "too-many-decimals"
      ? `amount "${fields.amount}" has more than ${COINS[coin].decimals} decimals (${coin})`
      : `invalid amount "${fields.amount}": ${amount.reason}`;
  }
  const confirmations = whole(fields.confirmations, "confirmations", MAX_INDEX);
  if (typeof confirmations === "string") return confirmations;
  return {
    coin,
    txid: fields.txid,
    outputIndex,
    address: fields.address,
    rawAmount: fields.amount,
    units: amount.units,
    confirmations,
  };
}

function policyOf(ctx: CommandContext): DepositPolicy {
  return { confirmations: ctx.config.confirmations, usdtNetwork: ctx.config.usdtNetwork };
}

type Recorded = Extract<RecordDepositResult, { ok: true }>;

function auditDetails(line: OutputLine, r: Recorded) {
  return {
    depositId: r.deposit.transferId,
    coin: line.coin,
    txid: line.txid,
    outputIndex: line.outputIndex,
    walletId: r.deposit.walletId,
    userId: r.userId,
    amount: formatAmount(line.coin, line.units),
    units: line.units.toString(),
    confirmations: r.confirmations,
    required: r.required,
    outcome: r.outcome,
  };
}

/** What deposit and import-deposits print with --json about one output, before their own fields. */
function outputJson(line: OutputLine, r: Recorded) {
  return {
    status: r.outcome,
    id: r.deposit.transferId,
    coin: line.coin,
    txid: line.txid,
    output: line.outputIndex,
    walletId: r.deposit.walletId,
  };
}

const where = (line: { coin: Ticker; txid: string; outputIndex: number }) =>
  `${line.coin} output ${line.txid}:${line.outputIndex}`;

const progress = (r: Recorded) => `${r.confirmations ?? 0} of ${r.required} confirmations`;

export const DEPOSIT_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "deposit",
    summary: [
      ["deposit <coin> <txid> <output>", "report one chain output paying one of our addresses:"],
      ["    <address> <amount>", "credited once it has the coin's confirmations,"],
      ["    [--confirmations <n>]", "pending ('Unconfirmed') until then;"],
      ["    [--usd <decimal>]", "its value in USD at the time"],
    ],
    usage: `Usage: node server/ops/cli.ts deposit <coin> <txid> <output> <address> <amount> [--confirmations N] [--usd <decimal>] [--as <name>] [--json]

Reports one chain output: <txid> the transaction, <output> its output index
(UTXO coins) or log index (tokens; 0 when the chain has one payment per
transaction), <address> the address it paid, which must be one of our wallets'
for <coin>, <amount> in the coin as a plain decimal. --confirmations says how
many it has (default 0: just seen). With at least the coin's policy
(CONFIRMATIONS_<COIN>) it is credited at once; else it waits as pending, shown to
the user as 'Unconfirmed' and not in the balance, and reporting it again with
more confirmations credits it, exactly once. An output is keyed on (coin, txid,
output): reported again with another address or amount it is refused; already
credited, nothing changes. Refused while deposits are paused for the coin or
the user. Writes one audit_log row (action deposit.credit, deposit.pending or
deposit.confirmations) when it changes something.`,
    options: { confirmations: { type: "string" }, usd: { type: "string" } },
    changes: true,
    arguments: 5,
    screen(argv) {
      const signed = argv.find((a, i) => /^-[\d.]/u.test(a) && argv[i - 1] !== "--as");
      if (signed !== undefined) {
        throw new OpsError(`Invalid value "${signed}": amounts and indexes are written without a sign.`);
      }
    },
    check(args, options) {
      const [coin = "", txid = "", output = "", address = "", amount = ""] = args;
      const checked = checkOutput({
        coin,
        txid,
        output,
        address,
        amount,
        confirmations: options.confirmations ?? "0",
      });
      if (typeof checked === "string") throw new OpsError(`Refused: ${checked}. Nothing written.`);
      return { line: checked, amountUsd: usdOption(options.usd) };
    },
    async run(ctx, { line, amountUsd }) {
      const [deposits, ledger] = await Promise.all([
        import("../../backend/domain/deposits.ts"),
        import("../../backend/domain/ledger.ts"),
      ]);
      const result = await ctx.db.transaction(async (tx) => {
        const r = await deposits.recordDeposit(tx, { ...line, amountUsd }, policyOf(ctx));
        if (r.ok && (r.outcome === "credited" || r.outcome === "pending")) {
          const action = deposits.depositAuditAction({ outcome: r.outcome, firstSeen: r.firstSeen });
          await audit(ctx, tx, action, r.deposit.walletId, { ...auditDetails(line, r), amountUsd });
        }
        return r;
      });
      if (!result.ok) throw new OpsError(result.message);
      const balance = await ledger.walletBalance(ctx.db, result.deposit.walletId);
      return { ...result, balance };
    },
    json: (r, { line }) => ({
      ...outputJson(line, r),
      amount: formatAmount(line.coin, r.deposit.units),
      confirmations: r.confirmations,
      required: r.required,
      balance: formatAmount(line.coin, r.balance),
    }),
    text(r, { line }) {
      const amount = `${formatAmount(line.coin, r.deposit.units)} ${line.coin}`;
      const balance = `Available balance: ${formatAmount(line.coin, r.balance)} ${line.coin}.`;
      switch (r.outcome) {
        case "credited":
          return `Credited ${amount} to wallet ${r.deposit.walletId}, ${where(line)} (${progress(r)}). ${balance}`;
        case "pending":
          return `Pending: ${amount} to wallet ${r.deposit.walletId}, ${where(line)}, ${progress(r)}; credited once it has ${r.required}.`;
        case "unchanged":
          return `Pending, unchanged: ${amount} to wallet ${r.deposit.walletId}, ${where(line)}, ${progress(r)}. Nothing changed.`;
        case "already-credited":
          return `Already credited: ${amount} to wallet ${r.deposit.walletId}, ${where(line)}, on ${r.deposit.createdAt.toISOString()}. Nothing changed.`;
      }
    },
  }),

  defineCommand({
    name: "deposits import",
    summary: [["deposits import <file.csv>", "report chain outputs in bulk: all lines or none"]],
    usage: `Usage: node server/ops/cli.ts deposits import <file.csv> [--as <name>] [--json]

Reports many chain outputs at once, each as "deposit" does. The file starts with
the header line
  ${HEADER}
then one line per chain output, e.g.
  BTC,4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b,0,bc1q…,0.015,3
Every line is checked (coin, txid, output, an address of ours, an amount with at
most the coin's decimals, confirmations); the same output twice in the file is
refused. An output already known follows the rules of "deposit": more
confirmations on a pending one are taken, one already credited with the same
data is unchanged, another address or amount refuses the file. The whole file
is applied in one transaction, or refused with every bad line number and why
(nothing written). Prints how many outputs were credited, are pending and were
unchanged. Writes one audit_log row (action deposits.import).`,
    changes: true,
    arguments: 1,
    files: [0],
    check(args) {
      const [file = ""] = args;
      if (file === "") throw new OpsError("Name the CSV file to import.");
      return { file };
    },
    async run(ctx, { file }) {
      const [path, deposits] = await Promise.all([
        import("node:path"),
        import("../../backend/domain/deposits.ts"),
      ]);
      const fullPath = path.resolve(file);
      const text = await readTextFile(
        fullPath,
        MAX_FILE_BYTES,
        (error) => `Cannot read ${fullPath}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
      );
      const lines = text.replace(/^\uFEFF/u, "").split(/\r?\n/u);
      while (lines.length > 0 && lines.at(-1)?.trim() === "") lines.pop();
      if ((lines[0] ?? "").trim().toLowerCase() !== HEADER) {
        throw new OpsError(`${fullPath}: the first line must be the header "${HEADER}". Nothing written.`);
      }
      if (lines.length - 1 > MAX_LINES) {
        throw new OpsError(
          `${fullPath} has ${lines.length - 1} lines; at most ${MAX_LINES} per file. Nothing written.`,
        );
      }

      const problems: { lineNo: number; why: string }[] = [];
      const outputs: { lineNo: number; line: OutputLine }[] = [];
      const seen = new Map<string, number>();
      const policy = policyOf(ctx);
      for (const [i, raw] of lines.entries()) {
        if (i === 0) continue;
        const lineNo = i + 1;
        if (raw.trim() === "") {
          problems.push({ lineNo, why: "empty" });
          continue;
        }
        const fields = raw.split(",").map((f) => f.trim());
        if (fields.length !== 6) {
          problems.push({ lineNo, why: `${fields.length} fields, expected 6 (${HEADER})` });
          continue;
        }
        const [coin = "", txid = "", output = "", address = "", amount = "", confirmations = ""] = fields;
        const checked = checkOutput({ coin, txid, output, address, amount, confirmations });
        if (typeof checked === "string") {
          problems.push({ lineNo, why: checked });
          continue;
        }
        const canonical = deposits.canonicalDepositAddress(checked.coin, checked.address, policy.usdtNetwork);
        if (!canonical.ok) {
          problems.push({ lineNo, why: canonical.message.replace(/\.$/u, "") });
          continue;
        }
        const key = `${checked.coin}\u0000${checked.txid}\u0000${checked.outputIndex}`;
        const first = seen.get(key);
        if (first !== undefined) {
          problems.push({ lineNo, why: `the same output as line ${first} (${where(checked)})` });
          continue;
        }
        seen.set(key, lineNo);
        outputs.push({ lineNo, line: { ...checked, address: canonical.address } });
      }

      const refuse = () => {
        const found = problems
          .toSorted((a, b) => a.lineNo - b.lineNo)
          .map((p) => `line ${p.lineNo}: ${p.why}`);
        const listed = found.slice(0, MAX_LISTED).join("; ");
        const more = found.length > MAX_LISTED ? `; and ${found.length - MAX_LISTED} more` : "";
        return new OpsError(
          `${fullPath} refused, nothing written: ${plural(found.length, "bad line")}: ${listed}${more}.`,
        );
      };

      // One transaction: every line that passed the checks above is tried against the database
      // too (so the refusal lists every bad line), and any refusal rolls back every line.
      return ctx.db.transaction(async (tx) => {
        const results: { lineNo: number; line: OutputLine; r: Recorded }[] = [];
        for (const { lineNo, line } of outputs) {
          const r = await deposits.recordDeposit(tx, line, policy);
          if (r.ok) results.push({ lineNo, line, r });
          else
            problems.push({
              lineNo,
              why: r.message.replace(/^Refused: /u, "").replace(/\.? Nothing written\.$/u, ""),
            });
        }
        if (problems.length > 0) throw refuse();
        const count = (o: (r: Recorded) => boolean) => results.filter((x) => o(x.r)).length;
        const summary = {
          file: fullPath,
          lines: results.length,
          credited: count((r) => r.outcome === "credited"),
          pending: count((r) => r.outcome === "pending"),
          unchanged: count((r) => r.outcome === "unchanged" || r.outcome === "already-credited"),
        };
        await audit(ctx, tx, "deposits.import", fullPath, {
          ...summary,
          deposits: results
            .filter((x) => x.r.outcome === "credited" || x.r.outcome === "pending")
            .map((x) => ({ line: x.lineNo, ...auditDetails(x.line, x.r) })),
        });
        return { summary, results };
      });
    },
    json: ({ summary, results }) => ({
      ...summary,
      outputs: results.map(({ lineNo, line, r }) => ({
        line: lineNo,
        ...outputJson(line, r),
        confirmations: r.confirmations,
        required: r.required,
      })),
    }),
    text: ({ summary }) =>
      `Imported ${summary.file}: ${plural(summary.lines, "output")}: ${summary.credited} credited, ` +
      `${summary.pending} pending, ${summary.unchanged} unchanged.`,
  }),

  defineCommand({
    name: "deposits",
    summary: [["deposits [--pending]", "recent deposits (pending ones only with --pending)"]],
    usage: `Usage: node server/ops/cli.ts deposits [--pending] [--json]

Lists the 100 newest deposits, newest first: when first seen, coin, amount,
status (credited, or pending with its confirmations against the coin's policy),
the user's e-mail, the chain output (txid:output) and the deposit id (the id
users see). --pending: only those still waiting for confirmations.`,
    options: { pending: { type: "boolean" } },
    changes: false,
    arguments: 0,
    check: (_args, options) => ({ pendingOnly: options.pending === true }),
    async run(ctx, { pendingOnly }) {
      const { listDeposits } = await import("../../backend/domain/deposits.ts");
      return { rows: await listDeposits(ctx.db, { pendingOnly }), required: ctx.config.confirmations };
    },
    json: ({ rows, required }) =>
      rows.map((r) => ({
        id: r.id,
        coin: r.coin,
        txid: r.txid,
        output: r.outputIndex,
        address: r.address,
        walletId: r.walletId,
        email: r.email,
        amount: formatAmount(r.coin, r.units),
        amountUsd: r.amountUsd,
        confirmations: r.confirmations,
        required: required[r.coin],
        status: r.status,
        createdAt: r.createdAt.toISOString(),
        creditedAt: r.creditedAt?.toISOString() ?? null,
      })),
    text({ rows, required }, { pendingOnly }) {
      if (rows.length === 0) return pendingOnly ? "No deposits are pending." : "No deposits yet.";
      return (
        table(
          ["SEEN AT", "COIN", "AMOUNT", "STATUS", "E-MAIL", "OUTPUT", "ID"],
          rows.map((r) => [
            r.createdAt.toISOString(),
            r.coin,
            formatAmount(r.coin, r.units),
            r.status === "credited" ? "credited" : `pending ${r.confirmations ?? 0} of ${required[r.coin]}`,
            r.email,
            `${r.txid}:${r.outputIndex}`,
            r.id,
          ]),
          new Set([2]),
        ) + `\n\n${plural(rows.length, pendingOnly ? "pending deposit" : "deposit")}.`
      );
    },
  }),
];
