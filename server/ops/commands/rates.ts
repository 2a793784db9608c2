// The currency rates' history (issue 28, record 050): statements value a
// transaction with the ECB rate of its day, which the backend records as the
// rates feed fetches it. "rates import" backfills days the feed never fetched
// (before the server ran, or while it was down) from an ECB file, e.g. the
// whole history at https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml.
import { defineCommand, audit, OpsError, plural, readTextFile, type OpsCommand } from "./define.ts";

/** The ECB's whole-history XML is ~6 MiB. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

export const RATE_COMMANDS: readonly OpsCommand[] = [
  defineCommand({
    name: "rates import",
    summary: [["rates import <file.xml>", "backfill the currency rates' history from an ECB file"]],
    usage: `Usage: node server/ops/cli.ts rates import <file.xml> [--as <name>] [--json]

Reads an ECB euro reference rates file (the daily, 90-day or whole-history XML:
eurofxref-daily.xml, eurofxref-hist-90d.xml, eurofxref-hist.xml) and records
each day's EUR, GBP and CAD multipliers from USD, as the rates feed records the
days it fetches. Statements value a transaction with the rate of its day, or
of the nearest earlier recorded day. A day already recorded is left as it is.
Every day must carry USD, GBP and CAD, or nothing is written. Writes one
audit_log row (action rates.import).`,
    changes: true,
    arguments: 1,
    files: [0],
    check(args) {
      const [file = ""] = args;
      if (file === "") throw new OpsError("Name the ECB XML file to import.");
      return { file };
    },
    async run(ctx, { file }) {
      const [path, rates, history] = await Promise.all([
        import("node:path"),
        import("../../backend/feeds/fx-rates.ts"),
        import("../../backend/domain/fx-history.ts"),
      ]);
      const fullPath = path.resolve(file);
      const text = await readTextFile(
        fullPath,
        MAX_FILE_BYTES,
        (error) => `Cannot read ${fullPath}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
      );
      let days: { date: string; rates: Record<string, string> }[];
      try {
        days = rates.parseEcbDays(text);
      } catch (error) {
        throw new OpsError(
          `${fullPath}: ${error instanceof Error ? error.message : String(error)}. Nothing written.`,
        );
      }
      const added = await ctx.db.transaction(async (tx) => {
        const n = await history.recordRateDays(
          tx,
          days.map((d) => ({ day: d.date, rates: d.rates })),
          "ECB import",
        );
        await audit(ctx, tx, "rates.import", fullPath, { days: days.length, rowsAdded: n });
        return n;
      });
      const sorted = days.map((d) => d.date).toSorted();
      return { days: days.length, added, first: sorted[0] ?? null, last: sorted.at(-1) ?? null };
    },
    text: (r) =>
      `Read ${plural(r.days, "day")} (${r.first} to ${r.last}); recorded ${plural(r.added, "new rate")} (EUR, GBP, CAD per day).`,
    json: (r) => r,
  }),
];
