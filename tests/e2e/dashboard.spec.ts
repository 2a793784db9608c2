// /home as a dashboard (issue 15): the total's 24-hour change under the total,
// and a 7-day sparkline (or its neutral state) per coin, in both modes. The
// e2e server serves the shipped price snapshot (FEEDS_OFFLINE): the figures
// below follow from its ETH quote, and a coin shows a sparkline exactly when
// the snapshot carries one for it (record 023).
import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, visit } from "./helpers.ts";

const snapshot = JSON.parse(readFileSync("server/backend/feeds/snapshot-prices.json", "utf8")) as {
  prices: Record<string, { lastPrice: string; changePct: string; sparkline?: number[] }>;
};

function coinRows(page: Page) {
  return page
    .getByRole("table")
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader") });
}

test.describe("the dashboard on /home", () => {
  test("the total's 24 h change, and a 7-day sparkline or its neutral state per coin", async ({
    page,
    signedIn,
    fundEth,
  }, testInfo) => {
    // 1 ETH at 2531.84, down 8.2 % in 24 h: worth 2531.84 × 100 / 91.8 = 2757.995642701525 then
    // (12 places, half away from zero), so -226.155642701525 now: -$226.16, -8.20 %.
    expect(snapshot.prices.ETH).toMatchObject({ lastPrice: "2531.84", changePct: "-8.2" });
    await fundEth(signedIn, "1");
    await visit(page, "/home", testInfo);
    await expect(page.locator(".sidebar .total-value")).toHaveText("$2531.84");
    await expect(page.locator(".sidebar .total-change")).toHaveText("▼ -$226.16 (-8.20%) in 24 h");
    await expect(page.locator(".sidebar .total-change")).toHaveClass(/change-down/);

    await expect(coinRows(page)).toHaveCount(9);
    for (const row of await coinRows(page).all()) {
      const ticker = (await row.locator(".coin-ticker").textContent())?.trim() ?? "";
      const cell = row.locator(".sparkline-cell");
      if (snapshot.prices[ticker]?.sparkline) {
        const line = cell.getByRole("img");
        await expect(line).toHaveAccessibleName(
          new RegExp(`^${ticker} price, last 7 days: (?:(?:up|down) \\d+\\.\\d{2}%|unchanged)$`),
        );
        await expect(line.locator("path")).toHaveAttribute("d", /^M0,[\d.]+ .* 96,[\d.]+$/);
      } else {
        await expect(cell).toHaveText("—No 7-day prices");
        await expect(cell.getByRole("img")).toHaveCount(0);
      }
    }
    await expect(page.getByRole("columnheader", { name: "7 days" })).toBeVisible();
    await expectAccessible(page);
  });

  test("on a phone: the change under the total, the 7-day column hidden, no sideways scrolling", async ({
    page,
    signedIn,
    fundEth,
  }, testInfo) => {
    await fundEth(signedIn, "1");
    await page.setViewportSize({ width: 390, height: 844 });
    await visit(page, "/home", testInfo);
    await expect(page.locator(".mobile-summary .total-change")).toHaveText("▼ -$226.16 (-8.20%) in 24 h");
    await expect(page.getByRole("columnheader", { name: "7 days" })).toBeHidden();
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await expectAccessible(page);
  });
});
