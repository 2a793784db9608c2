import AxeBuilder from "@axe-core/playwright";
import {
  expect,
  type APIRequestContext,
  type Browser,
  type BrowserContext,
  type Locator,
  type Page,
  type TestInfo,
} from "@playwright/test";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58xrp } from "@scure/base";
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { Authenticator } from "./authenticator.ts";

export const PLATFORM = "CK";

/** The specs' phone and desktop viewports. */
export const MOBILE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 860 };

/** The public site's pages: the landing page, the account forms and the informational pages. */
export const SITE_PAGES = [
  "/",
  "/login",
  "/create-wallet",
  "/restore-wallet",
  "/how-it-works",
  "/cookies",
  "/terms-and-conditions",
  "/privacy-policy",
  "/about-us",
] as const;

export interface TestUser {
  email: string;
  password: string;
  words: string[];
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${randomUUID().slice(0, 8)}@example.com`;
}

/** What tests/e2e/logs-teardown.ts looks for in the servers' log. */
export type SecretKind = "password" | "phrase" | "cookie" | "totp" | "token";

/**
 * Notes a secret this run used, so the teardown can check that the servers
 * never logged it (record 015). Call it for every password and phrase a test
 * makes up or is given.
 */
export function recordSecret(kind: SecretKind, value: string | readonly string[]) {
  const file = process.env.E2E_SECRETS_FILE;
  if (!file) return;
  const text = typeof value === "string" ? value : value.join(" ");
  if (text) appendFileSync(file, `${JSON.stringify({ kind, value: text })}\n`);
}

/** Notes the session cookies the browser holds now (see recordSecret). */
export async function recordSessionCookies(context: BrowserContext) {
  for (const cookie of await context.cookies()) {
    if (cookie.name.endsWith("ck_session") || cookie.name.endsWith("ck_staff")) {
      recordSecret("cookie", cookie.value);
    }
  }
}

/**
 * POSTs JSON from a loopback address of its own (any 127.x.y.z reaches the
 * server on Linux): each account a fixture creates looks like a client of its
 * own, so the suite's hundred-odd sign-ups do not add up against the API's
 * per-address creation limit (record 013), which a real client meets alone.
 */
const octet = () => 1 + Math.floor(Math.random() * 254);

function postFromOwnAddress(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        localAddress: `127.${octet()}.${octet()}.${octet()}`,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

/** Creates an account through the backend API (call 1), as a real client would. */
export async function createUser(_request: APIRequestContext, tag = "user"): Promise<TestUser> {
  const email = uniqueEmail(tag);
  const password = `pw-${randomUUID()}`;
  const api = process.env.E2E_API_URL ?? "";
  const response = await postFromOwnAddress(`${api}/api/aml-authentication`, {
    email,
    password,
    passwordConfirmed: password,
    platform: PLATFORM,
  });
  expect(response.status).toBe(200);
  const body = JSON.parse(response.text) as { success: boolean; twelveWords: string[] };
  expect(body.success).toBe(true);
  expect(body.twelveWords).toHaveLength(12);
  recordSecret("password", password);
  recordSecret("phrase", body.twelveWords);
  return { email, password, words: body.twelveWords };
}

/** Turns two-factor on through the contract (issue 27); answers the user's authenticator. */
export async function enrolTwoFactor(user: TestUser): Promise<Authenticator> {
  const api = process.env.E2E_API_URL ?? "";
  const who = { email: user.email, twelveWords: user.words.join(" "), platform: PLATFORM };
  const begun = await postFromOwnAddress(`${api}/api/two-factor/begin`, { ...who, password: user.password });
  expect(begun.status).toBe(200);
  const { secret } = JSON.parse(begun.text) as { secret: string };
  recordSecret("totp", secret);
  const app = new Authenticator(secret);
  const on = await postFromOwnAddress(`${api}/api/two-factor/enable`, {
    ...who,
    secret,
    two_factor_code: await app.code(),
  });
  expect(on.status).toBe(200);
  for (const code of (JSON.parse(on.text) as { recovery_codes: string[] }).recovery_codes) {
    recordSecret("token", code);
  }
  return app;
}

/** A second browser (another person, or the same person elsewhere), with the test's scripts setting. */
export async function newPage(browser: Browser, testInfo: TestInfo): Promise<Page> {
  const context = await browser.newContext({
    javaScriptEnabled: jsEnabled(testInfo),
    baseURL: testInfo.project.use.baseURL,
  });
  return context.newPage();
}

/** The session cookie a browser holds. */
export async function sessionCookie(context: BrowserContext) {
  const cookie = (await context.cookies()).find((c) => c.name.endsWith("ck_session"));
  if (!cookie) throw new Error("no session cookie");
  return cookie;
}

export function jsEnabled(testInfo: TestInfo): boolean {
  return testInfo.project.name === "js";
}

/** Opens a page and, with scripts on, waits until React has hydrated it. */
export async function visit(page: Page, url: string, testInfo: TestInfo) {
  await page.goto(url);
  await waitForReady(page, testInfo);
  await recordSessionCookies(page.context());
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
  await submitLogin(page, user.email, user.password);
  await expect(page).toHaveURL(/\/home$/);
  await waitForReady(page, testInfo);
  await recordSessionCookies(page.context());
}

/** Types an e-mail and a password into the log-in form and presses 'Log In'. */
export async function submitLogin(page: Page, email: string, password: string) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log In" }).click();
}

/** Fills in the create-wallet form (the password, then its confirmation) and presses 'Next'. */
export async function submitCreateWallet(
  page: Page,
  email: string,
  password: string,
  confirmation = password,
) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Confirm password").fill(confirmation);
  await page.getByRole("button", { name: "Next" }).click();
}

/** Restore step 1: the e-mail, then 'Next'; waits for step 2. */
export async function restoreStepOne(page: Page, email: string) {
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByText("Step 2 of 3")).toBeVisible();
}

/** Fills the 12 boxes of restore step 2 with `words`, in order; a box past the last word is emptied. */
export async function fillWords(page: Page, words: readonly string[]) {
  for (let i = 0; i < 12; i++) await page.getByLabel(`Word ${i + 1}`, { exact: true }).fill(words[i] ?? "");
}

/** Restore steps 1 and 2 with the user's e-mail and phrase, from step 1: ends at step 3. */
export async function proveThePhrase(page: Page, testInfo: TestInfo, user: TestUser) {
  await restoreStepOne(page, user.email);
  await waitForReady(page, testInfo);
  await fillWords(page, user.words);
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByText("Step 3 of 3")).toBeVisible();
}

/** Restore step 3: the new password, its confirmation, then 'Confirm'. */
export async function chooseNewPassword(page: Page, password: string, confirmation = password) {
  await page.getByLabel("New password").fill(password);
  await page.getByLabel("Confirm password").fill(confirmation);
  await page.getByRole("button", { name: "Confirm" }).click();
}

/** Pastes `text` into the focused element, as the clipboard would (scripts on). */
export async function paste(page: Page, text: string) {
  await page.evaluate((pasted) => {
    const data = new DataTransfer();
    data.setData("text/plain", pasted);
    document.activeElement?.dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }),
    );
  }, text);
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
    timeout: 90_000,
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

/** A fresh, valid (all lower-case, so no EIP-55 checksum) ETH address: an address belongs to one wallet. */
export function freshEthAddress(): string {
  return `0x${randomBytes(20).toString("hex")}`;
}

/** Requests a wallet for `ticker` through the backend API (call 5), as a real client would. */
export async function requestWallet(request: APIRequestContext, user: TestUser, ticker: string) {
  const api = process.env.E2E_API_URL ?? "";
  const response = await request.post(`${api}/api/request-nonbtc-wallet`, {
    data: { email: user.email, twelveWords: user.words.join(" "), request_text: ticker, platform: PLATFORM },
  });
  expect(response.status()).toBe(200);
}

/**
 * An ETH wallet with an issued address and `amount` deposited, through the
 * API and the operator commands. Returns the wallet id and its address (as stored).
 */
export async function fundedEthWallet(
  request: APIRequestContext,
  user: TestUser,
  amount: string,
): Promise<{ walletId: string; address: string }> {
  await requestWallet(request, user, "ETH");
  const walletId = requestedWalletId(user.email, "ETH");
  const issued = /Issued (0x[0-9a-fA-F]{40}) /u.exec(ops("issue-address", walletId, freshEthAddress()));
  if (!issued?.[1]) throw new Error("the address was not issued");
  if (amount !== "0") ops("credit", walletId, amount, `0x${randomBytes(32).toString("hex")}`);
  return { walletId, address: issued[1] };
}

/** A send waiting for an operator's decision (npm run ops -- sends --json). */
export interface PendingSend {
  sendId: string;
  walletId: string;
  userId: string;
  email: string;
  coin: string;
  amount: string;
  amountUsd: string | null;
  address: string;
  /** XRP's destination tag, or null. */
  destinationTag: number | null;
  requestedAt: string;
  ageSeconds: number;
}

/** The sends of `email` waiting for a decision. */
export function pendingSends(email: string): PendingSend[] {
  return (JSON.parse(ops("sends", "--json")) as PendingSend[]).filter((s) => s.email === email);
}

/** A date as the pages show it: dd.mm.yy (UTC). */
export function ddmmyy(date: Date): string {
  const dd = String(date.getUTCDate()).padStart(2, "0");
  const mm = String(date.getUTCMonth() + 1).padStart(2, "0");
  const yy = String(date.getUTCFullYear() % 100).padStart(2, "0");
  return `${dd}.${mm}.${yy}`;
}

/** The signed-in shell's sidebar (desktop) and its burger menu (mobile). */
export function sidebar(page: Page) {
  return page.getByRole("complementary", { name: "Sidebar" });
}

/** On a phone: opens the ☰ menu and follows its link `name`. */
export async function followMenuLink(page: Page, name: string, { exact = false } = {}) {
  await page.locator(".burger > summary").click();
  await page.getByRole("navigation", { name: "Menu" }).getByRole("link", { name, exact }).click();
}

/** A fresh classic XRP address (version 0x00, a random account id, double-SHA-256 checksum). */
export function freshXrpAddress(): string {
  const body = Uint8Array.from([0, ...randomBytes(20)]);
  return base58xrp.encode(Uint8Array.from([...body, ...sha256(sha256(body)).subarray(0, 4)]));
}

/** An XRP wallet with an issued address and 100 XRP deposited. */
export async function fundXrp(request: APIRequestContext, user: TestUser): Promise<string> {
  await requestWallet(request, user, "XRP");
  const walletId = requestedWalletId(user.email, "XRP");
  ops("issue-address", walletId, freshXrpAddress());
  ops("credit", walletId, "100", randomBytes(32).toString("hex").toUpperCase());
  return walletId;
}

// Keyboard alone (issue 15): Tab moves, Enter and Space act, keys type.

export async function focused(target: Locator): Promise<boolean> {
  return target.evaluate((element) => element === document.activeElement).catch(() => false);
}

/** Presses Tab (at most `max` times) until `target` has the focus. */
export async function tabTo(page: Page, target: Locator, max = 80) {
  for (let i = 0; i < max; i++) {
    if (await focused(target)) return;
    await page.keyboard.press("Tab");
  }
  await expect(target).toBeFocused();
}

/** Types into the focused field, replacing what it holds. */
export async function typeText(page: Page, text: string) {
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type(text);
}

/** Tabs (at most `max` times) to the field labelled `label` and types `text` into it. */
export async function typeInto(page: Page, label: string, text: string, max?: number) {
  await tabTo(page, page.getByLabel(label, { exact: true }), max);
  await typeText(page, text);
}
