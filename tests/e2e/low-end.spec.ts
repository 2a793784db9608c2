// Issue 24: the forms and dialogs as a holder on a low-end browser meets them,
// in Chromium with scripts on and off (the text-browser view is in
// text-browser.spec.ts).
import { expect, test } from "./fixtures.ts";
import { visit } from "./helpers.ts";

/** The public pages that hold a form. */
const PUBLIC_PAGES = [
  "/login",
  "/create-wallet",
  "/restore-wallet",
  "/?modal=contact",
  "/?modal=contact&step=2",
  "/cookies?modal=contact&step=2",
];

const SIGNED_IN_PAGES = [
  "/home",
  "/home?modal=support",
  "/home?modal=exit",
  "/wallet/eth",
  "/wallet/eth?send=1",
  "/wallet/btc",
  "/history",
  "/notifications",
  "/security",
];

/** Every <form> start tag in a page's HTML. */
function formTags(html: string): string[] {
  return html.match(/<form\b[^>]*>/giu) ?? [];
}

test.describe("defect 1: the server's messages, never the browser's own check", () => {
  test("every form the server renders carries novalidate", async ({ page, signedIn, fundEth }) => {
    await fundEth(signedIn, "1");
    let forms = 0;
    for (const path of SIGNED_IN_PAGES) {
      const html = await (await page.request.get(path)).text();
      for (const tag of formTags(html)) {
        forms += 1;
        expect(tag, path).toMatch(/\snovalidate(?:=""|\s|>)/iu);
      }
    }
    // Signed out: the public pages and the contact popup's form.
    await page.context().clearCookies();
    for (const path of PUBLIC_PAGES) {
      const html = await (await page.request.get(path)).text();
      const tags = formTags(html);
      expect(tags.length, path).toBeGreaterThan(0);
      for (const tag of tags) {
        forms += 1;
        expect(tag, path).toMatch(/\snovalidate(?:=""|\s|>)/iu);
      }
    }
    expect(forms).toBeGreaterThan(20);
  });

  test("the contact form answers a bad e-mail and a short comment in the spec's words", async ({
    page,
  }, testInfo) => {
    await visit(page, "/?modal=contact&step=2", testInfo);
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Email").fill("visitor-at-example.com");
    await dialog.getByLabel("Comment").fill("Hi");
    await dialog.getByRole("button", { name: "Send", exact: true }).click();
    await expect(dialog.getByText("Please enter a valid email address.", { exact: true })).toBeVisible();
    await expect(dialog.getByText("Comment must be at least 6 characters.", { exact: true })).toBeVisible();
    // Nothing was sent: the popup is still at its form.
    await expect(page).toHaveURL(/\?modal=contact&step=2$/u);
  });
});

test.describe("defect 7: an open dialog is the first thing in the page", () => {
  test("Support and Exit, opened from the sidebar", async ({ page, signedIn }, testInfo) => {
    void signedIn;
    for (const [name, title] of [
      ["Support", "Start Here"],
      ["Exit", "Are you sure you want to exit?"],
    ] as const) {
      await visit(page, "/history", testInfo);
      await page.getByRole("complementary", { name: "Sidebar" }).getByRole("link", { name }).click();
      await expect(page.getByRole("dialog", { name: title })).toBeVisible();
      const html = await page.content();
      const dialogAt = html.indexOf("<dialog");
      expect(dialogAt, name).toBeGreaterThan(-1);
      expect(dialogAt, name).toBeLessThan(html.indexOf("<aside"));
      expect(dialogAt, name).toBeLessThan(html.indexOf("<main"));
    }
  });

  test("the contact popup", async ({ page }, testInfo) => {
    await visit(page, "/about-us?modal=contact", testInfo);
    await expect(page.getByRole("dialog")).toBeVisible();
    const html = await page.content();
    expect(html.indexOf("<dialog")).toBeGreaterThan(-1);
    expect(html.indexOf("<dialog")).toBeLessThan(html.indexOf("<header"));
  });
});

test.describe("defects 2 and 3, as a browser without CSS has them", () => {
  test("the honeypot: its token a hidden input, its trap hidden by the markup itself", async ({
    page,
  }, testInfo) => {
    for (const path of ["/login", "/create-wallet", "/restore-wallet", "/?modal=contact&step=2"]) {
      await visit(page, path, testInfo);
      await expect(page.locator('input[name="ck_from__confirm"]'), path).toHaveAttribute("type", "hidden");
      await expect(page.locator('[hidden] > input[name="ck_name__confirm"]'), path).toHaveCount(1);
      await expect(page.getByText("Please leave this field blank"), path).toHaveCount(0);
    }
  });

  test("icon controls carry their name as text", async ({ page }, testInfo) => {
    await visit(page, "/restore-wallet", testInfo);
    await expect(page.getByRole("link", { name: "Back to log in" })).toHaveText("Back to log in");
    await visit(page, "/create-wallet", testInfo);
    await expect(page.getByRole("link", { name: "Back to log in" })).toHaveText("Back to log in");
    await visit(page, "/?modal=contact", testInfo);
    await expect(page.getByRole("dialog").getByRole("link", { name: "Close" })).toHaveText("Close");
    await expect(page.locator("a.modal-backdrop")).toHaveText("Back to the page");
  });
});
