// Issue 24, defect 8: without scripts, 'Send ETH' with only one of the two amounts typed used to
// answer 'Please fill out all fields.' (the holder had to find 'Convert'). Now the review press
// fills in the other amount on the server, from the price shown, and opens the risk warning with
// both; Confirm sends what the warning showed. With scripts the fields stay in sync as you type.
import type { Page } from "@playwright/test";
import { expect, test, type Operator } from "./fixtures.ts";
import { address, coinAmount, confirm, fiatAmount, RECEIVER, sendButton, warning } from "./send-helpers.ts";
import { expectAccessible, visit } from "./helpers.ts";

// Every test: the holder (1.5 ETH) with the send form open on the ETH wallet page.
test.beforeEach(async ({ page, holder }, testInfo) => {
  void holder;
  await visit(page, "/wallet/eth?send=1", testInfo);
  await expect(address(page)).toBeVisible();
});

/** Confirm sends it: 'Sent!' shows `shown`, and the operator has that one send, of `amount` ETH to RECEIVER. */
async function expectSent(page: Page, operator: Operator, email: string, amount: string, shown: string) {
  const id = await confirm(page);
  await expect(page.locator(".send-success-amount")).toHaveText(shown);
  expect(operator.pendingSends(email).map((s) => [s.sendId, s.coin, s.amount, s.address])).toEqual([
    [id, "ETH", amount, RECEIVER],
  ]);
}

/**
 * Types the receiver and `amount` ETH (key by key with `keyByKey`), sees the fiat amount hold
 * `fiat`, and presses 'Send ETH'.
 */
async function typeAndSend(page: Page, amount: string, fiat: string, { keyByKey = false } = {}) {
  await address(page).fill(RECEIVER);
  if (keyByKey) await coinAmount(page).pressSequentially(amount);
  else await coinAmount(page).fill(amount);
  await expect(fiatAmount(page)).toHaveValue(fiat);
  await sendButton(page).click();
}

// The figures below follow from the price snapshot the e2e server serves (the holder fixture checks it).
// 0.5 × 2531.84 = 1265.92. 100 / 2531.84 = 0.03949… → 0.0394 (truncated), worth
// 0.0394 × 2531.84 = 99.754496 → $99.75 on the warning. 0.01 / 2531.84 → 0 (truncated).

test.describe("send without scripts, one amount typed", () => {
  test.skip(
    ({ javaScriptEnabled }) => javaScriptEnabled,
    "with scripts the other amount follows as you type",
  );

  test("only the coin amount: the warning shows it and its value; Confirm sends it", async ({
    page,
    holder,
    operator,
  }) => {
    await typeAndSend(page, "0.5", "");

    await expect(warning(page)).toBeVisible();
    await expect(warning(page)).toContainText(
      "You are sending 0.5 ETH (about $1265.92) on the Ethereum network to:",
    );
    await expect(warning(page)).toContainText(RECEIVER);
    // The form behind the warning holds both amounts: Confirm posts them.
    await expect(coinAmount(page)).toHaveValue("0.5");
    await expect(fiatAmount(page)).toHaveValue("1265.92");
    await expect(page.getByText("Please fill out all fields.", { exact: true })).toHaveCount(0);
    await expectAccessible(page);

    await expectSent(page, operator, holder.user.email, "0.5", "0.5000 ETH");
  });

  test("only the fiat amount: the coin amount follows (truncated to 4 decimals); Confirm sends it", async ({
    page,
    holder,
    operator,
  }) => {
    await address(page).fill(RECEIVER);
    await fiatAmount(page).fill("100");
    await sendButton(page).click();

    await expect(warning(page)).toBeVisible();
    await expect(warning(page)).toContainText(
      "You are sending 0.0394 ETH (about $99.75) on the Ethereum network to:",
    );
    await expect(coinAmount(page)).toHaveValue("0.0394");
    await expect(fiatAmount(page)).toHaveValue("100");

    // Cancel keeps both amounts; 'Send ETH' again opens the same warning.
    await warning(page).getByRole("button", { name: "Cancel" }).click();
    await expect(warning(page)).toHaveCount(0);
    await expect(coinAmount(page)).toHaveValue("0.0394");
    await expect(fiatAmount(page)).toHaveValue("100");
    await sendButton(page).click();
    await expect(warning(page)).toContainText("You are sending 0.0394 ETH (about $99.75)");

    await expectSent(page, operator, holder.user.email, "0.0394", "0.0394 ETH");
  });

  test("still refused: no address, a fiat amount worth less than 0.0001 ETH, a Confirm with one amount", async ({
    page,
    holder,
    operator,
  }) => {
    const fillOut = page.getByText("Please fill out all fields.", { exact: true });

    // No address: the spec's message, the address marked; no warning.
    await coinAmount(page).fill("0.5");
    await sendButton(page).click();
    await expect(fillOut).toBeVisible();
    await expect(warning(page)).toHaveCount(0);
    await expect(address(page)).toHaveAttribute("aria-invalid", "true");
    await expect(address(page)).toBeFocused();
    await expect(coinAmount(page)).toHaveValue("0.5");

    // A fiat amount that buys less than 0.0001 ETH: a coin amount of 0, refused as 0 is.
    await address(page).fill(RECEIVER);
    await coinAmount(page).fill("");
    await fiatAmount(page).fill("0.01");
    await sendButton(page).click();
    await expect(page.getByText("Enter an amount greater than 0.", { exact: true })).toBeVisible();
    await expect(warning(page)).toHaveCount(0);
    await expect(coinAmount(page)).toHaveValue("0");
    await expect(coinAmount(page)).toHaveAttribute("aria-invalid", "true");
    await expect(fiatAmount(page)).toHaveValue("0.01");

    // An amount that is not one (5 decimals) fills nothing in: the message as before.
    await coinAmount(page).fill("0.12345");
    await fiatAmount(page).fill("");
    await sendButton(page).click();
    await expect(fillOut).toBeVisible();
    await expect(fiatAmount(page)).toHaveValue("");
    await expect(warning(page)).toHaveCount(0);

    // Only 'Send ETH' fills in: a Confirm posted with one amount is refused, nothing sent.
    const form = page.locator("form.send-form");
    const posted: Record<string, string> = { intent: "confirm", address: RECEIVER, coin: "0.5", fiat: "" };
    for (const name of ["csrf", "key"])
      posted[name] = await form.locator(`input[name="${name}"]`).inputValue();
    const answer = await page.request.post("/wallet/eth", { form: posted, maxRedirects: 0 });
    expect(answer.status()).toBe(400);
    expect(await answer.text()).toContain("Please fill out all fields.");

    expect(operator.pendingSends(holder.user.email)).toHaveLength(0);
  });
});

test.describe("send with scripts", () => {
  test.skip(({ javaScriptEnabled }) => !javaScriptEnabled, "without scripts 'Send ETH' fills it in (above)");

  test("typing the coin amount fills the fiat one as you type; the warning and the send follow", async ({
    page,
    holder,
    operator,
  }) => {
    await typeAndSend(page, "0.5", "1265.92", { keyByKey: true });
    await expect(warning(page)).toContainText(
      "You are sending 0.5 ETH (about $1265.92) on the Ethereum network to:",
    );
    const id = await confirm(page);
    expect(operator.pendingSends(holder.user.email).map((s) => [s.sendId, s.amount])).toEqual([[id, "0.5"]]);
  });
});
