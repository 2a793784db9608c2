// E-mail (issue 28, record 049), end to end with scripts on and off, against the real SMTP
// server the e2e servers mail through: "Verify your e-mail" on /security mails a link; the
// test reads it from the server and opens it; the address is verified and the link is spent.
// Then a sign-in from a second browser mails the holder once; the first browser's does not.
import { expect, test } from "./fixtures.ts";
import { expectAccessible, login, recordSecret, visit } from "./helpers.ts";
import { linkIn, mailsTo, waitForMail } from "./mail.ts";

test.describe("e-mail", () => {
  test("verify the address through the mailed link, then a new browser's sign-in is mailed", async ({
    page,
    signedIn,
    otherBrowser,
  }, testInfo) => {
    const user = signedIn;
    await visit(page, "/security", testInfo);
    await page.getByRole("link", { name: "Verify your e-mail" }).click();
    await expect(page).toHaveURL(/\/security\/email$/u);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("E-mail alerts");
    await expect(page.getByText("Not verified.")).toBeVisible();
    await expectAccessible(page);
    await page.getByRole("button", { name: "Verify your e-mail" }).click();
    await expect(page.getByText("We sent you a link. It works once, for 24 hours.")).toBeVisible();
    await expect(
      page.getByRole("status").filter({ hasText: `We sent a link to ${user.email}.` }),
    ).toBeVisible();
    // Asked again at once: refused at the form, no second mail.
    await page.getByRole("button", { name: "Send the link again" }).click();
    await expect(
      page.getByText("We sent a link a moment ago. Wait a minute before asking for another."),
    ).toBeVisible();

    const mail = await waitForMail(user.email, "Verify your e-mail for Coinkeep");
    const link = linkIn(mail, "/verify-email");
    recordSecret("token", new URLSearchParams(link.split("?")[1]).get("token") ?? "");
    expect(mail.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/u);
    await page.goto(link);
    // The token is spent and out of the address bar at once.
    await expect(page).toHaveURL(/\/verify-email\?result=verified$/u);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your e-mail address is verified.");
    await expectAccessible(page);
    await page.getByRole("link", { name: "Back to your e-mail settings" }).click();
    await expect(page.getByText(/^Verified on \d/u)).toBeVisible();
    await expect(page.getByRole("button", { name: /Verify your e-mail|Send the link again/u })).toHaveCount(
      0,
    );
    // The same link again: spent.
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(
      "This link has expired or was used already.",
    );
    expect(mailsTo(user.email).filter((m) => m.subject === "Verify your e-mail for Coinkeep")).toHaveLength(
      1,
    );

    // This browser's sign-in (the account's first) was not news; a second browser is, once.
    expect(mailsTo(user.email).filter((m) => m.subject === "New sign-in to Coinkeep")).toHaveLength(0);
    const elsewhere = await otherBrowser();
    await login(elsewhere, testInfo, user);
    const alert = await waitForMail(user.email, "New sign-in to Coinkeep");
    expect(alert.text).toMatch(/Browser: Chrom\w* \d+ on Linux/u);
    expect(alert.text).toContain("http://127.0.0.1:");
    expect(alert.text).toContain("/security/sessions");
    expect(alert.text).not.toContain(user.password);
    expect(alert.text).not.toContain(user.words.join(" "));
    // Signed out there (the session cookie gone, the browser's own kept) and in again: not news.
    await elsewhere.context().clearCookies({ name: /ck_session$/u });
    await login(elsewhere, testInfo, user);
    // Give the sender a moment: no second alert for a browser seen before.
    await page.waitForTimeout(2_500);
    expect(mailsTo(user.email).filter((m) => m.subject === "New sign-in to Coinkeep")).toHaveLength(1);
  });

  test("a visitor's link that is not one of ours says so, and never a 500", async ({ page }) => {
    const answer = await page.goto("/verify-email?token=not-a-real-token-but-long-enough");
    expect(answer?.status()).toBe(200);
    await expect(page).toHaveURL(/\/verify-email\?result=invalid$/u);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("This link is not valid.");
    await expect(page.getByRole("link", { name: "Sign in" })).toBeVisible();
    await page.goto("/verify-email?token=%00%3Cscript%3E");
    await expect(page).toHaveURL(/\/verify-email\?result=invalid$/u);
  });
});
