import { randomBytes } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import {
  expectAccessible,
  freshEthAddress,
  jsEnabled,
  login,
  requestedWalletId,
  visit,
  waitForReady,
} from "./helpers.ts";

const SPEC_ORDER = ["BTC", "ETH", "ADA", "BNB", "DOGE", "SOL", "TRX", "USDT", "XRP"];

function coinRows(page: Page) {
  return page
    .getByRole("table")
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader") });
}

async function tickersInOrder(page: Page): Promise<string[]> {
  return (await coinRows(page).locator(".coin-ticker").allTextContents()).map((t) => t.trim());
}

test.describe("wallet list", () => {
  test("a new user sees all nine coins at zero, in the coin table's order", async ({ page, signedIn }) => {
    void signedIn;
    await expect(coinRows(page)).toHaveCount(9);
    expect(await tickersInOrder(page)).toEqual(SPEC_ORDER);
    for (const row of await coinRows(page).all()) await expect(row.getByRole("cell").first()).toHaveText("0");
    await expect(page.locator(".sidebar .total-value")).toHaveText("$0.00");
    // The shipped price snapshot is what serves here (no internet): the page says so.
    await expect(page.getByText(/Prices may be out of date: last updated/)).toBeVisible();
    await expectAccessible(page);
    await coinRows(page).filter({ hasText: "Dogecoin" }).getByRole("link").click();
    await expect(page).toHaveURL(/\/wallet\/doge$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dogecoin DOGE");
  });

  test("search by name or ticker", async ({ page, signedIn }, testInfo) => {
    void signedIn;
    const search = page.getByRole("searchbox", { name: "Search coins by name or ticker" });
    if (jsEnabled(testInfo)) {
      await search.fill("dog");
      await expect(coinRows(page)).toHaveCount(1);
      expect(page.url()).not.toContain("q=");
      await search.fill("ETH");
      await expect(coinRows(page)).toHaveCount(2);
      expect(await tickersInOrder(page)).toEqual(["ETH", "USDT"]); // Tether contains "eth"
    } else {
      await search.fill("dog");
      await page.getByRole("button", { name: "Search" }).click();
      await expect(page).toHaveURL(/\/home\?q=dog$/);
      await expect(coinRows(page)).toHaveCount(1);
      await search.fill("ETH");
      await page.getByRole("button", { name: "Search" }).click();
      // The list is read once the new page is there (not the old one while it loads).
      await expect(page).toHaveURL(/\/home\?q=ETH$/);
      await expect(coinRows(page)).toHaveCount(2);
      expect(await tickersInOrder(page)).toEqual(["ETH", "USDT"]);
    }
    await search.fill("zzz");
    if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Search" }).click();
    await expect(page.getByText("No coin matches “zzz”.")).toBeVisible();
  });

  test("unsupported tickers go to /home; tickers are lower-case in the path", async ({ page, signedIn }) => {
    void signedIn;
    await page.goto("/wallet/abc");
    await expect(page).toHaveURL(/\/home$/);
    await page.goto("/wallet/BTC");
    await expect(page).toHaveURL(/\/wallet\/btc$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Bitcoin BTC");
  });
});

test.describe("wallets and deposits", () => {
  test(
    "request → operator issues an address → deposit → balance, EUR, history",
    { tag: "@remote" },
    async ({ page, signedIn: user, operator }, testInfo) => {
      // No wallet yet: 'Request ETH Wallet'.
      await visit(page, "/wallet/eth", testInfo);
      await expect(page.getByText("Your transactions will appear here")).toBeVisible();
      await expectAccessible(page);
      await page.getByRole("button", { name: "Request ETH Wallet" }).click();
      await expect(page.getByRole("button", { name: "Wallet Requested" })).toBeDisabled();
      await expect(page.getByText("Wallet requested.")).toBeVisible();
      await waitForReady(page, testInfo);
      await expectAccessible(page);
      // Asking again creates nothing: the page stays in the requested state.
      expect(operator.run("requests", "--json").match(new RegExp(user.email, "g"))).toHaveLength(1);

      // The operator issues an address; the user sees it.
      const walletId = requestedWalletId(user.email, "ETH");
      // Stored (and shown) in its EIP-55 checksummed form.
      const issued = /Issued (0x[0-9a-fA-F]{40}) /u.exec(
        operator.run("issue-address", walletId, freshEthAddress()),
      );
      const address = issued?.[1] ?? "";
      expect(address).toMatch(/[A-F]/u);
      await visit(page, "/wallet/eth", testInfo);
      await expect(page.getByText(address)).toBeVisible();
      await expect(page.getByRole("button", { name: "Send ETH" })).toBeVisible();
      if (jsEnabled(testInfo))
        await expect(page.getByRole("button", { name: "Copy wallet address" })).toBeVisible();

      // The operator credits 1.5 ETH; the same on-chain id again credits nothing more.
      const txid = `0x${randomBytes(32).toString("hex")}`;
      operator.run("credit", walletId, "1.5", txid, "--usd", "4500");
      expect(operator.run("credit", walletId, "1.5", txid)).toMatch(/already credited/i);
      await visit(page, "/wallet/eth", testInfo);
      await expect(page.locator(".wallet-balance")).toHaveText("Balance: 1.5000 ETH");
      await expectAccessible(page);

      // The list: ETH now first (the only value), balance with 2 decimals.
      await visit(page, "/home", testInfo);
      expect((await tickersInOrder(page))[0]).toBe("ETH");
      const eth = coinRows(page).filter({ hasText: "Ethereum" });
      await expect(eth.getByRole("cell").first()).toHaveText("1.50");
      const usdTotal = await page.locator(".sidebar .total-value").textContent();
      expect(usdTotal).toMatch(/^\$\d+\.\d{2}$/);
      expect(usdTotal).not.toBe("$0.00");

      // Switching to EUR changes every fiat figure.
      await page.locator(".sidebar .currency-picker summary").click();
      await page.locator(".sidebar").getByRole("button", { name: "EUR €" }).click();
      await expect(page.locator(".sidebar .total-value")).toHaveText(/^€\d+\.\d{2}$/);
      await expect(eth.getByRole("cell").nth(1)).toHaveText(/^€/);
      await expect(page.locator(".sidebar .currency-picker summary")).toHaveText("EUR €");

      // The deposit in /history, expandable.
      await visit(page, "/history", testInfo);
      const row = page.locator(".tx-list li").first();
      await expect(row.locator("summary")).toContainText("Received");
      await expect(row.locator("summary")).toContainText("+1.500 ETH");
      await expect(row.locator("summary")).toContainText("Confirmed");
      await row.locator("summary").click();
      await expect(row.getByText("1.5 ETH", { exact: true })).toBeVisible();
      await expect(row.getByText("€", { exact: false }).first()).toBeVisible();
      await expectAccessible(page);

      // A fresh login resets the currency to USD.
      await page.context().clearCookies();
      await login(page, testInfo, user);
      await expect(page.locator(".sidebar .currency-picker summary")).toHaveText("USD $");
    },
  );
});

test.describe("a coin's transactions, a page at a time", () => {
  test("the 20 newest on the wallet page; 'Older transactions' shows the rest", async ({
    page,
    signedIn,
    fundEth,
    operator,
  }, testInfo) => {
    // 21 deposits: 1 ETH first, then 2 … 21 ETH (the newest is 21).
    const { walletId } = await fundEth(signedIn, "1");
    for (let amount = 2; amount <= 21; amount++) operator.credit(walletId, String(amount));
    await visit(page, "/wallet/eth", testInfo);
    const rows = page.locator(".tx-list li summary");
    await expect(rows).toHaveCount(20);
    await expect(rows.first()).toContainText("+21.000 ETH");
    await expect(rows.last()).toContainText("+2.000 ETH");
    await expectAccessible(page);
    await page.getByRole("link", { name: "Older transactions" }).click();
    await expect(page).toHaveURL(/\/wallet\/eth\?before=/u);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText("+1.000 ETH");
    await expect(page.getByRole("link", { name: "Older transactions" })).toHaveCount(0);
    // /history still shows all 21 on its first page (50 a page).
    await visit(page, "/history", testInfo);
    await expect(rows).toHaveCount(21);
  });
});

test.describe("unread messages", () => {
  test(
    "no badge without unread messages; the count behind it answers only the signed-in user",
    { tag: "@remote" },
    async ({ page, request, signedIn }) => {
      void signedIn;
      const notifications = page.locator(".sidebar").getByRole("link", { name: /^Notifications/ });
      await expect(notifications).toHaveText("Notifications");
      const answer = await page.request.get("/unread-count");
      expect(answer.status()).toBe(200);
      expect(answer.headers()["cache-control"]).toBe("no-store");
      expect(await answer.json()).toEqual({ count: 0 });
      const visitor = await request.get("/unread-count", { maxRedirects: 0 });
      expect(visitor.status()).toBe(302);
      expect(visitor.headers()["location"]).toBe("/");
    },
  );
});

test.describe("the 60 s refresh (scripts on)", () => {
  test("a deposit credited while /home is open shows within the minute, total included", async ({
    page,
    user,
    fundEth,
    operator,
  }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "without scripts the page shows what it had; a reload brings the rest");
    const { walletId } = await fundEth(user, "0");
    // The live-event stream would bring the deposit at once (live.spec.ts): blocked, the refresh is what is tested.
    await page.route("**/events", (route) => route.abort());
    await page.clock.install();
    await login(page, testInfo, user);
    const eth = coinRows(page).filter({ hasText: "Ethereum" });
    await expect(eth.getByRole("cell").first()).toHaveText("0");
    await expect(page.locator(".sidebar .total-value")).toHaveText("$0.00");

    operator.credit(walletId, "2.25");
    await page.clock.runFor("01:00");
    await expect(eth.getByRole("cell").first()).toHaveText("2.25");
    await expect(page.locator(".sidebar .total-value")).not.toHaveText("$0.00");
  });
});
