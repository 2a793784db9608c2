// Holder two-factor authentication (issue 27, record 048), with scripts and
// without: turning it on (plain pages, a code computed here), signing in with
// the code step, replays refused, step-up before a send, a recovery code that
// works once, turning it off; the keyboard alone; a restore without a code.
import type { Page, TestInfo } from "@playwright/test";
import { Authenticator } from "./authenticator.ts";
import { expect, test } from "./fixtures.ts";
import {
  chooseNewPassword,
  expectAccessible,
  jsEnabled,
  proveThePhrase,
  recordSecret,
  submitLogin,
  tabTo,
  typeInto,
  visit,
  waitForReady,
  type TestUser,
} from "./helpers.ts";
import { address, coinAmount, confirm, RECEIVER, sendButton, warning } from "./send-helpers.ts";

const CODE_REQUIRED = "Enter the 6-digit code from your authenticator app, or a recovery code.";
const CODE_WRONG =
  "That code is not right. Enter the current 6-digit code from your authenticator app, or a recovery code.";
const CODE_USED = "That code was used already. Wait for the next code in your authenticator app.";

interface Enrolled {
  app: Authenticator;
  recoveryCodes: string[];
}

/** Turns two-factor on from /security (signed in): password, then a code of the key shown. */
async function turnOn(page: Page, testInfo: TestInfo, user: TestUser): Promise<Enrolled> {
  await visit(page, "/security", testInfo);
  await page.getByRole("link", { name: "Two-factor authentication" }).click();
  await expect(page.getByRole("heading", { name: "Two-factor authentication", level: 1 })).toBeVisible();
  await expect(page.getByText("Off.", { exact: true })).toBeVisible();
  await page.getByRole("link", { name: "Turn on two-factor authentication" }).click();
  // A plain page: no script in either mode.
  await expect(page.getByRole("heading", { name: "Turn on two-factor authentication" })).toBeVisible();
  expect(await page.locator("script").count()).toBe(0);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByText("Incorrect password")).toBeVisible();
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByRole("img", { name: "QR code of your authenticator key" })).toBeVisible();
  expect(await page.locator("script").count()).toBe(0);
  const secret = (await page.locator("#totp-secret").innerText()).replace(/\s/gu, "");
  expect(secret).toMatch(/^[A-Z2-7]{32}$/u);
  recordSecret("totp", secret);
  const app = new Authenticator(secret);
  // A wrong code stores nothing: the same key is still shown.
  await page.getByLabel("6-digit code").fill(app.wrongCode());
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect(page.getByText("That code is not right.", { exact: false })).toBeVisible();
  expect((await page.locator("#totp-secret").innerText()).replace(/\s/gu, "")).toBe(secret);
  await page.getByLabel("6-digit code").fill(await app.code());
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect(page.getByRole("heading", { name: "Two-factor authentication is on" })).toBeVisible();
  expect(await page.locator("script").count()).toBe(0);
  const recoveryCodes = await page
    .getByRole("list", { name: "Recovery codes" })
    .locator("code")
    .allInnerTexts();
  expect(recoveryCodes).toHaveLength(10);
  for (const code of recoveryCodes) recordSecret("token", code);
  await page.getByRole("link", { name: "I have saved my recovery codes" }).click();
  await waitForReady(page, testInfo);
  await expect(page.getByText("Recovery codes left:")).toContainText("10 of 10");
  return { app, recoveryCodes };
}

async function signOut(page: Page) {
  await page.context().clearCookies();
}

/** The password, then the code step; answers when the code form shows. */
async function passwordStep(page: Page, testInfo: TestInfo, user: TestUser) {
  await visit(page, "/login", testInfo);
  await submitLogin(page, user.email, user.password);
  await expect(page).toHaveURL(/\/login\/code$/);
  await expect(page.getByRole("heading", { name: "Two-factor authentication" })).toBeVisible();
  await waitForReady(page, testInfo);
}

async function giveCode(page: Page, code: string) {
  await page.getByLabel("Authentication code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
}

test.describe("holder two-factor", () => {
  test("on, sign-in asks for the code, replays refused, step-up on a send, a recovery code once, off", async ({
    page,
    signedIn: user,
    fundEth,
  }, testInfo) => {
    test.slow();
    const { app, recoveryCodes } = await turnOn(page, testInfo, user);
    await expectAccessible(page);

    // Sign-in asks for the code; a wrong one is refused, a right one works, the same again is refused.
    await signOut(page);
    await passwordStep(page, testInfo, user);
    await expectAccessible(page);
    await giveCode(page, "");
    await expect(page.getByText(CODE_REQUIRED)).toBeVisible();
    await giveCode(page, app.wrongCode());
    await expect(page.getByText(CODE_WRONG)).toBeVisible();
    const code = await app.code();
    await giveCode(page, code);
    await expect(page).toHaveURL(/\/home$/);
    await signOut(page);
    await passwordStep(page, testInfo, user);
    await giveCode(page, code);
    await expect(page.getByText(CODE_USED)).toBeVisible();
    await giveCode(page, await app.code());
    await expect(page).toHaveURL(/\/home$/);

    // The sign-in's code covers the next 5 minutes: a send then asks for none. A fresh session
    // signed in with a recovery code asks for none either; so the step-up is seen from a new
    // session whose grant is spent: sign in, then wait out nothing — the test uses the reveal page
    // of a session signed in before two-factor was on (below). Here: a send goes through.
    await fundEth(user, "1");
    await visit(page, "/wallet/eth", testInfo);
    await sendOnce(page, testInfo, "0.01");

    // A recovery code signs in once, not twice.
    await signOut(page);
    await passwordStep(page, testInfo, user);
    await giveCode(page, recoveryCodes[0] ?? "");
    await expect(page).toHaveURL(/\/home$/);
    await signOut(page);
    await passwordStep(page, testInfo, user);
    await giveCode(page, recoveryCodes[0] ?? "");
    await expect(page.getByText(CODE_WRONG)).toBeVisible();
    await giveCode(page, await app.code());
    await expect(page).toHaveURL(/\/home$/);

    // Turning it off needs the password and a code.
    await visit(page, "/security/two-factor", testInfo);
    await expect(page.getByText("Recovery codes left:")).toContainText("9 of 10");
    await page.getByLabel("Password").fill(user.password);
    await page.getByLabel("Authentication code").fill(app.wrongCode());
    await page.getByRole("button", { name: "Turn off" }).click();
    await expect(page.getByText(CODE_WRONG)).toBeVisible();
    await page.getByLabel("Password").fill(user.password);
    await page.getByLabel("Authentication code").fill(await app.code());
    await page.getByRole("button", { name: "Turn off" }).click();
    await expect(page.getByText("Off.", { exact: true })).toBeVisible();
    await signOut(page);
    await visit(page, "/login", testInfo);
    await submitLogin(page, user.email, user.password);
    await expect(page).toHaveURL(/\/home$/);
  });

  test("step-up: a session without a recent code is asked for one before a send and a reveal", async ({
    page,
    signedIn: user,
    otherBrowser,
    fundEth,
  }, testInfo) => {
    test.slow();
    // The page signed in before two-factor went on: its session has no grant.
    await fundEth(user, "1");
    const other = await otherBrowser();
    await visit(other, "/login", testInfo);
    await submitLogin(other, user.email, user.password);
    await expect(other).toHaveURL(/\/home$/);
    const { app } = await turnOn(other, testInfo, user);

    await visit(page, "/wallet/eth", testInfo);
    await openAndReview(page, testInfo, "0.01");
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expect(warning(page).getByText(CODE_REQUIRED, { exact: true })).toBeVisible();
    await expect(warning(page).getByLabel("Authentication code")).toBeFocused();
    await warning(page).getByLabel("Authentication code").fill(app.wrongCode());
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expect(warning(page).getByText(CODE_WRONG)).toBeVisible();
    await warning(page)
      .getByLabel("Authentication code")
      .fill(await app.code());
    await confirm(page);
    // Within 5 minutes the next send asks for nothing more.
    await visit(page, "/wallet/eth", testInfo);
    await sendOnce(page, testInfo, "0.02");

    // The reveal: this session gave a code a moment ago, so no code is asked; another without one is.
    await visit(other, "/security", testInfo);
    await other.context().clearCookies();
    await visit(other, "/login", testInfo);
    await submitLogin(other, user.email, user.password);
    await giveCode(other, await app.code());
    await expect(other).toHaveURL(/\/home$/);
    await visit(page, "/security", testInfo);
    await expect(page.getByLabel("Authentication code")).toHaveCount(0);
    await page.getByLabel("Password").fill(user.password);
    await page.getByLabel("I have read important note.").check();
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByRole("heading", { name: "Your 12 word security phrase" })).toBeVisible();
  });

  test("the keyboard alone: turning on and signing in with the code step", async ({
    page,
    signedIn: user,
  }, testInfo) => {
    test.skip(jsEnabled(testInfo), "once, without scripts (the pages of the code step are the same)");
    await visit(page, "/security/two-factor/enrol", testInfo);
    await typeInto(page, "Password", user.password);
    await page.keyboard.press("Enter");
    await expect(page.getByRole("img", { name: "QR code of your authenticator key" })).toBeVisible();
    const app = new Authenticator((await page.locator("#totp-secret").innerText()).replace(/\s/gu, ""));
    recordSecret("totp", app.secret);
    await typeInto(page, "6-digit code", await app.code());
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Two-factor authentication is on" })).toBeVisible();
    for (const code of await page.locator(".recovery-codes code").allInnerTexts())
      recordSecret("token", code);
    await tabTo(page, page.getByRole("link", { name: "I have saved my recovery codes" }));
    await page.keyboard.press("Enter");
    await expect(page.getByText("On.", { exact: true })).toBeVisible();

    await signOut(page);
    await visit(page, "/login", testInfo);
    await typeInto(page, "Email", user.email);
    await typeInto(page, "Password", user.password);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/login\/code$/);
    await expect(page.getByLabel("Authentication code")).toBeFocused();
    await page.keyboard.type(await app.code());
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/home$/);
  });

  test("fast login with two-factor on goes to the code step", async ({ page, signedIn: user }, testInfo) => {
    const { app } = await turnOn(page, testInfo, user);
    await signOut(page);
    const query = new URLSearchParams({ email: user.email, password: user.password });
    await page.goto(`/fast-login?${query.toString()}`);
    await expect(page).toHaveURL(/\/login\/code$/);
    await waitForReady(page, testInfo);
    await giveCode(page, await app.code());
    await expect(page).toHaveURL(/\/home$/);
  });

  test("a restore without a code: the password changes, two-factor goes after 48 hours, sends wait", async ({
    page,
    signedIn: user,
    fundEth,
  }, testInfo) => {
    test.slow();
    await turnOn(page, testInfo, user);
    await fundEth(user, "1");
    await signOut(page);
    await visit(page, "/restore-wallet", testInfo);
    await proveThePhrase(page, testInfo, user);
    await expect(page.getByLabel("Authentication code (if you have one)")).toBeVisible();
    await page.getByLabel("Authentication code (if you have one)").fill("000000");
    await chooseNewPassword(page, `${user.password}-2`);
    await expect(page.getByText(CODE_WRONG)).toBeVisible();
    const newPassword = `${user.password}-3`;
    recordSecret("password", newPassword);
    await page.getByLabel("Authentication code (if you have one)").fill("");
    await chooseNewPassword(page, newPassword);
    await expect(page).toHaveURL(/\/login$/);
    await expect(
      page.getByText("Two-factor authentication will be removed on", { exact: false }),
    ).toBeVisible();
    // Signing in needs no code meanwhile; a send is refused, saying until when.
    await submitLogin(page, user.email, newPassword);
    await expect(page).toHaveURL(/\/home$/);
    await waitForReady(page, testInfo);
    await visit(page, "/wallet/eth", testInfo);
    await openAndReview(page, testInfo, "0.01");
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expect(
      page.getByText(/Sends are paused until \d{4}-\d\d-\d\d \d\d:\d\d UTC while two-factor/u),
    ).toBeVisible();
    await visit(page, "/security/two-factor", testInfo);
    await expect(
      page.getByText("two-factor authentication will be removed on", { exact: false }),
    ).toBeVisible();
  });
});

/** Opens the send form, fills it, and presses 'Send ETH' for the risk warning. */
async function openAndReview(page: Page, testInfo: TestInfo, amount: string) {
  await sendButton(page).click();
  await expect(address(page)).toBeVisible();
  await address(page).fill(RECEIVER);
  await coinAmount(page).fill(amount);
  if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Convert ETH to USD" }).click();
  await sendButton(page).click();
  await expect(warning(page)).toBeVisible();
}

async function sendOnce(page: Page, testInfo: TestInfo, amount: string) {
  await openAndReview(page, testInfo, amount);
  await confirm(page);
}
