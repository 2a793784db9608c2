// Kill switches end to end (issue 16, record 041), with and without scripts:
// an operator pauses a coin's sends (or a planted reconciliation shortfall
// pauses them) and the holder sees why on the send form, a submitted send is
// refused with the same words and nothing is held; after `resume` it goes through.
//
// Each project pauses its own coin (js: BNB, no-js: TRX), which no other spec
// sends and which the e2e server issues by hand (DOGE has an account key there),
// so the switch never stops another test's send; the two tests of a project
// share it and so run one after the other.
import { randomBytes } from "node:crypto";
import type { Page, TestInfo } from "@playwright/test";
import { createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { expect, test } from "./fixtures.ts";
import {
  expectAccessible,
  jsEnabled,
  ops,
  requestedWalletId,
  requestWallet,
  visit,
  waitForReady,
  type TestUser,
} from "./helpers.ts";

test.describe.configure({ mode: "serial" });

interface CoinCase {
  ticker: "BNB" | "TRX";
  /** A fresh address of the coin (an address belongs to one wallet). */
  fresh(): string;
  /** Someone else's address to send to. */
  receiver: string;
}

const COINS: Record<string, CoinCase> = {
  js: {
    ticker: "BNB",
    fresh: () => `0x${randomBytes(20).toString("hex")}`,
    receiver: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  },
  "no-js": {
    ticker: "TRX",
    // A TRON address: 0x41, then a 20-byte hash, in base58check.
    fresh: () => createBase58check(sha256).encode(Uint8Array.from([0x41, ...randomBytes(20)])),
    // COINS.md's TRX vector.
    receiver: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
  },
};

function coinOf(testInfo: TestInfo): CoinCase {
  const found = COINS[testInfo.project.name];
  if (!found) throw new Error(`no coin for the project ${testInfo.project.name}`);
  return found;
}

const pausedText = (ticker: string) =>
  `Sends of ${ticker} are paused for now. Your funds are safe; please try again later.`;

/** The user's wallet of the coin with an issued address and 2 coins deposited; the page on it. */
async function holder(
  page: Page,
  request: Parameters<typeof requestWallet>[0],
  user: TestUser,
  testInfo: TestInfo,
) {
  const coin = coinOf(testInfo);
  await requestWallet(request, user, coin.ticker);
  const walletId = requestedWalletId(user.email, coin.ticker);
  ops("issue-address", walletId, coin.fresh());
  ops("credit", walletId, "2", `0x${randomBytes(32).toString("hex")}`);
  await visit(page, `/wallet/${coin.ticker.toLowerCase()}`, testInfo);
  await expect(page.locator(".wallet-balance")).toHaveText(`Balance: 2.0000 ${coin.ticker}`);
  return coin;
}

const notice = (page: Page, ticker: string) =>
  page.getByRole("status").filter({ hasText: pausedText(ticker) });

/** Opens the form, fills it, reviews and confirms: the send's answer shows on the page. */
async function submitSend(page: Page, testInfo: TestInfo, coin: CoinCase, amount: string) {
  const send = page.getByRole("button", { name: `Send ${coin.ticker}`, exact: true });
  const address = page.getByLabel("Receiver address", { exact: true });
  if (!(await address.isVisible())) await send.click();
  await expect(address).toBeVisible();
  await address.fill(coin.receiver);
  await page.getByLabel(`Amount in ${coin.ticker}`, { exact: true }).fill(amount);
  if (!jsEnabled(testInfo)) {
    await page.getByRole("button", { name: `Convert ${coin.ticker} to USD` }).click();
  }
  await send.click();
  const warning = page.getByRole("dialog", { name: "Check before you send" });
  await expect(warning).toBeVisible();
  await warning.getByRole("button", { name: "Confirm" }).click();
}

/** Refused while paused: the form says why, the balance is as it was, nothing waits for a decision. */
async function expectRefused(page: Page, testInfo: TestInfo, coin: CoinCase, user: TestUser) {
  await submitSend(page, testInfo, coin, "0.5");
  await expect(page.locator(".send-errors")).toHaveText(pausedText(coin.ticker));
  await expect(notice(page, coin.ticker)).toBeVisible();
  await expect(page.locator(".wallet-balance")).toHaveText(`Balance: 2.0000 ${coin.ticker}`);
  expect(ops("sends", "--json")).not.toContain(user.email);
}

/** After resume: no notice, and the send goes through. */
async function expectSendGoesThrough(page: Page, testInfo: TestInfo, coin: CoinCase) {
  await visit(page, `/wallet/${coin.ticker.toLowerCase()}`, testInfo);
  await waitForReady(page, testInfo);
  await expect(notice(page, coin.ticker)).toHaveCount(0);
  await submitSend(page, testInfo, coin, "0.5");
  await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
  await expect(page.locator(".wallet-balance")).toHaveText(`Balance: 1.5000 ${coin.ticker}`);
}

test("an operator pauses a coin's sends: the send form says so, a send is refused; after resume it goes through", async ({
  page,
  request,
  signedIn,
}, testInfo) => {
  const coin = await holder(page, request, signedIn, testInfo);
  await expect(notice(page, coin.ticker)).toHaveCount(0);
  expect(ops("pause", "sends", "--coin", coin.ticker, "--reason", "e2e: node maintenance")).toContain(
    `Paused sends of ${coin.ticker} (every user).`,
  );
  try {
    await visit(page, `/wallet/${coin.ticker.toLowerCase()}`, testInfo);
    await waitForReady(page, testInfo);
    // Shown where the send starts, before anything is typed; the operator's reason never is.
    await expect(notice(page, coin.ticker)).toBeVisible();
    await expect(page.getByText("node maintenance")).toHaveCount(0);
    await expectAccessible(page);
    await expectRefused(page, testInfo, coin, signedIn);
  } finally {
    ops("resume", "sends", "--coin", coin.ticker, "--reason", "e2e: maintenance over");
  }
  await expectSendGoesThrough(page, testInfo, coin);
});

test("a planted shortfall (holdings below what is owed) pauses the coin's sends; the send form says so", async ({
  page,
  request,
  signedIn,
}, testInfo) => {
  const coin = await holder(page, request, signedIn, testInfo);
  const set = ops("holdings", "set", coin.ticker, "0", "--source", "e2e: planted shortfall");
  expect(set).toContain(`SHORTFALL ${coin.ticker}`);
  expect(set).toContain(`Sends of ${coin.ticker} are now paused (automatic).`);
  try {
    await visit(page, `/wallet/${coin.ticker.toLowerCase()}`, testInfo);
    await waitForReady(page, testInfo);
    await expect(notice(page, coin.ticker)).toBeVisible();
    await expectRefused(page, testInfo, coin, signedIn);
  } finally {
    // Holdings made good first (so no later check pauses again), then the automatic pause lifted.
    ops("holdings", "set", coin.ticker, "1000000000", "--source", "e2e: made good");
    ops("resume", "sends", "--coin", coin.ticker, "--reason", "e2e: shortfall resolved");
  }
  await expectSendGoesThrough(page, testInfo, coin);
});
