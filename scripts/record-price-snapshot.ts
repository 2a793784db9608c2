// Records the shipped price snapshot from a real CoinGecko answer:
//
//   npm run snapshot:prices            (writes server/backend/feeds/snapshot-prices.json)
//   COINGECKO_URL=… node scripts/record-price-snapshot.ts [out.json]
//
// The app falls back to that file when the price source cannot be reached
// (FEEDS_OFFLINE=true, no network, the tests). It must hold a real answer of
// one moment — prices, 24 h changes and 7-day lines — never made-up figures:
// run this on a machine that reaches api.coingecko.com, look at the diff and
// commit it (README, "Prices"). It refuses an answer that lacks a coin, a
// price or a 7-day line, so a partial snapshot is never written.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { format } from "prettier";
import { TICKERS, type Ticker } from "../common/coins.ts";
import { COINGECKO_URL, fetchCoinGecko } from "../server/backend/feeds/crypto-prices.ts";
import { loadPricesSnapshot } from "../server/backend/feeds/routes.ts";

export const SNAPSHOT_PATH = path.resolve(
  import.meta.dirname,
  "../server/backend/feeds/snapshot-prices.json",
);

interface SnapshotEntry {
  lastPrice: string;
  changePct: string;
  sparkline: number[];
}

export async function recordPriceSnapshot(opts: {
  url?: string;
  out?: string;
  fetch?: typeof fetch;
  now?: Date;
  timeoutMs?: number;
}): Promise<{ asOf: string; out: string }> {
  const warnings: string[] = [];
  const quotes = await fetchCoinGecko({
    url: opts.url ?? COINGECKO_URL,
    fetch: opts.fetch ?? globalThis.fetch,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    warn: (message) => warnings.push(message),
  });
  const missing = TICKERS.filter((ticker) => !quotes.get(ticker)?.sparkline);
  if (missing.length > 0) {
    throw new Error(
      `The answer lacks a price or a 7-day line for ${missing.join(", ")}; nothing written.` +
        (warnings.length > 0 ? `\n${warnings.join("\n")}` : ""),
    );
  }
  const prices = {} as Record<Ticker, SnapshotEntry>;
  for (const ticker of TICKERS) {
    const quote = quotes.get(ticker);
    if (!quote?.sparkline) throw new Error(`no quote for ${ticker}`);
    prices[ticker] = {
      lastPrice: quote.lastPrice,
      changePct: quote.changePct,
      sparkline: [...quote.sparkline],
    };
  }
  const snapshot = { asOf: (opts.now ?? new Date()).toISOString(), prices };
  // The same check the server makes when it starts: a file it would refuse is never written.
  loadPricesSnapshot(snapshot);
  const out = opts.out ?? SNAPSHOT_PATH;
  // Written as the repository's formatter writes JSON, so the committed file passes `npm run lint`.
  writeFileSync(out, await format(JSON.stringify(snapshot), { parser: "json", printWidth: 110 }));
  return { asOf: snapshot.asOf, out };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    const { asOf, out } = await recordPriceSnapshot({ url: process.env.COINGECKO_URL, out: process.argv[2] });
    console.log(`Recorded the prices of ${asOf} in ${out}. Look at the diff before committing it.`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
