import { parseDecimal, type Decimal } from "../../common/decimal.ts";

/** The decimal the text spells; throws on anything else (a test's own typo). */
export function d(text: string): Decimal {
  const value = parseDecimal(text);
  if (!value) throw new Error(`bad decimal ${text}`);
  return value;
}
