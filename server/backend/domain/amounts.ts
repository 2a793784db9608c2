// Amounts at the edges: decimal text ⇄ integers of a coin's base unit.
// Inside Coinkeep an amount is always a bigint of the base unit (satoshi,
// wei, …; COINS[ticker].decimals); it is never a float.
import { COINS, type Ticker } from "../../../common/coins.ts";

export type AmountProblem = "empty" | "syntax" | "too-large" | "too-many-decimals" | "zero";

export type ParseAmountResult =
  | { ok: true; units: bigint }
  /** reason: a sentence for people; problem: what is wrong, for code. */
  | { ok: false; reason: string; problem: AmountProblem };

/** The most integer digits accepted (10^30 of any coin is far beyond every supply). */
export const MAX_INTEGER_DIGITS = 30;

// Digits with at most one dot, at least one digit: "12", "12.5", "0.001", ".5", "5.".
const DECIMAL = /^(\d*)(?:\.(\d*))?$/u;

/**
 * Parses a plain positive decimal ("1.5", "0.00000001", ".5", "5.") into base
 * units of the coin. No sign, exponent, spaces, grouping or second dot. At most
 * the coin's decimals (or opts.maxDecimals when smaller) after the dot — trailing
 * zeros do not count, since they change nothing — and at most 30 integer digits.
 * Zero is refused.
 */
export function parseAmount(
  ticker: Ticker,
  text: string,
  opts: { maxDecimals?: number } = {},
): ParseAmountResult {
  const coinDecimals = COINS[ticker].decimals;
  const maxDecimals = Math.min(coinDecimals, opts.maxDecimals ?? coinDecimals);
  if (!Number.isInteger(maxDecimals) || maxDecimals < 0) throw new RangeError("maxDecimals must be ≥ 0");

  if (text === "") return { ok: false, reason: "Enter an amount.", problem: "empty" };
  // Long enough for every valid amount with generous trailing zeros; refuses absurd input before the regex.
  if (text.length > 200) return { ok: false, reason: "Amount is too long.", problem: "too-large" };
  const match = DECIMAL.exec(text);
  const intDigits = match?.[1] ?? "";
  const rawFraction = match?.[2] ?? "";
  if (!match || (intDigits === "" && rawFraction === "")) {
    return { ok: false, reason: "Amount must be a plain decimal number, like 0.5.", problem: "syntax" };
  }
  const significant = intDigits.replace(/^0+/u, "");
  if (significant.length > MAX_INTEGER_DIGITS) {
    return {
      ok: false,
      reason: `Amount is too large (at most ${MAX_INTEGER_DIGITS} digits before the dot).`,
      problem: "too-large",
    };
  }
  const fraction = rawFraction.replace(/0+$/u, "");
  if (fraction.length > maxDecimals) {
    return {
      ok: false,
      reason:
        maxDecimals === 0
          ? `${ticker} amounts take no decimals.`
          : `At most ${maxDecimals} decimal${maxDecimals === 1 ? "" : "s"} for ${ticker}.`,
      problem: "too-many-decimals",
    };
  }
  const units = BigInt(`${significant || "0"}${fraction.padEnd(coinDecimals, "0")}`);
  if (units === 0n) return { ok: false, reason: "Amount must be greater than zero.", problem: "zero" };
  return { ok: true, units };
}

/**
 * The exact decimal text of an amount of base units: no exponent, no grouping,
 * trailing zeros trimmed, "0" for zero ("-" in front of a negative amount).
 */
export function formatAmount(ticker: Ticker, units: bigint): string {
  const decimals = COINS[ticker].decimals;
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  const digits = magnitude.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/u, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/**
 * A USD value as stored beside a transfer: a plain non-negative decimal
 * ("1234.5", "0"), at most 30 integer and 18 fraction digits. Returns its
 * canonical text (leading zeros of the integer part and trailing zeros of the
 * fraction trimmed), or undefined when it is not one.
 */
export function normaliseUsd(text: string): string | undefined {
  const match = /^(\d{1,30})(?:\.(\d{1,18}))?$/u.exec(text);
  if (!match) return undefined;
  const whole = (match[1] ?? "").replace(/^0+(?=\d)/u, "");
  const fraction = (match[2] ?? "").replace(/0+$/u, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * The USD value of `units` of a coin at `price` (a plain decimal USD price),
 * rounded half up to the cent, as plain decimal text ("1234.5", "0.07", "0").
 */
export function usdValue(ticker: Ticker, units: bigint, price: string): string {
  const match = /^(\d{1,30})(?:\.(\d{1,30}))?$/u.exec(price);
  if (!match) throw new RangeError("price must be a plain non-negative decimal");
  const fraction = match[2] ?? "";
  const priceUnits = BigInt(`${match[1] ?? "0"}${fraction}`);
  // units / 10^decimals × priceUnits / 10^fraction.length, in cents.
  const scale = 10n ** BigInt(COINS[ticker].decimals + fraction.length);
  const numerator = units * priceUnits * 100n;
  const cents = (numerator + scale / 2n) / scale;
  const whole = cents / 100n;
  const rest = (cents % 100n).toString().padStart(2, "0").replace(/0+$/u, "");
  return rest ? `${whole}.${rest}` : whole.toString();
}
