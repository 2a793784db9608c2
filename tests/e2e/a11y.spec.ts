// Issue 15: axe finds no WCAG 2.2 A/AA violation on any page, at a desktop and
// a phone width, with scripts on and off (each test runs in both projects). The
// states a holder meets are checked too: the contact popup, the support and
// exit modals, the open ☰ menu, an issued wallet with its QR code and
// transactions, the send form and its warning, an expanded transaction.
import { expect, test } from "./fixtures.ts";
import { expectAccessible, jsEnabled, SITE_PAGES, visit } from "./helpers.ts";

const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

const PUBLIC_PAGES = [...SITE_PAGES, "/?modal=contact"] as const;

for (const [size, viewport] of Object.entries(VIEWPORTS)) {
  test.describe(`every page passes axe (${size})`, () => {
    test.use({ viewport });

    test("the public pages", async ({ page }, testInfo) => {
      test.setTimeout(120_000);
      for (const path of PUBLIC_PAGES) {
        await test.step(path, async () => {
          await visit(page, path, testInfo);
          await expect(page.locator("main")).toBeVisible();
          await expectAccessible(page);
        });
      }
    });

    test("the signed-in pages and their modals", async ({ page, signedIn, fundEth }, testInfo) => {
      test.setTimeout(240_000);
      await fundEth(signedIn, "1.5");
      const pages = [
        "/home",
        "/history",
        "/notifications",
        "/security",
        "/wallet/eth",
        "/wallet/btc",
        "/home?modal=support",
        "/home?modal=exit",
      ];
      for (const path of pages) {
        await test.step(path, async () => {
          await visit(page, path, testInfo);
          await expectAccessible(page);
        });
      }
    });

    test("the open menu, an expanded transaction, the send form and its warning", async ({
      page,
      signedIn,
      fundEth,
    }, testInfo) => {
      test.setTimeout(240_000);
      await fundEth(signedIn, "1.5");

      await test.step("the open ☰ menu", async () => {
        if (size !== "phone") return;
        await visit(page, "/home", testInfo);
        await page.locator(".burger > summary").click();
        await expect(page.getByRole("navigation", { name: "Menu" })).toBeVisible();
        await expectAccessible(page);
      });

      await test.step("an expanded transaction", async () => {
        await visit(page, "/history", testInfo);
        await page.locator(".tx-list summary").first().click();
        await expect(page.locator(".tx-details").first()).toBeVisible();
        await expectAccessible(page);
      });

      await test.step("the send form and its warning", async () => {
        await visit(page, "/wallet/eth?send=1", testInfo);
        await page
          .getByLabel("Receiver address", { exact: true })
          .fill("0x52908400098527886E0F7030069857D2E4169EE7");
        await page.getByLabel("Amount in ETH", { exact: true }).fill("0.5");
        // Without scripts the USD amount is filled by a round trip, as a user would.
        if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Convert ETH to USD" }).click();
        await expect(page.getByLabel("Amount in USD", { exact: true })).not.toHaveValue("");
        await expectAccessible(page);
        await page.getByRole("button", { name: "Send ETH", exact: true }).click();
        await expect(page.getByRole("dialog", { name: "Check before you send" })).toBeVisible();
        await expectAccessible(page);
      });
    });
  });
}
