// Abuse limits as a visitor meets them (record 013), with the server's default
// limits, in both projects (scripts on and off). The test's own requests and
// the browser's both come from 127.0.0.1, so failures made through the API
// count against the account as that visitor's.
import type { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, PLATFORM, submitLogin, visit, waitForReady } from "./helpers.ts";

const LIMITED = /Too many attempts\. Please wait \d+ seconds? and try again\./u;

/**
 * Wrong passwords through the API (call 2) until `failures` of them have been
 * checked, waiting out each backoff as a patient attacker would. After n ≥ 5
 * failures the next attempt waits 2^(n−5) s: 10 failures leave 32 s.
 */
async function failLogins(request: APIRequestContext, email: string, failures: number) {
  const api = process.env.E2E_API_URL ?? "";
  let checked = 0;
  while (checked < failures) {
    const response = await request.post(`${api}/api/aml-authorization`, {
      data: { email, password: "not the password", platform: PLATFORM },
    });
    if (response.status() === 429) {
      const seconds = Number(response.headers()["retry-after"]);
      expect(seconds).toBeGreaterThan(0);
      expect(await response.json()).toEqual({
        success: false,
        code: "too_many_attempts",
        message: `Too many attempts. Try again in ${seconds} seconds.`,
      });
      await new Promise((resolve) => setTimeout(resolve, seconds * 1_000 + 50));
      continue;
    }
    expect(response.status()).toBe(401);
    checked += 1;
  }
}

/** Submits the page's form and returns the status of the answer to that POST. */
async function submitAndStatus(page: Page, button: string, path: string) {
  const answer = page.waitForResponse(
    (r) => r.request().method() === "POST" && new URL(r.url()).pathname.startsWith(path),
  );
  await page.getByRole("button", { name: button }).click();
  const response = await answer;
  return { status: response.status(), retryAfter: response.headers()["retry-after"] };
}

test.describe("rate limits", () => {
  test(
    "a limited login says how long to wait, with status 429 and Retry-After",
    { tag: "@remote" },
    async ({ page, request, user }, testInfo) => {
      test.setTimeout(120_000);
      await failLogins(request, user.email, 10);

      // Even the right password is not checked while the backoff runs.
      await visit(page, "/login", testInfo);
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(user.password);
      const login = await submitAndStatus(page, "Log In", "/login");
      await expect(page.getByText(LIMITED)).toBeVisible();
      await expect(page).toHaveURL(/\/login$/u);
      expect(login.status).toBe(429);
      expect(Number(login.retryAfter)).toBeGreaterThan(0);

      // Fast login renders only 'Fast Login', as for any failure.
      const query = new URLSearchParams({ email: user.email, password: user.password });
      await page.goto(`/fast-login?${query}`);
      await expect(page).toHaveURL(/\/fast-login$/u);
      await expect(page.locator("main")).toHaveText("Fast Login");

      // The restore flow's e-mail step asks the same backend (call 2): it says so too.
      await visit(page, "/restore-wallet", testInfo);
      await page.getByLabel("Email").fill(user.email);
      const restore = await submitAndStatus(page, "Next", "/restore-wallet");
      await expect(page.getByText(LIMITED)).toBeVisible();
      await expect(page.getByText("Step 1 of 3")).toBeVisible();
      expect(restore.status).toBe(429);
      await expectAccessible(page);
    },
  );

  test("another account from the same address is not held back", async ({
    page,
    request,
    user: victim,
    newUser,
  }, testInfo) => {
    const other = await newUser("limited-free");
    await failLogins(request, victim.email, 5);
    await visit(page, "/login", testInfo);
    await submitLogin(page, other.email, other.password);
    await expect(page).toHaveURL(/\/home$/u);
    await waitForReady(page, testInfo);
  });
});
