import type { Locator, Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, jsEnabled, ops, uniqueEmail, visit, waitForReady } from "./helpers.ts";

// The e2e server runs with the default configuration: these are its legal facts.
const COMPANY = "Coinkeep Ltd";
const COMPANY_NUMBER = "00000000";
const LEGAL_EMAIL = "legal@coinkeep.example";
const SUPPORT_EMAIL = "support@coinkeep.example";

const PAGES = [
  { place: "Main", link: "About us", path: "/about-us", h1: "About us", title: "About us — Coinkeep" },
  {
    place: "Main",
    link: "How it works",
    path: "/how-it-works",
    h1: "How Coinkeep works",
    title: "How it works — Coinkeep",
  },
  {
    place: "Legal",
    link: "Privacy policy",
    path: "/privacy-policy",
    h1: "Privacy policy",
    title: "Privacy policy — Coinkeep",
  },
  {
    place: "Legal",
    link: "Cookies",
    path: "/cookies",
    h1: "Cookie policy",
    title: "Cookie policy — Coinkeep",
  },
  {
    place: "Legal",
    link: "Terms and conditions",
    path: "/terms-and-conditions",
    h1: "Terms and conditions",
    title: "Terms and conditions — Coinkeep",
  },
] as const;

test.describe("informational pages", () => {
  for (const info of PAGES) {
    test(`${info.path}: reached from the ${info.place === "Main" ? "header" : "footer"}, one h1, accessible`, async ({
      page,
    }, testInfo) => {
      await visit(page, "/", testInfo);
      await page.getByRole("navigation", { name: info.place }).getByRole("link", { name: info.link }).click();
      await expect(page).toHaveURL(new RegExp(`${info.path}$`));
      await waitForReady(page, testInfo);
      await expect(page).toHaveTitle(info.title);
      await expect(page.getByRole("heading", { level: 1 })).toHaveCount(1);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(info.h1);
      // The header and the footer are on every public page.
      await expect(
        page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Home" }),
      ).toHaveAttribute("href", "/");
      await expect(page.getByRole("link", { name: "Coinkeep, home" })).toHaveAttribute("href", "/");
      await expect(page.getByRole("contentinfo").getByRole("link", { name: "Contact" })).toBeVisible();
      await expectAccessible(page);
    });
  }

  test("the legal pages cite the configured company number and mailboxes", async ({ page }, testInfo) => {
    for (const path of ["/terms-and-conditions", "/privacy-policy", "/cookies", "/about-us"]) {
      await visit(page, path, testInfo);
      const facts = page.locator("dl", { hasText: "Registered company number" });
      const fact = (term: string) =>
        facts
          .locator("div", { has: page.getByRole("term").getByText(term, { exact: true }) })
          .getByRole("definition");
      await expect(fact("Company")).toHaveText(COMPANY);
      await expect(fact("Registered company number")).toHaveText(COMPANY_NUMBER);
      await expect(fact("Legal mailbox")).toHaveText(LEGAL_EMAIL);
      await expect(fact("Support mailbox")).toHaveText(SUPPORT_EMAIL);
      await expect(facts.getByRole("link", { name: LEGAL_EMAIL })).toHaveAttribute(
        "href",
        `mailto:${LEGAL_EMAIL}`,
      );
      await expect(facts.getByRole("link", { name: SUPPORT_EMAIL })).toHaveAttribute(
        "href",
        `mailto:${SUPPORT_EMAIL}`,
      );
    }
    await expect(page.getByRole("contentinfo")).toContainText(COMPANY);
  });

  test("the terms state the spec's rules; the cookie policy lists two cookies", async ({
    page,
  }, testInfo) => {
    await visit(page, "/terms-and-conditions", testInfo);
    const terms = page.getByRole("main");
    await expect(terms).toContainText("You must be at least 18 years old");
    await expect(terms).toContainText("You are responsible for the destination address.");
    await expect(terms).toContainText("Transfers are irreversible.");
    await expect(terms).toContainText("Proof of wallet ownership may be required");
    await expect(terms).toContainText("Anti-money-laundering rules apply");

    await page.getByRole("contentinfo").getByRole("link", { name: "Cookies" }).click();
    await expect(page).toHaveURL(/\/cookies$/);
    await expect(page.getByRole("heading", { level: 3 })).toHaveText([
      "Session cookie",
      "Form protection (CSRF) cookie",
    ]);
  });

  test("the 'On this page' links lead to their sections", async ({ page }, testInfo) => {
    await visit(page, "/privacy-policy", testInfo);
    await page
      .getByRole("navigation", { name: "On this page" })
      .getByRole("link", { name: "Your rights" })
      .click();
    await expect(page).toHaveURL(/\/privacy-policy#rights$/);
    await expect(page.getByRole("heading", { name: "Your rights", level: 2 })).toBeInViewport();
  });

  test("signed-in users are sent from the informational pages to /home", async ({ page, signedIn }) => {
    void signedIn;
    for (const path of [...PAGES.map((p) => p.path), "/contact", "/cookies?modal=contact&step=2"]) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/home$/);
    }
  });
});

/** A contact message as operators list it (npm run ops -- support --json). */
interface OperatorMessage {
  id: string;
  kind: string;
  email: string;
  fullName: string | null;
  phone: string | null;
  comment: string;
  ip: string | null;
  createdAt: string;
}

/** The messages operators see from `email`. */
function messagesFrom(email: string): OperatorMessage[] {
  const all = JSON.parse(ops("support", "--kind", "contact", "--json")) as OperatorMessage[];
  return all.filter((m) => m.email === email.toLowerCase());
}

/** The popup, whichever step it is at. */
function popup(page: Page): Locator {
  return page.getByRole("dialog");
}

async function openContact(page: Page) {
  await page.getByRole("contentinfo").getByRole("link", { name: "Contact" }).click();
  await expect(popup(page)).toBeVisible();
}

/** Clicks outside the popup: on the backdrop, in the top left corner. */
async function clickOutside(page: Page) {
  await page.mouse.click(5, 5);
  await expect(popup(page)).toHaveCount(0);
}

/** Sends the form of step 2 and waits for what comes back. */
async function send(page: Page) {
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

/**
 * Where the form is after a refused submission: in the popup, at step 2 of the
 * page it was opened on (without scripts the refusal comes back there).
 */
async function formAfterRefusal(page: Page, testInfo: TestInfo): Promise<Locator> {
  if (!jsEnabled(testInfo)) await expect(page).toHaveURL(/\?modal=contact&step=2$/);
  await expect(popup(page)).toHaveAccessibleName("Contact us");
  return popup(page);
}

test.describe("contact popup", () => {
  test("steps 1 → 2 → 3, the spec's validation texts, accessible at every step", async ({
    page,
  }, testInfo) => {
    await visit(page, "/how-it-works", testInfo);
    await openContact(page);
    await expect(page).toHaveURL(/\/how-it-works\?modal=contact$/);

    // Step 1: the support address and 'Send message'.
    await expect(popup(page)).toHaveAccessibleName("Contact us");
    await expect(popup(page).getByRole("link", { name: SUPPORT_EMAIL })).toHaveAttribute(
      "href",
      `mailto:${SUPPORT_EMAIL}`,
    );
    await expect(popup(page).getByRole("button", { name: "Send message" })).toBeFocused();
    await expectAccessible(page);

    // Step 2: the form.
    await popup(page).getByRole("button", { name: "Send message" }).click();
    await expect(page).toHaveURL(/\/how-it-works\?modal=contact&step=2$/);
    await waitForReady(page, testInfo);
    await expect(popup(page).getByLabel("Email")).toBeFocused();
    await expect(popup(page).getByLabel("Comment")).toBeVisible();

    // Nothing filled in: both texts.
    await send(page);
    let form = await formAfterRefusal(page, testInfo);
    await expect(form.getByText("Please enter a valid email address.")).toBeVisible();
    await expect(form.getByText("Comment must be at least 6 characters.")).toBeVisible();
    await expect(form.getByLabel("Email")).toHaveAttribute("aria-invalid", "true");
    await expectAccessible(page);

    // An invalid address, a comment of 5 characters (spaces around it do not count).
    await form.getByLabel("Email").fill("not-an-email");
    await form.getByLabel("Comment").fill("  12345  ");
    await send(page);
    form = await formAfterRefusal(page, testInfo);
    await expect(form.getByText("Please enter a valid email address.")).toBeVisible();
    await expect(form.getByText("Comment must be at least 6 characters.")).toBeVisible();
    await expect(form.getByLabel("Email")).toHaveValue("not-an-email");

    // A valid address, the comment still short: only the comment's text.
    await form.getByLabel("Email").fill(uniqueEmail("contact"));
    await send(page);
    form = await formAfterRefusal(page, testInfo);
    await expect(form.getByText("Comment must be at least 6 characters.")).toBeVisible();
    await expect(form.getByText("Please enter a valid email address.")).toHaveCount(0);

    // Valid: step 3, back on the page the popup was opened on.
    const email = uniqueEmail("contact");
    const comment = `Hello, a question about fees ${Date.now()}`;
    await form.getByLabel("Email").fill(email);
    await form.getByLabel("Comment").fill(comment);
    if (jsEnabled(testInfo)) await page.evaluate(() => Object.assign(window, { ckNoReload: true }));
    await send(page);
    await expect(page).toHaveURL(/\/how-it-works\?modal=contact&step=3$/);
    await expect(popup(page)).toHaveAccessibleName("Message sent!");
    await expect(popup(page)).toContainText("Our support team will get back to you soon.");
    await expect(page.locator("h1")).toHaveText("How Coinkeep works");
    // With scripts the message went through a fetcher: the page was never reloaded.
    if (jsEnabled(testInfo)) expect(await page.evaluate(() => "ckNoReload" in window)).toBe(true);
    await expectAccessible(page);

    // The operators have it, with the sender's address (the test browser's: loopback).
    expect(messagesFrom(email)).toEqual([
      expect.objectContaining({ kind: "contact", comment, fullName: null, phone: null, ip: "127.0.0.1" }),
    ]);

    // Post → redirect → get: a reload shows step 3 again and sends nothing.
    await page.reload();
    await waitForReady(page, testInfo);
    await expect(popup(page)).toHaveAccessibleName("Message sent!");
    expect(messagesFrom(email)).toHaveLength(1);

    // Clicking outside closes it; opened again, it starts at step 1.
    await clickOutside(page);
    await expect(page).toHaveURL(/\/how-it-works$/);
    await openContact(page);
    await expect(popup(page).getByRole("button", { name: "Send message" })).toBeVisible();
    await expect(popup(page)).not.toContainText("Message sent!");
  });

  test("clicking outside at step 2 closes it and resets it to step 1", async ({ page }, testInfo) => {
    await visit(page, "/", testInfo);
    await openContact(page);
    await popup(page).getByRole("button", { name: "Send message" }).click();
    await expect(page).toHaveURL(/\/\?modal=contact&step=2$/);
    await waitForReady(page, testInfo);
    await popup(page).getByLabel("Email").fill("someone@example.com");
    await clickOutside(page);
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Secure Your Coins, Secure Your Future");
    await openContact(page);
    await expect(popup(page).getByRole("button", { name: "Send message" })).toBeVisible();
    await expect(popup(page).getByLabel("Email")).toHaveCount(0);
  });

  test("the close button closes it, and every public page has it", async ({ page }, testInfo) => {
    for (const path of ["/login", "/create-wallet", "/cookies"]) {
      await visit(page, path, testInfo);
      await openContact(page);
      await popup(page).getByRole("link", { name: "Close" }).click();
      await expect(popup(page)).toHaveCount(0);
      await expect(page).toHaveURL(new RegExp(`${path}$`));
    }
  });

  test("Escape closes it, resets it and gives focus back to 'Contact'", async ({ page }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "Escape closes a modal dialog only with scripts");
    await visit(page, "/about-us", testInfo);
    await openContact(page);
    await popup(page).getByRole("button", { name: "Send message" }).click();
    await expect(popup(page).getByLabel("Email")).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(popup(page)).toHaveCount(0);
    await expect(page).toHaveURL(/\/about-us$/);
    await expect(page.getByRole("contentinfo").getByRole("link", { name: "Contact" })).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(popup(page).getByRole("button", { name: "Send message" })).toBeFocused();
  });

  test("the keyboard alone sends a message", async ({ page }, testInfo) => {
    await visit(page, "/about-us", testInfo);
    await page.getByRole("contentinfo").getByRole("link", { name: "Contact" }).focus();
    await page.keyboard.press("Enter");
    await expect(popup(page).getByRole("button", { name: "Send message" })).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(popup(page).getByLabel("Email")).toBeFocused();
    const email = uniqueEmail("keyboard");
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    await expect(popup(page).getByLabel("Comment")).toBeFocused();
    await page.keyboard.type("Sent with the keyboard alone.");
    await page.keyboard.press("Tab");
    await expect(popup(page).getByRole("button", { name: "Send", exact: true })).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(popup(page)).toHaveAccessibleName("Message sent!");
    await expect(popup(page).getByRole("link", { name: "Close" })).toBeFocused();
    expect(messagesFrom(email).map((m) => m.comment)).toEqual(["Sent with the keyboard alone."]);
  });

  test("an unsuccessful answer shows 'Something went wrong'", async ({ page }, testInfo) => {
    await visit(page, "/cookies?modal=contact&step=2", testInfo);
    const email = uniqueEmail("refused");
    await popup(page).getByLabel("Email").fill(email);
    // A comment the backend refuses (a NUL character cannot be stored) but the form accepts.
    await popup(page).getByLabel("Comment").fill("Hello\u0000 there");
    await send(page);
    const form = await formAfterRefusal(page, testInfo);
    await expect(form.getByText("Something went wrong", { exact: true })).toBeVisible();
    await expect(form.getByLabel("Email")).not.toHaveAttribute("aria-invalid", "true");
    await expectAccessible(page);
    expect(messagesFrom(email)).toEqual([]);
  });

  // Issue 15, defect 14: it used to land on a page of its own, /contact.
  test("without scripts, a refusal comes back to the popup on the same page, values kept; the next send returns there", async ({
    page,
  }, testInfo) => {
    test.skip(jsEnabled(testInfo), "with scripts a refusal never leaves the page");
    await visit(page, "/privacy-policy?modal=contact&step=2", testInfo);
    await popup(page).getByLabel("Email").fill("nobody@example.com");
    await send(page);
    await expect(page).toHaveURL(/\/privacy-policy\?modal=contact&step=2$/);
    await expect(page).toHaveTitle(/Privacy/);
    await expect(popup(page).getByText("Comment must be at least 6 characters.")).toBeVisible();
    await expect(popup(page).getByLabel("Comment")).toBeFocused();
    await expect(popup(page).getByLabel("Email")).toHaveValue("nobody@example.com");
    await expectAccessible(page);
    // Shown once: a reload is the popup afresh.
    await page.reload();
    await expect(popup(page).getByText("Comment must be at least 6 characters.")).toHaveCount(0);
    await popup(page).getByLabel("Email").fill("nobody@example.com");
    await popup(page).getByLabel("Comment").fill("A longer comment this time.");
    await send(page);
    await expect(page).toHaveURL(/\/privacy-policy\?modal=contact&step=3$/);
    await expect(popup(page)).toHaveAccessibleName("Message sent!");
  });

  test("/contact and /support are not pages: a visit goes to /", async ({ page }) => {
    for (const path of ["/contact", "/support"]) {
      const response = await page.request.get(path, { maxRedirects: 0 });
      expect(response.status()).toBe(302);
      expect(response.headers().location).toBe("/");
    }
  });
});

test("the form sends people back only to a page of this site", async ({ page }, testInfo) => {
  await visit(page, "/cookies?modal=contact&step=2", testInfo);
  const form = page.locator("form#contact-popup-form");
  const fields: Record<string, string> = {};
  for (const input of await form.locator("input:not([type=email])").all()) {
    const name = await input.getAttribute("name");
    if (name) fields[name] = await input.inputValue();
  }
  expect(Object.keys(fields).toSorted()).toEqual([
    "ck_from__confirm",
    "ck_name__confirm",
    "csrf",
    "returnTo",
    // With scripts the form asks to be answered in place.
    ...(jsEnabled(testInfo) ? ["scripted"] : []),
  ]);
  expect(fields.returnTo).toBe("/cookies");
  const cases = [
    ["//evil.example/x", "/?modal=contact&step=3"],
    ["https://evil.example/", "/?modal=contact&step=3"],
    ["/\\evil.example", "/?modal=contact&step=3"],
    ["/privacy-policy?x=1&modal=other&step=2", "/privacy-policy?x=1&modal=contact&step=3"],
  ] as const;
  for (const [returnTo, location] of cases) {
    const response = await page.request.post("/contact", {
      form: { ...fields, returnTo, email: uniqueEmail("return"), comment: "Where do I land afterwards?" },
      maxRedirects: 0,
    });
    expect(response.status()).toBe(302);
    expect(response.headers().location).toBe(location);
  }
});
