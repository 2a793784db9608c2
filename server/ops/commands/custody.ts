// Custody (issue 16, record 039): the address pools, each coin's issuing policy, and how
// every coin issues at a glance. Automatic issuing itself is server/backend/domain/issuing.ts.
import path from "node:path";
import { TICKERS, type Ticker } from "../../../common/coins.ts";
import type { CatchUp, CoinIssuing, IssuingPolicy } from "../../backend/domain/issuing.ts";
import type { CommandContext, OpsCommand } from "./define.ts";
import { audit, defineCommand, OpsError, plural, readTextFile, table } from "./define.ts";

/** A pool file's size limit: far more than any sensible batch, small enough to check in one go. */
const MAX_POOL_FILE_BYTES = 4 * 1024 * 1024;
const MAX_POOL_LINES = 100_000;
/** At most this many bad lines are named in a refusal (the count says how many there were). */
const MAX_NAMED_LINES = 50;
const MAX_REASON = 500;

function parseCoin(text: string): Ticker {
  const upper = text.toUpperCase();
  const found = TICKERS.find((t) => t === upper);
  if (!found) throw new OpsError(`Unknown coin "${text}": one of ${TICKERS.join(", ")}.`);
  return found;
}

export function policyOf(ctx: CommandContext): IssuingPolicy {
  return {
    keys: ctx.config.accountKeys,
    usdtNetwork: ctx.config.usdtNetwork,
    poolLowWater: ctx.config.poolLowWater,
  };
}

/** What a catch-up did, in words: "" when nothing was waiting. */
export function caughtUpText(coin: Ticker, caught: CatchUp): string {
  const parts: string[] = [];
  if (caught.issued.length > 0) {
    parts.push(`Issued ${plural(caught.issued.length, `waiting ${coin} request`)} at once.`);
  }
  if (caught.waiting > 0) {
    parts.push(`${plural(caught.waiting, `${coin} request`)} still waiting (see requests).`);
  }
  return parts.join(" ");
}

function describeIssuing(coin: Ticker, how: CoinIssuing, lowWater: number): string {
  switch (how.mode) {
    case "derived":
      return `derived from key ${how.fingerprint}, next index ${how.nextIndex}`;
    case "pool":
      return `from the pool, ${how.free} free${how.free < lowWater ? " (low)" : ""}`;
    case "manual":
      return `manual (set by ${how.by} on ${how.since.toISOString()})`;
    case "none":
      return coin === "SOL"
        ? "nothing to issue from: the pool is empty (pool add SOL <file>)"
        : "nothing to issue from: no account key, no pool";
  }
}

/** The pool file's lines: [line number, address text] without blanks and # comments. */
function poolLines(text: string): [number, string][] {
  const out: [number, string][] = [];
  const lines = text.split(/\r?\n/u);
  for (let i = 0; i < lines.length; i++) {
    const content = (lines[i] ?? "").replace(/#.*$/u, "").trim();
    if (content !== "") out.push([i + 1, content]);
  }
  return out;
}

interface PoolLevel {
  coin: Ticker;
  free: number;
  taken: number;
  low: boolean;
}

async function poolLevels(ctx: CommandContext): Promise<PoolLevel[]> {
  const [{ sql, count }, { addressPool }] = await Promise.all([
    import("drizzle-orm"),
    import("../../backend/db/schema.ts"),
  ]);
  const rows = await ctx.db
    .select({
      coin: addressPool.coin,
      free: sql<number>`count(*) FILTER (WHERE ${addressPool.walletId} IS NULL)::int`,
      all: count(),
    })
    .from(addressPool)
    .groupBy(addressPool.coin);
  const byCoin = new Map(rows.map((r) => [r.coin, r]));
  // SOL always (its only source); other coins once they have a pool.
  return TICKERS.filter((t) => t === "SOL" || byCoin.has(t)).map((coin) => {
    const row = byCoin.get(coin);
    const free = Number(row?.free ?? 0);
    const taken = Number(row?.all ?? 0) - free;
    return { coin, free, taken, low: free < ctx.config.poolLowWater };
  });
}

export const CUSTODY_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "pool",
    summary: [
      ["pool", "address pools: free and taken per coin"],
      ["pool add <coin> <file>", "load a pool of deposit addresses (SOL: public keys)"],
    ],
    usage: `Usage: node server/ops/cli.ts pool [--json]
       node server/ops/cli.ts pool add <coin> <file> [--as <name>] [--json]

pool lists each coin's address pool (SOL always): free and taken addresses, and
"low" when fewer than POOL_LOW_WATER (default 20) are free.

pool add loads <file>: one address a line (for SOL the base58 public key of a
keypair generated offline), blank lines and # comments allowed. Every line is
checked for the coin (USDT: the network of USDT_NETWORK); a SOL key must be a
point on the ed25519 curve (a program-derived address is not, and nobody could
spend from it). A line repeating another, or an address already in the pool or
already a wallet's, is refused. The whole file is added in one transaction, or
nothing is, and every bad line is named. Requests of the coin waiting for an
address are then issued from the pool at once. Writes one audit_log row (action
pool.add), and one per wallet issued (wallet.issue-pool, actor system).`,
    changes: true,
    arguments: [0, 3],
    check(args) {
      if (args.length === 0) return { kind: "list" as const };
      const [verb = "", coinText = "", file = ""] = args;
      if (verb !== "add")
        throw new OpsError(`Unknown pool command "${verb}": pool, or pool add <coin> <file>.`);
      return { kind: "add" as const, coin: parseCoin(coinText), file };
    },
    // Through the ops socket the server reads the file: the command line makes it absolute.
    files: [2],
    async run(ctx, input) {
      if (input.kind === "list") return { kind: "list" as const, levels: await poolLevels(ctx) };
      return { kind: "add" as const, ...(await addToPool(ctx, input.coin, input.file)) };
    },
    json: (result) =>
      result.kind === "list"
        ? result.levels
        : {
            coin: result.coin,
            added: result.added,
            free: result.free,
            taken: result.taken,
            low: result.low,
            issued: result.caught.issued,
            waiting: result.caught.waiting,
          },
    text(result) {
      if (result.kind === "list") {
        const body = table(
          ["COIN", "FREE", "TAKEN", "LEVEL"],
          result.levels.map((l) => [l.coin, String(l.free), String(l.taken), l.low ? "low" : "ok"]),
          new Set([1, 2]),
        );
        const low = result.levels.filter((l) => l.low).map((l) => l.coin);
        return low.length === 0
          ? body
          : `${body}\n\nLow (fewer than POOL_LOW_WATER free): ${low.join(", ")}. Load more with: pool add <coin> <file>`;
      }
      const lines = [
        `Added ${result.added} ${result.coin} ${result.added === 1 ? "address" : "addresses"} to the pool. Free now: ${result.free} (taken: ${result.taken}).`,
      ];
      const caught = caughtUpText(result.coin, result.caught);
      if (caught) lines.push(caught);
      if (result.low) lines.push(`Warning: the ${result.coin} address pool is low: ${result.free} left.`);
      return lines.join("\n");
    },
  }),

  defineCommand({
    name: "issuing",
    summary: [
      ["issuing <coin> auto|manual", "issue a coin's addresses automatically, or by hand"],
      ['    --reason "…"', "why (for the audit log)"],
    ],
    usage: `Usage: node server/ops/cli.ts issuing <coin> auto|manual --reason "…" [--as <name>] [--json]

Sets how a coin's requested wallets get their address. auto (the default): at
once, derived from the coin's account key (ACCOUNT_KEY_<COIN>) or taken from its
pool; requests already waiting are issued now. manual: every request waits for
issue-address. An issuing pause (ops pause) stops both. Writes one audit_log row
(action custody.issuing, with before and after and the reason).`,
    options: { reason: { type: "string" } },
    changes: true,
    arguments: 2,
    check(args, options) {
      const [coinText = "", mode = ""] = args;
      const coin = parseCoin(coinText);
      if (mode !== "auto" && mode !== "manual") {
        throw new OpsError(`Say auto or manual, not "${mode}".`);
      }
      const reason = options.reason?.trim() ?? "";
      if (reason === "" || reason.length > MAX_REASON) {
        throw new OpsError(`Say why with --reason "…" (1 to ${MAX_REASON} characters).`);
      }
      return { coin, mode: mode as "auto" | "manual", reason };
    },
    async run(ctx, { coin, mode, reason }) {
      const [{ eq }, { custodySettings }, issuing] = await Promise.all([
        import("drizzle-orm"),
        import("../../backend/db/schema.ts"),
        import("../../backend/domain/issuing.ts"),
      ]);
      const policy = policyOf(ctx);
      return ctx.db.transaction(async (tx) => {
        const [row] = await tx
          .select()
          .from(custodySettings)
          .where(eq(custodySettings.coin, coin))
          .for("update");
        const before = row?.issuing === "manual" ? "manual" : "auto";
        if (before === mode) return { coin, mode, changed: false, caught: undefined };
        await tx
          .insert(custodySettings)
          .values({ coin, issuing: mode, updatedBy: ctx.actor })
          .onConflictDoUpdate({
            target: custodySettings.coin,
            set: { issuing: mode, updatedBy: ctx.actor, updatedAt: new Date() },
          });
        await audit(ctx, tx, "custody.issuing", coin, {
          coin,
          reason,
          before: { issuing: before },
          after: { issuing: mode },
        });
        const caught =
          mode === "auto" ? await issuing.issueWaiting(tx, coin, policy, "issuing auto") : undefined;
        const how = await issuing.coinIssuing(tx, coin, policy);
        return { coin, mode, changed: true, caught, how, lowWater: policy.poolLowWater };
      });
    },
    json: (r) => ({
      coin: r.coin,
      issuing: r.mode,
      changed: r.changed,
      ...(r.caught ? { issued: r.caught.issued, waiting: r.caught.waiting } : {}),
    }),
    text(r) {
      if (!r.changed) return `${r.coin} issuing is already ${r.mode}. Nothing changed.`;
      if (r.mode === "manual") {
        return `${r.coin} issuing is now manual (was auto): new ${r.coin} wallet requests wait for issue-address.`;
      }
      const lines = [
        `${r.coin} issuing is now auto (was manual): ${r.how ? describeIssuing(r.coin, r.how, r.lowWater) : ""}.`,
      ];
      if (r.caught) {
        const caught = caughtUpText(r.coin, r.caught);
        if (caught) lines.push(caught);
      }
      return lines.join("\n");
    },
  }),

  defineCommand({
    name: "custody",
    summary: [["custody", "how each coin issues addresses: key, pool, manual, paused"]],
    usage: `Usage: node server/ops/cli.ts custody [--json]

Shows, per coin, how a requested wallet gets its address now: derived from the
configured account key (its fingerprint and the next index), from the address
pool (free addresses; "low" under POOL_LOW_WATER), manual (issuing set to
manual), or nothing to issue from; an issuing pause of the coin, and how many
requests are waiting for an address.`,
    changes: false,
    arguments: 0,
    check: () => undefined,
    async run(ctx) {
      const [{ and, count, eq, isNull }, { wallets }, issuing, controls] = await Promise.all([
        import("drizzle-orm"),
        import("../../backend/db/schema.ts"),
        import("../../backend/domain/issuing.ts"),
        import("../../backend/domain/controls.ts"),
      ]);
      const policy = policyOf(ctx);
      const rows = [];
      for (const coin of TICKERS) {
        const how = await issuing.coinIssuing(ctx.db, coin, policy);
        const pause = await controls.activePause(ctx.db, "issuing", { coin });
        const [waiting] = await ctx.db
          .select({ n: count() })
          .from(wallets)
          .where(and(eq(wallets.coin, coin), isNull(wallets.address)));
        const free =
          how.mode === "derived" || how.mode === "manual"
            ? await issuing.freePoolCount(ctx.db, coin)
            : undefined;
        rows.push({
          coin,
          how,
          pause,
          waiting: Number(waiting?.n ?? 0),
          poolFree: free,
          lowWater: policy.poolLowWater,
        });
      }
      return rows;
    },
    json: (rows) =>
      rows.map((r) => ({
        coin: r.coin,
        mode: r.how.mode,
        ...(r.how.mode === "derived"
          ? { keyFingerprint: r.how.fingerprint, nextIndex: r.how.nextIndex }
          : {}),
        ...(r.how.mode === "pool"
          ? { poolFree: r.how.free }
          : r.poolFree === undefined
            ? {}
            : { poolFree: r.poolFree }),
        ...(r.how.mode === "manual" ? { setBy: r.how.by, since: r.how.since.toISOString() } : {}),
        paused: r.pause
          ? { reason: r.pause.reason, actor: r.pause.actor, since: r.pause.createdAt.toISOString() }
          : null,
        waiting: r.waiting,
      })),
    text(rows) {
      return table(
        ["COIN", "ISSUES", "PAUSED", "WAITING"],
        rows.map((r) => [
          r.coin,
          describeIssuing(r.coin, r.how, r.lowWater),
          r.pause ? `yes: ${r.pause.reason}` : "no",
          String(r.waiting),
        ]),
        new Set([3]),
      );
    },
  }),
];

async function addToPool(ctx: CommandContext, coin: Ticker, file: string) {
  const [{ and, eq, inArray }, { addressPool, wallets }, addresses, issuing, { ed25519 }, { base58 }] =
    await Promise.all([
      import("drizzle-orm"),
      import("../../backend/db/schema.ts"),
      import("../../../common/addresses.ts"),
      import("../../backend/domain/issuing.ts"),
      import("@noble/curves/ed25519.js"),
      import("@scure/base"),
    ]);
  const text = await readTextFile(file, MAX_POOL_FILE_BYTES, (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    return `Cannot read ${file}${code ? ` (${code})` : ""}.`;
  });
  const lines = poolLines(text);
  if (lines.length === 0) throw new OpsError(`${file} holds no addresses. Nothing added.`);
  if (lines.length > MAX_POOL_LINES)
    throw new OpsError(`${file} has more than ${MAX_POOL_LINES} addresses; split it.`);

  const bad: string[] = [];
  const seen = new Map<string, number>();
  const good: { line: number; address: string }[] = [];
  for (const [line, raw] of lines) {
    const checked = addresses.validateAddress(coin, raw, { usdtNetwork: ctx.config.usdtNetwork });
    if (!checked.ok) {
      bad.push(`line ${line}: ${checked.reason.replace(/\.$/u, "")}`);
      continue;
    }
    if (coin === "SOL") {
      let onCurve = false;
      try {
        ed25519.Point.fromBytes(base58.decode(checked.address));
        onCurve = true;
      } catch {
        onCurve = false;
      }
      if (!onCurve) {
        bad.push(`line ${line}: not a point on the ed25519 curve (a program-derived address has no key)`);
        continue;
      }
    }
    const earlier = seen.get(checked.address);
    if (earlier !== undefined) {
      bad.push(`line ${line}: the same address as line ${earlier}`);
      continue;
    }
    seen.set(checked.address, line);
    good.push({ line, address: checked.address });
  }

  const policy = policyOf(ctx);
  return ctx.db.transaction(async (tx) => {
    const list = good.map((g) => g.address);
    const inPool = new Set<string>();
    const inWallets = new Set<string>();
    for (let i = 0; i < list.length; i += 1000) {
      const chunk = list.slice(i, i + 1000);
      for (const r of await tx
        .select({ address: addressPool.address })
        .from(addressPool)
        .where(and(eq(addressPool.coin, coin), inArray(addressPool.address, chunk)))) {
        inPool.add(r.address);
      }
      for (const r of await tx
        .select({ address: wallets.address })
        .from(wallets)
        .where(and(eq(wallets.coin, coin), inArray(wallets.address, chunk)))) {
        if (r.address !== null) inWallets.add(r.address);
      }
    }
    for (const g of good) {
      if (inWallets.has(g.address)) bad.push(`line ${g.line}: already the address of a ${coin} wallet`);
      else if (inPool.has(g.address)) bad.push(`line ${g.line}: already in the ${coin} pool`);
    }
    if (bad.length > 0) {
      const byLine = bad.toSorted((a, b) => lineNumber(a) - lineNumber(b));
      const named = byLine.slice(0, MAX_NAMED_LINES).join("; ");
      const more = byLine.length > MAX_NAMED_LINES ? `; and ${byLine.length - MAX_NAMED_LINES} more` : "";
      throw new OpsError(
        `Nothing added: ${plural(bad.length, "bad line")} in ${path.basename(file)} — ${named}${more}.`,
      );
    }
    for (let i = 0; i < list.length; i += 1000) {
      await tx
        .insert(addressPool)
        .values(list.slice(i, i + 1000).map((address) => ({ coin, address, addedBy: ctx.actor })));
    }
    await audit(ctx, tx, "pool.add", coin, {
      coin,
      added: list.length,
      file: path.basename(file),
      first: list[0],
      last: list.at(-1),
    });
    const caught = await issuing.issueWaiting(tx, coin, policy, "pool add");
    const [level] = (await poolLevelsIn(tx, coin)) ?? [];
    const free = level?.free ?? 0;
    return {
      coin,
      added: list.length,
      free,
      taken: level?.taken ?? 0,
      low: free < policy.poolLowWater,
      caught,
    };
  });
}

function lineNumber(message: string): number {
  return Number(/^line (\d+)/u.exec(message)?.[1] ?? 0);
}

async function poolLevelsIn(db: CommandContext["db"], coin: Ticker) {
  const [{ and, count, eq, isNull }, { addressPool }] = await Promise.all([
    import("drizzle-orm"),
    import("../../backend/db/schema.ts"),
  ]);
  const [all] = await db.select({ n: count() }).from(addressPool).where(eq(addressPool.coin, coin));
  const [free] = await db
    .select({ n: count() })
    .from(addressPool)
    .where(and(eq(addressPool.coin, coin), isNull(addressPool.walletId)));
  const freeN = Number(free?.n ?? 0);
  return [{ free: freeN, taken: Number(all?.n ?? 0) - freeN }];
}
