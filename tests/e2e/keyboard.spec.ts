// Issue 15: the holder's flows with the keyboard alone — no click, no fill:
// Tab moves, Enter and Space act, keys type. Each test runs with scripts on and
// off. `tabTo` presses Tab until the wanted control has the focus (and fails
// if it never comes), so a control the keyboard cannot reach fails the test.
import type { Locator, Page, TestInfo } from "@playwright/test";
import { describeAt, expect, test } from "./fixtures.ts";
import { DESKTOP, focused, fundXrp, jsEnabled, MOBILE, tabTo, typeInto, typeText, visit } from "./helpers.ts";

/** On a wallet page: tabs to 'Send COIN' (a link without scripts, a button with) and presses Enter. */
async function openSendForm(page: Page, coin: string) {
  await tabTo(
    page,
    page.getByRole("link", { name: `Send ${coin}` }).or(page.getByRole("button", { name: `Send ${coin}` })),
  );
  await page.keyboard.press("Enter");
}

/**
 * Without scripts the USD figure comes from a round trip: its button, by keyboard. Then 'Send COIN'
 * by keyboard; answers the risk warning it opens.
 */
async function reviewByKeyboard(page: Page, testInfo: TestInfo, coin: string): Promise<Locator> {
  if (!jsEnabled(testInfo)) {
    await tabTo(page, page.getByRole("button", { name: `Convert ${coin} to USD` }));
    await page.keyboard.press("Enter");
    await expect(page.getByLabel("Amount in USD", { exact: true })).not.toHaveValue("");
  }
  await tabTo(page, page.getByRole("button", { name: `Send ${coin}`, exact: true }));
  await page.keyboard.press("Enter");
  return page.getByRole("dialog", { name: "Check before you send" });
}

/** Tabs to the warning's Confirm and presses Enter: 'Sent!'. */
async function confirmByKeyboard(page: Page, warning: Locator) {
  await tabTo(page, warning.getByRole("button", { name: "Confirm" }), 10);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
}

describeAt("with the keyboard alone", DESKTOP, () => {
  test("send ETH: open the form, fill it, confirm the warning, see 'Sent!'", async ({
    page,
    signedIn,
    ethWalletAt,
    operator,
  }, testInfo) => {
    test.setTimeout(120_000);
    await ethWalletAt("1.5");

    await openSendForm(page, "ETH");
    await typeInto(page, "Receiver address", "0x52908400098527886E0F7030069857D2E4169EE7");
    await typeInto(page, "Amount in ETH", "0.25");
    const warning = await reviewByKeyboard(page, testInfo, "ETH");

    await expect(warning).toBeVisible();
    await confirmByKeyboard(page, warning);
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
    await openSendForm(page, "XRP");
    // ripple-address-codec's published classic address.
    await typeInto(page, "Receiver address", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59");
    await typeInto(page, "Destination tag (optional)", "20240517", 10);
    await typeInto(page, "Amount in XRP", "2", 10);
    const warning = await reviewByKeyboard(page, testInfo, "XRP");
    await expect(warning).toContainText("Destination tag: 20240517");
    await confirmByKeyboard(page, warning);
    expect(
      operator.pendingSends(signedIn.email).map((send) => [send.amount, send.address, send.destinationTag]),
    ).toEqual([["2", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", 20240517]]);
  });

  test("the currency picker: open it, choose EUR, the total is in euros", async ({ page, signInAt }) => {
    expect((await signInAt("/home")).email).toBeTruthy();
    await tabTo(page, page.locator(".sidebar .currency-picker > summary"));
    await page.keyboard.press("Enter");
    await tabTo(page, page.locator(".sidebar").getByRole("button", { name: "EUR €" }), 10);
    await page.keyboard.press("Enter");
    await expect(page.locator(".sidebar .total-value")).toHaveText(/^€/u);
  });

  test("search the coins on /home", async ({ page, signInAt }, testInfo) => {
    expect((await signInAt("/home")).email).toBeTruthy();
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

describeAt("with the keyboard alone, on a phone", MOBILE, () => {
  test("the ☰ menu opens with Enter, its links are reachable, and it closes again", async ({
    page,
    signInAt,
  }, testInfo) => {
    expect((await signInAt("/home")).email).toBeTruthy();
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
