// The statement fields' schema (issue 28, record 050): the rules of
// ./statement.ts as zod checks, for the /history form (loaded on first use,
// record 034) and the backend's statement call. Schemas are built on call, not
// on import (the browser configures zod first, app/forms/z.ts).
import { z } from "zod";
import { isTicker, type Ticker } from "./coins.ts";
import {
  daysBetween,
  isDay,
  MAX_STATEMENT_DAYS,
  STATEMENT_CURRENCIES,
  STATEMENT_TEXTS,
  type StatementCurrency,
} from "./statement.ts";

function fieldSchemas() {
  const day = z
    .string(STATEMENT_TEXTS.date)
    .trim()
    .max(32, STATEMENT_TEXTS.date)
    .refine(isDay, STATEMENT_TEXTS.date);

  /** "all", or a ticker in any case (as the ticker). */
  const coin = z
    .string(STATEMENT_TEXTS.coin)
    .trim()
    .max(16, STATEMENT_TEXTS.coin)
    .transform((value) => (value.toLowerCase() === "all" ? "all" : value.toUpperCase()))
    .refine((value): value is "all" | Ticker => value === "all" || isTicker(value), STATEMENT_TEXTS.coin);

  const currency = z
    .string(STATEMENT_TEXTS.currency)
    .trim()
    .max(8, STATEMENT_TEXTS.currency)
    .transform((value) => value.toUpperCase())
    .refine(
      (value): value is StatementCurrency => (STATEMENT_CURRENCIES as readonly string[]).includes(value),
      STATEMENT_TEXTS.currency,
    );
  return { day, coin, currency };
}

/**
 * The statement's fields and their rules, `today` being the UTC day of the
 * clock that asks: both days real, the start not after the end, the end not in
 * the future, at most MAX_STATEMENT_DAYS days. Field errors name the field.
 */
export function statementFields(today: string) {
  const { day, coin, currency } = fieldSchemas();
  return z
    .object({
      from: day,
      to: day,
      coin: coin.default("all"),
      currency: currency.default("USD"),
    })
    .superRefine((value, ctx) => {
      if (value.to > today) ctx.addIssue({ code: "custom", path: ["to"], message: STATEMENT_TEXTS.future });
      if (value.from > today)
        ctx.addIssue({ code: "custom", path: ["from"], message: STATEMENT_TEXTS.future });
      if (value.from > value.to) {
        ctx.addIssue({ code: "custom", path: ["to"], message: STATEMENT_TEXTS.order });
      } else if (daysBetween(value.from, value.to) + 1 > MAX_STATEMENT_DAYS) {
        ctx.addIssue({ code: "custom", path: ["from"], message: STATEMENT_TEXTS.tooLong });
      }
    });
}

export type StatementRequest = z.output<ReturnType<typeof statementFields>>;
