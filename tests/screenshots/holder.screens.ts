// `npm run screenshots` (issue 15): the holder's screens as a new user sees
// them, one folder per project (scripts on/off × desktop/phone), to look at
// before a change to the holder's experience is called done. Not a test of
// behaviour: the e2e suite is.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { bech32 } from "@scure/base";
import { createUser, fundXrp, login, ops, requestedWalletId, requestWallet } from "../e2e/helpers.ts";

const OUT = path.resolve("screenshots");

/** A fresh, valid mainnet segwit v0 address (an address belongs to one wallet). */
function freshBtcAddress(): string {
  return bech32.encode("bc", [0, ...bech32.toWords(randomBytes(20))]);
}

async function shot(page: Page, testInfo: TestInfo, name: string) {
  // Settled: fonts loaded, no navigation under way.
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: path.join(OUT, testInfo.project.name, `${name}.png`), fullPage: true });
}

async function ready(page: Page, testInfo: TestInfo) {
  if (testInfo.project.use.javaScriptEnabled !== false) {
    await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
  }
}

test("the holder's screens", async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  await page.goto("/");
  await ready(page, testInfo);
  await shot(page, testInfo, "01-landing");

  const user = await createUser(request, "screens");
  await requestWallet(request, user, "BTC");
  const walletId = requestedWalletId(user.email, "BTC");
  ops("issue-address", walletId, freshBtcAddress());
  ops("credit", walletId, "0.0425", randomBytes(32).toString("hex"));
  ops("credit", walletId, "0.01", randomBytes(32).toString("hex"));
  await requestWallet(request, user, "ETH");
  await fundXrp(request, user);
  ops("message", "--to", user.email, "Welcome to Coinkeep. Your first deposit has arrived.");

  await login(page, testInfo, user);
  await shot(page, testInfo, "02-home");

  await page.goto("/wallet/btc");
  await ready(page, testInfo);
  await shot(page, testInfo, "03-wallet-btc");

  // The send flow: the form filled in, then the risk warning.
  await page.goto("/wallet/btc?send=1");
  await ready(page, testInfo);
  await page.getByLabel("Receiver address", { exact: true }).fill(freshBtcAddress());
  await page.getByLabel("Amount in BTC", { exact: true }).fill("0.005");
  if (testInfo.project.use.javaScriptEnabled === false) {
    await page.getByRole("button", { name: "Convert BTC to USD" }).click();
  }
  await shot(page, testInfo, "04-send-form");
  await page.getByRole("button", { name: "Send BTC", exact: true }).click();
  await expect(page.getByRole("dialog", { name: "Check before you send" })).toBeVisible();
  await shot(page, testInfo, "05-send-warning");
  await page.getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
  await shot(page, testInfo, "06-sent");

  await page.goto("/history");
  await ready(page, testInfo);
  await page.locator(".tx-list summary").first().click();
  await shot(page, testInfo, "07-history");

  // The phone's ☰ menu, open.
  if (testInfo.project.name.endsWith("mobile")) {
    await page.goto("/home");
    await ready(page, testInfo);
    await page.locator(".burger > summary").click();
    await shot(page, testInfo, "08-menu");
  }

  // An XRP wallet's send form, with its destination tag.
  await page.goto("/wallet/xrp?send=1");
  await ready(page, testInfo);
  await shot(page, testInfo, "09-xrp-send");
});
