// The spec's number, date and address formats (section 9), in one place.
import { compare, isPositive, parseDecimal, round, toFixed, type Decimal } from "../../common/decimal.ts";

export const CURRENCIES = ["USD", "EUR", "GBP", "CAD"] as const;
export type Currency = (typeof CURRENCIES)[number];

const SYMBOLS: Record<string, string> = { USD: "$", CAD: "$", EUR: "€", GBP: "£" };

/** USD '$', CAD '$', EUR '€', GBP '£'; an unknown currency falls back to '$'. */
export function currencySymbol(currency: string): string {
  return SYMBOLS[currency] ?? "$";
}

export function isCurrency(value: unknown): value is Currency {
  return typeof value === "string" && (CURRENCIES as readonly string[]).includes(value);
}

const THIN_SPACE = "\u2009";
const ONE_MILLION: Decimal = { units: 1_000_000n, scale: 0 };
const ONE_THOUSAND: Decimal = { units: 1_000n, scale: 0 };

function group(whole: string, separator: string): string {
  return whole.replace(/\B(?=(\d{3})+(?!\d))/gu, separator);
}

// Coin amounts are cut, never rounded up: a balance is never shown larger than it is.
function coinFixed(amount: Decimal | undefined, places: number): string {
  if (!amount || !isPositive(amount)) return "0";
  return toFixed(amount, places, { truncate: true });
}

/** The per-coin balance in the wallet list: 2 decimals when above 0. */
export function formatListBalance(amount: Decimal | undefined): string {
  return coinFixed(amount, 2);
}

/** The coin balance on the wallet page: 4 decimals when above 0. */
export function formatWalletBalance(amount: Decimal | undefined): string {
  return coinFixed(amount, 4);
}

/** Amounts in transaction lists: 3 decimals, or 0 decimals above 1000. */
export function formatListAmount(amount: Decimal | undefined): string {
  if (!amount) return "0";
  return compare(amount, ONE_THOUSAND) > 0 ? toFixed(amount, 0, { truncate: true }) : toFixed(amount, 3);
}

/** Fiat values: 2 decimals. */
export function formatFiat(value: Decimal | undefined, currency: string): string {
  return `${currencySymbol(currency)}${value ? toFixed(value, 2) : "0.00"}`;
}

/**
 * The total balance: 2 decimals, or a rounded integer with thin-space
 * thousands grouping above 1,000,000 (and always rounded on mobile).
 */
export function formatTotal(value: Decimal, currency: string, { mobile = false } = {}): string {
  const symbol = currencySymbol(currency);
  if (mobile || compare(value, ONE_MILLION) > 0) {
    const whole = toFixed(round(value, 0), 0);
    return `${symbol}${compare(value, ONE_MILLION) > 0 ? group(whole, THIN_SPACE) : whole}`;
  }
  return `${symbol}${toFixed(value, 2)}`;
}

/** A change of a fiat amount, 2 decimals (half away from zero) with its sign: "+$1.23", "-€0.50", "$0.00". */
export function formatFiatChange(value: Decimal, currency: string): string {
  const text = toFixed(value, 2);
  const sign = text.startsWith("-") ? "-" : text === "0.00" ? "" : "+";
  return `${sign}${currencySymbol(currency)}${text.replace(/^-/u, "")}`;
}

/** A 24-hour change with its sign, so colour is never the only cue: "+1.23%", "-0.50%". */
export function formatChange(percent: Decimal | undefined): string {
  if (!percent) return "0.00%";
  const text = toFixed(percent, 2);
  return `${percent.units > 0n && text !== "0.00" ? "+" : ""}${text}%`;
}

/** Dates as dd.mm.yy (UTC, so the server and the browser agree). */
export function formatDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const dd = String(date.getUTCDate()).padStart(2, "0");
  const mm = String(date.getUTCMonth() + 1).padStart(2, "0");
  const yy = String(date.getUTCFullYear() % 100).padStart(2, "0");
  return `${dd}.${mm}.${yy}`;
}

/** dd.mm.yy hh:mm (UTC), for "last updated" notes. */
export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const hh = String(date.getUTCHours()).padStart(2, "0");
  const mi = String(date.getUTCMinutes()).padStart(2, "0");
  return `${formatDate(iso)} ${hh}:${mi} UTC`;
}

/** Addresses longer than 12 characters: the first 6, an ellipsis, the last 6. */
export function shortenAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-6)}` : address;
}

export { parseDecimal };
