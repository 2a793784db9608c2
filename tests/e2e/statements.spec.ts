// Statements on /history (issue 28 item 2, record 050), scripts on and off: the
// operator backfills a rate day, the holder has a credited and an unconfirmed
// deposit whose chain ids start like formulas, downloads the CSV through the
// form and finds its rows, values and escaping; a bad range is answered at its
// field on /history; a visitor is sent to /login.
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, test } from "./fixtures.ts";
import { dayOf } from "../../common/statement.ts";
import { parseCsv } from "../support/csv.ts";
import { expectAccessible, visit } from "./helpers.ts";

test.describe("statements", () => {
  test("download a statement: rows, values at the time, formula cells defused", async ({
    page,
    signedIn,
    fundEth,
    operator,
  }, testInfo) => {
    const today = dayOf(new Date());
    const yesterday = dayOf(new Date(Date.now() - 86_400_000));
    // Yesterday's ECB rates (EUR: 1 USD = 0.5 EUR), today's none: today's rows use yesterday's.
    const file = path.join(os.tmpdir(), `coinkeep-e2e-rates-${testInfo.project.name}-${Date.now()}.xml`);
    await writeFile(
      file,
      `<gesmes:Envelope><Cube><Cube time='${yesterday}'><Cube currency='USD' rate='2'/><Cube currency='GBP' rate='1.6'/><Cube currency='CAD' rate='2.8'/></Cube></Cube></gesmes:Envelope>`,
    );
    expect(operator.run("rates", "import", file)).toMatch(
      new RegExp(`Read 1 day \\(${yesterday} to ${yesterday}\\)`),
    );

    const { address } = await fundEth(signedIn, "0");
    const formulaTx = `=HYPERLINK("http://x.invalid/${testInfo.project.name}-${Date.now()}")`;
    const atTx = `@SUM(1)-${testInfo.project.name}-${Date.now()}`;
    operator.run(
      "deposit",
      "ETH",
      formulaTx,
      "0",
      address,
      "1.25",
      "--confirmations",
      "100",
      "--usd",
      "3125.50",
    );
    operator.run("deposit", "ETH", atTx, "0", address, "0.5", "--confirmations", "0", "--usd", "1000");

    await visit(page, "/history", testInfo);
    const form = page.getByRole("region", { name: "Statement" });
    await form.getByLabel("From (UTC day, YYYY-MM-DD)").fill(today);
    await form.getByLabel("To (UTC day, YYYY-MM-DD)").fill(today);
    await form.getByLabel("Coin", { exact: true }).selectOption("ETH");
    await form.getByLabel("Currency", { exact: true }).selectOption("EUR");
    await expectAccessible(page);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      form.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`coinkeep-statement-eth-${today}-to-${today}-eur.csv`);
    const text = await readFile(await download.path(), "utf8");
    expect(text.startsWith('\uFEFF"Date (UTC)"')).toBe(true);
    const rows = parseCsv(text.slice(1));
    expect(rows[0]).toEqual([
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
    ]);
    const source = `USD value recorded at the transaction × ECB rate of ${yesterday} (none for ${today})`;
    expect(rows.slice(1).map((r) => r.slice(1))).toEqual([
      [
        "ETH",
        "in",
        "1.250000000000000000",
        "1562.75",
        "1250.20",
        source,
        "3125.5",
        "0.5",
        "Confirmed",
        address,
        "",
        `'${formulaTx}`,
      ],
      [
        "ETH",
        "in",
        "0.500000000000000000",
        "500.00",
        "1000.00",
        source,
        "1000",
        "0.5",
        "Unconfirmed",
        address,
        "",
        `'${atTx}`,
      ],
    ]);
    for (const row of rows.slice(1))
      expect(row[0]).toMatch(new RegExp(`^${today}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$`));
    // The page stayed where it was.
    await expect(page).toHaveURL(/\/history$/);

    // The plain link beside the form: this year so far, all coins, in the page's currency.
    const year = today.slice(0, 4);
    const [yearly] = await Promise.all([
      page.waitForEvent("download"),
      form.getByRole("link", { name: `Download CSV of ${year} so far, all coins` }).click(),
    ]);
    expect(yearly.suggestedFilename()).toBe(`coinkeep-statement-all-coins-${year}-01-01-to-${today}-usd.csv`);
    const yearRows = parseCsv((await readFile(await yearly.path(), "utf8")).slice(1));
    expect(yearRows.slice(1).map((r) => r.at(-1))).toEqual([`'${formulaTx}`, `'${atTx}`]);
  });

  test("a bad range is answered at its field on /history; a visitor is sent to /login", async ({
    page,
    signedIn,
    browser,
  }, testInfo) => {
    void signedIn;
    const today = dayOf(new Date());
    const yesterday = dayOf(new Date(Date.now() - 86_400_000));
    await visit(page, "/history", testInfo);
    const form = page.getByRole("region", { name: "Statement" });
    await form.getByLabel("From (UTC day, YYYY-MM-DD)").fill(today);
    await form.getByLabel("To (UTC day, YYYY-MM-DD)").fill(yesterday);
    await form.getByRole("button", { name: "Download CSV" }).click();
    const to = form.getByLabel("To (UTC day, YYYY-MM-DD)");
    await expect(to).toHaveAttribute("aria-invalid", "true");
    await expect(form.getByText("The end must be on or after the start.")).toBeVisible();
    // The spec's screen is still there above it.
    await expect(page.getByRole("heading", { level: 1, name: "History" })).toBeVisible();
    await expectAccessible(page);

    // A hand-made URL: not a date, an unknown coin; the page says so, never a 500.
    const response = await page.goto(`/history/statement.csv?from=soon&to=${today}&coin=DOGGY&currency=EUR`);
    expect(response?.status()).toBe(200);
    await expect(page).toHaveURL(/\/history\?.*statement=check/);
    await expect(form.getByText("Enter a date as YYYY-MM-DD, like 2026-01-31.")).toBeVisible();
    await expect(form.getByText("Choose one of the coins, or All coins.")).toBeVisible();

    const visitor = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
    try {
      const answer = await visitor.request.get(`/history/statement.csv?from=${today}&to=${today}`, {
        maxRedirects: 0,
      });
      expect(answer.status()).toBe(302);
      expect(answer.headers().location).toBe("/login");
    } finally {
      await visitor.close();
    }
  });
});
