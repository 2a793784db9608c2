import type { Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { address, coinAmount, confirm, fiatAmount, RECEIVER, sendButton, warning } from "./send-helpers.ts";
import { validateAddress } from "../../common/addresses.ts";
import { expectAccessible, jsEnabled, pendingSends, visit, waitForReady } from "./helpers.ts";

// Every test: the holder (1.5 ETH) on the ETH wallet page, the send form open.
test.beforeEach(async ({ page, holder }, testInfo) => {
  void holder;
  await visit(page, "/wallet/eth", testInfo);
  await expect(balance(page)).toHaveText("Balance: 1.5000 ETH");
  await openForm(page, testInfo);
});

// The figures below follow from the price snapshot the e2e server serves (the holder fixture checks it).
// 0.5 × 2531.84 = 1265.92; 1.5 × 2531.84 = 3797.76; 100 / 2531.84 = 0.03949… → 0.0394 (truncated);
// in EUR (rate 0.8686587908): 0.5 × 2531.84 × 0.8686587908 = 1099.646… → 1099.65.

const balance = (page: Page) => page.locator(".wallet-balance");
const txRow = (page: Page, id: string) => page.locator(`[id="tx-${id}"]`);

/** The first press of 'Send ETH' reveals the form: in place with scripts, as `?send=1` without. */
async function openForm(page: Page, testInfo: TestInfo) {
  await sendButton(page).click();
  await expect(address(page)).toBeVisible();
  await expect(address(page)).toBeFocused();
  if (jsEnabled(testInfo)) expect(page.url()).not.toContain("send=1");
  else await expect(page).toHaveURL(/\/wallet\/eth\?send=1$/);
}

/** Types the address and the coin amount; without scripts 'Convert' fills the fiat amount. */
async function fillForm(page: Page, testInfo: TestInfo, to: string, amount: string) {
  await address(page).fill(to);
  await coinAmount(page).fill(amount);
  if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Convert ETH to USD" }).click();
  await expect(fiatAmount(page)).not.toHaveValue("");
}

/** The next press of 'Send ETH' opens the risk warning. */
async function review(page: Page) {
  await sendButton(page).click();
  await expect(warning(page)).toBeVisible();
}

async function sendOnce(page: Page, testInfo: TestInfo, amount: string, to = RECEIVER): Promise<string> {
  await openForm(page, testInfo);
  await fillForm(page, testInfo, to, amount);
  await review(page);
  return confirm(page);
}

test.describe("send", () => {
  test(
    "send 0.5 of 1.5 ETH, overspend, decline, approve: what the user sees at each step",
    { tag: "@remote" },
    async ({ page, holder: { user }, operator }, testInfo) => {
      // A long journey (about 20 page loads without scripts): three times the usual budget.
      test.slow();

      // Send 0.5 ETH.
      await expectAccessible(page);
      await fillForm(page, testInfo, RECEIVER, "0.5");
      await expect(fiatAmount(page)).toHaveValue("1265.92");
      await review(page);
      await expect(warning(page)).toContainText(
        "You are sending 0.5 ETH (about $1265.92) on the Ethereum network to:",
      );
      await expect(warning(page)).toContainText(RECEIVER);
      await expect(warning(page)).toContainText("Crypto transfers are irreversible");
      await expectAccessible(page);
      const first = await confirm(page);
      await expect(page.locator(".send-success-amount")).toHaveText("0.5000 ETH");
      await expect(page.locator(".send-success")).toContainText(RECEIVER);
      await expect(balance(page)).toHaveText("Balance: 1.0000 ETH");
      await expectAccessible(page);
      const pending = pendingSends(user.email);
      expect(pending.map((s) => [s.sendId, s.coin, s.amount, s.address])).toEqual([
        [first, "ETH", "0.5", RECEIVER],
      ]);

      // 'See transaction details': back to the list, the newest send expanded and in view.
      await page.getByRole("link", { name: "See transaction details" }).click();
      await expect(page).toHaveURL(new RegExp(`/wallet/eth\\?tx=${first}#tx-${first}$`));
      await expect(page.getByRole("heading", { name: "Sent!" })).toHaveCount(0);
      await expect(txRow(page, first).locator("details")).toHaveAttribute("open", "");
      await expect(txRow(page, first).locator("summary")).toContainText("Sent");
      await expect(txRow(page, first).locator("summary")).toContainText("−0.500 ETH");
      await expect(txRow(page, first).locator("summary")).toContainText("Unconfirmed");
      await expect(txRow(page, first).locator("summary")).toBeInViewport();
      if (jsEnabled(testInfo)) await expect(txRow(page, first).locator("summary")).toBeFocused();
      await expect(txRow(page, first).getByText("0.5 ETH", { exact: true })).toBeVisible();
      await expectAccessible(page);

      // 2 ETH is more than the 1.0 left: refused, the values kept.
      await waitForReady(page, testInfo);
      await openForm(page, testInfo);
      await fillForm(page, testInfo, RECEIVER, "2");
      await review(page);
      await warning(page).getByRole("button", { name: "Confirm" }).click();
      await expect(page.getByText("Insufficient balance.", { exact: true })).toBeVisible();
      await expect(warning(page)).toHaveCount(0);
      await expect(address(page)).toHaveValue(RECEIVER);
      await expect(coinAmount(page)).toHaveValue("2");
      await expect(fiatAmount(page)).toHaveValue("5063.68");
      await expect(balance(page)).toHaveText("Balance: 1.0000 ETH");
      expect(pendingSends(user.email)).toHaveLength(1);

      // The operator declines the first send: 'Declined', the 0.5 back.
      operator.decline(first, "The destination failed a compliance check.");
      await visit(page, "/wallet/eth", testInfo);
      await expect(balance(page)).toHaveText("Balance: 1.5000 ETH");
      await expect(txRow(page, first).locator("summary")).toContainText("Declined");

      // A new send, approved: 'Confirmed', here and in /history.
      const second = await sendOnce(page, testInfo, "0.25");
      await expect(page.locator(".send-success-amount")).toHaveText("0.2500 ETH");
      await expect(balance(page)).toHaveText("Balance: 1.2500 ETH");
      operator.approve(second);
      await visit(page, "/wallet/eth", testInfo);
      await expect(txRow(page, second).locator("summary")).toContainText("Confirmed");
      await expect(balance(page)).toHaveText("Balance: 1.2500 ETH");
      await visit(page, "/history", testInfo);
      await expect(txRow(page, second).locator("summary")).toContainText("Confirmed");
      await expect(txRow(page, second).locator("summary")).toContainText("−0.250 ETH");
      await expect(txRow(page, first).locator("summary")).toContainText("Declined");
      await expectAccessible(page);
    },
  );

  test("'Please fill out all fields.', 'Full', conversions both ways, amounts of at most 4 decimals", async ({
    page,
    holder: { user },
  }, testInfo) => {
    test.slow();
    const js = jsEnabled(testInfo);

    // Nothing filled in: one message, every field marked, no warning.
    await sendButton(page).click();
    await expect(page.getByText("Please fill out all fields.", { exact: true })).toBeVisible();
    await expect(warning(page)).toHaveCount(0);
    for (const field of [address(page), coinAmount(page), fiatAmount(page)]) {
      await expect(field).toHaveAttribute("aria-invalid", "true");
      await expect(field).toHaveAccessibleDescription(/Please fill out all fields\./);
    }
    await expect(address(page)).toBeFocused();
    await expectAccessible(page);

    // The address alone is not enough.
    await address(page).fill(RECEIVER);
    await sendButton(page).click();
    await expect(page.getByText("Please fill out all fields.", { exact: true })).toBeVisible();
    await expect(address(page)).not.toHaveAttribute("aria-invalid", "true");
    await expect(coinAmount(page)).toHaveAttribute("aria-invalid", "true");

    // 'Full': the whole balance, and its value.
    await page.getByRole("button", { name: "Full", exact: true }).click();
    await expect(coinAmount(page)).toHaveValue("1.5");
    await expect(fiatAmount(page)).toHaveValue("3797.76");
    await expect(address(page)).toHaveValue(RECEIVER);

    // Coin → fiat and fiat → coin (truncated to 4 decimals).
    await coinAmount(page).fill("0.5");
    if (!js) await page.getByRole("button", { name: "Convert ETH to USD" }).click();
    await expect(fiatAmount(page)).toHaveValue("1265.92");
    await fiatAmount(page).fill("100");
    if (!js) await page.getByRole("button", { name: "Convert USD to ETH" }).click();
    await expect(coinAmount(page)).toHaveValue("0.0394");

    if (js) {
      // Keystrokes that would leave digits-one-dot-4-decimals are refused; '.' and '0.' stay.
      await expect(coinAmount(page)).toHaveAttribute("inputmode", "decimal");
      await coinAmount(page).fill("");
      await coinAmount(page).pressSequentially("1.23456");
      await expect(coinAmount(page)).toHaveValue("1.2345");
      await coinAmount(page).fill("");
      await coinAmount(page).pressSequentially("a.b.");
      await expect(coinAmount(page)).toHaveValue(".");
      await coinAmount(page).fill("");
      await coinAmount(page).pressSequentially("0.");
      await expect(coinAmount(page)).toHaveValue("0.");
      await expect(fiatAmount(page)).toHaveValue("0.00");
      await coinAmount(page).pressSequentially("25");
      await expect(coinAmount(page)).toHaveValue("0.25");
      await expect(fiatAmount(page)).toHaveValue("632.96");
      await fiatAmount(page).fill("");
      await fiatAmount(page).pressSequentially("12x.345678");
      await expect(fiatAmount(page)).toHaveValue("12.3456");
      await expect(coinAmount(page)).toHaveValue("0.0048");
    } else {
      // Without scripts the server refuses what the browser let through.
      await coinAmount(page).fill("1.23456");
      await sendButton(page).click();
      const format = "Use digits and one dot, with at most 4 decimals (for example 0.5).";
      await expect(page.getByText(format, { exact: true })).toBeVisible();
      await expect(coinAmount(page)).toHaveValue("1.23456");
      await expect(coinAmount(page)).toHaveAttribute("aria-invalid", "true");
      await expect(coinAmount(page)).toHaveAccessibleDescription(
        new RegExp(format.replace(/[.()]/g, "\\$&")),
      );
      await expect(coinAmount(page)).toBeFocused();
      await expect(warning(page)).toHaveCount(0);
      await coinAmount(page).fill("0");
      await sendButton(page).click();
      await expect(page.getByText("Enter an amount greater than 0.", { exact: true })).toBeVisible();
      await expectAccessible(page);
    }
    expect(pendingSends(user.email)).toHaveLength(0);

    // In euros: the label and the figure follow the currency multiplier.
    await page.locator(".sidebar .currency-picker summary").click();
    await page.locator(".sidebar").getByRole("button", { name: "EUR €" }).click();
    await expect(page.locator(".sidebar .currency-picker summary")).toHaveText("EUR €");
    await visit(page, "/wallet/eth", testInfo);
    await openForm(page, testInfo);
    await coinAmount(page).fill("0.5");
    if (!js) await page.getByRole("button", { name: "Convert ETH to EUR" }).click();
    await expect(fiatAmount(page, "EUR")).toHaveValue("1099.65");
  });

  test("the warning's backdrop, Escape and Cancel close it and keep the values; nothing is sent", async ({
    page,
    holder: { user },
  }, testInfo) => {
    const js = jsEnabled(testInfo);
    await fillForm(page, testInfo, RECEIVER, "0.3");

    const expectKept = async () => {
      await expect(warning(page)).toHaveCount(0);
      await expect(address(page)).toHaveValue(RECEIVER);
      await expect(coinAmount(page)).toHaveValue("0.3");
      await expect(fiatAmount(page)).toHaveValue("759.55");
    };

    // Cancel (focused first: the safe choice).
    await review(page);
    await expect(warning(page).getByRole("button", { name: "Cancel" })).toBeFocused();
    await warning(page).getByRole("button", { name: "Cancel" }).click();
    await expectKept();
    if (js) await expect(sendButton(page)).toBeFocused();

    // The backdrop: a click outside the dialog.
    await review(page);
    await page.mouse.click(5, 5);
    await expectKept();

    if (js) {
      // Escape; focus goes back to 'Send ETH'. The page behind a modal dialog is inert: Tab
      // moves between its buttons and never reaches the page behind.
      await review(page);
      await page.keyboard.press("Tab");
      await expect(warning(page).getByRole("button", { name: "Confirm" })).toBeFocused();
      await page.keyboard.press("Shift+Tab");
      await expect(warning(page).getByRole("button", { name: "Cancel" })).toBeFocused();
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press("Tab");
        const outside = await page.evaluate(() => {
          const active = document.activeElement;
          return active !== null && active !== document.body && !active.closest("dialog");
        });
        expect(outside).toBe(false);
      }
      await warning(page).getByRole("button", { name: "Confirm" }).focus();
      await page.keyboard.press("Escape");
      await expectKept();
      await expect(sendButton(page)).toBeFocused();
      // Enter in a field reviews, as the 'Send ETH' button does.
      await coinAmount(page).press("Enter");
      await expect(warning(page)).toBeVisible();
      await page.keyboard.press("Escape");
      await expectKept();
    }
    expect(pendingSends(user.email)).toHaveLength(0);
    await expect(page.locator(".tx-list li").filter({ hasText: "Sent" })).toHaveCount(0);
  });

  test(
    "a reloaded 'Sent!' page or a re-submitted confirmation sends once (idempotency key)",
    { tag: "@remote" },
    async ({ page, holder: { user } }, testInfo) => {
      await fillForm(page, testInfo, RECEIVER, "0.1");
      await review(page);
      // The confirmation form as the browser would post it (a second press, a resubmission).
      const form = page.locator("form.send-form");
      const posted: Record<string, string> = { intent: "confirm" };
      for (const name of ["csrf", "key", "address", "coin", "fiat"])
        posted[name] = await form.locator(`input[name="${name}"]`).inputValue();
      expect(posted.key).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
      let id: string;
      if (jsEnabled(testInfo)) {
        // A double click on Confirm.
        await warning(page).getByRole("button", { name: "Confirm" }).dblclick();
        await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
        id = new URL(page.url()).searchParams.get("sent") ?? "";
      } else {
        id = await confirm(page);
      }

      await page.reload();
      await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
      await expect(page.locator(".send-success-amount")).toHaveText("0.1000 ETH");

      // Back to the confirmation is not served from the cache: every page and form answer is
      // `no-store` (record 014), so the browser asks to resubmit. What a resubmission sends
      // is the same form again, and the same key answers the same send.
      const again = await page.request.post("/wallet/eth", { form: posted, maxRedirects: 0 });
      expect(again.status()).toBe(302);
      expect(again.headers()["location"]).toBe(`/wallet/eth?sent=${id}`);

      expect(pendingSends(user.email).map((s) => s.sendId)).toEqual([id]);
      await visit(page, "/wallet/eth", testInfo);
      await expect(page.locator(".tx-list li").filter({ hasText: "Sent" })).toHaveCount(1);
      await expect(balance(page)).toHaveText("Balance: 1.4000 ETH");
    },
  );

  test("'Send another one' opens a fresh form; the receiver's address can be copied", async ({
    page,
    holder: { user },
    context,
  }, testInfo) => {
    const js = jsEnabled(testInfo);
    const firstKey = await page.locator('form.send-form input[name="key"]').inputValue();
    await fillForm(page, testInfo, RECEIVER, "0.2");
    await review(page);
    await confirm(page);

    if (js) {
      await context.grantPermissions(["clipboard-read", "clipboard-write"]);
      await page.getByRole("button", { name: "Copy address" }).click();
      await expect(page.getByRole("status").getByText("Copied", { exact: true })).toBeVisible();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(RECEIVER);
    } else {
      // Without scripts there is no clipboard button: the address is plain, selectable text.
      await expect(page.getByRole("button", { name: "Copy address" })).toHaveCount(0);
      await expect(page.locator(".send-success .address-text")).toHaveText(RECEIVER);
    }

    await page.getByRole("link", { name: "Send another one" }).click();
    await expect(page).toHaveURL(/\/wallet\/eth\?send=1$/);
    await expect(page.getByRole("heading", { name: "Sent!" })).toHaveCount(0);
    await expect(address(page)).toHaveValue("");
    await expect(coinAmount(page)).toHaveValue("");
    await expect(fiatAmount(page)).toHaveValue("");
    await expect(address(page)).toBeFocused();
    const secondKey = await page.locator('form.send-form input[name="key"]').inputValue();
    expect(secondKey).not.toBe(firstKey);

    await fillForm(page, testInfo, RECEIVER, "0.2");
    await review(page);
    await confirm(page);
    expect(pendingSends(user.email)).toHaveLength(2);
    await expect(balance(page)).toHaveText("Balance: 1.1000 ETH");
  });

  // Issue 15, defect 3: the warning used to ask to confirm a transfer "to: not-an-address".
  test("a bad address is shown at its field before any warning; an own address: 'Transaction failed: …'; nothing sent", async ({
    page,
    holder: { user, address: own },
  }, testInfo) => {
    const fieldError = page.locator("#send-address-error");
    // One letter's case changed: the EIP-55 checksum no longer matches.
    const typo = RECEIVER.replace("48F3", "48f3");
    expect(typo).not.toBe(RECEIVER);
    for (const bad of [typo, "not-an-address"]) {
      const rule = validateAddress("ETH", bad);
      if (rule.ok) throw new Error("a bad address passed");
      await fillForm(page, testInfo, bad, "0.1");
      await sendButton(page).click();
      // The backend's own sentence, at the field; no warning opens.
      await expect(fieldError).toHaveText(rule.reason);
      await expect(warning(page)).toHaveCount(0);
      await expect(address(page)).toHaveAttribute("aria-invalid", "true");
      await expect(address(page)).toHaveValue(bad);
      await expect(coinAmount(page)).toHaveValue("0.1");
      if (jsEnabled(testInfo)) await expect(address(page)).toBeFocused();
    }
    expect(validateAddress("ETH", typo)).toMatchObject({ reason: expect.stringMatching(/checksum/) });
    await expectAccessible(page);

    const failure = page.locator(".send-errors");
    await address(page).fill(own);
    await review(page);
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expect(failure).toHaveText("Transaction failed: You cannot send to this wallet's own address.");

    expect(pendingSends(user.email)).toHaveLength(0);
    await expect(balance(page)).toHaveText("Balance: 1.5000 ETH");
  });
});
