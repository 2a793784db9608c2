import { multiply, parseDecimal } from "../../common/decimal.ts";
import { formatChange, formatFiat } from "../lib/format.ts";

/** A USD amount shown in the display currency (USD × multiplier), 2 decimals. */
export function fiat(usd: string | null | undefined, currency: string, multiplier: string): string {
  const value = parseDecimal(usd ?? undefined);
  const rate = parseDecimal(multiplier);
  if (!value || !rate) return formatFiat(undefined, currency);
  return formatFiat(multiply(value, rate), currency);
}

/** A 24-hour change with its sign and a colour class (the sign is the cue; colour helps). */
export function Change({ percent }: { percent: string | null }) {
  const value = parseDecimal(percent ?? undefined);
  const text = formatChange(value);
  const tone = text.startsWith("+") ? "up" : text.startsWith("-") ? "down" : "flat";
  return <span className={`change change-${tone}`}>{text}</span>;
}
