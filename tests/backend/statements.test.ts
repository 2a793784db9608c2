// Statements (issue 28 item 2, record 050) over each real database and both
// transports: rows of a known rate day, of a day without a rate (the nearest
// earlier day, said so), of no recorded day at all and of no USD value; the
// formula starts defused; only the caller's own rows; bad ranges, coins and
// currencies refused with their field's message (4xx, never a 500).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { fxRateDays } from "../../server/backend/db/schema.ts";
import { beforeAll, describe, expect, test } from "vitest";
import { STATEMENT_TEXTS } from "../../common/statement.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { ratesForRange, recordRateDays } from "../../server/backend/domain/fx-history.ts";
import { createMarketData } from "../../server/backend/feeds/routes.ts";
import { loadConfig } from "../../server/config.ts";
import { runInServer } from "../../server/ops/registry.ts";
import { parseEcbDays } from "../../server/backend/feeds/fx-rates.ts";
import { describeEachDatabase } from "./api-suite.ts";
import {
  clientHolder,
  BACKEND_SECRET,
  createTestHandler,
  PLATFORM,
  randomAddress,
  transports,
  type Connection,
} from "./helpers.ts";
import { parseCsv } from "../support/csv.ts";

/** A stream's text, its byte-order mark kept (Response#text drops it). */
export async function textOf(body: ReadableStream<Uint8Array> | Response): Promise<string> {
  const bytes = await (body instanceof Response ? body : new Response(body)).arrayBuffer();
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

/** A credited deposit of `units` wei on `at`, straight into the ledger (as a chain watcher's would be). */
async function depositOn(
  db: AppDb,
  walletId: string,
  at: string,
  units: bigint,
  txid: string,
  usd: string | null,
) {
  await db.execute(sql`
    INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd, created_at)
    VALUES ('ETH',
      (SELECT id FROM ledger_accounts WHERE coin = 'ETH' AND kind = 'deposits' AND wallet_id IS NULL),
      (SELECT id FROM ledger_accounts WHERE wallet_id = ${walletId}),
      ${units.toString()}::numeric, 'deposit', ${txid}, ${usd}, ${at}::timestamptz)`);
}

/** The rates recorded for exactly `day`: [currency, multiplier, source], by currency. */
async function recordedOn(db: AppDb, day: string): Promise<string[][]> {
  const rows = await db
    .select()
    .from(fxRateDays)
    .where(eq(fxRateDays.day, day))
    .orderBy(asc(fxRateDays.currency));
  return rows.map((r) => [r.currency, r.multiplier, r.source]);
}

const ETH = 10n ** 18n;
const HEADER_EUR = [
  "Date (UTC)",
  "Coin",
  "Direction",
  "Amount",
  "Value (EUR)",
  "Price (EUR per coin)",
  "Price source",
  "USD value recorded",
  "Rate (USD to EUR)",
  "Status",
  "Address",
  "Destination tag",
  "Transaction ID",
];

describeEachDatabase("statements on $name", { openTimeout: 120_000 }, (getDatabase) => {
  let db: AppDb;
  beforeAll(() => {
    db = getDatabase().database.db;
  });

  test("an ECB file's days are read, and a day is recorded once", async () => {
    const days = parseEcbDays(`<gesmes:Envelope><Cube>
      <Cube time='2020-01-03'><Cube currency='USD' rate='1.1'/><Cube currency='GBP' rate='0.85'/><Cube currency='CAD' rate='1.45'/></Cube>
      <Cube time='2020-01-02'><Cube currency='USD' rate='1.12'/><Cube currency='GBP' rate='0.86'/><Cube currency='CAD' rate='1.46'/></Cube>
    </Cube></gesmes:Envelope>`);
    expect(days.map((d) => [d.date, d.rates.EUR])).toEqual([
      ["2020-01-03", "0.9090909091"],
      ["2020-01-02", "0.8928571429"],
    ]);
    const rates = days.map((d) => ({ day: d.date, rates: d.rates }));
    expect(await recordRateDays(db, rates, "ECB import")).toBe(6);
    expect(await recordRateDays(db, rates, "ECB import")).toBe(0);
  });

  test("a live fetch of the rates records its reference day; the offline snapshot records nothing", async () => {
    const ecb = `<gesmes:Envelope><Cube><Cube time='2021-02-05'><Cube currency='USD' rate='1.25'/><Cube currency='GBP' rate='1'/><Cube currency='CAD' rate='1.5'/></Cube></Cube></gesmes:Envelope>`;
    const recordRates = async (daily: { date: string; rates: Record<string, string> }) => {
      await recordRateDays(db, [{ day: daily.date, rates: daily.rates }], "ECB");
    };
    const offline = createMarketData({ offline: true, recordRates });
    await offline.rates.get();
    expect(await recordedOn(db, "2021-02-05")).toEqual([]);
    const live = createMarketData({
      offline: false,
      ecbUrl: "http://ecb.invalid/daily.xml",
      fetch: async () => new Response(ecb, { headers: { "content-type": "text/xml" } }),
      recordRates,
    });
    expect((await live.rates.get()).data.rates.EUR).toBe("0.8");
    expect(await recordedOn(db, "2021-02-05")).toEqual([
      ["CAD", "1.2", "ECB"],
      ["EUR", "0.8", "ECB"],
      ["GBP", "0.8", "ECB"],
    ]);
    // A later day without its own rate falls back on it.
    expect(await ratesForRange(db, "GBP", "2021-02-06", "2021-02-08")).toEqual([
      { day: "2021-02-05", multiplier: "0.8", source: "ECB" },
    ]);
  });

  test("ops rates import: a file with a day missing a currency writes nothing", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "coinkeep-rates-"));
    try {
      const file = path.join(dir, "hist.xml");
      await writeFile(
        file,
        `<Cube><Cube time='2022-04-01'><Cube currency='USD' rate='1.1'/><Cube currency='GBP' rate='0.85'/><Cube currency='CAD' rate='1.4'/></Cube>
         <Cube time='2022-03-31'><Cube currency='USD' rate='1.1'/><Cube currency='GBP' rate='0.85'/></Cube></Cube>`,
      );
      const config = loadConfig({ BACKEND_SECRET, SESSION_SECRET: BACKEND_SECRET, DATA_DIR: tmpdir() });
      const refused = await runInServer(["rates", "import", file, "--as", "tester"], { db, config });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("ECB rates for 2022-03-31: missing CAD");
      expect(await recordedOn(db, "2022-04-01")).toEqual([]);
      expect(await recordedOn(db, "2022-03-31")).toEqual([]);
      await writeFile(
        file,
        `<Cube><Cube time='2022-04-01'><Cube currency='USD' rate='1.1'/><Cube currency='GBP' rate='0.85'/><Cube currency='CAD' rate='1.4'/></Cube></Cube>`,
      );
      const imported = await runInServer(["rates", "import", file, "--as", "tester"], { db, config });
      expect(imported).toMatchObject({ code: 0, stderr: "" });
      expect(imported.stdout).toContain("Read 1 day (2022-04-01 to 2022-04-01); recorded 3 new rates");
      expect(await recordedOn(db, "2022-04-01")).toEqual([
        ["CAD", "1.272727273", "ECB import"],
        ["EUR", "0.9090909091", "ECB import"],
        ["GBP", "0.7727272727", "ECB import"],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  for (const transport of transports) {
    describe(`transport: ${transport.name}`, () => {
      let connection: Connection;
      let holder: Awaited<ReturnType<typeof clientHolder>>;
      let other: Awaited<ReturnType<typeof clientHolder>>;
      let sendTo: string;

      beforeAll(async () => {
        connection = await transport.connect(createTestHandler(db));
        holder = await clientHolder(connection, db, { label: "statement", coin: "ETH", deposit: "1" });
        other = await clientHolder(connection, db, { label: "stranger", coin: "ETH", deposit: "1" });
        // Days on which a rate is recorded (another currency's too): 2019-03-02 and 2019-03-04.
        await recordRateDays(
          db,
          [
            { day: "2019-03-02", rates: { EUR: "0.9", GBP: "0.75", CAD: "1.3" } },
            { day: "2019-03-04", rates: { EUR: "0.8" } },
          ],
          "ECB",
        );
        const w = holder.walletId;
        await depositOn(
          db,
          w,
          "2019-03-01T10:00:00.000Z",
          15n * 10n ** 17n,
          '=HYPERLINK("http://x.invalid")',
          "3000",
        );
        await depositOn(db, w, "2019-03-02T12:00:00.000Z", 25n * 10n ** 16n, "+cmd", "500.10");
        await depositOn(db, w, "2019-03-03T08:00:00.000Z", 2n * ETH, "-2+3", "1000");
        await depositOn(db, w, "2019-03-04T23:59:59.999Z", 1n, "@SUM(1)", null);
        await depositOn(db, w, "2019-03-05T00:00:00.000Z", ETH, "\tTAB", "10");
        await depositOn(db, w, "2019-03-05T00:00:00.001Z", ETH, "\rCR", "10");
        await depositOn(db, w, "2019-03-06T00:00:00.000Z", ETH, "after-the-range", "10");
        await depositOn(db, other.walletId, "2019-03-02T12:00:00.000Z", ETH, "not-yours", "10");
        sendTo = randomAddress("ETH");
        const sent = await connection.client.requestTransaction({
          email: holder.email,
          twelveWords: holder.twelveWords,
          walletId: w,
          amount: "0.1",
          receiverWalletAddress: sendTo,
        });
        if (!sent.ok) throw new Error(`the send was refused: ${sent.message}`);
        return () => connection.close();
      });

      async function statement(fields: { from: string; to: string; coin?: string; currency?: string }) {
        const answer = await connection.client.statement({
          email: holder.email,
          twelveWords: holder.twelveWords,
          ...fields,
        });
        if (!answer.ok) throw new Error(`refused: ${answer.message}`);
        return {
          filename: answer.data.filename,
          rows: parseCsv(await textOf(answer.data.body)),
        };
      }

      test("each row valued with its day's rate, the nearest earlier day's, or none, and said so", async () => {
        const { filename, rows } = await statement({
          from: "2019-03-01",
          to: "2019-03-05",
          coin: "eth",
          currency: "EUR",
        });
        expect(filename).toBe("coinkeep-statement-eth-2019-03-01-to-2019-03-05-eur.csv");
        expect(rows[0]?.[0]).toBe("\uFEFFDate (UTC)");
        expect(rows[0]?.slice(1)).toEqual(HEADER_EUR.slice(1));
        const address = await connection.client.clientBalances({
          email: holder.email,
          twelveWords: holder.twelveWords,
        });
        const ours = address.ok ? address.data.wallets[0]?.wallet_address : undefined;
        expect(rows.slice(1)).toEqual([
          [
            "2019-03-01T10:00:00.000Z",
            "ETH",
            "in",
            "1.500000000000000000",
            "",
            "",
            "No ECB rate recorded on or before 2019-03-01",
            "3000",
            "",
            "Confirmed",
            ours,
            "",
            `'=HYPERLINK("http://x.invalid")`,
          ],
          [
            "2019-03-02T12:00:00.000Z",
            "ETH",
            "in",
            "0.250000000000000000",
            "450.09",
            "1800.36",
            "USD value recorded at the transaction × ECB rate of 2019-03-02",
            "500.10",
            "0.9",
            "Confirmed",
            ours,
            "",
            "'+cmd",
          ],
          [
            "2019-03-03T08:00:00.000Z",
            "ETH",
            "in",
            "2.000000000000000000",
            "900.00",
            "450.00",
            "USD value recorded at the transaction × ECB rate of 2019-03-02 (none for 2019-03-03)",
            "1000",
            "0.9",
            "Confirmed",
            ours,
            "",
            "'-2+3",
          ],
          [
            "2019-03-04T23:59:59.999Z",
            "ETH",
            "in",
            "0.000000000000000001",
            "",
            "",
            "No USD value was recorded for this transaction",
            "",
            "",
            "Confirmed",
            ours,
            "",
            "'@SUM(1)",
          ],
          [
            "2019-03-05T00:00:00.000Z",
            "ETH",
            "in",
            "1.000000000000000000",
            "8.00",
            "8.00",
            "USD value recorded at the transaction × ECB rate of 2019-03-04 (none for 2019-03-05)",
            "10",
            "0.8",
            "Confirmed",
            ours,
            "",
            "'\tTAB",
          ],
          [
            "2019-03-05T00:00:00.001Z",
            "ETH",
            "in",
            "1.000000000000000000",
            "8.00",
            "8.00",
            "USD value recorded at the transaction × ECB rate of 2019-03-04 (none for 2019-03-05)",
            "10",
            "0.8",
            "Confirmed",
            ours,
            "",
            "'\rCR",
          ],
        ]);
        expect(rows.flat().join("|")).not.toContain("not-yours");
      });

      test("all coins in USD, to today: the send as the app shows it, the stranger's rows never", async () => {
        const today = new Date().toISOString().slice(0, 10);
        const { rows } = await statement({ from: "2019-01-01", to: today });
        const body = rows.slice(1);
        // 7 deposits of 2019, the funding deposit of today, the send.
        expect(body).toHaveLength(9);
        expect(body.map((r) => r[0]).toSorted()).toEqual(body.map((r) => r[0]));
        const send = body.find((r) => r[2] === "out");
        expect(send?.[10]?.toLowerCase()).toBe(sendTo.toLowerCase());
        expect(send?.slice(1, 10)).toEqual([
          "ETH",
          "out",
          "0.100000000000000000",
          "300.05",
          "3000.50",
          "USD value recorded at the transaction",
          "300.05",
          "1",
          "Unconfirmed",
        ]);
        expect(rows.flat().join("|")).not.toContain("not-yours");
        const theirs = await connection.client.statement({
          email: other.email,
          twelveWords: other.twelveWords,
          from: "2019-01-01",
          to: today,
        });
        if (!theirs.ok) throw new Error("refused");
        const text = await textOf(theirs.data.body);
        expect(text).toContain("not-yours");
        expect(text).not.toContain("HYPERLINK");
        expect(text.toLowerCase()).not.toContain(sendTo.toLowerCase());
      });

      test("a coin without a wallet, or a range without rows: the header alone", async () => {
        expect((await statement({ from: "2019-03-01", to: "2019-03-05", coin: "BTC" })).rows).toHaveLength(1);
        expect((await statement({ from: "2018-01-01", to: "2018-12-31" })).rows).toHaveLength(1);
      });

      const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
      test.each([
        [{ from: "2019-03-05", to: "2019-03-01" }, "to", STATEMENT_TEXTS.order],
        [{ from: "2019-02-30", to: "2019-03-01" }, "from", STATEMENT_TEXTS.date],
        [{ from: "yesterday", to: "2019-03-01" }, "from", STATEMENT_TEXTS.date],
        [{ from: "2019-03-01", to: future }, "to", STATEMENT_TEXTS.future],
        [{ from: "2009-01-01", to: "2019-03-01" }, "from", STATEMENT_TEXTS.tooLong],
        [{ from: "2019-03-01", to: "2019-03-02", coin: "DOGGY" }, "coin", STATEMENT_TEXTS.coin],
        [{ from: "2019-03-01", to: "2019-03-02", currency: "JPY" }, "currency", STATEMENT_TEXTS.currency],
      ])("%j is refused at %s", async (fields, field, message) => {
        const answer = await connection.client.statement({
          email: holder.email,
          twelveWords: holder.twelveWords,
          ...fields,
        });
        expect(answer).toMatchObject({
          ok: false,
          kind: "rejected",
          status: 400,
          code: "invalid_statement",
          message,
        });
        if (answer.ok) return;
        expect(answer.kind === "rejected" && answer.issues?.[0]).toEqual({ path: field, message });
      });

      test("wrong words: 401, no rows", async () => {
        const answer = await connection.client.statement({
          email: holder.email,
          twelveWords: other.twelveWords,
          from: "2019-03-01",
          to: "2019-03-05",
        });
        expect(answer).toMatchObject({ ok: false, status: 401, code: "invalid_credentials" });
      });

      test("over the wire: text/csv, an attachment, no-store; a malformed body is a JSON 400", async () => {
        const post = (body: unknown) =>
          connection.fetch(
            new Request(`${connection.baseUrl}/statement`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body),
            }),
          );
        const ok = await post({
          platform: PLATFORM,
          email: holder.email,
          twelveWords: holder.twelveWords.join(" "),
          from: "2019-03-01",
          to: "2019-03-02",
        });
        expect(ok.status).toBe(200);
        expect(ok.headers.get("content-type")).toBe("text/csv; charset=utf-8");
        expect(ok.headers.get("content-disposition")).toBe(
          'attachment; filename="coinkeep-statement-all-coins-2019-03-01-to-2019-03-02-usd.csv"',
        );
        expect(ok.headers.get("cache-control")).toBe("no-store");
        expect(parseCsv(await textOf(ok))).toHaveLength(3);
        const bad = await post({
          platform: PLATFORM,
          email: holder.email,
          twelveWords: 12,
          from: 1,
          to: "x",
        });
        expect(bad.status).toBe(400);
        expect(await bad.json()).toMatchObject({ success: false, code: "invalid_request" });
        const wrongMethod = await connection.fetch(new Request(`${connection.baseUrl}/statement`));
        expect(wrongMethod.status).toBe(405);
      });
    });
  }

  test("a thousand rows stream in pages, in order", async () => {
    const connection = await transports[0]!.connect(createTestHandler(db));
    const holder = await clientHolder(connection, db, { label: "pages", coin: "ETH", deposit: "1" });
    await db.execute(sql`
      INSERT INTO ledger_transfers (coin, debit_account_id, credit_account_id, amount, kind, external_tx_id, amount_usd, created_at)
      SELECT 'ETH',
        (SELECT id FROM ledger_accounts WHERE coin = 'ETH' AND kind = 'deposits' AND wallet_id IS NULL),
        (SELECT id FROM ledger_accounts WHERE wallet_id = ${holder.walletId}),
        1, 'deposit', 'tx-' || n, '1', '2019-06-01T00:00:00Z'::timestamptz + (n / 3) * interval '1 second'
      FROM generate_series(1, 1234) AS n`);
    const answer = await connection.client.statement({
      email: holder.email,
      twelveWords: holder.twelveWords,
      from: "2019-06-01",
      to: "2019-06-01",
    });
    if (!answer.ok) throw new Error("refused");
    const rows = parseCsv(await textOf(answer.data.body)).slice(1);
    expect(rows).toHaveLength(1234);
    expect(new Set(rows.map((r) => r[12])).size).toBe(1234);
    const keys = rows.map((r) => r[0] ?? "");
    expect(keys.toSorted()).toEqual(keys);
  });
});
