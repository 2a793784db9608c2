// Crypto prices from CoinGecko's keyless public API:
//   GET https://api.coingecko.com/api/v3/simple/price?ids=…&vs_currencies=usd&include_24hr_change=true
// which answers { "bitcoin": { "usd": 67000.12, "usd_24h_change": -1.23 }, … }
// (ids it does not know are simply absent; usd_24h_change may be null).
//
// Prices are display data: they are kept as the decimal strings the JSON
// numbers spell, never recomputed.
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

export const COINGECKO_URL =
  "https://api.coingecko.com/api/v3/simple/price?ids=" +
  TICKERS.map((ticker) => COINGECKO_IDS[ticker]).join(",") +
  "&vs_currencies=usd&include_24hr_change=true";

export interface CoinQuote {
  /** USD price, a positive decimal string. */
  lastPrice: string;
  /** 24 h change in percent, a decimal string ("0" when the source has none). */
  changePct: string;
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
  const quotes = parseCoinGecko(json, opts.warn);
  if (quotes.size === 0) throw new Error("CoinGecko answered without a usable price");
  return quotes;
}
