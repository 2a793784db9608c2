// The web tier's second client: the prices service (common/contract/prices.ts),
// with two transports like the backend's client: in-process, the service's
// answers as values (server/backend/feeds/routes.ts, no Request and no JSON);
// otherwise HTTP to the configured base URL (PRICES_URL).
//
// Every call resolves (never throws) to { ok: true, data } for an answer of
// the expected shape, else { ok: false, message } (status set when the service
// answered). Prices and rates stay decimal strings; an entry's optional 7-day
// sparkline (numbers, display only) comes back apart, in `sparklines`. A price entry that does not
// check out is dropped on its own; a missing USDT entry is added (price 1,
// change 0), as the spec asks of this client.
import { z } from "zod";
import { COINS, type Ticker } from "../common/coins.ts";
import { USDT_USD_PRICE } from "../common/contract/amounts.ts";
import {
  cryptoPriceEntry,
  cryptoPricesAnswer,
  currenciesAnswer,
  PRICES_PATHS,
  sparkline7d,
  type CryptoPriceEntry,
  type CurrenciesData,
  type PricesServices,
} from "../common/contract/prices.ts";
import { log } from "../common/log.ts";
import { exchange } from "./lib/exchange.server.ts";

export type { CryptoPriceEntry, CurrenciesData };

export interface PricesClientOptions {
  /** e.g. "http://127.0.0.1:3000/api" */
  baseUrl: string;
  /** Sent as App_name: the product (platform) code. */
  appName: string;
  /** Sent as App_url: this app's own URL. */
  appUrl: string;
  /** Default: globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Default 5 000 ms. */
  timeoutMs?: number;
}

const rejectionBody = z.object({ message: z.string() });

export interface CryptoPricesData {
  cryptoPrices: CryptoPriceEntry[];
  /** ISO time the prices describe. */
  asOf: string;
  source: "live" | "snapshot";
  /** Each coin's 7-day USD prices, oldest first, where the answer had a usable one (display data). */
  sparklines: Partial<Record<Ticker, readonly number[]>>;
}

export type PricesResult<T> = { ok: true; data: T } | { ok: false; message: string; status?: number };

export interface PricesClient {
  currentPrices(): Promise<PricesResult<CryptoPricesData>>;
  currencies(): Promise<PricesResult<CurrenciesData>>;
}

const DEFAULT_TIMEOUT_MS = 5_000;

const USDT_ENTRY: CryptoPriceEntry = {
  ticker: "USDT",
  last_price: USDT_USD_PRICE,
  todays_change_perc: "0",
  currency: { name: COINS.USDT.name, ticker: "USDT", short_name: "usdt" },
};

function failed(message: string, status?: number): { ok: false; message: string; status?: number } {
  return status === undefined ? { ok: false, message } : { ok: false, message, status };
}

/** A prices answer checked: the entries that check out, and USDT at its fixed price when missing. */
function pricesData(parsed: unknown): PricesResult<CryptoPricesData> {
  const result = cryptoPricesAnswer.safeParse(parsed);
  if (!result.success) return failed("The price service answered with an unexpected body.");
  const cryptoPrices: CryptoPriceEntry[] = [];
  const sparklines: Partial<Record<Ticker, readonly number[]>> = {};
  for (const raw of result.data.cryptoPrices) {
    const entry = cryptoPriceEntry.safeParse(raw);
    if (!entry.success) continue;
    cryptoPrices.push(entry.data);
    // The optional sparkline is checked on its own: a bad one is left out, the price kept.
    const points = sparkline7d.safeParse((raw as { sparkline_7d?: unknown }).sparkline_7d);
    if (points.success && !Object.hasOwn(sparklines, entry.data.ticker))
      sparklines[entry.data.ticker] = points.data;
  }
  if (!cryptoPrices.some((entry) => entry.ticker === "USDT"))
    cryptoPrices.push({ ...USDT_ENTRY, currency: { ...USDT_ENTRY.currency } });
  return { ok: true, data: { cryptoPrices, asOf: result.data.asOf, source: result.data.source, sparklines } };
}

function ratesData(parsed: unknown): PricesResult<CurrenciesData> {
  const result = currenciesAnswer.safeParse(parsed);
  return result.success
    ? { ok: true, data: result.data }
    : failed("The price service answered with an unexpected body.");
}

/** One in-process answer, checked as over HTTP; a fault of the service's is a 500, as the route would answer. */
async function answerInProcess<T>(read: () => Promise<unknown>, check: (parsed: unknown) => PricesResult<T>) {
  try {
    return check(await read());
  } catch (error) {
    log.error("feed route error", { error: error instanceof Error ? error.name : typeof error });
    return failed("The price service failed (status 500).", 500);
  }
}

/** The client over the prices service in this process: its answers as values, checked as over HTTP. */
export function createInProcessPricesClient(service: PricesServices): PricesClient {
  return {
    currentPrices: () => answerInProcess(() => service.cryptoPrices(), pricesData),
    currencies: () => answerInProcess(() => service.currencies(), ratesData),
  };
}

/** The client over HTTP. */
export function createPricesClient(opts: PricesClientOptions): PricesClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/u, "");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const send = opts.fetch ?? ((request: Request) => globalThis.fetch(request));

  async function get<T>(
    path: string,
    withApp: boolean,
    check: (parsed: unknown) => PricesResult<T>,
  ): Promise<PricesResult<T>> {
    const headers = new Headers({ accept: "application/json" });
    if (withApp) {
      headers.set("App_name", opts.appName);
      headers.set("App_url", opts.appUrl);
    }
    const answer = await exchange(send, `${baseUrl}${path}`, { method: "GET", headers }, timeoutMs);
    if (!answer.ok) {
      return failed(
        answer.reason === "timeout"
          ? "The price service did not answer in time."
          : `The price service could not be reached (${answer.name}).`,
      );
    }
    const { status, text } = answer;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return failed(`The price service answered with a non-JSON body (status ${status}).`, status);
    }
    if (status >= 400 && status < 500) {
      const rejection = rejectionBody.safeParse(parsed);
      return failed(
        rejection.success ? rejection.data.message : `The price service answered status ${status}.`,
        status,
      );
    }
    if (status < 200 || status >= 300) return failed(`The price service failed (status ${status}).`, status);
    const checked = check(parsed);
    return checked.ok ? checked : { ...checked, status };
  }

  return {
    currentPrices: () => get(PRICES_PATHS.cryptoPrices, true, pricesData),
    currencies: () => get(PRICES_PATHS.currencies, false, ratesData),
  };
}
