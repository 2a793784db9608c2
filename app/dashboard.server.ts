// The dashboard's two figures on /home (issue 15): the 24-hour change of the
// total, and a 7-day price sparkline per coin. Pure functions, server only.
//
// The change of the total is money on screen: exact decimals (common/decimal),
// with every division's rounding stated (record 023). A sparkline is drawing
// data: floats are fine there, it is never added to anything.
import { add, divide, multiply, parseDecimal, toFixed, ZERO, type Decimal } from "../common/decimal.ts";
import { SPARKLINE_HEIGHT, SPARKLINE_WIDTH, type Sparkline } from "./components/sparkline.tsx";

export type { Sparkline };

/** Decimal places a coin's value 24 h ago is rounded to (USD, half away from zero): far below a cent. */
export const PAST_VALUE_PLACES = 12;

export interface Holding {
  /** Exact decimal strings, as in the wallet view's rows. */
  balance: string;
  price: string | null;
  /** The coin's 24 h price change in percent, or null when unknown. */
  change: string | null;
}

export interface TotalChange {
  /** USD now minus USD 24 h ago, a plain decimal string (≤ PAST_VALUE_PLACES decimals). */
  usd: string;
  /** Percent of the value 24 h ago, 2 decimals, half away from zero ("1.23", "-0.50", "0.00"). */
  percent: string;
}

const HUNDRED: Decimal = { units: 100n, scale: 0 };

function negate(a: Decimal): Decimal {
  return { units: -a.units, scale: a.scale };
}

function plain(value: Decimal): string {
  const text = toFixed(value, value.scale);
  const trimmed = value.scale > 0 ? text.replace(/\.?0+$/u, "") : text;
  return trimmed === "-0" ? "0" : trimmed;
}

/**
 * The total's change over 24 h: Σ balance × price now against
 * Σ balance × price ÷ (1 + change/100) — each coin's past value is
 * balance × price × 100 ÷ (100 + change), rounded half away from zero to
 * PAST_VALUE_PLACES decimals of a dollar; the percent is the difference × 100
 * ÷ the past total, rounded half away from zero to 2 decimals. A coin without
 * a usable change (none, not a number, or ≤ -100 %, which no price can have
 * moved by) counts as unchanged. Null when nothing was held 24 h ago.
 */
export function totalChange24h(holdings: readonly Holding[]): TotalChange | null {
  let now = ZERO;
  let past = ZERO;
  for (const holding of holdings) {
    const balance = parseDecimal(holding.balance);
    const price = parseDecimal(holding.price);
    if (!balance || !price) continue;
    const value = multiply(balance, price);
    now = add(now, value);
    const change = parseDecimal(holding.change);
    const base = change ? add(HUNDRED, change) : undefined;
    past = add(
      past,
      base && base.units > 0n ? divide(multiply(value, HUNDRED), base, PAST_VALUE_PLACES) : value,
    );
  }
  if (past.units <= 0n) return null;
  const difference = add(now, negate(past));
  return {
    usd: plain(difference),
    percent: toFixed(divide(multiply(difference, HUNDRED), past, 2), 2),
  };
}

const coordinate = (value: number) => String(Math.round(value * 10) / 10);

/**
 * The polyline of a series as an SVG path ("M x,y x,y …", implicit line-tos),
 * scaled into width × height with pad pixels above and below: the lowest point
 * at the bottom, the highest at the top, the first at x 0, the last at x width.
 * A vertical span under minSpanRatio of the series' middle value is widened to
 * it, so a stablecoin's 0.1 % wobble stays a near-flat line rather than a
 * full-height zigzag; a flat series is a line across the middle. More points
 * than maxPoints are sampled evenly (first and last kept). One point: a flat
 * line; none: "".
 */
export function sparklinePath(
  points: readonly number[],
  {
    width = SPARKLINE_WIDTH,
    height = SPARKLINE_HEIGHT,
    pad = 2,
    maxPoints = SPARKLINE_WIDTH,
    minSpanRatio = 0.01,
  } = {},
): string {
  const finite = points.filter((point) => Number.isFinite(point));
  if (finite.length === 0) return "";
  const middle = coordinate(height / 2);
  if (finite.length === 1) return `M0,${middle} ${coordinate(width)},${middle}`;
  const count = Math.max(2, Math.min(finite.length, Math.floor(maxPoints)));
  const sampled = Array.from(
    { length: count },
    (_, i) => finite[Math.round((i * (finite.length - 1)) / (count - 1))] ?? 0,
  );
  const low = Math.min(...sampled);
  const high = Math.max(...sampled);
  const centre = (low + high) / 2;
  const span = Math.max(high - low, Math.abs(centre) * minSpanRatio);
  const inner = height - 2 * pad;
  const y = (value: number) =>
    span === 0 ? height / 2 : pad + inner * (1 - (value - (centre - span / 2)) / span);
  const x = (i: number) => (i * width) / (count - 1);
  return `M${sampled.map((value, i) => `${coordinate(x(i))},${coordinate(y(value))}`).join(" ")}`;
}

/** The series' change from its first to its last point, for the sparkline's accessible name. */
export function sparklineOf(ticker: string, points: readonly number[]): Sparkline | null {
  const first = points[0];
  const last = points.at(-1);
  if (
    points.length < 2 ||
    first === undefined ||
    last === undefined ||
    !(first > 0) ||
    !Number.isFinite(last)
  )
    return null;
  const percent = (((last - first) / first) * 100).toFixed(2);
  const tone = percent === "0.00" || percent === "-0.00" ? "flat" : last > first ? "up" : "down";
  const trend = tone === "flat" ? "unchanged" : `${tone} ${percent.replace(/^-/u, "")}%`;
  return { d: sparklinePath(points), label: `${ticker} price, last 7 days: ${trend}`, tone };
}
