// The web tier's second client: the prices service (server/backend/feeds/routes.ts,
// or any service with the same API). Only fetch: in-process it is handed the
// routes themselves, otherwise it talks HTTP to the configured base URL.
//
//   GET {baseUrl}/crypto-prices/current   headers App_name, App_url
//   GET {baseUrl}/currencies
//
// Every call resolves (never throws) to { ok: true, data } for a 2xx answer of
// the expected shape, else { ok: false, message } (status set when the service
// answered). Prices and rates stay decimal strings. A price entry that does not
// check out is dropped on its own; a missing USDT entry is added (price 1,
// change 0), as the spec asks of this client.
import { z } from "zod";
import { COINS, TICKERS } from "../common/coins";
import { USDT_USD_PRICE } from "../common/contract/amounts";
import { exchange } from "./lib/exchange.server";

export interface PricesClientOptions {
  /** e.g. "http://127.0.0.1:3000/api" */
  baseUrl: string;
  /** Sent as App_name: the product (platform) code. */
  appName: string;
  /** Sent as App_url: this app's own URL. */
  appUrl: string;
  /** In-process: the routes. Default: globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Default 5 000 ms. */
  timeoutMs?: number;
}

const decimal = z.string().regex(/^-?\d+(?:\.\d+)?$/u);
const source = z.enum(["live", "snapshot"]);

const cryptoPriceEntry = z.object({
  ticker: z.enum(TICKERS),
  last_price: decimal,
  todays_change_perc: decimal,
  currency: z.object({ name: z.string(), ticker: z.enum(TICKERS), short_name: z.string() }),
});

const cryptoPricesBody = z.object({
  cryptoPrices: z.array(z.unknown()).max(1000),
  asOf: z.string(),
  source,
});

const rate = z.object({ current_price: decimal });

const currenciesData = z.object({
  rates: z.object({ USD: rate, EUR: rate, GBP: rate, CAD: rate }),
  asOf: z.string(),
  source,
});

const rejectionBody = z.object({ message: z.string() });

export type CryptoPriceEntry = z.infer<typeof cryptoPriceEntry>;

export interface CryptoPricesData {
  cryptoPrices: CryptoPriceEntry[];
  /** ISO time the prices describe. */
  asOf: string;
  source: "live" | "snapshot";
}

export type CurrenciesData = z.infer<typeof currenciesData>;

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

export function createPricesClient(opts: PricesClientOptions): PricesClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/u, "");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const send = opts.fetch ?? ((request: Request) => globalThis.fetch(request));

  async function get<T>(path: string, withApp: boolean, schema: z.ZodType<T>): Promise<PricesResult<T>> {
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
    const data = schema.safeParse(parsed);
    if (!data.success) return failed("The price service answered with an unexpected body.", status);
    return { ok: true, data: data.data };
  }

  return {
    async currentPrices() {
      const result = await get("/crypto-prices/current", true, cryptoPricesBody);
      if (!result.ok) return result;
      const cryptoPrices: CryptoPriceEntry[] = [];
      for (const raw of result.data.cryptoPrices) {
        const entry = cryptoPriceEntry.safeParse(raw);
        if (entry.success) cryptoPrices.push(entry.data);
      }
      if (!cryptoPrices.some((entry) => entry.ticker === "USDT"))
        cryptoPrices.push({ ...USDT_ENTRY, currency: { ...USDT_ENTRY.currency } });
      return { ok: true, data: { cryptoPrices, asOf: result.data.asOf, source: result.data.source } };
    },
    currencies: () => get("/currencies", false, currenciesData),
  };
}
