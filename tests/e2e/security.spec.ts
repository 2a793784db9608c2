import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, jsEnabled, login, sidebar, visit, waitForReady } from "./helpers.ts";

const INTRO = "In order to reveal your 12 word security phrase, please enter your password";
const WARNING = "IMPORTANT! Do not share your 12 word security phrase to anyone.";
const BOX = "I have read important note.";
const NOT_TICKED = "Please tick the box to confirm you have read the important note.";

function phrase(page: Page) {
  return page.getByRole("list", { name: "Your 12 word security phrase" });
}

async function expectStepOne(page: Page) {
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Security");
  await expect(page.getByText(INTRO, { exact: true })).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveValue("");
  await expect(page.getByText(WARNING, { exact: true })).toBeVisible();
  await expect(page.getByRole("checkbox", { name: BOX })).toBeVisible();
  await expect(page.getByRole("button", { name: "Next" })).toBeVisible();
  await expect(phrase(page)).toHaveCount(0);
}

test.describe("security phrase", () => {
  test(
    "wrong password, unticked box, then the user's own 12 words; a reload shows step 1",
    { tag: "@remote" },
    async ({ page, context, signedIn: user }, testInfo) => {
      await sidebar(page).getByRole("link", { name: "Security" }).click();
      await expect(page).toHaveURL(/\/security$/);
      await waitForReady(page, testInfo);
      await expectStepOne(page);
      await expectAccessible(page);

      const password = page.getByLabel("Password");
      const box = page.getByRole("checkbox", { name: BOX });
      const next = page.getByRole("button", { name: "Next" });

      if (jsEnabled(testInfo)) {
        // 'Next' waits for a password and the ticked box.
        await expect(next).toBeDisabled();
        await password.fill("something");
        await expect(next).toBeDisabled();
        await box.check();
        await expect(next).toBeEnabled();
        await password.fill("");
        await expect(next).toBeDisabled();
        await box.uncheck();
      } else {
        // Without scripts the server says what is missing.
        await next.click();
        await expect(page.getByText("Required", { exact: true })).toBeVisible();
        await expect(page.getByText(NOT_TICKED)).toBeVisible();
        await expect(password).toHaveAttribute("aria-invalid", "true");
        await expect(box).toHaveAttribute("aria-invalid", "true");
        await expectAccessible(page);

        // The right password with the box not ticked reveals nothing.
        await password.fill(user.password);
        await next.click();
        await expect(page.getByText(NOT_TICKED)).toBeVisible();
        await expect(phrase(page)).toHaveCount(0);
        await expect(password).toHaveValue("");
      }

      // A wrong password.
      await password.fill("not-the-password");
      await box.check();
      await next.click();
      await expect(page.getByText("Incorrect password", { exact: true })).toBeVisible();
      await expect(phrase(page)).toHaveCount(0);
      await expect(page).toHaveURL(/\/security$/);
      if (jsEnabled(testInfo)) await expect(next).toBeDisabled();
      await expectAccessible(page);

      // The right one (Enter submits): exactly the user's words, sent only in this answer, not cached.
      await password.fill(user.password);
      if (!(await box.isChecked())) await box.check();
      const answer = page.waitForResponse(
        (r) => r.request().method() === "POST" && new URL(r.url()).pathname.startsWith("/security"),
      );
      await password.press("Enter");
      expect((await answer).headers()["cache-control"]).toBe("no-store");
      await expect(page.getByRole("heading", { name: "Your 12 word security phrase" })).toBeVisible();
      const words = phrase(page).locator(".word");
      await expect(words).toHaveCount(12);
      expect(await words.allTextContents()).toEqual(user.words);
      await expect(page.getByText(WARNING, { exact: true })).toBeVisible();
      expect(page.url()).toMatch(/\/security$/);
      await expectAccessible(page);

      if (jsEnabled(testInfo)) {
        await context.grantPermissions(["clipboard-read", "clipboard-write"]);
        await page.getByRole("button", { name: "Copy" }).click();
        await expect(page.getByRole("button", { name: "Copied" })).toBeVisible();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(user.words.join(" "));
        await expect(page.getByRole("button", { name: "Copy" })).toBeVisible({ timeout: 4_000 });
        // A reload (a fresh GET) is step 1 again.
        await page.reload();
      } else {
        await expect(page.getByRole("button", { name: "Copy" })).toHaveCount(0);
        // Reloading a POST would post again: a fresh visit is what a reload shows.
        await page.goto("/security");
      }
      await waitForReady(page, testInfo);
      await expectStepOne(page);
      // The words are nowhere in the page any more (not kept in the session for display).
      expect(await page.content()).not.toContain(user.words.join(" "));

      if (jsEnabled(testInfo)) {
        // Back to step 2 from another page is step 1 too.
        await password.fill(user.password);
        await box.check();
        await next.click();
        await expect(words).toHaveCount(12);
        await sidebar(page).getByRole("link", { name: "History" }).click();
        await expect(page).toHaveURL(/\/history$/);
        await page.goBack();
        await expect(page).toHaveURL(/\/security$/);
        await expectStepOne(page);
      }
    },
  );

  test("the page answers visitors with a redirect and is never cached", async ({
    page,
    request,
    user,
  }, testInfo) => {
    const visitor = await request.get("/security", { maxRedirects: 0 });
    expect(visitor.status()).toBe(302);
    expect(visitor.headers()["location"]).toBe("/");
    await login(page, testInfo, user);
    const response = await page.goto("/security");
    expect(response?.headers()["cache-control"]).toBe("no-store");
    await visit(page, "/security", testInfo);
    await expectStepOne(page);
  });
});
