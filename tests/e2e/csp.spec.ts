// The enforced Content-Security-Policy (record 014) in a real browser: every
// page renders (and, with scripts, hydrates) under it, and the browser reports
// no violation while a user visits every page, logs in and requests a wallet.
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { jsEnabled, login, SITE_PAGES, visit, waitForReady } from "./helpers.ts";

const PUBLIC_PAGES = [
  ...SITE_PAGES,
  "/about-us?modal=contact&step=2",
  "/fast-login",
  "/no-such-page",
  "/?modal=contact",
];

const SIGNED_IN_PAGES = [
  "/home",
  "/wallet/btc",
  "/wallet/eth",
  "/history",
  "/notifications",
  "/security",
  "/history?modal=support",
  "/home?modal=support",
  "/home?modal=exit",
];

/**
 * Collects CSP violations: the `securitypolicyviolation` events of every
 * document (registered before any page script), and the console's CSP errors,
 * which are the only report when scripts are off.
 */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction("reportCspViolation", (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { reportCspViolation?: (text: string) => void })
        .reportCspViolation;
      report?.(
        `${event.violatedDirective} blocked ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}`,
      );
    });
  });
  page.on("console", (message) => {
    const text = message.text();
    if (/Content Security Policy|Refused to (execute|apply|load|connect|frame)/iu.test(text)) {
      violations.push(`console: ${text}`);
    }
  });
  return violations;
}

test.describe("Content-Security-Policy, enforced", () => {
  test("every page carries a fresh nonce and renders without a violation", async ({ page }, testInfo) => {
    // With scripts off, addInitScript and exposeFunction do not run: the console still reports.
    const violations = await watchViolations(page);
    const nonces = new Set<string>();
    for (const url of PUBLIC_PAGES) {
      const response = await page.goto(url);
      const csp = (await response?.headerValue("content-security-policy")) ?? "";
      expect(csp, url).toContain("default-src 'self'");
      expect(csp, url).not.toContain("unsafe-inline");
      nonces.add(/'nonce-([^']+)'/u.exec(csp)?.[1] ?? "");
      await waitForReady(page, testInfo);
      await expect(page.locator("main").first(), url).toBeVisible();
    }
    expect(nonces.size).toBe(PUBLIC_PAGES.length);
    expect(violations).toEqual([]);
  });

  test("a user logs in, visits every signed-in page and requests a wallet: no violation", async ({
    page,
    user,
  }, testInfo) => {
    const violations = await watchViolations(page);
    await login(page, testInfo, user);
    for (const url of SIGNED_IN_PAGES) {
      await visit(page, url, testInfo);
      await expect(page.locator("main").first(), url).toBeVisible();
    }
    await visit(page, "/wallet/eth", testInfo);
    await page.getByRole("button", { name: "Request ETH Wallet" }).click();
    await expect(page.getByRole("button", { name: "Wallet Requested" })).toBeDisabled({ timeout: 20_000 });
    await waitForReady(page, testInfo);
    if (jsEnabled(testInfo)) {
      // Client-side navigation (fetches under connect-src 'self') after hydration.
      await page
        .getByRole("link", { name: /history/iu })
        .first()
        .click();
      await expect(page).toHaveURL(/\/history$/u);
    }
    expect(violations).toEqual([]);
  });

  test("an injected inline script is blocked (the policy is enforced, not report-only)", async ({
    page,
  }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "needs scripts to observe the block");
    await visit(page, "/login", testInfo);
    const ran = await page.evaluate(async () => {
      const win = window as unknown as { injectedByTest?: boolean };
      const script = document.createElement("script");
      script.textContent = "window.injectedByTest = true";
      const blocked = new Promise<boolean>((resolve) => {
        document.addEventListener("securitypolicyviolation", () => resolve(true), { once: true });
        setTimeout(() => resolve(false), 2000);
      });
      document.body.append(script);
      return { blocked: await blocked, injected: win.injectedByTest === true };
    });
    expect(ran).toEqual({ blocked: true, injected: false });
  });
});
