// Wallets: requests waiting for an address, issuing it, crediting deposits, the users overview.
import { COINS, isTicker, TICKERS, type Ticker } from "../../../common/coins.ts";
import { formatAmount, parseAmount } from "../../backend/domain/amounts.ts";
import type { VouchResult } from "../../backend/domain/deposits.ts";
import type { OpsCommand } from "./define.ts";
import { audit, checkId, defineCommand, OpsError, plural, table, usdOption } from "./define.ts";

/** As server/backend/domain/ledger.ts MAX_EXTERNAL_TX_ID (which checks it again). */
const MAX_TXID = 256;
/** The coin with the most decimals: an amount it refuses for any reason but decimals, every coin refuses. */
const WIDEST: Ticker = TICKERS.reduce((a, b) => (COINS[b].decimals > COINS[a].decimals ? b : a));

/** As MAX_OUTPUT_INDEX in server/backend/domain/ledger.ts (which checks it again). */
const MAX_OUTPUT = 2 ** 31 - 1;

function wholeOutput(text: string): number {
  if (!/^\d{1,10}$/u.test(text) || Number(text) > MAX_OUTPUT) {
    throw new OpsError(`Invalid --output "${text}": a whole number from 0 to ${MAX_OUTPUT}.`);
  }
  return Number(text);
}

function describeDeposit(coin: Ticker, d: { units: bigint; walletId: string; createdAt: Date }): string {
  return `${formatAmount(coin, d.units)} ${coin} to wallet ${d.walletId} on ${d.createdAt.toISOString()}`;
}

export const WALLET_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "requests",
    summary: [["requests [--coin T]", "wallet requests waiting for an address"]],
    usage: `Usage: node server/ops/cli.ts requests [--coin <TICKER>] [--json]

Lists the wallets users requested that have no address yet, oldest first:
requested at, user e-mail, coin, wallet id; with --coin, only that coin's.
Give each one an address with issue-address.`,
    options: { coin: { type: "string" } },
    changes: false,
    arguments: 0,
    check(_args, options) {
      if (options.coin === undefined) return { coin: undefined };
      const upper = options.coin.trim().toUpperCase();
      if (!isTicker(upper))
        throw new OpsError(`Unknown coin "${options.coin}". Coins: ${TICKERS.join(", ")}.`);
      return { coin: upper };
    },
    async run(ctx, { coin }) {
      const { pendingWalletRequests } = await import("../../backend/domain/wallets.ts");
      return pendingWalletRequests(ctx.db, coin);
    },
    json: (rows) =>
      rows.map((r) => ({
        walletId: r.walletId,
        email: r.email,
        coin: r.coin,
        requestedAt: r.requestedAt.toISOString(),
      })),
    text: (rows, { coin }) =>
      rows.length === 0
        ? `No ${coin ? `${coin} ` : ""}wallet requests are waiting for an address.`
        : `${table(
            ["REQUESTED AT", "E-MAIL", "COIN", "WALLET ID"],
            rows.map((r) => [r.requestedAt.toISOString(), r.email, r.coin, r.walletId]),
          )}\n\n${plural(rows.length, "request")} waiting. Answer with: issue-address <walletId> <address>`,
  }),

  defineCommand({
    name: "issue-address",
    summary: [["issue-address <walletId> <address>", "give a requested wallet its deposit address"]],
    usage: `Usage: node server/ops/cli.ts issue-address <walletId> <address> [--as <name>] [--json]

Gives a requested wallet its deposit address. The address is checked for the
wallet's coin (USDT: the network of USDT_NETWORK, erc20 by default) and stored
in its canonical form. A wallet gets an address once; an address belongs to one
wallet of its coin. Refused while issuing is paused for the coin or the user, and
for an address of the coin's pool. Recorded as a manual address (the others come
from an account key or a pool, record 039). Writes one audit_log row (action
wallet.issue-address).`,
    changes: true,
    arguments: 2,
    check(args) {
      const [walletId = "", address = ""] = args;
      checkId(walletId, "wallet");
      return { walletId, address };
    },
    async run(ctx, { walletId, address: rawAddress }) {
      const [wallets, addresses, controls, schema, { and, eq }] = await Promise.all([
        import("../../backend/domain/wallets.ts"),
        import("../../../common/addresses.ts"),
        import("../../backend/domain/controls.ts"),
        import("../../backend/db/schema.ts"),
        import("drizzle-orm"),
      ]);
      const wallet = await wallets.findWallet(ctx.db, walletId);
      if (!wallet) throw new OpsError(`No wallet with id ${walletId}.`);
      if (wallet.address !== null) {
        throw new OpsError(
          `The ${wallet.coin} wallet ${wallet.id} already has the address ${wallet.address}.`,
        );
      }
      const checked = addresses.validateAddress(wallet.coin, rawAddress, {
        usdtNetwork: ctx.config.usdtNetwork,
      });
      if (!checked.ok) throw new OpsError(`Address refused for ${wallet.coin}: ${checked.reason}`);
      const address = checked.address;

      const result = await ctx.db.transaction(async (tx) => {
        // An issuing pause stops operators too: whatever made it (a suspect key, a user under
        // review) holds for addresses given by hand.
        const pause = await controls.activePause(tx, "issuing", { coin: wallet.coin, userId: wallet.userId });
        if (pause) {
          const scope = pause.coin ? `for ${pause.coin}` : `for the user ${wallet.email}`;
          throw new OpsError(`Issuing is paused ${scope} (${pause.reason}). Nothing changed.`);
        }
        // A pool's address is handed out by the pool (to the oldest request), not by hand.
        const [pooled] = await tx
          .select({ id: schema.addressPool.id })
          .from(schema.addressPool)
          .where(and(eq(schema.addressPool.coin, wallet.coin), eq(schema.addressPool.address, address)));
        if (pooled) {
          throw new OpsError(
            `The address ${address} is in the ${wallet.coin} address pool; the pool issues it.`,
          );
        }
        const issued = await wallets.issueAddress(tx, wallet.id, address);
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
            throw new OpsError(`No wallet with id ${walletId}.`);
          case "already-issued":
            throw new OpsError(
              `The ${wallet.coin} wallet ${wallet.id} already has the address ${result.address}.`,
            );
          case "address-taken":
            throw new OpsError(`The address ${address} already belongs to another ${wallet.coin} wallet.`);
        }
      }
      return { wallet, issued: result.wallet, address };
    },
    json: ({ wallet, issued }) => ({
      walletId: issued.id,
      email: wallet.email,
      coin: issued.coin,
      address: issued.address,
      issuedAt: issued.issuedAt?.toISOString(),
    }),
    text: ({ wallet, address }) =>
      `Issued ${address} to the ${wallet.coin} wallet ${wallet.id} of ${wallet.email}.`,
  }),

  defineCommand({
    name: "credit",
    summary: [
      ["credit <walletId> <amount> <txid>", "credit a deposit you vouch for, once per chain"],
      ["    [--output <n>] [--usd <d>]", "output (txid, output index); its USD value"],
    ],
    usage: `Usage: node server/ops/cli.ts credit <walletId> <amount> <txid> [--output <n>] [--usd <decimal>] [--as <name>] [--json]

Credits a deposit to a wallet that has an address, at once: the operator vouches
for it (no confirmations are counted; "deposit" reports an output with them).
<amount> in the coin, as a plain decimal (e.g. 0.015, at most the coin's
decimals), <txid> the on-chain transaction id, --output its output index (UTXO
coins) or log index (tokens), 0 by default. A chain output (coin, txid, output)
is credited once: repeating the command says "already credited" and changes
nothing (exit 0; exit 1 when the earlier credit differs in wallet or amount).
An output still pending for this wallet and amount is credited now. Refused
while deposits are paused for the coin or the user. --usd records the deposit's
value in USD at the time. Writes one audit_log row (action ledger.credit-deposit).`,
    options: { usd: { type: "string" }, output: { type: "string" } },
    changes: true,
    arguments: 3,
    screen(argv) {
      // "-1" would otherwise read as an unknown option: say what is wrong with it. (The text given
      // to --as or --reason is no amount; parseArgs explains how to pass one that starts with "-".)
      const signed = argv.find(
        (a, i) => /^-[\d.]/u.test(a) && argv[i - 1] !== "--as" && argv[i - 1] !== "--reason",
      );
      if (signed !== undefined) {
        throw new OpsError(`Invalid amount "${signed}": amounts are positive, without a sign.`);
      }
    },
    check(args, options) {
      const [walletId = "", rawAmount = "", txid = ""] = args;
      checkId(walletId, "wallet");
      // Whatever the coin: not a decimal, zero or huge is refused now; too many decimals once the coin is known.
      const early = parseAmount(WIDEST, rawAmount);
      if (!early.ok && early.problem !== "too-many-decimals") {
        throw new OpsError(`Invalid amount "${rawAmount}": ${early.reason}`);
      }
      if (txid.length === 0 || txid.length > MAX_TXID || /\s/u.test(txid)) {
        throw new OpsError(`Invalid txid: 1 to ${MAX_TXID} characters without spaces.`);
      }
      const amountUsd = usdOption(options.usd);
      const outputIndex = options.output === undefined ? 0 : wholeOutput(options.output);
      return { walletId, rawAmount, txid, amountUsd, outputIndex };
    },
    async run(ctx, { walletId, rawAmount, txid, amountUsd, outputIndex }) {
      const [wallets, ledger, deposits] = await Promise.all([
        import("../../backend/domain/wallets.ts"),
        import("../../backend/domain/ledger.ts"),
        import("../../backend/domain/deposits.ts"),
      ]);
      const wallet = await wallets.findWallet(ctx.db, walletId);
      if (!wallet) throw new OpsError(`No wallet with id ${walletId}.`);
      const amount = parseAmount(wallet.coin, rawAmount);
      if (!amount.ok) throw new OpsError(`Invalid amount "${rawAmount}": ${amount.reason}`);
      const noAddress = `The ${wallet.coin} wallet ${wallet.id} has no address yet; issue one first (issue-address).`;
      if (wallet.address === null) throw new OpsError(noAddress);

      const result: VouchResult = await ctx.db.transaction(async (tx) => {
        const credited = await deposits.vouchDeposit(tx, {
          walletId: wallet.id,
          units: amount.units,
          txid,
          outputIndex,
          amountUsd,
        });
        if (credited.ok && !credited.duplicate) {
          await audit(ctx, tx, "ledger.credit-deposit", wallet.id, {
            userId: wallet.userId,
            coin: wallet.coin,
            amount: formatAmount(wallet.coin, amount.units),
            units: amount.units.toString(),
            externalTxId: txid,
            outputIndex,
            amountUsd,
            transferId: credited.deposit.transferId,
          });
        }
        return credited;
      });
      if (!result.ok) {
        if (result.reason === "paused") throw new OpsError(result.message);
        throw new OpsError(result.reason === "no-address" ? noAddress : `No wallet with id ${walletId}.`);
      }
      const d = result.deposit;
      const output = outputIndex === 0 ? `Transaction ${txid}` : `Output ${txid}:${outputIndex}`;
      if (result.duplicate && d.status === "pending") {
        throw new OpsError(
          `${output} is recorded as pending, differently: ${describeDeposit(wallet.coin, d)}. Nothing changed.`,
        );
      }
      if (result.duplicate && (d.walletId !== wallet.id || d.units !== amount.units)) {
        throw new OpsError(
          `${output} was already credited, differently: ${describeDeposit(wallet.coin, d)}. Nothing changed.`,
        );
      }
      const balance = await ledger.walletBalance(ctx.db, wallet.id);
      return { wallet, deposit: d, duplicate: result.duplicate, balance };
    },
    json: ({ wallet, deposit: d, duplicate, balance }) => ({
      status: duplicate ? "already-credited" : "credited",
      transferId: d.transferId,
      walletId: d.walletId,
      coin: wallet.coin,
      amount: formatAmount(wallet.coin, d.units),
      units: d.units.toString(),
      txid: d.externalTxId,
      output: d.outputIndex,
      amountUsd: d.amountUsd,
      createdAt: d.createdAt.toISOString(),
      balance: formatAmount(wallet.coin, balance),
    }),
    text: ({ wallet, deposit: d, duplicate, balance }, { txid, outputIndex }) =>
      duplicate
        ? `${outputIndex === 0 ? `Transaction ${txid}` : `Output ${txid}:${outputIndex}`} was already credited: ${describeDeposit(wallet.coin, d)}. Nothing changed.`
        : `Credited ${formatAmount(wallet.coin, d.units)} ${wallet.coin} to wallet ${wallet.id} (${wallet.email}), ` +
          `${outputIndex === 0 ? `transaction ${txid}` : `output ${txid}:${outputIndex}`}. Available balance: ${formatAmount(wallet.coin, balance)} ${wallet.coin}.`,
  }),

  defineCommand({
    name: "users",
    summary: [
      ["users", "users with their wallets, addresses and balances"],
      ["users --find <text>", "the users (at most 50) whose e-mail contains text, or with that id"],
    ],
    usage: `Usage: node server/ops/cli.ts users [--find <text>] [--json]

Lists every user with each wallet's coin, address state (requested or issued),
address and available balance (holds of pending sends already subtracted).
--find lists only the users whose e-mail contains <text> (any case) or whose
user id it is, oldest first, at most 50; user <email|id> shows one in full.`,
    options: { find: { type: "string" } },
    changes: false,
    arguments: 0,
    check(_args, options) {
      if (options.find === undefined) return { find: undefined };
      const find = options.find.trim();
      if (find === "") throw new OpsError("--find is empty: give part of an e-mail, or a user id.");
      if (find.length > 320) throw new OpsError("--find is too long: at most 320 characters.");
      return { find };
    },
    async run(ctx, { find }) {
      if (find !== undefined) {
        const { findHolders } = await import("../../backend/domain/holders.ts");
        return findHolders(ctx.db, find);
      }
      const { usersOverview } = await import("../../backend/domain/wallets.ts");
      return usersOverview(ctx.db);
    },
    json: (people) =>
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
    text(people, { find }) {
      if (people.length === 0) return find === undefined ? "No users yet." : `No user matches "${find}".`;
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
      const walletCount = people.reduce((n, p) => n + p.wallets.length, 0);
      return (
        table(["E-MAIL", "COIN", "STATE", "ADDRESS", "BALANCE", "WALLET ID"], rows, new Set([4])) +
        `\n\n${plural(people.length, "user")}, ${plural(walletCount, "wallet")}.`
      );
    },
  }),
];
