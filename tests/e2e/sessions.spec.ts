// Sessions in the browser, with and without scripts (record 015): a restore
// ends every other session of the account; a forged or altered cookie is just
// a visitor; Exit deletes the session on the server, not only the cookie.
import { expect, test } from "./fixtures.ts";
import {
  chooseNewPassword,
  jsEnabled,
  login,
  proveThePhrase,
  recordSecret,
  recordSessionCookies,
  visit,
  sessionCookie,
} from "./helpers.ts";

function swap(text: string, at: number): string {
  return text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
}

test(
  "a restore ends the account's sessions in every other browser",
  { tag: "@remote" },
  async ({ otherBrowser, page, signedIn: user }, testInfo) => {
    const elsewhere = await otherBrowser();
    await login(elsewhere, testInfo, user);

    // A third browser restores the wallet with the phrase and a new password.
    const restorer = await otherBrowser();
    await visit(restorer, "/restore-wallet", testInfo);
    await proveThePhrase(restorer, testInfo, user);
    const newPassword = `restored-${crypto.randomUUID()}`;
    recordSecret("password", newPassword);
    await chooseNewPassword(restorer, newPassword);
    await expect(restorer).toHaveURL(/\/login$/);
    await expect(
      restorer.getByText("Your password has been changed. Log in with your new password."),
    ).toBeVisible();

    // Both signed-in browsers are visitors now: a protected page sends them to the landing page.
    for (const signedIn of [page, elsewhere]) {
      await signedIn.goto("/home");
      await expect(signedIn).toHaveURL(/\/$/);
      await signedIn.goto("/security");
      await expect(signedIn).toHaveURL(/\/$/);
    }
    // The restorer signs in with the new password as usual.
    await login(restorer, testInfo, { email: user.email, password: newPassword });
  },
);

test("forged, altered, truncated and random cookies are a visitor, never an error", async ({
  page,
  request,
  signedIn,
}) => {
  void signedIn;
  const cookie = await sessionCookie(page.context());
  const value = cookie.value;
  const decoded = decodeURIComponent(value);
  const dot = decoded.lastIndexOf(".");
  const variants: Record<string, string> = {
    "altered signature": encodeURIComponent(swap(decoded, decoded.length - 2)),
    "altered token": encodeURIComponent(swap(decoded, 2)),
    truncated: value.slice(0, -5),
    "unsigned token": encodeURIComponent(decoded.slice(0, dot)),
    random: crypto.randomUUID().replaceAll("-", ""),
    "bad encoding": "%E0%A4%A",
  };
  for (const [label, forged] of Object.entries(variants)) {
    const answer = await request.get("/home", {
      headers: { Cookie: `${cookie.name}=${forged}` },
      maxRedirects: 0,
    });
    expect(answer.status(), label).toBe(302);
    expect(answer.headers().location, label).toBe("/");
    // A public page renders for them as for any visitor.
    const landing = await request.get("/login", { headers: { Cookie: `${cookie.name}=${forged}` } });
    expect(landing.status(), label).toBe(200);
  }
  // In the browser too: the altered cookie lands on the landing page, not an error page.
  await page.context().addCookies([{ ...cookie, value: variants["altered signature"]! }]);
  await page.goto("/home");
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
});

test("Exit deletes the session on the server: the old cookie is worth nothing", async ({
  page,
  request,
  signedIn,
}, testInfo) => {
  void signedIn;
  const cookie = await sessionCookie(page.context());
  const before = await request.get("/home", {
    headers: { Cookie: `${cookie.name}=${cookie.value}` },
    maxRedirects: 0,
  });
  expect(before.status()).toBe(200);

  await visit(page, "/home?modal=exit", testInfo);
  await page.getByRole("button", { name: "Yes" }).click();
  await expect(page).toHaveURL(/\/$/);
  await recordSessionCookies(page.context());

  // Replaying the cookie the browser dropped: the row is gone.
  const after = await request.get("/home", {
    headers: { Cookie: `${cookie.name}=${cookie.value}` },
    maxRedirects: 0,
  });
  expect(after.status()).toBe(302);
  expect(after.headers().location).toBe("/");
});

test("an open tab left alone stops refreshing its data, so its session can time out; touching it resumes", async ({
  page,
  user,
}, testInfo) => {
  test.skip(!jsEnabled(testInfo), "the refresh runs with scripts only");
  // The client without its event stream (the fallback, record 033), whose 10 s poll is what a
  // tab left open keeps making; with the stream nothing is asked (tests/e2e/live.spec.ts).
  await page.route("**/events", (route) => route.abort());
  // The page's clock, not the server's: timers and Date.now() move only when told.
  await page.clock.install();
  await login(page, testInfo, user);
  const seen: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.pathname.endsWith(".data") || url.pathname.startsWith("/unread-count")) seen.push(url.pathname);
  });
  const pageData = () => seen.filter((p) => p.startsWith("/home")).length;
  const polls = () => seen.filter((p) => p.startsWith("/unread-count")).length;
  // Each look waits a little in the page first: its requests go out after a real delay.
  const settled = (count: () => number) => async () => {
    await page.waitForTimeout(200);
    return count();
  };

  // Within the idle timeout (30 minutes by default): a refresh of the page's data every minute
  // (some are skipped while the previous is still being applied: the clock jumps).
  for (let minute = 1; minute <= 29; minute++) {
    await page.clock.runFor("01:00");
    await page.waitForTimeout(300);
  }
  await expect.poll(settled(pageData)).toBeGreaterThanOrEqual(5);
  // Past it, untouched: the unread count is still polled, the page's data no longer.
  await page.clock.runFor("02:00");
  await page.waitForTimeout(1000);
  seen.length = 0;
  for (let minute = 32; minute <= 36; minute++) {
    await page.clock.runFor("01:00");
    await expect.poll(settled(polls)).toBeGreaterThan(0);
  }
  await page.waitForTimeout(500);
  expect(pageData()).toBe(0);
  // A key press is the user back: the next minute brings a refresh.
  await page.keyboard.press("Shift");
  await page.clock.runFor("01:00");
  await expect.poll(settled(pageData)).toBe(1);
});
