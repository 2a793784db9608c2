import AxeBuilder from "@axe-core/playwright";
import {
  expect,
  type APIRequestContext,
  type BrowserContext,
  type Page,
  type TestInfo,
} from "@playwright/test";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";

export const PLATFORM = "CK";

export interface TestUser {
  email: string;
  password: string;
  words: string[];
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${randomUUID().slice(0, 8)}@example.com`;
}

/** Creates an account through the backend API, as a real client would. */
export async function createUser(request: APIRequestContext, tag = "user"): Promise<TestUser> {
  const email = uniqueEmail(tag);
  const password = `pw-${randomUUID()}`;
  const api = process.env.E2E_API_URL ?? "";
  const response = await request.post(`${api}/api/aml-authentication`, {
    data: { email, password, passwordConfirmed: password, platform: PLATFORM },
  });
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { success: boolean; twelveWords: string[] };
  expect(body.success).toBe(true);
  expect(body.twelveWords).toHaveLength(12);
  return { email, password, words: body.twelveWords };
}

export function jsEnabled(testInfo: TestInfo): boolean {
  return testInfo.project.name === "js";
}

/** Opens a page and, with scripts on, waits until React has hydrated it. */
export async function visit(page: Page, url: string, testInfo: TestInfo) {
  await page.goto(url);
  await waitForReady(page, testInfo);
}

export async function waitForReady(page: Page, testInfo: TestInfo) {
  if (jsEnabled(testInfo)) await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
}

/**
 * No WCAG 2.x A/AA violation on the page as it is now. axe runs inside the
 * page, so for the no-JavaScript project the page's current HTML (scripts
 * removed) is checked in a scripted twin page that loads the same styles.
 */
export async function expectAccessible(page: Page) {
  let target = page;
  let twin: BrowserContext | undefined;
  if (!(await scriptsRun(page))) {
    const html = (await page.content()).replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, "");
    const browser = page.context().browser();
    if (!browser) throw new Error("no browser");
    twin = await browser.newContext({ javaScriptEnabled: true, viewport: page.viewportSize() });
    target = await twin.newPage();
    const url = page.url();
    await target.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
    await target.goto(url);
  }
  try {
    const results = await new AxeBuilder({ page: target })
      .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
      .analyze();
    expect(
      results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    ).toEqual([]);
  } finally {
    await twin?.close();
  }
}

async function scriptsRun(page: Page): Promise<boolean> {
  return (await page.locator("html[data-hydrated]").count()) > 0;
}

export async function login(page: Page, testInfo: TestInfo, user: { email: string; password: string }) {
  await visit(page, "/login", testInfo);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Log In" }).click();
  await expect(page).toHaveURL(/\/home$/);
  await waitForReady(page, testInfo);
}

/**
 * Runs an operator command (npm run ops -- …) against the test server's
 * database, as an operator would, and returns what it printed.
 */
export function ops(...args: string[]): string {
  const dataDir = process.env.E2E_DATA_DIR;
  if (!dataDir) throw new Error("E2E_DATA_DIR is not set");
  return execFileSync(process.execPath, ["server/ops/cli.ts", ...args], {
    env: { ...process.env, DATA_DIR: dataDir, OPERATOR: "e2e-operator" },
    encoding: "utf8",
    timeout: 30_000,
  });
}

/** The id of `email`'s wallet for `ticker`, from the operator's list of requests. */
export function requestedWalletId(email: string, ticker: string): string {
  const requests = JSON.parse(ops("requests", "--json")) as {
    email: string;
    coin: string;
    walletId: string;
  }[];
  const found = requests.find((r) => r.email === email && r.coin === ticker);
  if (!found) throw new Error(`no ${ticker} wallet request for ${email}`);
  return found.walletId;
}
