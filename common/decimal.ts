// Exact decimal arithmetic for display figures (balance × price × rate).
// Amounts and prices arrive as decimal strings; nothing here goes through a
// float, so 18-decimal ETH balances and large totals stay exact until the
// final rounding for display.

export interface Decimal {
  /** The value is units / 10^scale. */
  units: bigint;
  scale: number;
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/u;

/** Parses "123", "-0.5", "1.2300"; anything else (exponents, junk) is undefined. */
export function parseDecimal(text: string | number | null | undefined): Decimal | undefined {
  if (text === null || text === undefined) return undefined;
  const raw = typeof text === "number" ? numberToPlain(text) : text.trim();
  if (raw === undefined) return undefined;
  const match = DECIMAL.exec(raw);
  if (!match) return undefined;
  const [, sign, whole = "0", fraction = ""] = match;
  const units = BigInt(whole + fraction) * (sign ? -1n : 1n);
  return { units, scale: fraction.length };
}

function numberToPlain(value: number): string | undefined {
  if (!Number.isFinite(value)) return undefined;
  // Up to 20 fraction digits covers what a JSON number can carry here.
  const fixed = value.toFixed(20);
  return fixed.replace(/\.?0+$/u, "") || "0";
}

export const ZERO: Decimal = { units: 0n, scale: 0 };

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

export function add(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(a, b);
  return { units: x + y, scale };
}

export function multiply(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

export function compare(a: Decimal, b: Decimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isPositive(a: Decimal): boolean {
  return a.units > 0n;
}

/** Rounds to `places` decimals: half away from zero, or toward zero with `truncate`. */
export function round(a: Decimal, places: number, { truncate = false } = {}): Decimal {
  if (a.scale <= places) return { units: a.units * 10n ** BigInt(places - a.scale), scale: places };
  const divisor = 10n ** BigInt(a.scale - places);
  const negative = a.units < 0n;
  const magnitude = negative ? -a.units : a.units;
  let quotient = magnitude / divisor;
  if (!truncate && (magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return { units: negative ? -quotient : quotient, scale: places };
}

/** Exactly `places` decimals, like Number#toFixed but exact ("-" only for non-zero values). */
export function toFixed(a: Decimal, places: number, opts: { truncate?: boolean } = {}): string {
  const rounded = round(a, places, opts);
  const negative = rounded.units < 0n;
  const digits = (negative ? -rounded.units : rounded.units).toString().padStart(places + 1, "0");
  const whole = digits.slice(0, digits.length - places);
  const fraction = places > 0 ? `.${digits.slice(digits.length - places)}` : "";
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

/**
 * a ÷ b to `places` decimals: half away from zero, or toward zero with
 * `truncate`. Division by zero is a programming error and throws.
 */
export function divide(a: Decimal, b: Decimal, places: number, { truncate = false } = {}): Decimal {
  if (b.units === 0n) throw new RangeError("Division by zero");
  // a/b = (a.units · 10^b.scale) / (b.units · 10^a.scale); scaled by 10^places.
  const numerator = a.units * 10n ** BigInt(b.scale + places);
  const denominator = b.units * 10n ** BigInt(a.scale);
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  let quotient = n / d;
  if (!truncate && (n % d) * 2n >= d) quotient += 1n;
  return { units: negative ? -quotient : quotient, scale: places };
}

/** The shortest plain text of a value: "1.5000" → "1.5", "2.000" → "2", "-0" → "0". */
export function toPlain(a: Decimal): string {
  const text = toFixed(a, a.scale);
  const trimmed = a.scale > 0 ? text.replace(/\.?0+$/u, "") : text;
  return trimmed === "-0" ? "0" : trimmed;
}
