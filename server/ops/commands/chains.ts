// The chain watchers (issue 30, record 053): where each network's watcher is, and a range
// read again.
import { coinFor, COINS } from "../../../common/coins.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
import { defineCommand, OpsError, plural, table } from "./define.ts";

const MAX_BLOCK = 2 ** 53 - 1;

async function chainRows(ctx: CommandContext) {
  const [{ listCursors, orphanedDeposits }, { rpcOrigin, EVM_NETWORKS }, { formatAmount }] =
    await Promise.all([
      import("../../backend/domain/chain-watch.ts"),
      import("../../backend/chains/settings.ts"),
      import("../../backend/domain/amounts.ts"),
    ]);
  const cursors = new Map((await listCursors(ctx.db)).map((c) => [c.network, c]));
  const configured = new Map(ctx.config.chains.networks.map((n) => [n.network, n]));
  const networks = EVM_NETWORKS.flatMap((network) => {
    const setting = configured.get(network);
    const cursor = cursors.get(network);
    if (!setting && !cursor) return [];
    return [
      {
        network,
        rpc: setting ? rpcOrigin(setting.rpcUrl) : null,
        coins: setting ? [setting.native, ...(setting.token ? [setting.token.coin] : [])] : [],
        head: cursor?.head ?? null,
        cursor: cursor?.blockNumber ?? null,
        lag: cursor && cursor.head !== null ? Math.max(cursor.head - cursor.blockNumber, 0) : null,
        lastError: cursor?.lastError ?? null,
        lastErrorAt: cursor?.lastErrorAt ?? null,
        updatedAt: cursor?.updatedAt ?? null,
      },
    ];
  });
  const orphaned = (await orphanedDeposits(ctx.db)).map((d) => {
    const coin = coinFor(d.coin)?.ticker;
    return { ...d, amount: coin ? `${formatAmount(coin, d.units)} ${coin}` : d.units.toString() };
  });
  return { networks, orphaned, unwatched: ctx.config.chains.unwatched };
}

type Rows = Awaited<ReturnType<typeof chainRows>>;

export const CHAIN_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "chains",
    summary: [
      ["chains", "chain watchers: head, cursor, lag, last error per network"],
      ["chains rescan <coin> --from <block>", "read a network's blocks again from <block>"],
    ],
    usage: `Usage: node server/ops/cli.ts chains [--json]
       node server/ops/cli.ts chains rescan <coin> --from <block> [--as <name>] [--json]

chains lists each EVM network a watcher reads (CHAIN_RPC_ETH, CHAIN_RPC_BNB):
the RPC endpoint's host, the coins read there, the chain's head last seen, the
cursor (the last block read and recorded), the lag in blocks and the last error
(empty once a step goes through). Then the credited deposits whose block was
reorganised away (their coin's deposits are paused until an operator decides;
see README, "Chain watchers"), and the coins no watcher reads.

chains rescan sets <coin>'s network's cursor just before <block>, so the
watcher reads from there again: what was recorded stays recorded once (deposits
are keyed on coin, txid and index), and what was missed (deposits paused, a
wallet issued late) is found. <block> may not be beyond the next block to read.
Writes one audit_log row (action chain.rescan).`,
    options: { from: { type: "string" } },
    changes: true,
    arguments: [0, 2],
    check(args, options) {
      if (args.length === 0) {
        if (options.from !== undefined) throw new OpsError("--from goes with chains rescan <coin>.");
        return { kind: "list" as const };
      }
      const [verb = "", coinText = ""] = args;
      if (verb !== "rescan") {
        throw new OpsError(
          `Unknown chains command "${verb}": chains, or chains rescan <coin> --from <block>.`,
        );
      }
      const coin = coinFor(coinText)?.ticker;
      if (!coin) {
        throw new OpsError(`Unknown coin "${coinText}": one of ${Object.keys(COINS).join(", ")}.`);
      }
      const from = options.from;
      if (from === undefined || !/^\d{1,16}$/u.test(from) || Number(from) > MAX_BLOCK) {
        throw new OpsError("chains rescan needs --from <block>, a block number (a whole number from 0).");
      }
      return { kind: "rescan" as const, coin, from: Number(from) };
    },
    async run(ctx, input) {
      if (input.kind === "list") return { kind: "list" as const, ...(await chainRows(ctx)) };
      const [{ rescan }, { networkOfCoin }] = await Promise.all([
        import("../../backend/domain/chain-watch.ts"),
        import("../../backend/chains/settings.ts"),
      ]);
      const network = networkOfCoin(input.coin, ctx.config.usdtNetwork);
      if (!network) {
        throw new OpsError(
          `Refused: no watcher reads ${input.coin} (only ETH, BNB and USDT on ERC-20 are watched). Nothing written.`,
        );
      }
      const result = await rescan(ctx.db, {
        network,
        from: input.from,
        actor: ctx.actor,
        actorRoles: ctx.actorRoles,
      });
      if (!result.ok) throw new OpsError(result.message);
      return { kind: "rescan" as const, network, ...result };
    },
    json(result) {
      if (result.kind === "rescan") {
        return { network: result.network, from: result.from, cursorBefore: result.before };
      }
      return {
        networks: result.networks.map((n) => ({
          ...n,
          lastErrorAt: n.lastErrorAt?.toISOString() ?? null,
          updatedAt: n.updatedAt?.toISOString() ?? null,
        })),
        orphaned: result.orphaned.map((d) => ({
          coin: d.coin,
          txid: d.txid,
          output: d.outputIndex,
          walletId: d.walletId,
          amount: d.amount,
          block: d.blockNumber,
          orphanedAt: d.orphanedAt.toISOString(),
        })),
        unwatched: result.unwatched,
      };
    },
    text(result) {
      if (result.kind === "rescan") {
        return `The ${result.network} watcher reads again from block ${result.from} (its cursor was at ${result.before}).`;
      }
      return listText(result);
    },
  }),
];

const shown = (n: number | null) => (n === null ? "-" : String(n));

function listText(rows: Rows): string {
  const parts: string[] = [];
  if (rows.networks.length === 0) {
    parts.push("No chain is watched (set CHAIN_RPC_ETH or CHAIN_RPC_BNB).");
  } else {
    parts.push(
      table(
        ["NETWORK", "COINS", "RPC", "HEAD", "CURSOR", "LAG", "LAST ERROR"],
        rows.networks.map((n) => [
          n.network,
          n.coins.join(" ") || "(not configured)",
          n.rpc ?? "-",
          shown(n.head),
          shown(n.cursor),
          shown(n.lag),
          n.lastError ? `${n.lastError} (${n.lastErrorAt?.toISOString() ?? ""})` : "",
        ]),
        new Set([3, 4, 5]),
      ),
    );
  }
  if (rows.orphaned.length > 0) {
    parts.push(
      `${plural(rows.orphaned.length, "credited deposit")} whose block was reorganised away (deposits of the coin are paused):\n` +
        table(
          ["COIN", "TXID:OUTPUT", "WALLET", "AMOUNT", "BLOCK", "SINCE"],
          rows.orphaned.map((d) => [
            d.coin,
            `${d.txid}:${d.outputIndex}`,
            d.walletId,
            d.amount,
            d.blockNumber === null ? "-" : String(d.blockNumber),
            d.orphanedAt.toISOString(),
          ]),
        ),
    );
  }
  if (rows.unwatched.length > 0) parts.push(rows.unwatched.map((s) => `${s}.`).join("\n"));
  return parts.join("\n\n");
}
