// The amounts of the contract (spec sections 5 and 9), written once for both
// tiers: how many decimals a send takes, what a typed amount may look like,
// and the fixed USDT price.
import type { Ticker } from "../coins.ts";

/** Spec section 9: at most 4 decimals when sending (the form, and call 6's `amount`). */
export const SEND_DECIMALS = 4;
/** Fiat amounts are shown and sent with 2 decimals (spec section 9). */
export const FIAT_DECIMALS = 2;

/** What an amount input may hold while typing: digits, one dot, at most SEND_DECIMALS decimals ('.' and '0.' too). */
export const AMOUNT_TYPING = new RegExp(`^\\d*\\.?\\d{0,${SEND_DECIMALS}}$`, "u");
/** A finished amount: the same, with at least one digit ("0.5", ".5", "5."). */
export const AMOUNT_COMPLETE = new RegExp(
  `^(?:\\d+\\.?\\d{0,${SEND_DECIMALS}}|\\.\\d{1,${SEND_DECIMALS}})$`,
  "u",
);

/** The form's text for an amount that is not digits with one dot and at most SEND_DECIMALS decimals. */
export const AMOUNT_FORMAT = `Use digits and one dot, with at most ${SEND_DECIMALS} decimals (for example 0.5).`;

/** Spec sections 5 and 9: USDT is worth exactly 1 USD, whatever a feed says. */
export const USDT_USD_PRICE = "1";

/** A coin's fixed USD price (USDT), or null when its price comes from the feed. */
export function fixedUsdPrice(ticker: Ticker | string): string | null {
  return ticker === "USDT" ? USDT_USD_PRICE : null;
}
