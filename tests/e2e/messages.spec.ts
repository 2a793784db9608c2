import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import {
  ddmmyy,
  expectAccessible,
  followMenuLink,
  jsEnabled,
  login,
  MOBILE,
  ops,
  PLATFORM,
  sidebar,
  visit,
  waitForReady,
} from "./helpers.ts";

function messageRows(page: Page) {
  return page.locator(".message-list li");
}

/** The Notifications item of the sidebar and of the burger menu: its badge says how many are unread. */
async function expectBadges(page: Page, unread: number) {
  const links = [
    sidebar(page).getByRole("link", { name: /^Notifications/ }),
    // The burger menu is closed (and hidden on a wide screen): found by its markup.
    page.locator('.burger nav a[href="/notifications"]'),
  ];
  for (const link of links) {
    if (unread === 0) {
      await expect(link).toHaveText("Notifications");
      await expect(link.locator(".badge")).toHaveCount(0);
    } else {
      await expect(link.locator(".badge")).toHaveText(`${unread} unread`);
    }
  }
}

test.describe("notifications", () => {
  test("empty state, accessible", async ({ page, user }, testInfo) => {
    await login(page, testInfo, user);
    await sidebar(page).getByRole("link", { name: "Notifications" }).click();
    await expect(page).toHaveURL(/\/notifications$/);
    await waitForReady(page, testInfo);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Notifications");
    await expect(page.getByText("Your Messages will appear here", { exact: true })).toBeVisible();
    await expect(messageRows(page)).toHaveCount(0);
    await expectBadges(page, 0);
    await expectAccessible(page);
  });

  test(
    "an operator message shows a dot and the badge; opening it marks it read and clears both",
    { tag: "@remote" },
    async ({ page, user, operator }, testInfo) => {
      const older = `Older notice ${randomUUID().slice(0, 8)}: your account is active.`;
      const text = `Compliance check ${randomUUID().slice(0, 8)}: please confirm the source of your funds.`;
      operator.message(user.email, older);
      operator.message(user.email, text);
      await login(page, testInfo, user);
      await expectBadges(page, 2);

      await visit(page, "/notifications", testInfo);
      await expect(messageRows(page)).toHaveCount(2);
      // Newest first, each with its date and a dot (with a text alternative).
      await expect(messageRows(page).first()).toContainText(text);
      const row = messageRows(page).filter({ hasText: text });
      await expect(row.locator(".message-date")).toContainText(ddmmyy(new Date()));
      await expect(row.locator(".message-dot")).toHaveCount(1);
      await expect(row.getByText("Unread:")).toHaveCount(1);
      await expect(row.locator(".message-body")).toBeHidden();
      await expectAccessible(page);

      if (jsEnabled(testInfo)) {
        // Opened in place: no page load, no ?open= in the URL.
        await page.evaluate(() => {
          (window as unknown as { stayed: boolean }).stayed = true;
        });
        await row.locator("summary").click();
        await expect(row.locator(".message-body")).toHaveText(text);
        await expect(row.locator(".message-dot")).toHaveCount(0);
        await expectBadges(page, 1);
        expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
        await expect(page).toHaveURL(/\/notifications$/);
      } else {
        // A post per message; back on /notifications with that message expanded.
        await row.getByRole("button").click();
        await expect(page).toHaveURL(/\/notifications\?open=[^#]+#message-/);
        await expect(row.locator(".message-body")).toHaveText(text);
        await expect(row.locator(".message-dot")).toHaveCount(0);
        await expectBadges(page, 1);
      }
      await expectAccessible(page);

      // The other one is still unread; opening it clears the badge.
      const other = messageRows(page).filter({ hasText: older });
      await expect(other.locator(".message-dot")).toHaveCount(1);
      await other.locator(jsEnabled(testInfo) ? "summary" : "button").click();
      await expect(other.locator(".message-body")).toHaveText(older);
      await expectBadges(page, 0);

      // Read stays read.
      await visit(page, "/notifications", testInfo);
      await expect(page.locator(".message-dot")).toHaveCount(0);
      await expectBadges(page, 0);
    },
  );

  // A message to everyone reaches every user that exists when it is sent, also the users of
  // tests running alongside (this file's empty state, wallets.spec.ts "no badge without unread
  // messages"), which would then see it. So it runs only when asked: E2E_BROADCAST=1.
  test("a message to everyone reaches an existing user", async ({ page, newUser, operator }, testInfo) => {
    test.skip(!process.env.E2E_BROADCAST, "sends to every user of the test server: set E2E_BROADCAST=1");
    const user = await newUser("message-all");
    const text = `Scheduled maintenance ${randomUUID().slice(0, 8)}.`;
    operator.run("message", "--all", text);
    await login(page, testInfo, user);
    await expect(
      sidebar(page)
        .getByRole("link", { name: /^Notifications/ })
        .locator(".badge"),
    ).toHaveText(/unread$/);
    await visit(page, "/notifications", testInfo);
    const row = messageRows(page).filter({ hasText: text });
    await expect(row.locator(".message-dot")).toHaveCount(1);
    await row.locator(jsEnabled(testInfo) ? "summary" : "button").click();
    await expect(row.locator(".message-body")).toHaveText(text);
    await expect(row.locator(".message-dot")).toHaveCount(0);
  });

  test("opening someone else's (or no) message is refused", async ({
    page,
    request,
    user: owner,
    newUser,
    operator,
  }, testInfo) => {
    const sent = { messageId: operator.message(owner.email, "For the owner only.") };
    const user = await newUser("message-forged");
    await login(page, testInfo, user);
    // Without the form's CSRF token: refused before anything else.
    const forged = await page.request.post("/notifications", {
      form: { intent: "open-message", messageId: randomUUID() },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    // With it, a message that is not the user's is refused by the backend (call 8).
    await visit(page, "/notifications", testInfo);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const unknown = await page.request.post("/notifications", {
      form: { csrf, intent: "open-message", messageId: randomUUID() },
      maxRedirects: 0,
    });
    expect(unknown.status()).toBe(302);
    expect(unknown.headers()["location"]).toBe("/notifications");
    await visit(page, "/notifications", testInfo);
    await expect(page.getByRole("status").filter({ hasText: "Message not found." })).toBeVisible();
    // Another user's message: the same answer, and it stays unread for its owner.
    const theirs = await page.request.post("/notifications", {
      form: { csrf, intent: "open-message", messageId: sent.messageId },
      maxRedirects: 0,
    });
    expect(theirs.headers()["location"]).toBe("/notifications");
    await visit(page, "/notifications", testInfo);
    await expect(page.getByRole("status").filter({ hasText: "Message not found." })).toBeVisible();
    await expect(page.getByText("Your Messages will appear here")).toBeVisible();
    const api = process.env.E2E_API_URL ?? "";
    const count = await request.post(`${api}/api/aml-new-messages-count`, {
      data: { email: owner.email, twelvewords: owner.words.join(" "), platform: PLATFORM },
    });
    expect(await count.json()).toMatchObject({ newMessagesCount: 1 });
  });
});

/** The support message with this comment, as the operators list it (npm run ops -- support). */
function supportMessage(comment: string): Record<string, unknown> | undefined {
  const rows = JSON.parse(ops("support", "--kind", "support", "--json")) as Record<string, unknown>[];
  return rows.find((row) => row["comment"] === comment);
}

test.describe("support", () => {
  const FULL_NAME = "Please enter your full name.";
  const COMMENT = "Enter at least 1 word and 6 letters.";
  const PHONE = "Phone number may contain only digits, with an optional leading +.";

  test(
    "every validation text, the disabled e-mail, then 'Message sent!'",
    { tag: "@remote" },
    async ({ page, signedIn: user }, testInfo) => {
      await visit(page, "/history", testInfo);
      await sidebar(page).getByRole("link", { name: "Support" }).click();
      await expect(page).toHaveURL(/\/history\?modal=support$/);
      const dialog = page.getByRole("dialog", { name: "Start Here" });
      await expect(dialog).toBeVisible();
      await expect(dialog.getByText("Please, enter your email where we can contact you")).toBeVisible();
      const email = dialog.getByLabel("Email");
      await expect(email).toBeDisabled();
      await expect(email).toHaveValue(user.email);
      // The server uses the session's e-mail: the form does not even post one.
      await expect(dialog.locator('input[name="email"]')).toHaveCount(0);
      await expectAccessible(page);

      // A post that needs correcting stays in the modal, on the page it was opened on (without
      // scripts it comes back there: issue 15, defect 14).
      const form = dialog;
      await dialog.getByRole("button", { name: "Send" }).click();
      await expect(page).toHaveURL(/\/history\?modal=support$/);
      await expect(form.getByText(FULL_NAME)).toBeVisible();
      await expect(form.getByText(COMMENT)).toBeVisible();
      await expect(form.getByLabel("Full name")).toHaveAttribute("aria-invalid", "true");
      await expect(form.getByRole("heading", { name: "Start Here" })).toBeVisible();
      await expect(form.getByLabel("Email")).toHaveValue(user.email);

      // One letter is not a name; six characters without a word are not a comment.
      await form.getByLabel("Full name").fill("A");
      await form.getByLabel("Comment").fill("!!!!!!!");
      if (jsEnabled(testInfo)) {
        // Letters and other characters are refused as they are typed.
        await form.getByLabel("Phone").pressSequentially("+44 20-7a9");
        await expect(form.getByLabel("Phone")).toHaveValue("+442079");
        await form.getByLabel("Phone").fill("");
      } else {
        await form.getByLabel("Phone").fill("020 7946 0000");
      }
      await form.getByRole("button", { name: "Send" }).click();
      await expect(form.getByText(FULL_NAME)).toBeVisible();
      await expect(form.getByText(COMMENT)).toBeVisible();
      if (!jsEnabled(testInfo)) {
        await expect(form.getByText(PHONE)).toBeVisible();
        await expect(form.getByLabel("Phone")).toHaveValue("020 7946 0000");
        await expectAccessible(page);
      }

      await form.getByLabel("Full name").fill("Ada Lovelace");
      await form.getByLabel("Phone").fill("+442079460000");
      await form.getByLabel("Comment").fill("Hello");
      await form.getByRole("button", { name: "Send" }).click();
      await expect(form.getByText(COMMENT)).toBeVisible();
      await expect(form.getByText(FULL_NAME)).toHaveCount(0);
      await expect(form.getByText(PHONE)).toHaveCount(0);

      const comment = `Please call me about my withdrawal ${randomUUID().slice(0, 8)}.`;
      await form.getByLabel("Comment").fill(comment);
      await form.getByRole("button", { name: "Send" }).click();
      // Back where it was opened, the modal closed, the toast (a flash without scripts).
      await expect(page).toHaveURL(/\/history$/);
      await expect(page.getByRole("dialog")).toHaveCount(0);
      await expect(page.getByRole("status").filter({ hasText: "Message sent!" })).toBeVisible();
      await expect(page.getByRole("heading", { level: 1 })).toHaveText("History");

      // The operators read it, from the signed-in user's address, with the sender's IP.
      expect(supportMessage(comment)).toMatchObject({
        kind: "support",
        email: user.email,
        fullName: "Ada Lovelace",
        phone: "+442079460000",
        comment,
        ip: "127.0.0.1",
      });
    },
  );

  test("from the mobile menu; closing it goes back without sending", async ({ page, user }, testInfo) => {
    await page.setViewportSize(MOBILE);
    await login(page, testInfo, user);
    await followMenuLink(page, "Support");
    const dialog = page.getByRole("dialog", { name: "Start Here" });
    await expect(dialog).toBeVisible();
    await expect(page).toHaveURL(/\/home\?modal=support$/);
    if (jsEnabled(testInfo)) await expect(dialog.getByLabel("Full name")).toBeFocused();
    await expectAccessible(page);
    await dialog.getByRole("link", { name: "Close" }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByText("Message sent!")).toHaveCount(0);
  });

  test("the return path must stay on this site; a posted e-mail is ignored", async ({
    page,
    signedIn: user,
  }, testInfo) => {
    await visit(page, "/home?modal=support", testInfo);
    const dialog = page.getByRole("dialog", { name: "Start Here" });
    await dialog.locator('input[name="returnTo"]').evaluate((input, value) => {
      (input as HTMLInputElement).value = value;
    }, "//evil.example/phish");
    // A forged e-mail field: the server uses the session's e-mail only.
    await dialog.locator("form").evaluate((form) => {
      const forged = document.createElement("input");
      forged.type = "hidden";
      forged.name = "email";
      forged.value = "attacker@example.com";
      form.append(forged);
    });
    const comment = `Please call me back soon ${randomUUID().slice(0, 8)}.`;
    await dialog.getByLabel("Full name").fill("Ada Lovelace");
    await dialog.getByLabel("Comment").fill(comment);
    await dialog.getByRole("button", { name: "Send" }).click();
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByRole("status").filter({ hasText: "Message sent!" })).toBeVisible();
    expect(supportMessage(comment)).toMatchObject({ email: user.email, phone: null });
  });
});
