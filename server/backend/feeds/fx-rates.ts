// Currency rates from the ECB's daily euro reference rates (no key):
//   GET https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml
// <gesmes:Envelope …><Cube><Cube time='2025-06-13'>
//   <Cube currency='USD' rate='1.1512'/> …   (1 EUR = 1.1512 USD)
// </Cube></Cube></gesmes:Envelope>
//
// The app wants multipliers from USD: USD "1", EUR = 1/USD, GBP = GBP/USD,
// CAD = CAD/USD, written with at most 10 significant digits.
import { toDecimalString } from "./crypto-prices.ts";
import { fetchText } from "./feed.ts";

export const ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml";

export const CURRENCIES = ["USD", "EUR", "GBP", "CAD"] as const;
export type Currency = (typeof CURRENCIES)[number];

export interface EcbDaily {
  /** The reference day, YYYY-MM-DD. */
  date: string;
  /** Multipliers from USD, positive decimal strings; USD is "1". */
  rates: Record<Currency, string>;
}

/** A positive number as a decimal string of at most `digits` significant digits, never in exponent form. */
export function toSignificant(value: number, digits = 10): string {
  if (!Number.isFinite(value)) throw new RangeError("not a finite number");
  return toDecimalString(Number(value.toPrecision(digits)));
}

/** The ISO time a reference day stands for (its start, UTC). */
export function ecbAsOf(date: string): string {
  return `${date}T00:00:00.000Z`;
}

const TAG = /<Cube\b([^>]*)>/gu;
const ATTRIBUTE = /([A-Za-z_][\w.:-]*)\s*=\s*(?:'([^']*)'|"([^"]*)")/gu;
const DATE = /^\d{4}-\d{2}-\d{2}$/u;
const RATE = /^\d+(?:\.\d+)?$/u;

function attributes(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of text.matchAll(ATTRIBUTE)) {
    const name = match[1];
    if (name !== undefined && !found.has(name)) found.set(name, match[2] ?? match[3] ?? "");
  }
  return found;
}

function isRealDate(date: string): boolean {
  if (!DATE.test(date)) return false;
  const parsed = new Date(`${date}T00:00:00.000Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date;
}

/**
 * Reads the daily file: the first <Cube time='…'> and the rates inside it
 * (both quote styles, any attribute order; comments ignored). Pure; throws a
 * clear error when the day or the USD, GBP or CAD rate is missing or invalid.
 */
export function parseEcbDaily(xml: string): EcbDaily {
  const text = xml.replace(/<!--[\s\S]*?-->/gu, "");
  let date: string | undefined;
  const eurRates = new Map<string, string>();
  for (const tag of text.matchAll(TAG)) {
    const attrs = attributes(tag[1] ?? "");
    const time = attrs.get("time");
    if (time !== undefined) {
      if (date !== undefined) break; // a second day: only the first one is read
      if (!isRealDate(time)) throw new Error(`ECB rates: invalid reference day '${time.slice(0, 20)}'`);
      date = time;
      continue;
    }
    const currency = attrs.get("currency");
    const rate = attrs.get("rate");
    if (date === undefined || currency === undefined || rate === undefined) continue;
    if (!eurRates.has(currency)) eurRates.set(currency, rate);
  }
  if (date === undefined) throw new Error("ECB rates: no <Cube time='YYYY-MM-DD'> element found");

  const missing = (["USD", "GBP", "CAD"] as const).filter((code) => !eurRates.has(code));
  if (missing.length > 0) throw new Error(`ECB rates for ${date}: missing ${missing.join(", ")}`);
  const number = (code: "USD" | "GBP" | "CAD"): number => {
    const raw = eurRates.get(code) ?? "";
    const value = Number(raw);
    if (!RATE.test(raw) || !Number.isFinite(value) || value <= 0) {
      throw new Error(`ECB rates for ${date}: invalid ${code} rate '${raw.slice(0, 20)}'`);
    }
    return value;
  };
  const usd = number("USD");
  const gbp = number("GBP");
  const cad = number("CAD");
  return {
    date,
    rates: {
      USD: "1",
      EUR: toSignificant(1 / usd),
      GBP: toSignificant(gbp / usd),
      CAD: toSignificant(cad / usd),
    },
  };
}

/** Fetches and parses the daily file; throws on any failure (so the cached source falls back). */
export async function fetchEcbDaily(opts: {
  url: string;
  fetch: typeof fetch;
  signal: AbortSignal;
}): Promise<EcbDaily> {
  const xml = await fetchText(opts.fetch, opts.url, {
    signal: opts.signal,
    accept: "application/xml, text/xml;q=0.9",
  });
  return parseEcbDaily(xml);
}

/**
 * Reads every day of an ECB file (the daily, 90-day or whole-history XML:
 * eurofxref-hist.xml), oldest or newest first as the file has them. A day
 * without the USD, GBP or CAD rate is refused with its date (issue 28: an
 * operator backfills the rates' history with it, record 050).
 */
export function parseEcbDays(xml: string): EcbDaily[] {
  const text = xml.replace(/<!--[\s\S]*?-->/gu, "");
  // Each <Cube time='…'> up to the next one: parsed as a file of that one day.
  const starts = [...text.matchAll(/<Cube\b[^>]*\btime\s*=/gu)].map((m) => m.index);
  if (starts.length === 0) throw new Error("ECB rates: no <Cube time='YYYY-MM-DD'> element found");
  return starts.map((start, i) => parseEcbDaily(text.slice(start, starts[i + 1] ?? text.length)));
}
