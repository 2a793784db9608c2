// Issue 12, holes 1–4, as an attacker would do them in a real browser, with
// and without scripts (the HTTP-level versions are in
// tests/security/web-attacks.test.ts):
//   1–2. session fixation: the attacker gets a live anonymous session of
//        their own (restore step 1 leaves one), plants its cookie in the
//        victim's browser, lets the victim create or restore a wallet, then
//        uses the same cookie;
//   3.   login CSRF: a page on another site sends the victim to
//        /fast-login with the attacker's credentials;
//   4.   an open redirect: a same-origin form posts a hostile redirectTo to
//        /currency and Chromium follows the answer.
import type { Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import {
  chooseNewPassword,
  login,
  proveThePhrase,
  recordSecret,
  recordSessionCookies,
  restoreStepOne,
  submitCreateWallet,
  uniqueEmail,
  visit,
  waitForReady,
  sessionCookie,
  type TestUser,
} from "./helpers.ts";

/**
 * The attacker's own browser with a live anonymous session: restore step 1
 * with the attacker's e-mail stores state, so the session has a row.
 */
async function attackerWithLiveSession(page: Page, testInfo: TestInfo, attacker: TestUser) {
  await visit(page, "/restore-wallet", testInfo);
  await restoreStepOne(page, attacker.email);
  await recordSessionCookies(page.context());
  return page;
}

/** Plants the attacker's session cookie in the victim's browser (the cookie is not __Host- here). */
async function plant(attacker: Page, victim: Page) {
  const cookie = await sessionCookie(attacker.context());
  await victim.context().addCookies([cookie]);
  return cookie.value;
}

/** What the browser at `page` would post as this form's CSRF token. */
async function csrfOf(page: Page): Promise<string> {
  const value = await page.locator('input[name="csrf"]').first().getAttribute("value");
  if (!value) throw new Error("no CSRF token on the page");
  return value;
}

test.describe("session fixation (issue 12, holes 1 and 2)", () => {
  test("a session planted before create-wallet never sees the new words nor signs in", async ({
    otherBrowser,
    page,
    user: attackerUser,
  }, testInfo) => {
    const attacker = await attackerWithLiveSession(await otherBrowser(), testInfo, attackerUser);
    const planted = await plant(attacker, page);

    // The victim creates a wallet in the browser that holds the planted cookie.
    const email = uniqueEmail("fixation-victim");
    const password = `victim-${crypto.randomUUID()}`;
    recordSecret("password", password);
    await visit(page, "/create-wallet", testInfo);
    await submitCreateWallet(page, email, password);
    await expect(page.getByRole("heading", { name: "WARNING" })).toBeVisible();
    const words = await page
      .getByRole("list", { name: "Your 12-word phrase" })
      .locator(".word")
      .allTextContents();
    expect(words).toHaveLength(12);
    recordSecret("phrase", words);
    expect((await sessionCookie(page.context())).value).not.toBe(planted);

    // The attacker, on the planted cookie, sees the first step: no words.
    await attacker.goto("/create-wallet");
    await waitForReady(attacker, testInfo);
    await expect(attacker.getByRole("heading", { name: "Create wallet" })).toBeVisible();
    await expect(attacker.getByRole("heading", { name: "WARNING" })).toHaveCount(0);
    const html = await attacker.content();
    expect(html).not.toContain(words.join(" "));
    // …and the warning screen's Next, forged, does not sign the attacker in.
    const enter = await attacker.request.post("/create-wallet", {
      form: { csrf: await csrfOf(attacker), intent: "enter" },
      maxRedirects: 0,
    });
    expect(enter.headers().location).toBe("/create-wallet");
    await attacker.goto("/home");
    await expect(attacker).toHaveURL(/\/$/);

    // The victim goes on as usual.
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();
    await recordSessionCookies(page.context());
  });

  test("a session planted before a restore cannot set the victim's password", async ({
    otherBrowser,
    page,
    user: victim,
    newUser,
  }, testInfo) => {
    const attackerUser = await newUser("fixation-attacker");
    const attacker = await attackerWithLiveSession(await otherBrowser(), testInfo, attackerUser);
    await plant(attacker, page);

    // The victim proves the phrase (steps 1 and 2) in the browser with the planted cookie.
    await visit(page, "/restore-wallet", testInfo);
    // The planted session was at step 2 of the attacker's restore: the victim starts over.
    const close = page.getByRole("button", { name: "Back to the previous step" });
    if (await close.count()) await close.click();
    await proveThePhrase(page, testInfo, victim);

    // The attacker, on the planted cookie, is not at step 3.
    await attacker.goto("/restore-wallet");
    await waitForReady(attacker, testInfo);
    await expect(attacker.getByText("Step 3 of 3")).toHaveCount(0);
    await expect(attacker.getByLabel("New password")).toHaveCount(0);
    const forged = await attacker.request.post("/restore-wallet", {
      form: {
        csrf: await csrfOf(attacker),
        intent: "password",
        password: "attacker-chosen",
        confirmPassword: "attacker-chosen",
      },
      maxRedirects: 0,
    });
    expect(forged.headers().location).not.toBe("/login");

    // The victim's own step 3 works, and only the victim's new password signs in.
    const newPassword = `restored-${crypto.randomUUID()}`;
    recordSecret("password", newPassword);
    await chooseNewPassword(page, newPassword);
    await expect(page).toHaveURL(/\/login$/);
    await login(page, testInfo, { email: victim.email, password: newPassword });
  });
});

test.describe("login CSRF through /fast-login (issue 12, hole 3)", () => {
  const EVIL = "http://evil.test";

  /** A page on another site with a link into our fast login, carrying the attacker's credentials. */
  async function evilPage(page: Page, baseURL: string, attacker: TestUser) {
    const target = `${baseURL}/fast-login?email=${encodeURIComponent(attacker.email)}&password=${encodeURIComponent(attacker.password)}`;
    await page.route(`${EVIL}/**`, (route) =>
      route.fulfill({
        status: 200,
        contentType: "text/html",
        body: `<!doctype html><title>Prize</title><a id="prize" href="${target}">Claim your prize</a>`,
      }),
    );
    await page.goto(`${EVIL}/prize`);
  }

  test("a signed-in victim following another site's link stays signed in as themselves", async ({
    page,
    signedIn: victim,
    newUser,
    baseURL,
  }) => {
    const attacker = await newUser("csrf-attacker");
    await evilPage(page, baseURL ?? "", attacker);
    await page.getByRole("link", { name: "Claim your prize" }).click();
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByText(`Signed in as ${victim.email}`)).toBeVisible();
    await expect(page.getByText(attacker.email)).toHaveCount(0);
  });

  test("a visitor sent from another site is not signed in to the attacker's account", async ({
    page,
    user: attacker,
    baseURL,
  }) => {
    await evilPage(page, baseURL ?? "", attacker);
    await page.getByRole("link", { name: "Claim your prize" }).click();
    await expect(page).toHaveURL(/\/fast-login$/);
    await expect(page.getByText("Fast Login")).toBeVisible();
    expect((await page.context().cookies()).some((c) => c.name.endsWith("ck_session"))).toBe(false);
    await page.goto("/home");
    await expect(page).toHaveURL(/\/$/);
  });

  test("typing a fast-login URL still signs in (the spec's behaviour)", async ({ page, user }) => {
    await page.goto(
      `/fast-login?email=${encodeURIComponent(user.email)}&password=${encodeURIComponent(user.password)}`,
    );
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByText(`Signed in as ${user.email}`)).toBeVisible();
    await recordSessionCookies(page.context());
  });
});

test.describe("open redirect through /currency (issue 12, hole 4)", () => {
  for (const target of ["/\t/evil.example", "/\\evil.example", "/.//evil.example", "//evil.example"]) {
    test(`redirectTo ${JSON.stringify(target)} keeps the browser on this site`, async ({
      page,
      signedIn,
      baseURL,
    }) => {
      void signedIn;
      const evilHits: string[] = [];
      await page.route("http://evil.example/**", (route) => {
        evilHits.push(route.request().url());
        return route.fulfill({ status: 200, contentType: "text/html", body: "<title>Evil</title>evil" });
      });
      // A same-origin page with the currency form, its redirectTo tampered with (the real
      // form carries the page's own path). Served on our origin, so its post carries our cookies.
      const csrf = await csrfOf(page);
      const form = `<!doctype html><title>Form</title>
        <form method="post" action="/currency">
          <input type="hidden" name="csrf" value="${csrf}">
          <input type="hidden" name="currency" value="EUR">
          <input type="hidden" name="redirectTo" value="${target.replace("\t", "&#9;").replaceAll('"', "&quot;")}">
          <button>Go</button>
        </form>`;
      await page.route(`${baseURL}/__form`, (route) =>
        route.fulfill({ status: 200, contentType: "text/html", body: form }),
      );
      await page.goto("/__form");
      await page.getByRole("button", { name: "Go" }).click();
      await expect(page).toHaveURL(new RegExp(`^${(baseURL ?? "").replaceAll(".", "\\.")}/home$`));
      await expect(page.getByRole("heading", { name: "Wallet" })).toBeVisible();
      expect(evilHits).toEqual([]);
    });
  }
});
