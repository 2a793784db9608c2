// Issue 15: the defects a walk through every screen found. Each test names its
// defect; each fails on the code before its fix, in the modes it runs in.
import type { Locator, Page } from "@playwright/test";
import { describeAt, expect, test } from "./fixtures.ts";
import { RECEIVER, sendThroughApi } from "./send-helpers.ts";
import {
  DESKTOP,
  fillWords,
  followMenuLink,
  jsEnabled,
  MOBILE,
  paste,
  restoreStepOne,
  sidebar,
  visit,
} from "./helpers.ts";

/**
 * A coin's row link on /home that is on screen and not under `panel`: where a stray tap would land.
 * With `items`, only the panel's own links count as under it (the ☰ menu is a sheet whose empty
 * part lets taps through to the backdrop).
 */
async function coinLinkOutside(
  page: Page,
  panel: Locator,
  { items = false } = {},
): Promise<{ x: number; y: number; href: string }> {
  const viewport = page.viewportSize();
  if (!viewport) throw new Error("no viewport");
  const covers = [];
  for (const target of items ? await panel.getByRole("link").all() : [panel]) {
    const box = await target.boundingBox();
    if (box) covers.push(box);
  }
  if (covers.length === 0) throw new Error("no panel");
  for (const link of await page.locator("a.coin-link").all()) {
    const box = await link.boundingBox();
    if (!box) continue;
    const x = box.x + box.width / 2;
    const y = box.y + box.height / 2;
    const onScreen = y > 0 && y < viewport.height - 80;
    const underPanel = covers.some((c) => x >= c.x && x <= c.x + c.width && y >= c.y && y <= c.y + c.height);
    if (onScreen && !underPanel) return { x, y, href: (await link.getAttribute("href")) ?? "" };
  }
  throw new Error("no coin row outside the panel");
}

test.describe("defect 1: the mobile menus close on Escape and on a tap outside, which goes no further", () => {
  test.use({ viewport: MOBILE });

  test("the ☰ menu", async ({ page, signedIn }, testInfo) => {
    void signedIn;
    const burger = page.locator(".burger > summary");
    const menu = page.getByRole("navigation", { name: "Menu" });

    if (jsEnabled(testInfo)) {
      await burger.click();
      await expect(menu).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(menu).toBeHidden();
      await expect(burger).toBeFocused();
    }

    await burger.click();
    await expect(menu).toBeVisible();
    const stray = await coinLinkOutside(page, menu, { items: true });
    expect(stray.href).toMatch(/^\/wallet\//);
    await page.mouse.click(stray.x, stray.y);
    await expect(menu).toBeHidden();
    await expect(page).toHaveURL(/\/home$/);
  });

  test("the currency picker", async ({ page, signedIn }, testInfo) => {
    void signedIn;
    const picker = page.locator(".mobile-summary .currency-picker");
    const options = picker.locator(".currency-options");

    if (jsEnabled(testInfo)) {
      await picker.locator("summary").click();
      await expect(options).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(options).toBeHidden();
      await expect(picker.locator("summary")).toBeFocused();
    }

    await picker.locator("summary").click();
    await expect(options).toBeVisible();
    const stray = await coinLinkOutside(page, options);
    await page.mouse.click(stray.x, stray.y);
    await expect(options).toBeHidden();
    await expect(page).toHaveURL(/\/home$/);
  });
});

for (const [name, viewport] of [
  ["desktop", DESKTOP],
  ["mobile", MOBILE],
] as const) {
  describeAt(`defect 2: the currency picker closes once a currency is chosen (${name})`, viewport, () => {
    test("choosing EUR closes it; opened again, a click outside closes it and reaches nothing", async ({
      page,
      signedIn,
    }) => {
      void signedIn;
      const picker = page.locator(
        name === "desktop" ? ".sidebar .currency-picker" : ".mobile-summary .currency-picker",
      );
      const summary = picker.locator("summary");
      const options = picker.locator(".currency-options");
      await summary.click();
      await options.getByRole("button", { name: /^EUR/ }).click();
      await expect(summary).toHaveAccessibleName("Currency: EUR. Change currency");
      await expect(options).toBeHidden();

      // On desktop the open picker lies over Buy Crypto and History: a click there only closes it.
      await summary.click();
      await expect(options).toBeVisible();
      if (name === "desktop") {
        const history = sidebar(page).getByRole("link", { name: "History" });
        const box = await history.boundingBox();
        const panel = await options.boundingBox();
        if (!box || !panel) throw new Error("no boxes");
        // Right of the panel, on the History link's row.
        await page.mouse.click(
          Math.min(panel.x + panel.width + 8, box.x + box.width - 4),
          box.y + box.height / 2,
        );
      } else {
        const stray = await coinLinkOutside(page, options);
        await page.mouse.click(stray.x, stray.y);
      }
      await expect(options).toBeHidden();
      await expect(page).toHaveURL(/\/home$/);
    });
  });
}

/** Focuses the sidebar's link `link` and presses Enter: the modal `name` opens. */
async function openByKeyboard(page: Page, link: string, name: string) {
  const opener = sidebar(page).getByRole("link", { name: link });
  const dialog = page.getByRole("dialog", { name });
  await opener.focus();
  await page.keyboard.press("Enter");
  await expect(dialog).toBeVisible();
  return { opener, dialog };
}

describeAt("defect 5: closing a modal gives the keyboard user their place back", DESKTOP, () => {
  test("Exit starts on 'No'; Enter there closes it and focus is back on 'Exit'", async ({
    page,
    signInAt,
  }, testInfo) => {
    await signInAt("/history");
    const { opener: exit, dialog } = await openByKeyboard(page, "Exit", "Are you sure you want to exit?");
    await expect(dialog.getByRole("link", { name: "No" })).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(dialog).toHaveCount(0);
    await expect(page).toHaveURL(/\/history$/);
    // Without scripts 'No' loads the page afresh: there is no focus to give back.
    if (jsEnabled(testInfo)) await expect(exit).toBeFocused();
  });

  test("Support closed with its own button gives focus back to 'Support'", async ({
    page,
    signInAt,
  }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "without scripts closing the modal loads the page afresh");
    await signInAt("/history");
    const { opener: support, dialog } = await openByKeyboard(page, "Support", "Start Here");
    await dialog.getByRole("link", { name: "Close" }).press("Enter");
    await expect(dialog).toHaveCount(0);
    await expect(support).toBeFocused();
  });
});

for (const [name, viewport] of [
  ["desktop", DESKTOP],
  ["mobile", MOBILE],
] as const) {
  describeAt(`defects 4 and 11: the search on /home (${name})`, viewport, () => {
    test("the search box keeps its button on one line, and on a phone spans the table", async ({
      page,
      signedIn,
    }, testInfo) => {
      test.skip(
        jsEnabled(testInfo) && name === "desktop",
        "with scripts there is no button, and on desktop the box sits beside the heading",
      );
      void signedIn;
      const box = await page.getByRole("searchbox", { name: "Search coins by name or ticker" }).boundingBox();
      if (!box) throw new Error("no search box");
      if (!jsEnabled(testInfo)) {
        // Defect 4: "Sear / ch" stood 66 px tall.
        const button = await page.getByRole("button", { name: "Search" }).boundingBox();
        expect(button?.height).toBeLessThanOrEqual(48);
        expect(button?.y).toBeCloseTo(box.y, -1);
      } else {
        // Defect 11: the box was narrower than the table under it.
        const table = await page.locator("table.coin-table").boundingBox();
        expect(box.width).toBeGreaterThanOrEqual((table?.width ?? Infinity) - 1);
      }
    });
  });
}

describeAt("defect 11: Refresh shows that it works", MOBILE, () => {
  test.skip(
    ({ javaScriptEnabled }) => !javaScriptEnabled,
    "without scripts Refresh is a page load, which the browser shows",
  );

  test("the wallet page's Refresh turns busy until the data is back", async ({ page, signInAt }) => {
    await signInAt("/wallet/btc");
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    await page.route(/\/wallet\/btc\.data/u, async (route) => {
      await held;
      await route.continue();
    });
    const refresh = page.getByRole("link", { name: "Refresh" });
    await refresh.click();
    await expect(refresh).toHaveAttribute("aria-busy", "true");
    // The icon spins while it is busy (CSS).
    release();
    await expect(refresh).not.toHaveAttribute("aria-busy", /.*/u);
  });
});

test.describe("restore keeps context and explains a mistyped phrase", () => {
  test("defect 12: back from step 2 keeps the e-mail typed in step 1", async ({ page, user }, testInfo) => {
    await visit(page, "/restore-wallet", testInfo);
    await restoreStepOne(page, user.email);
    await page.getByRole("button", { name: "Back to the previous step" }).click();
    await expect(page.getByText("Step 1 of 3")).toBeVisible();
    await expect(page.getByLabel("Email")).toHaveValue(user.email);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Step 2 of 3")).toBeVisible();
  });

  test("defect 15: a numbered paste is accepted, and a word not in the list is named by its box", async ({
    page,
    user,
  }, testInfo) => {
    await visit(page, "/restore-wallet", testInfo);
    await restoreStepOne(page, user.email);
    await page.getByLabel("Word 1", { exact: true }).focus();

    // A typo in word 5: the box is named and marked, not 'Wrong 12 word phrase'.
    const typo = [...user.words];
    typo[4] = "zzzzq";
    await fillWords(page, typo);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(
      page.getByText("Word 5 is not a word a 12-word phrase can hold: check its spelling."),
    ).toBeVisible();
    await expect(page.getByLabel("Word 5", { exact: true })).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Word 4", { exact: true })).not.toHaveAttribute("aria-invalid", "true");
    await expect(page.getByText("Wrong 12 word phrase")).toHaveCount(0);

    // The phrase as a numbered list, as password managers and notes keep it.
    const numbered = user.words.map((word, i) => `${i + 1}. ${word}`).join("\n");
    await fillWords(page, []);
    if (jsEnabled(testInfo)) {
      await page.getByLabel("Word 1", { exact: true }).focus();
      await paste(page, numbered);
      await expect(page.getByLabel("Word 12", { exact: true })).toHaveValue(user.words[11]!);
      await expect(page.getByLabel("Word 1", { exact: true })).toHaveValue(user.words[0]!);
    } else {
      // An input keeps no line breaks: what arrives is "1. word 2. word …" on one line.
      await page.getByLabel("Word 1", { exact: true }).fill(numbered.replaceAll("\n", " "));
    }
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Step 3 of 3")).toBeVisible();
  });
});

test.describe("the transaction lists", () => {
  test("defects 6 and 7: expanded rows say from and to, and the address copies (or is all there to select)", async ({
    page,
    signedIn,
    fundEth,
    context,
  }, testInfo) => {
    const { walletId, address: own } = await fundEth(signedIn, "1");
    await sendThroughApi(page.request, signedIn, walletId, "0.25");

    await visit(page, "/history", testInfo);
    const sent = page.locator(".tx-list li").filter({ hasText: "Sent" });
    await sent.locator("summary").click();
    const details = sent.locator(".tx-details");
    await expect(details.locator("dt").nth(0)).toHaveText("From");
    await expect(details.locator("dt").nth(1)).toHaveText("To");
    await expect(details.locator(".tx-detail").nth(0)).toContainText("(your wallet)");

    await visit(page, "/wallet/eth", testInfo);
    const row = page.locator(".tx-list li").filter({ hasText: "Sent" });
    await row.locator("summary").click();
    const lines = row.locator(".tx-detail");
    await expect(lines.nth(0).locator("dt")).toHaveText("Output (from)");
    await expect(lines.nth(1).locator("dt")).toHaveText("Input (to)");
    const received = page.locator(".tx-list li").filter({ hasText: "Received" });
    await received.locator("summary").click();
    await expect(received.locator(".tx-detail").nth(0)).toContainText("An outside address (not recorded)");

    if (jsEnabled(testInfo)) {
      // Clicking the shortened address copies the whole one, with 'Copied'.
      await context.grantPermissions(["clipboard-read", "clipboard-write"]);
      await lines.nth(1).getByRole("button", { name: "Copy 0x8f34…584feE", exact: true }).click();
      await expect(page.getByRole("status").getByText("Copied", { exact: true })).toBeVisible();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(RECEIVER);
    } else {
      // Without scripts both addresses are there in full, as text to select.
      await expect(lines.nth(0).locator(".address-full")).toHaveText(own);
      await expect(lines.nth(1).locator(".address-full")).toHaveText(RECEIVER);
      await expect(lines.nth(1).locator("[title]")).toHaveCount(0);
    }
  });

  test("defect 8: the wallet page has a copy icon beside the address", async ({
    page,
    ethWalletAt,
    context,
  }, testInfo) => {
    const { address } = await ethWalletAt("0");
    const card = page.locator(".wallet-address");
    await expect(card.locator(".address-text")).toHaveText(address);
    const icon = card.getByRole("button", { name: "Copy the ETH address" });
    if (!jsEnabled(testInfo)) {
      // Without scripts there is no clipboard: the address is selectable text.
      await expect(icon).toHaveCount(0);
      return;
    }
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await icon.click();
    await expect(page.getByRole("status").getByText("Copied", { exact: true })).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);
  });

  describeAt("on a phone", MOBILE, () => {
    test("defect 9: amounts line up on Unconfirmed and Confirmed rows", async ({
      page,
      signedIn,
      fundEth,
    }, testInfo) => {
      const { walletId } = await fundEth(signedIn, "1");
      await sendThroughApi(page.request, signedIn, walletId, "0.25");
      await visit(page, "/wallet/eth", testInfo);
      const amountOf = (status: string) =>
        page
          .locator(".tx-list li")
          .filter({ has: page.locator(`.status-${status}`) })
          .locator("summary > span.num");
      const pending = await amountOf("pending").boundingBox();
      const confirmed = await amountOf("confirmed").boundingBox();
      if (!pending || !confirmed) throw new Error("no rows");
      expect(Math.round(pending.x + pending.width)).toBe(Math.round(confirmed.x + confirmed.width));
    });
  });
});

describeAt("defect 10: on a phone the unread count shows without opening the menu", MOBILE, () => {
  test("the ☰ button and the bottom bar carry the count; the bar's items are labelled", async ({
    page,
    signedIn,
    operator,
  }, testInfo) => {
    operator.message(signedIn.email, "Please confirm your address (defect 10).");
    await visit(page, "/home", testInfo);
    await expect(page.locator(".burger > summary")).toHaveAccessibleName("Menu, 1 unread notifications");
    await expect(page.locator(".burger > summary .badge")).toBeVisible();
    // The bar is the spec's (Wallet, the exchange, History); the count is on the ☰ and, inside, on
    // Notifications: each link is in the page once (issue 24).
    const bar = page.getByRole("navigation", { name: "Quick links" });
    for (const name of ["Wallet", "Buy Crypto (opens in a new tab)", "History"]) {
      await expect(bar.getByRole("link", { name, exact: true })).toBeVisible();
    }
    await expect(bar.getByText("Wallet", { exact: true })).toBeVisible();
    await followMenuLink(page, "Notifications 1 unread", { exact: true });
    await expect(page).toHaveURL(/\/notifications$/);
  });
});

describeAt("defect 13: without scripts on a phone, a send round trip lands on the form", MOBILE, () => {
  test("'Full' and a refusal come back with the form, and its error, in view", async ({
    page,
    ethWalletAt,
  }, testInfo) => {
    test.skip(jsEnabled(testInfo), "with scripts these presses do not load the page");
    await ethWalletAt("1", "/wallet/eth?send=1");
    const viewport = page.viewportSize();
    if (!viewport) throw new Error("no viewport");
    const bar = await page.getByRole("navigation", { name: "Quick links" }).boundingBox();
    const visibleBottom = bar ? bar.y : viewport.height;
    const inView = async (locator: Locator) => {
      const box = await locator.boundingBox();
      return box !== null && box.y >= 0 && box.y + box.height <= visibleBottom;
    };

    await page.getByRole("button", { name: "Full", exact: true }).click();
    const coin = page.getByLabel("Amount in ETH", { exact: true });
    await expect(coin).toHaveValue("1");
    // The amount 'Full' filled in has the focus, and the page is scrolled to it.
    await expect(coin).toBeFocused();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    await expect.poll(() => inView(coin)).toBe(true);

    // A refusal: the address left empty.
    await page.getByRole("button", { name: "Send ETH", exact: true }).click();
    const error = page.locator(".send-errors");
    await expect(error).toHaveText("Please fill out all fields.");
    // The browser scrolls to the autofocused button when it next renders, which on a loaded
    // machine can come after the text is there: wait for it (CI failed here once, stop 37).
    await expect.poll(() => inView(error)).toBe(true);
  });
});

test.describe("receive", () => {
  for (const viewport of [DESKTOP, MOBILE]) {
    describeAt(`at ${viewport.width} px`, viewport, () => {
      test("the wallet page shows the deposit address's QR code (drawn on the server) and names the network", async ({
        page,
        ethWalletAt,
      }) => {
        const { address } = await ethWalletAt("0");
        const qr = page.getByRole("img", { name: "QR code of your ETH address" });
        await expect(qr).toBeVisible();
        // An SVG in the page's HTML: there without scripts, and square.
        const box = await qr.boundingBox();
        expect(box && Math.round(box.width)).toBe(box && Math.round(box.height));
        expect(await qr.locator("path").getAttribute("d")).toMatch(/^M\d+ \d+h\d+v1h-\d+z/u);
        await expect(page.locator(".receive-network")).toHaveText("Network Ethereum");
        await expect(page.locator(".receive")).toContainText(
          "Send only ETH on the Ethereum network to this address.",
        );
        await expect(page.locator(".wallet-address .address-text")).toHaveText(address);
      });
    });
  }
});
