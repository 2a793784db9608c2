// The public data routes, for the paths under /api the accounts API does not own:
//
//   GET /api/currencies              multipliers from USD (ECB reference rates)
//   GET /api/crypto-prices/current   USD prices of the nine coins (CoinGecko);
//                                    needs the headers App_name (the platform
//                                    code) and App_url (non-empty, ≤ 2048 chars);
//                                    each entry may carry sparkline_7d, its 7-day
//                                    USD prices (record 023)
//
// Both always answer 200 while the upstreams are down: from the last good live
// value, else from the snapshots shipped next to this file ("source" says
// which, "asOf" says when the data is from). Answers are JSON with
// `cache-control: public, max-age=30`; failures are { success: false, message }
// with `cache-control: no-store`. A path not listed above answers undefined.
import { z } from "zod";
import { COINS, TICKERS, type Ticker } from "../../../common/coins.ts";
import { USDT_USD_PRICE } from "../../../common/contract/amounts.ts";
import { API_BASE } from "../../../common/contract/calls.ts";
import { PRICES_PATHS, sparkline7d, type PricesServices } from "../../../common/contract/prices.ts";
import { log } from "../../../common/log.ts";
import { refusal } from "../../../common/contract/refusals.ts";
import { json, refusalResponse } from "../api/http.ts";
import { COINGECKO_URL, fetchCoinGecko, type CoinQuote } from "./crypto-prices.ts";
import { createCachedSource, type CachedSource, type FeedSourceKind } from "./feed.ts";
import {
  CURRENCIES,
  ECB_DAILY_URL,
  ecbAsOf,
  fetchEcbDaily,
  type Currency,
  type EcbDaily,
} from "./fx-rates.ts";
import snapshotPricesJson from "./snapshot-prices.json" with { type: "json" };
import snapshotRatesJson from "./snapshot-rates.json" with { type: "json" };

export interface FeedRoutesOptions {
  /** Never touch the network: always the shipped snapshots. */
  offline: boolean;
  /** Default COINGECKO_URL. */
  coingeckoUrl?: string;
  /** Default ECB_DAILY_URL. */
  ecbUrl?: string;
  /** Default globalThis.fetch (looked up at call time). */
  fetch?: typeof fetch;
  /** The code App_name must equal. */
  platform: string;
  /** Per upstream request; default 3 000. */
  timeoutMs?: number;
  /** How long a live value is served from cache; default 60 000. */
  ttlMs?: number;
  /** How long an upstream is left alone after a failure; default 60 000. */
  retryAfterMs?: number;
  /** Default Date.now. */
  now?: () => number;
  /**
   * Told each live reference day the rates feed fetched (issue 28, record 050): the backend
   * keeps them (fx_rate_days) so statements of old days stay answerable. A failure is logged,
   * never the feed's.
   */
  recordRates?: (daily: EcbDaily) => Promise<void>;
}

/** The routes (a Request in, a Response or undefined for another path out), and their answers as values (in-process). */
export type FeedRoutes = ((request: Request) => Promise<Response | undefined>) & { services: PricesServices };

export const FEED_PATHS = {
  currencies: `${API_BASE}${PRICES_PATHS.currencies}`,
  cryptoPrices: `${API_BASE}${PRICES_PATHS.cryptoPrices}`,
} as const;

export const MAX_APP_URL_LENGTH = 2048;

const PUBLIC_CACHE = { "cache-control": "public, max-age=30" } as const;

const decimal = z.string().regex(/^-?\d+(?:\.\d+)?$/u);
const positiveDecimal = decimal.refine((value) => Number(value) > 0, "must be positive");

const pricesSnapshotSchema = z.object({
  asOf: z.iso.datetime(),
  prices: z.record(
    z.enum(TICKERS),
    z.object({ lastPrice: positiveDecimal, changePct: decimal, sparkline: sparkline7d.optional() }),
  ),
});

const ratesSnapshotSchema = z.object({
  asOf: z.iso.datetime(),
  rates: z.record(z.enum(CURRENCIES), positiveDecimal).refine((rates) => rates.USD === "1", "USD must be 1"),
});

export interface PricesData {
  quotes: ReadonlyMap<Ticker, CoinQuote>;
}

export interface RatesData {
  rates: Readonly<Record<Currency, string>>;
}

/** The shipped price snapshot, checked: every coin, positive prices, an ISO asOf. */
export function loadPricesSnapshot(raw: unknown = snapshotPricesJson): {
  asOf: string;
  prices: Readonly<Record<Ticker, CoinQuote>>;
} {
  return pricesSnapshotSchema.parse(raw);
}

/** The shipped rates snapshot, checked: the four currencies, USD "1", an ISO asOf. */
export function loadRatesSnapshot(raw: unknown = snapshotRatesJson): RatesData & { asOf: string } {
  const parsed = ratesSnapshotSchema.parse(raw);
  return { asOf: parsed.asOf, rates: parsed.rates };
}

const USDT_FILL: CoinQuote = { lastPrice: USDT_USD_PRICE, changePct: "0" };

export type MarketDataOptions = Omit<FeedRoutesOptions, "platform">;

/** The cached price and rate sources, shared by the public feed routes and the API (sends are priced here). */
export interface MarketData {
  prices: CachedSource<PricesData>;
  rates: CachedSource<RatesData>;
  /** A coin's quote in a prices answer; a coin it lacks: USDT is pegged at 1, any other from the snapshot. */
  quoteIn(data: PricesData, ticker: Ticker): CoinQuote;
  /** A coin's quote now: live, else last good, else the snapshot. */
  quote(ticker: Ticker): Promise<CoinQuote>;
}

export function createMarketData(opts: MarketDataOptions): MarketData {
  // Checked once, up front: a broken snapshot is a build error, not a runtime surprise.
  const { asOf: pricesAsOf, prices: snapshotQuotes } = loadPricesSnapshot();
  const pricesSnapshot: PricesData & { asOf: string } = {
    asOf: pricesAsOf,
    quotes: new Map(TICKERS.map((ticker) => [ticker, snapshotQuotes[ticker]])),
  };
  const ratesSnapshot = loadRatesSnapshot();
  const fetchImpl: typeof fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const common = {
    offline: opts.offline,
    timeoutMs: opts.timeoutMs,
    ttlMs: opts.ttlMs,
    retryAfterMs: opts.retryAfterMs,
    now: opts.now,
  };

  const prices = createCachedSource<PricesData>({
    ...common,
    name: "coingecko",
    snapshot: () => pricesSnapshot,
    fetchLive: async (signal) => ({
      quotes: await fetchCoinGecko({
        url: opts.coingeckoUrl ?? COINGECKO_URL,
        fetch: fetchImpl,
        signal,
        warn: (detail) => log.warn("price entry skipped", { feed: "coingecko", detail }),
      }),
    }),
  });

  const rates = createCachedSource<RatesData>({
    ...common,
    name: "ecb",
    snapshot: () => ratesSnapshot,
    fetchLive: async (signal) => {
      const daily = await fetchEcbDaily({ url: opts.ecbUrl ?? ECB_DAILY_URL, fetch: fetchImpl, signal });
      if (opts.recordRates) {
        await opts.recordRates(daily).catch((error: unknown) => {
          log.warn("could not record the day's rates", {
            day: daily.date,
            error: error instanceof Error ? error.name : typeof error,
          });
        });
      }
      return { rates: daily.rates, asOf: ecbAsOf(daily.date) };
    },
  });

  const quoteIn = (data: PricesData, ticker: Ticker): CoinQuote =>
    data.quotes.get(ticker) ?? (ticker === "USDT" ? USDT_FILL : snapshotQuotes[ticker]);
  return {
    prices,
    rates,
    quoteIn,
    quote: async (ticker) => quoteIn((await prices.get()).data, ticker),
  };
}

export function createFeedRoutes(opts: FeedRoutesOptions & { market?: MarketData }): FeedRoutes {
  if (!opts.platform) throw new Error("platform must not be empty");
  const platform = opts.platform;
  const market = opts.market ?? createMarketData(opts);
  const { prices, rates } = market;

  function knownApplication(request: Request): boolean {
    const name = request.headers.get("app_name");
    const url = request.headers.get("app_url");
    return name === platform && url !== null && url.trim() !== "" && url.length <= MAX_APP_URL_LENGTH;
  }

  /** GET /currencies's answer, as a value. */
  async function currenciesAnswer() {
    const answer = await rates.get();
    const body: {
      rates: Record<Currency, { current_price: string }>;
      asOf: string;
      source: FeedSourceKind;
    } = {
      rates: {
        USD: { current_price: answer.data.rates.USD },
        EUR: { current_price: answer.data.rates.EUR },
        GBP: { current_price: answer.data.rates.GBP },
        CAD: { current_price: answer.data.rates.CAD },
      },
      asOf: answer.asOf,
      source: answer.source,
    };
    return body;
  }

  /** GET /crypto-prices/current's answer, as a value. */
  async function cryptoPricesAnswer() {
    const answer = await prices.get();
    const entries = TICKERS.map((ticker) => {
      const quote = market.quoteIn(answer.data, ticker);
      return {
        ticker,
        last_price: quote.lastPrice,
        todays_change_perc: quote.changePct,
        currency: { name: COINS[ticker].name, ticker, short_name: ticker.toLowerCase() },
        // Not in the spec's answer: added when known (record 023).
        ...(quote.sparkline ? { sparkline_7d: quote.sparkline } : {}),
      };
    });
    return { cryptoPrices: entries, asOf: answer.asOf, source: answer.source };
  }

  const currencies = async () => json(200, await currenciesAnswer(), PUBLIC_CACHE);

  async function cryptoPrices(request: Request): Promise<Response> {
    if (!knownApplication(request)) return refusalResponse(refusal("unknown_application"));
    return json(200, await cryptoPricesAnswer(), { ...PUBLIC_CACHE, vary: "App_name, App_url" });
  }

  const routes = new Map<string, (request: Request) => Promise<Response>>([
    [FEED_PATHS.currencies, currencies],
    [FEED_PATHS.cryptoPrices, cryptoPrices],
  ]);

  async function feedRoutes(request: Request): Promise<Response | undefined> {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return undefined;
    }
    const route = routes.get(pathname);
    if (!route) return undefined;
    if (request.method !== "GET") {
      return refusalResponse(refusal("method_not_allowed"), { allow: "GET" });
    }
    try {
      return await route(request);
    } catch (error) {
      log.error("feed route error", {
        path: pathname,
        error: error instanceof Error ? error.name : typeof error,
      });
      return refusalResponse(refusal("internal"));
    }
  }
  return Object.assign(feedRoutes, {
    services: { cryptoPrices: cryptoPricesAnswer, currencies: currenciesAnswer },
  });
}
