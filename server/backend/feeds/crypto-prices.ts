// Crypto prices from CoinGecko's keyless public API:
//   GET https://api.coingecko.com/api/v3/coins/markets?vs_currency=usd&ids=…&sparkline=true&price_change_percentage=24h
// which answers [{ "id": "bitcoin", "current_price": 67000.12,
// "price_change_percentage_24h": -1.23, "sparkline_in_7d": { "price": [… ≈168 hourly USD prices, oldest first] } }, …]
// (ids it does not know are simply absent; the change and the sparkline may be null or missing).
// The older /simple/price answer ({ "bitcoin": { "usd": …, "usd_24h_change": … } }) is still
// read, by its shape, for a COINGECKO_URL that points there (no sparklines then).
//
// Prices are display data: they are kept as the decimal strings the JSON
// numbers spell, never recomputed. Sparkline points are kept as numbers: they
// are only ever drawn, never used in a sum (record 023).
import { TICKERS, type Ticker } from "../../../common/coins.ts";
import { fetchText } from "./feed.ts";

/** CoinGecko's id of each coin. */
export const COINGECKO_IDS: Readonly<Record<Ticker, string>> = {
  BTC: "bitcoin",
  ETH: "ethereum",
  ADA: "cardano",
  BNB: "binancecoin",
  DOGE: "dogecoin",
  SOL: "solana",
  TRX: "tron",
  USDT: "tether",
  XRP: "ripple",
};

/** The /simple/price request (prices and 24 h changes only); read when COINGECKO_URL points there. */
export const COINGECKO_SIMPLE_URL =
  "https://api.coingecko.com/api/v3/simple/price?ids=" +
  TICKERS.map((ticker) => COINGECKO_IDS[ticker]).join(",") +
  "&vs_currencies=usd&include_24hr_change=true";

/** The default request: prices, 24 h changes and 7-day sparklines in one answer. */
export const COINGECKO_URL =
  "https://api.coingecko.com/api/v3/coins/markets?vs_currency=usd&ids=" +
  TICKERS.map((ticker) => COINGECKO_IDS[ticker]).join(",") +
  "&sparkline=true&price_change_percentage=24h";

/** More points than this is not a 7-day hourly series: the sparkline is dropped. */
export const MAX_SPARKLINE_POINTS = 1000;

const MAX_MARKET_ENTRIES = 1000;

export interface CoinQuote {
  /** USD price, a positive decimal string. */
  lastPrice: string;
  /** 24 h change in percent, a decimal string ("0" when the source has none). */
  changePct: string;
  /** USD prices over the last 7 days, oldest first (≥ 2 finite positive numbers); display data only. */
  sparkline?: readonly number[];
}

/**
 * A finite number as a plain decimal string: the shortest form that reads back
 * as the same number (what the JSON spelled), with exponent notation expanded
 * ("1.5e-7" → "0.00000015", "1e+21" → "1000000000000000000000").
 */
export function toDecimalString(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError("not a finite number");
  if (value === 0) return "0";
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/u.exec(text);
  if (!match) return text;
  const sign = match[1] ?? "";
  const whole = match[2] ?? "";
  const digits = whole + (match[3] ?? "");
  const point = whole.length + Number(match[4]);
  let plain: string;
  if (point <= 0) plain = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) plain = digits + "0".repeat(point - digits.length);
  else plain = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return sign + plain;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads a /simple/price answer. Pure and total: junk gives an empty map, never
 * an exception. A coin whose price is not a finite positive number is skipped
 * with a warning; a missing or non-numeric change becomes "0" (warned when it
 * is present but not a number).
 */
export function parseCoinGecko(
  json: unknown,
  warn: (message: string) => void = () => {},
): Map<Ticker, CoinQuote> {
  const quotes = new Map<Ticker, CoinQuote>();
  if (!isObject(json)) {
    warn("CoinGecko: the answer is not a JSON object");
    return quotes;
  }
  for (const ticker of TICKERS) {
    const id = COINGECKO_IDS[ticker];
    if (!Object.hasOwn(json, id)) {
      warn(`CoinGecko: no entry for ${ticker} (${id})`);
      continue;
    }
    const entry = json[id];
    if (!isObject(entry)) {
      warn(`CoinGecko: skipped ${ticker}: the entry is not an object`);
      continue;
    }
    const price = Object.hasOwn(entry, "usd") ? entry.usd : undefined;
    if (typeof price !== "number" || !Number.isFinite(price) || price <= 0) {
      warn(`CoinGecko: skipped ${ticker}: the price is not a finite positive number`);
      continue;
    }
    const change = Object.hasOwn(entry, "usd_24h_change") ? entry.usd_24h_change : undefined;
    let changePct = "0";
    if (typeof change === "number" && Number.isFinite(change)) changePct = toDecimalString(change);
    else if (change !== undefined && change !== null)
      warn(`CoinGecko: ${ticker}: the 24 h change is not a number; "0" used`);
    quotes.set(ticker, { lastPrice: toDecimalString(price), changePct });
  }
  return quotes;
}

const TICKER_BY_ID: ReadonlyMap<string, Ticker> = new Map(
  TICKERS.map((ticker) => [COINGECKO_IDS[ticker], ticker] as const),
);

/** A sparkline_in_7d value: its finite positive points (others skipped, with a warning); fewer than 2 is none. */
function readSparkline(
  ticker: Ticker,
  value: unknown,
  warn: (message: string) => void,
): number[] | undefined {
  if (value === undefined || value === null) return undefined;
  const prices = isObject(value) && Object.hasOwn(value, "price") ? value.price : undefined;
  if (!Array.isArray(prices)) {
    warn(`CoinGecko: ${ticker}: the sparkline is not a list of prices; none shown`);
    return undefined;
  }
  if (prices.length > MAX_SPARKLINE_POINTS) {
    warn(`CoinGecko: ${ticker}: the sparkline has ${prices.length} points; none shown`);
    return undefined;
  }
  const points = prices.filter(
    (point): point is number => typeof point === "number" && Number.isFinite(point) && point > 0,
  );
  if (points.length < prices.length)
    warn(
      `CoinGecko: ${ticker}: skipped ${prices.length - points.length} sparkline points that are not positive numbers`,
    );
  return points.length >= 2 ? points : undefined;
}

/**
 * Reads a /coins/markets answer. Pure and total like parseCoinGecko: junk gives
 * an empty map, never an exception. An entry for an id not ours is ignored; a
 * second entry for a coin is skipped with a warning; a coin whose price is not
 * a finite positive number is skipped with a warning; a missing or null change
 * becomes "0" (warned when it is present but not a number); a sparkline that
 * is missing or unusable is left out (the price is kept).
 */
export function parseCoinGeckoMarkets(
  json: unknown,
  warn: (message: string) => void = () => {},
): Map<Ticker, CoinQuote> {
  const quotes = new Map<Ticker, CoinQuote>();
  if (!Array.isArray(json)) {
    warn("CoinGecko: the markets answer is not a JSON array");
    return quotes;
  }
  const seen = new Set<Ticker>();
  // A markets answer for nine ids is nine entries; a longer list is read up to a bound.
  for (const entry of json.slice(0, MAX_MARKET_ENTRIES)) {
    if (!isObject(entry)) continue;
    const id = Object.hasOwn(entry, "id") ? entry.id : undefined;
    const ticker = typeof id === "string" ? TICKER_BY_ID.get(id) : undefined;
    if (!ticker) continue;
    if (seen.has(ticker)) {
      warn(`CoinGecko: skipped a second entry for ${ticker}`);
      continue;
    }
    seen.add(ticker);
    const price = Object.hasOwn(entry, "current_price") ? entry.current_price : undefined;
    if (typeof price !== "number" || !Number.isFinite(price) || price <= 0) {
      warn(`CoinGecko: skipped ${ticker}: the price is not a finite positive number`);
      continue;
    }
    const change = Object.hasOwn(entry, "price_change_percentage_24h")
      ? entry.price_change_percentage_24h
      : undefined;
    let changePct = "0";
    if (typeof change === "number" && Number.isFinite(change)) changePct = toDecimalString(change);
    else if (change !== undefined && change !== null)
      warn(`CoinGecko: ${ticker}: the 24 h change is not a number; "0" used`);
    const sparkline = readSparkline(
      ticker,
      Object.hasOwn(entry, "sparkline_in_7d") ? entry.sparkline_in_7d : undefined,
      warn,
    );
    const quote: CoinQuote = { lastPrice: toDecimalString(price), changePct };
    if (sparkline) quote.sparkline = sparkline;
    quotes.set(ticker, quote);
  }
  for (const ticker of TICKERS) {
    if (!seen.has(ticker)) warn(`CoinGecko: no entry for ${ticker} (${COINGECKO_IDS[ticker]})`);
  }
  return quotes;
}

/** Either answer, by its shape: a list is /coins/markets, an object /simple/price. */
export function parseCoinGeckoAnswer(
  json: unknown,
  warn?: (message: string) => void,
): Map<Ticker, CoinQuote> {
  return Array.isArray(json) ? parseCoinGeckoMarkets(json, warn) : parseCoinGecko(json, warn);
}

/**
 * Fetches and parses the prices. Throws (so the cached source falls back) on a
 * transport error, a non-2xx status, a non-JSON body or an answer without a
 * single usable price.
 */
export async function fetchCoinGecko(opts: {
  url: string;
  fetch: typeof fetch;
  signal: AbortSignal;
  warn?: (message: string) => void;
}): Promise<Map<Ticker, CoinQuote>> {
  const text = await fetchText(opts.fetch, opts.url, { signal: opts.signal, accept: "application/json" });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error("CoinGecko answered with a non-JSON body");
  }
  const quotes = parseCoinGeckoAnswer(json, opts.warn);
  if (quotes.size === 0) throw new Error("CoinGecko answered without a usable price");
  return quotes;
}
