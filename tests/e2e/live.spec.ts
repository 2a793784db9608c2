// Live events (record 033): with scripts on, a signed-in page opens one event
// stream and shows what changed (an operator's message, a deposit, a send's
// decision) without a reload and without a poll; with the stream blocked the
// spec's polling takes over; with scripts off nothing changes.
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { sendThroughApi } from "./send-helpers.ts";
import { jsEnabled, login, sidebar, visit } from "./helpers.ts";

/** The page's requests for the unread count (the 10 s poll, or a fetch after an event). */
function unreadCountRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname.startsWith("/unread-count")) seen.push(request.url());
  });
  return seen;
}

/** The page's requests for the event stream. */
function streamRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/events") seen.push(request.url());
  });
  return seen;
}

const notificationsBadge = (page: Page) =>
  sidebar(page)
    .getByRole("link", { name: /^Notifications/ })
    .locator(".badge");
const liveShell = (page: Page) => page.locator('.app-shell[data-live="open"]');
const balance = (page: Page) => page.locator(".wallet-balance");
const txRow = (page: Page, id: string) => page.locator(`[id="tx-${id}"]`);

test.describe("live events, scripts on", () => {
  test.beforeEach(({ page: _page }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "the stream is a script's; without scripts pages stay as they are");
  });

  test("an operator's message shows on the open page at once; no poll runs while the stream is open", async ({
    page,
    user,
    operator,
  }, testInfo) => {
    // The page's clock is the test's: the 10 s poll could only run if the test moved time on.
    await page.clock.install();
    const counts = unreadCountRequests(page);
    await login(page, testInfo, user);
    await expect(liveShell(page)).toHaveCount(1);
    await page.clock.runFor(25_000);
    expect(counts).toEqual([]);

    operator.message(
      user.email,
      `Compliance check ${randomUUID().slice(0, 8)}: confirm your source of funds.`,
    );
    await expect(notificationsBadge(page)).toHaveText("1 unread");
    // One fetch of the count, asked for by the event.
    expect(counts).toHaveLength(1);
  });

  test("a deposit shows on /home, total included, without a reload or the 60 s refresh", async ({
    page,
    signedIn,
    fundEth,
    operator,
  }) => {
    await page.clock.install();
    await page.reload();
    await expect(liveShell(page)).toHaveCount(1);
    const { walletId } = await fundEth(signedIn, "0");
    const eth = page.getByRole("table").getByRole("row").filter({ hasText: "Ethereum" });
    // The wallet issued by the operator shows too (a "wallets" event).
    await expect(eth.getByRole("cell").first()).toHaveText("0");
    await expect(page.locator(".sidebar .total-value")).toHaveText("$0.00");

    operator.credit(walletId, "2.25");
    await expect(eth.getByRole("cell").first()).toHaveText("2.25");
    await expect(page.locator(".sidebar .total-value")).not.toHaveText("$0.00");
  });

  test("a send made elsewhere, then the operator's decision, show on the open wallet page", async ({
    page,
    signedIn,
    fundEth,
    operator,
    request,
  }, testInfo) => {
    const { walletId } = await fundEth(signedIn, "1.5");
    await page.clock.install();
    await visit(page, "/wallet/eth", testInfo);
    await expect(liveShell(page)).toHaveCount(1);
    await expect(balance(page)).toHaveText("Balance: 1.5000 ETH");

    await sendThroughApi(request, signedIn, walletId, "0.5");
    await expect(balance(page)).toHaveText("Balance: 1.0000 ETH");
    const [pending] = operator.pendingSends(signedIn.email);
    if (!pending) throw new Error("the send is not waiting for a decision");
    await expect(txRow(page, pending.sendId).locator("summary")).toContainText("Unconfirmed");

    operator.approve(pending.sendId);
    await expect(txRow(page, pending.sendId).locator("summary")).toContainText("Confirmed");

    await sendThroughApi(request, signedIn, walletId, "0.25");
    await expect(balance(page)).toHaveText("Balance: 0.7500 ETH");
    const [second] = operator.pendingSends(signedIn.email);
    if (!second) throw new Error("the second send is not waiting for a decision");
    operator.decline(second.sendId, "The destination failed a compliance check.");
    await expect(txRow(page, second.sendId).locator("summary")).toContainText("Declined");
    await expect(balance(page)).toHaveText("Balance: 1.0000 ETH");
  });

  test("with the stream blocked, the 10 s poll brings the message", async ({
    page,
    user,
    operator,
  }, testInfo) => {
    await page.route("**/events", (route) => route.abort());
    await page.clock.install();
    const counts = unreadCountRequests(page);
    await login(page, testInfo, user);

    operator.message(user.email, `Notice ${randomUUID().slice(0, 8)}: your account is active.`);
    await page.clock.runFor(2_000);
    await expect(notificationsBadge(page)).toHaveCount(0);
    await expect(liveShell(page)).toHaveCount(0);
    await page.clock.runFor(10_000);
    await expect(notificationsBadge(page)).toHaveText("1 unread");
    expect(counts.length).toBeGreaterThan(0);
  });
});

test("scripts off: no stream; the page shows a new message once it is loaded again", async ({
  page,
  user,
  operator,
}, testInfo) => {
  test.skip(jsEnabled(testInfo), "with scripts on the stream brings it (above)");
  const streams = streamRequests(page);
  await login(page, testInfo, user);
  operator.message(user.email, `Notice ${randomUUID().slice(0, 8)}: your account is active.`);
  await expect(notificationsBadge(page)).toHaveCount(0);
  await page.reload();
  await expect(notificationsBadge(page)).toHaveText("1 unread");
  expect(streams).toEqual([]);
});
