// A holder's sessions and password (issue 27, record 048), in the browser,
// with scripts on and off: two browsers signed in to one account; the
// sessions page lists both with "This device" on one; one signs the other
// out, whose next request (with scripts: its open page, through its event
// stream, at once) lands on the landing page; a password change refuses a
// wrong current password at its field and changes nothing, then makes the
// old password fail and the new one work, keeps the 12 words, and signs the
// other browser out; and the same by keyboard alone.
import { execFileSync } from "node:child_process";
import type { Browser, Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import {
  expectAccessible,
  jsEnabled,
  login,
  recordSecret,
  recordSessionCookies,
  submitLogin,
  tabTo,
  typeInto,
  visit,
  type TestUser,
} from "./helpers.ts";

const PHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** Another browser with a phone's User-Agent (so the list tells the two apart), signed in as `user`. */
async function phoneSignedIn(browser: Browser, testInfo: TestInfo, user: TestUser): Promise<Page> {
  const context = await browser.newContext({
    javaScriptEnabled: jsEnabled(testInfo),
    baseURL: testInfo.project.use.baseURL,
    userAgent: PHONE_UA,
  });
  const phone = await context.newPage();
  await login(phone, testInfo, user);
  return phone;
}

const sessionItems = (page: Page) => page.locator(".session-item");
const liveShell = (page: Page) => page.locator('.app-shell[data-live="open"]');

/** The revealed phrase on /security. */
function phrase(page: Page) {
  return page.getByRole("list", { name: "Your 12 word security phrase" });
}

async function revealWords(page: Page, testInfo: TestInfo, password: string): Promise<string[]> {
  await visit(page, "/security", testInfo);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("checkbox", { name: "I have read important note." }).check();
  await page.getByRole("button", { name: "Next" }).click();
  await expect(phrase(page)).toBeVisible();
  const words = phrase(page).locator(".word");
  await expect(words).toHaveCount(12);
  return words.allTextContents();
}

test("two browsers: both listed, 'This device' on this one; signing out the other lands it on the landing page", async ({
  page,
  browser,
  signedIn: user,
}, testInfo) => {
  const phone = await phoneSignedIn(browser, testInfo, user);
  try {
    if (jsEnabled(testInfo)) await expect(liveShell(phone)).toHaveCount(1);

    await visit(page, "/security", testInfo);
    await page.getByRole("link", { name: "Sessions" }).click();
    await expect(page).toHaveURL(/\/security\/sessions$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sessions");
    await expect(sessionItems(page)).toHaveCount(2);
    const mine = sessionItems(page).filter({ hasText: "This device" });
    await expect(mine).toHaveCount(1);
    await expect(mine.getByRole("heading")).toHaveText(/^Chrome \d+ on Linux \(This device\)$/u);
    await expect(mine.getByRole("button", { name: "Sign out" })).toHaveCount(0);
    const theirs = sessionItems(page).filter({ hasText: "Safari 17 on iOS 17.5" });
    await expect(theirs.getByText("127.0.0.1")).toBeVisible();
    await expectAccessible(page);

    await theirs.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/security\/sessions$/);
    await expect(page.getByText("Signed out: Safari 17 on iOS 17.5.")).toBeVisible();
    await expect(sessionItems(page)).toHaveCount(1);
    await expect(page.getByText("No other browser is signed in.")).toBeVisible();

    if (jsEnabled(testInfo)) {
      // The phone's open page hears 'session-ended' on its stream, which closes, and goes to the
      // landing page without anyone touching it.
      await expect(phone).toHaveURL(/\/$/u);
      await expect(liveShell(phone)).toHaveCount(0);
    }
    // Its next request, whatever it is, lands on the landing page.
    await phone.goto("/history");
    await expect(phone).toHaveURL(/\/$/u);
    await phone.goto("/security/sessions");
    await expect(phone).toHaveURL(/\/$/u);
    // This browser is still signed in.
    await visit(page, "/home", testInfo);
    await expect(page).toHaveURL(/\/home$/u);
  } finally {
    await phone.context().close();
  }
});

test("change password: a wrong current password is refused at its field and changes nothing; then the old fails, the new works, the words stay, the other browser is out", async ({
  page,
  browser,
  otherBrowser,
  signedIn: user,
}, testInfo) => {
  const phone = await phoneSignedIn(browser, testInfo, user);
  const newPassword = `changed-${crypto.randomUUID()}`;
  recordSecret("password", newPassword);
  try {
    await visit(page, "/security/password", testInfo);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Change password");
    await expectAccessible(page);
    const current = page.getByLabel("Current password");
    const fresh = page.getByLabel("New password", { exact: true });
    const confirm = page.getByLabel("Confirm new password");
    const change = page.getByRole("button", { name: "Change password" });

    // Nothing typed: the create form's message.
    await change.click();
    await expect(page.getByText("Please fill out all fields.")).toBeVisible();
    // A confirmation that differs: at its field.
    await current.fill(user.password);
    await fresh.fill(newPassword);
    await confirm.fill(`${newPassword}-typo`);
    await change.click();
    await expect(page.getByText("Passwords do not match.")).toBeVisible();
    await expect(confirm).toHaveAttribute("aria-invalid", "true");

    // A wrong current password: at its field; nothing changes.
    await current.fill("not-my-password");
    await fresh.fill(newPassword);
    await confirm.fill(newPassword);
    await change.click();
    await expect(page.getByText("Incorrect password", { exact: true })).toBeVisible();
    await expect(current).toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/security\/password$/u);
    // Without scripts the page is new: no password comes back in it.
    if (!jsEnabled(testInfo)) await expect(current).toHaveValue("");
    await expectAccessible(page);
    await phone.goto("/home");
    await expect(phone).toHaveURL(/\/home$/u);

    // The right one.
    await current.fill(user.password);
    await fresh.fill(newPassword);
    await confirm.fill(newPassword);
    await change.click();
    await expect(page).toHaveURL(/\/security$/u);
    await expect(
      page.getByText("Your password has been changed. Every other session has been signed out."),
    ).toBeVisible();
    await recordSessionCookies(page.context());

    // The other browser is signed out.
    await phone.goto("/home");
    await expect(phone).toHaveURL(/\/$/u);
    // The phrase reveal opens with the new password and shows the same 12 words.
    expect(await revealWords(page, testInfo, newPassword)).toEqual(user.words);

    // At /login in a browser of its own: the old password fails, the new one works.
    const visitor = await otherBrowser();
    await visit(visitor, "/login", testInfo);
    await submitLogin(visitor, user.email, user.password);
    await expect(visitor.getByText("Incorrect password", { exact: true })).toBeVisible();
    await expect(visitor).toHaveURL(/\/login$/u);
    await login(visitor, testInfo, { email: user.email, password: newPassword });
  } finally {
    await phone.context().close();
  }
});

test("by keyboard alone: sign out the other sessions, then change the password", async ({
  page,
  browser,
  signedIn: user,
}, testInfo) => {
  test.skip(jsEnabled(testInfo), "once, in the no-script project (the forms are the same with scripts)");
  const phone = await phoneSignedIn(browser, testInfo, user);
  const newPassword = `keyboard-${crypto.randomUUID()}`;
  recordSecret("password", newPassword);
  try {
    await visit(page, "/security/sessions", testInfo);
    await tabTo(page, page.getByRole("button", { name: "Sign out all other sessions" }));
    await page.keyboard.press("Enter");
    await expect(page.getByText("Signed out of 1 other session.")).toBeVisible();
    await phone.goto("/home");
    await expect(phone).toHaveURL(/\/$/u);

    await tabTo(page, page.getByRole("link", { name: "Back to Security" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/security$/u);
    await tabTo(page, page.getByRole("link", { name: "Change password" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/security\/password$/u);
    await typeInto(page, "Current password", user.password);
    await typeInto(page, "New password", newPassword, 5);
    await typeInto(page, "Confirm new password", newPassword, 5);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/security$/u);
    await expect(
      page.getByText("Your password has been changed. Every other session has been signed out."),
    ).toBeVisible();
    await recordSessionCookies(page.context());
  } finally {
    await phone.context().close();
  }
});

/** What a person reads in a text browser without CSS: `lynx -dump` of the page's HTML, links listed apart. */
function lynxDump(html: string): string {
  const dump = execFileSync(
    process.env.LYNX_PATH ?? "/usr/bin/lynx",
    ["-dump", "-stdin", "-width=100", "-display_charset=utf-8", "-assume_charset=utf-8"],
    { input: html, encoding: "utf8" },
  );
  return dump.split(/^References$/mu)[0] ?? dump;
}

test("without scripts or CSS: both pages read in order in lynx, and every form on them carries novalidate", async ({
  page,
  browser,
  signedIn: user,
}, testInfo) => {
  test.skip(jsEnabled(testInfo), "lynx runs no scripts: checked in the no-js project");
  const phone = await phoneSignedIn(browser, testInfo, user);
  try {
    const sessionsHtml = await (await page.request.get("/security/sessions")).text();
    const passwordHtml = await (await page.request.get("/security/password")).text();
    for (const html of [sessionsHtml, passwordHtml]) {
      const forms = html.match(/<form\b[^>]*>/giu) ?? [];
      expect(forms.length).toBeGreaterThan(1);
      for (const tag of forms) expect(tag).toMatch(/\snovalidate(?:=""|\s|>)/iu);
    }
    const sessions = lynxDump(sessionsHtml);
    const order = [
      /^Sessions$/mu,
      /Chrome \d+ on Linux \(This device\)/u,
      /Last seen from\s+127\.0\.0\.1/u,
      /Signed in\s+\d\d\.\d\d\.\d\d \d\d:\d\d UTC/u,
      /Last used\s+\d\d\.\d\d\.\d\d \d\d:\d\d UTC/u,
      /Safari 17 on iOS 17\.5/u,
      /\(BUTTON\) Sign out$/mu,
      /\(BUTTON\) Sign out all other sessions/u,
      /Back to Security/u,
    ];
    let from = 0;
    for (const pattern of order) {
      const at = sessions.slice(from).search(pattern);
      expect(at, `${String(pattern)} after position ${from} in:\n${sessions}`).toBeGreaterThanOrEqual(0);
      from += at;
    }
    // No control named only by an internal value ("(end) Sign out").
    expect(sessions).not.toMatch(/\((?:end|end-others)\)/u);
    const password = lynxDump(passwordHtml);
    expect(password).toMatch(
      /Change password[\s\S]*Current password _+[\s\S]*New password _+[\s\S]*Confirm new password _+[\s\S]*\(BUTTON\) Change password/u,
    );
  } finally {
    await phone.context().close();
  }
});
