// Issue 15: the holder's flows with the keyboard alone — no click, no fill:
// Tab moves, Enter and Space act, keys type. Each test runs with scripts on and
// off. `tabTo` presses Tab until the wanted control has the focus (and fails
// if it never comes), so a control the keyboard cannot reach fails the test.
import type { Locator, Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { fundXrp, jsEnabled, visit } from "./helpers.ts";

const MOBILE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };

async function focused(target: Locator): Promise<boolean> {
  return target.evaluate((element) => element === document.activeElement).catch(() => false);
}

/** Presses Tab (at most `max` times) until `target` has the focus. */
async function tabTo(page: Page, target: Locator, max = 80) {
  for (let i = 0; i < max; i++) {
    if (await focused(target)) return;
    await page.keyboard.press("Tab");
  }
  await expect(target).toBeFocused();
}

/** Types into the focused field, replacing what it holds. */
async function typeText(page: Page, text: string) {
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type(text);
}

test.describe("with the keyboard alone", () => {
  test.use({ viewport: DESKTOP });

  test("send ETH: open the form, fill it, confirm the warning, see 'Sent!'", async ({
    page,
    signedIn,
    fundEth,
    operator,
  }, testInfo) => {
    test.setTimeout(120_000);
    await fundEth(signedIn, "1.5");
    await visit(page, "/wallet/eth", testInfo);

    await tabTo(
      page,
      page.getByRole("link", { name: "Send ETH" }).or(page.getByRole("button", { name: "Send ETH" })),
    );
    await page.keyboard.press("Enter");
    const address = page.getByLabel("Receiver address", { exact: true });
    await tabTo(page, address);
    await typeText(page, "0x52908400098527886E0F7030069857D2E4169EE7");
    await tabTo(page, page.getByLabel("Amount in ETH", { exact: true }));
    await typeText(page, "0.25");
    if (!jsEnabled(testInfo)) {
      // Without scripts the USD figure comes from a round trip: its button, by keyboard.
      await tabTo(page, page.getByRole("button", { name: "Convert ETH to USD" }));
      await page.keyboard.press("Enter");
      await expect(page.getByLabel("Amount in USD", { exact: true })).not.toHaveValue("");
    }
    await tabTo(page, page.getByRole("button", { name: "Send ETH", exact: true }));
    await page.keyboard.press("Enter");

    const warning = page.getByRole("dialog", { name: "Check before you send" });
    await expect(warning).toBeVisible();
    await tabTo(page, warning.getByRole("button", { name: "Confirm" }), 10);
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
    expect(operator.pendingSends(signedIn.email).map((send) => send.amount)).toEqual(["0.25"]);
  });

  test("send XRP with a destination tag, shown on the warning and to the operator", async ({
    page,
    request,
    signedIn,
    operator,
  }, testInfo) => {
    test.setTimeout(120_000);
    await fundXrp(request, signedIn);
    await visit(page, "/wallet/xrp", testInfo);
    await tabTo(
      page,
      page.getByRole("link", { name: "Send XRP" }).or(page.getByRole("button", { name: "Send XRP" })),
    );
    await page.keyboard.press("Enter");
    await tabTo(page, page.getByLabel("Receiver address", { exact: true }));
    // ripple-address-codec's published classic address.
    await typeText(page, "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59");
    await tabTo(page, page.getByLabel("Destination tag (optional)", { exact: true }), 10);
    await typeText(page, "20240517");
    await tabTo(page, page.getByLabel("Amount in XRP", { exact: true }), 10);
    await typeText(page, "2");
    if (!jsEnabled(testInfo)) {
      await tabTo(page, page.getByRole("button", { name: "Convert XRP to USD" }));
      await page.keyboard.press("Enter");
      await expect(page.getByLabel("Amount in USD", { exact: true })).not.toHaveValue("");
    }
    await tabTo(page, page.getByRole("button", { name: "Send XRP", exact: true }));
    await page.keyboard.press("Enter");
    const warning = page.getByRole("dialog", { name: "Check before you send" });
    await expect(warning).toContainText("Destination tag: 20240517");
    await tabTo(page, warning.getByRole("button", { name: "Confirm" }), 10);
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
    expect(
      operator.pendingSends(signedIn.email).map((send) => [send.amount, send.address, send.destinationTag]),
    ).toEqual([["2", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", 20240517]]);
  });

  test("the currency picker: open it, choose EUR, the total is in euros", async ({
    page,
    signedIn,
  }, testInfo) => {
    expect(signedIn.email).toBeTruthy();
    await visit(page, "/home", testInfo);
    await tabTo(page, page.locator(".sidebar .currency-picker > summary"));
    await page.keyboard.press("Enter");
    await tabTo(page, page.locator(".sidebar").getByRole("button", { name: "EUR €" }), 10);
    await page.keyboard.press("Enter");
    await expect(page.locator(".sidebar .total-value")).toHaveText(/^€/u);
  });

  test("search the coins on /home", async ({ page, signedIn }, testInfo) => {
    expect(signedIn.email).toBeTruthy();
    await visit(page, "/home", testInfo);
    await tabTo(page, page.getByRole("searchbox").or(page.getByLabel("Search")).first());
    await page.keyboard.type("doge");
    if (!jsEnabled(testInfo)) await page.keyboard.press("Enter");
    await expect(page.locator("a.coin-link")).toHaveCount(1);
    await expect(page.locator("a.coin-link")).toContainText("DOGE");
  });

  test("restore: e-mail, the 12 words, a new password, then sign in", async ({ page, user }, testInfo) => {
    test.setTimeout(120_000);
    await visit(page, "/restore-wallet", testInfo);
    await tabTo(page, page.getByLabel("Email"));
    await page.keyboard.type(user.email);
    await page.keyboard.press("Enter");
    await expect(page.getByText("Step 2 of 3")).toBeVisible();
    await tabTo(page, page.getByLabel("Word 1", { exact: true }));
    for (let i = 0; i < 12; i++) {
      await expect(page.getByLabel(`Word ${i + 1}`, { exact: true })).toBeFocused();
      await page.keyboard.type(user.words[i]!);
      if (i < 11) await page.keyboard.press("Tab");
    }
    await page.keyboard.press("Enter");
    await expect(page.getByText("Step 3 of 3")).toBeVisible();
    await tabTo(page, page.getByLabel("New password"));
    await page.keyboard.type("keyboard only");
    await page.keyboard.press("Tab");
    await expect(page.getByLabel("Confirm password")).toBeFocused();
    await page.keyboard.type("keyboard only");
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/login$/u);
    await expect(
      page.getByText("Your password has been changed. Log in with your new password."),
    ).toBeVisible();

    await tabTo(page, page.getByLabel("Email"));
    await typeText(page, user.email);
    await page.keyboard.press("Tab");
    await expect(page.getByLabel("Password")).toBeFocused();
    await page.keyboard.type("keyboard only");
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/home$/u);
  });

  test("the contact popup on the landing page: open, write, send", async ({ page }, testInfo) => {
    await visit(page, "/", testInfo);
    await tabTo(page, page.getByRole("link", { name: "Contact" }));
    await page.keyboard.press("Enter");
    const popup = page.getByRole("dialog");
    await tabTo(page, popup.getByRole("button", { name: "Send message" }), 10);
    await page.keyboard.press("Enter");
    await tabTo(page, popup.getByLabel("Email"), 10);
    await page.keyboard.type(`keys-${Date.now()}@example.com`);
    await page.keyboard.press("Tab");
    await expect(popup.getByLabel("Comment")).toBeFocused();
    await page.keyboard.type("Asked with the keyboard alone.");
    await tabTo(page, popup.getByRole("button", { name: "Send", exact: true }), 10);
    await page.keyboard.press("Enter");
    await expect(page.getByRole("dialog")).toHaveAccessibleName("Message sent!");
  });
});

test.describe("with the keyboard alone, on a phone", () => {
  test.use({ viewport: MOBILE });

  test("the ☰ menu opens with Enter, its links are reachable, and it closes again", async ({
    page,
    signedIn,
  }, testInfo) => {
    expect(signedIn.email).toBeTruthy();
    await visit(page, "/home", testInfo);
    const menuButton = page.locator(".burger > summary");
    await tabTo(page, menuButton);
    await page.keyboard.press("Enter");
    const menu = page.getByRole("navigation", { name: "Menu" });
    await expect(menu).toBeVisible();
    await tabTo(page, menu.getByRole("link", { name: "Security" }), 10);
    if (jsEnabled(testInfo)) {
      await page.keyboard.press("Escape");
      await expect(menu).toBeHidden();
      await expect(menuButton).toBeFocused();
    } else {
      // Without scripts the menu is a plain disclosure: back to its button, Enter closes it.
      await page.keyboard.press("Shift+Tab");
      for (let i = 0; i < 10 && !(await focused(menuButton)); i++) await page.keyboard.press("Shift+Tab");
      await expect(menuButton).toBeFocused();
      await page.keyboard.press("Enter");
      await expect(menu).toBeHidden();
    }
    await page.keyboard.press("Enter");
    await tabTo(page, menu.getByRole("link", { name: "Security" }), 10);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/security$/u);
    await expect(page.getByRole("heading", { name: "Security", level: 1 })).toBeVisible();
  });
});
