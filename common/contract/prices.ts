// The prices service's contract (spec section 7, "Prices"): its two routes,
// their answers, and what the service hands the web tier in-process.
//
//   GET {base}/crypto-prices/current   headers App_name, App_url
//   GET {base}/currencies
import { z } from "zod";
import { TICKERS } from "../coins.ts";

/** The prices service's routes, under the API's base path. */
export const PRICES_PATHS = {
  cryptoPrices: "/crypto-prices/current",
  currencies: "/currencies",
} as const;

const decimal = z.string().regex(/^-?\d+(?:\.\d+)?$/u);
const source = z.enum(["live", "snapshot"]);

export const cryptoPriceEntry = z.object({
  ticker: z.enum(TICKERS),
  last_price: decimal,
  todays_change_perc: decimal,
  currency: z.object({ name: z.string(), ticker: z.enum(TICKERS), short_name: z.string() }),
});

/**
 * An entry's optional `sparkline_7d` (not in the spec; record 023): the coin's USD
 * prices over the last 7 days, oldest first, as JSON numbers (display data, never
 * money). Checked apart from the entry: a bad sparkline is left out, the price kept.
 */
export const sparkline7d = z.array(z.number().positive().finite()).min(2).max(1000);

/** The prices answer; each entry is checked on its own (one that does not check out is dropped). */
export const cryptoPricesAnswer = z.object({
  cryptoPrices: z.array(z.unknown()).max(1000),
  asOf: z.string(),
  source,
});

const rate = z.object({ current_price: decimal });

export const currenciesAnswer = z.object({
  rates: z.object({ USD: rate, EUR: rate, GBP: rate, CAD: rate }),
  asOf: z.string(),
  source,
});

export type CryptoPriceEntry = z.infer<typeof cryptoPriceEntry>;
export type CurrenciesData = z.infer<typeof currenciesAnswer>;

/**
 * The prices service in-process: the answers its two routes would send, as
 * values (no Request, no JSON). The web tier checks them with the same schemas.
 */
export interface PricesServices {
  cryptoPrices(): Promise<unknown>;
  currencies(): Promise<unknown>;
}
