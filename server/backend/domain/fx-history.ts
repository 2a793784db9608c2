// The currency rates' history (issue 28, record 050): every ECB reference day
// the rates feed fetched (or an operator imported) is kept in fx_rate_days, so a
// statement values an old transaction with the rate of its own day, long after
// the feed has moved on. A day is written once; a later fetch of the same day
// changes nothing (the ECB does not revise a published reference rate).
import { and, asc, desc, eq, gte, lte, sql } from "drizzle-orm";
import { isDay } from "../../../common/contract/statement.ts";
import type { AppDb } from "../db/index.ts";
import { fxRateDays } from "../db/schema.ts";

/** The currencies a day records (USD is 1 by definition and needs no row). */
export const RECORDED_CURRENCIES = ["EUR", "GBP", "CAD"] as const;
export type RecordedCurrency = (typeof RECORDED_CURRENCIES)[number];

const MULTIPLIER = /^\d+(?:\.\d+)?$/u;

/** One reference day's multipliers from USD. */
export interface RateDay {
  day: string;
  rates: Partial<Record<RecordedCurrency | "USD", string>>;
}

/**
 * Records the days' rates (ECB multipliers from USD) under `source`; a (day,
 * currency) already recorded is left as it is. Returns how many rows were new.
 * Malformed days or rates are refused (a feed that answers them is broken).
 */
export async function recordRateDays(
  db: AppDb,
  days: readonly RateDay[],
  source: string,
  fetchedAt = new Date(),
): Promise<number> {
  const rows = days.flatMap((d) => {
    if (!isDay(d.day)) throw new RangeError(`not a day: ${d.day.slice(0, 20)}`);
    return RECORDED_CURRENCIES.flatMap((currency) => {
      const multiplier = d.rates[currency];
      if (multiplier === undefined) return [];
      if (!MULTIPLIER.test(multiplier) || !/[1-9]/u.test(multiplier)) {
        throw new RangeError(`not a positive rate for ${currency} on ${d.day}`);
      }
      return [{ day: d.day, currency, multiplier, source, fetchedAt }];
    });
  });
  let added = 0;
  // In slices: an import of the ECB's whole history is ~7,000 days.
  for (let i = 0; i < rows.length; i += 1000) {
    const inserted = await db
      .insert(fxRateDays)
      .values(rows.slice(i, i + 1000))
      .onConflictDoNothing()
      .returning({ day: fxRateDays.day });
    added += inserted.length;
  }
  return added;
}

/** A recorded rate: the day it is of, the multiplier from USD, where it came from. */
export interface RecordedRate {
  day: string;
  multiplier: string;
  source: string;
}

/**
 * The rates a statement of `from`..`to` needs for `currency`, oldest first: the
 * last recorded day on or before `from` (what its first days fall back on) and
 * every recorded day up to `to`. At most one row per day of the range.
 */
export async function ratesForRange(
  db: AppDb,
  currency: RecordedCurrency,
  from: string,
  to: string,
): Promise<RecordedRate[]> {
  const [before] = await db
    .select({ day: fxRateDays.day })
    .from(fxRateDays)
    .where(and(eq(fxRateDays.currency, currency), lte(fxRateDays.day, from)))
    .orderBy(desc(fxRateDays.day))
    .limit(1);
  return db
    .select({ day: fxRateDays.day, multiplier: fxRateDays.multiplier, source: fxRateDays.source })
    .from(fxRateDays)
    .where(
      and(
        eq(fxRateDays.currency, currency),
        gte(fxRateDays.day, before?.day ?? from),
        lte(fxRateDays.day, to),
      ),
    )
    .orderBy(asc(fxRateDays.day));
}

/** How many days are recorded (for the operator command's report). */
export async function recordedDays(
  db: AppDb,
): Promise<{ days: number; first: string | null; last: string | null }> {
  const [row] = await db
    .select({
      days: sql<number>`count(DISTINCT ${fxRateDays.day})::int`,
      first: sql<string | null>`min(${fxRateDays.day})`,
      last: sql<string | null>`max(${fxRateDays.day})`,
    })
    .from(fxRateDays);
  return { days: row?.days ?? 0, first: row?.first ?? null, last: row?.last ?? null };
}
