// Statements (issue 28 item 2, record 050): the fields of a statement request
// and their rules, written once for both tiers — the /history form checks them
// with zod + conform in the browser and on the server, and the backend's
// statement call (./contract/statement.ts) checks the same rules, so a request
// that reaches the backend some other way is refused with the same words.
// No zod here: the /history page imports these constants with its first load;
// the schema (./statement-schema.ts) comes with the form's checks (record 034).
import { TICKERS, type Ticker } from "./coins.ts";

/** The display currencies a statement can be valued in (spec: USD, EUR, GBP, CAD). */
export const STATEMENT_CURRENCIES = ["USD", "EUR", "GBP", "CAD"] as const;
export type StatementCurrency = (typeof STATEMENT_CURRENCIES)[number];

/** The longest range one statement covers, in days (10 years with their leap days). */
export const MAX_STATEMENT_DAYS = 3653;

export const STATEMENT_TEXTS = {
  date: "Enter a date as YYYY-MM-DD, like 2026-01-31.",
  future: "Choose today or an earlier day.",
  order: "The end must be on or after the start.",
  tooLong: "A statement covers at most 10 years. Choose a later start or an earlier end.",
  coin: "Choose one of the coins, or All coins.",
  currency: "Choose USD, EUR, GBP or CAD.",
} as const;

const DAY = /^\d{4}-\d{2}-\d{2}$/u;

/** A real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isDay(value: string): boolean {
  if (!DAY.test(value)) return false;
  const at = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value;
}

/** The UTC day of an instant, YYYY-MM-DD. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/** Whole days from `a` to `b` (both YYYY-MM-DD). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/** The download's file name: only our own characters, never anything the request carried verbatim. */
export function statementFilename(request: {
  from: string;
  to: string;
  coin: string;
  currency: string;
}): string {
  const coinPart = request.coin === "all" ? "all-coins" : request.coin.toLowerCase();
  return `coinkeep-statement-${coinPart}-${request.from}-to-${request.to}-${request.currency.toLowerCase()}.csv`;
}

/** The options of the form's coin select, "all" first. */
export const STATEMENT_COINS: readonly ("all" | Ticker)[] = ["all", ...TICKERS];
