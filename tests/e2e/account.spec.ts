import { expect, test } from "./fixtures.ts";
import {
  chooseNewPassword,
  expectAccessible,
  fillWords,
  jsEnabled,
  paste,
  restoreStepOne,
  submitCreateWallet,
  submitLogin,
  uniqueEmail,
  visit,
  waitForReady,
} from "./helpers.ts";

test.describe("landing and redirects", () => {
  test("landing page: headline, Start Now to /login, accessible", async ({ page }, testInfo) => {
    await visit(page, "/", testInfo);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Secure Your Coins, Secure Your Future");
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Home" })).toHaveAttribute("href", "/");
    await expect(nav.getByRole("link", { name: "About us" })).toHaveAttribute("href", "/about-us");
    await expect(nav.getByRole("link", { name: "How it works" })).toHaveAttribute("href", "/how-it-works");
    const footer = page.getByRole("contentinfo");
    await expect(footer.getByRole("link", { name: "Privacy policy" })).toHaveAttribute(
      "href",
      "/privacy-policy",
    );
    await expect(footer.getByRole("link", { name: "Cookies" })).toHaveAttribute("href", "/cookies");
    await expect(footer.getByRole("link", { name: "Terms and conditions" })).toHaveAttribute(
      "href",
      "/terms-and-conditions",
    );
    await expect(footer.getByRole("link", { name: "Contact" })).toBeVisible();
    await expectAccessible(page);
    await page.getByRole("link", { name: "Start Now" }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole("heading", { name: "Log in" })).toBeVisible();
  });

  test("visitors are sent from protected routes to /, unknown paths go to /", async ({ page }) => {
    for (const path of ["/home", "/history", "/notifications", "/security", "/wallet/btc"]) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/$/);
    }
    await page.goto("/no/such/page");
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Secure Your Coins, Secure Your Future");
  });

  test("signed-in users are sent from public routes to /home", async ({ page, signedIn }) => {
    void signedIn;
    for (const path of ["/", "/login", "/create-wallet", "/restore-wallet", "/fast-login"]) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/home$/);
    }
    await page.goto("/nowhere");
    await expect(page).toHaveURL(/\/home$/);
  });
});

test.describe("create wallet", () => {
  test("validation messages", async ({ page }, testInfo) => {
    await visit(page, "/create-wallet", testInfo);
    await expect(page.getByRole("heading", { name: "Create wallet" })).toBeVisible();
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Please fill out all fields.")).toBeVisible();

    await submitCreateWallet(page, "not-an-email", "secret-1", "secret-2");
    await expect(page.getByText("Please provide a valid email.")).toBeVisible();
    await expect(page.getByText("Passwords do not match.")).toBeVisible();
    await expect(page.getByLabel("Email")).toHaveAttribute("aria-invalid", "true");
    await expectAccessible(page);
  });

  test("an e-mail already registered shows the server's message", async ({ page, user }, testInfo) => {
    await visit(page, "/create-wallet", testInfo);
    await submitCreateWallet(page, user.email.toUpperCase(), "another");
    await expect(page.getByText("An account with this email address already exists.")).toBeVisible();
  });

  test("create → warning screen → /home → exit", { tag: "@remote" }, async ({ page, context }, testInfo) => {
    const email = uniqueEmail("create");
    await visit(page, "/create-wallet", testInfo);
    await submitCreateWallet(page, email, "correct horse");

    await expect(page.getByRole("heading", { name: "WARNING" })).toBeVisible();
    await waitForReady(page, testInfo);
    await expect(page.getByText(/Do not share your 12-word phrase with anyone/)).toBeVisible();
    const words = page.getByRole("list", { name: "Your 12-word phrase" }).locator(".word");
    await expect(words).toHaveCount(12);
    const phrase = (await words.allTextContents()).join(" ");
    expect(phrase).toMatch(/^([a-z]+ ){11}[a-z]+$/);
    await expectAccessible(page);

    if (jsEnabled(testInfo)) {
      await context.grantPermissions(["clipboard-read", "clipboard-write"]);
      await page.getByRole("button", { name: "Copy" }).click();
      await expect(page.getByRole("button", { name: "Copied" })).toBeVisible();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(phrase);
      await expect(page.getByRole("button", { name: "Copy" })).toBeVisible({ timeout: 4_000 });
    } else {
      // Without scripts there is no copy button; the words are plain, selectable text.
      await expect(page.getByRole("button", { name: "Copy" })).toHaveCount(0);
    }

    await page.getByRole("button", { name: "Next" }).click();
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByRole("heading", { name: "Wallet" })).toBeVisible();
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();
    await waitForReady(page, testInfo);
    await expectAccessible(page);

    // The warning screen is gone once the user is in.
    await page.goto("/create-wallet");
    await expect(page).toHaveURL(/\/home$/);
    await waitForReady(page, testInfo);

    // Exit: No closes the dialog; the backdrop closes it; Yes logs out.
    const sidebar = page.getByRole("complementary", { name: "Sidebar" });
    await sidebar.getByRole("link", { name: "Exit" }).click();
    const dialog = page.getByRole("dialog", { name: "Are you sure you want to exit?" });
    await expect(dialog).toBeVisible();
    await expectAccessible(page);
    await dialog.getByRole("link", { name: "No" }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page).toHaveURL(/\/home$/);

    await sidebar.getByRole("link", { name: "Exit" }).click();
    await expect(dialog).toBeVisible();
    await page.mouse.click(5, 5);
    await expect(dialog).toHaveCount(0);

    await sidebar.getByRole("link", { name: "Exit" }).click();
    await dialog.getByRole("button", { name: "Yes" }).click();
    await expect(page).toHaveURL(/\/$/);
    await page.goto("/home");
    await expect(page).toHaveURL(/\/$/);
  });
});

test.describe("log in", () => {
  test(
    "required fields, unknown e-mail, wrong password, success",
    { tag: "@remote" },
    async ({ page, user }, testInfo) => {
      await visit(page, "/login", testInfo);
      await expectAccessible(page);
      await page.getByRole("button", { name: "Log In" }).click();
      await expect(page.getByText("Required")).toHaveCount(2);

      await submitLogin(page, uniqueEmail("nobody"), "whatever");
      await expect(page.getByText("User doesn't exist")).toBeVisible();
      await expect(page.getByLabel("Email")).toHaveAttribute("aria-invalid", "true");
      await expectAccessible(page);

      await submitLogin(page, user.email, "wrong password");
      await expect(page.getByText("Incorrect password")).toBeVisible();
      await expect(page.getByLabel("Password")).toHaveAttribute("aria-invalid", "true");
      // The password is never sent back into the page.
      await expect(page.getByLabel("Password")).toHaveValue(jsEnabled(testInfo) ? "wrong password" : "");

      await page.getByLabel("Email").fill(`  ${user.email.toUpperCase()} `);
      await page.getByLabel("Password").fill(user.password);
      await page.getByLabel("Password").press("Enter");
      await expect(page).toHaveURL(/\/home$/);
      await expect(page.getByText(`Signed in as ${user.email}`)).toBeVisible();

      // The browser holds only an opaque session id; the phrase is nowhere in the page.
      const html = await page.content();
      expect(html).not.toContain(user.words.slice(0, 3).join(" "));
      expect(html).not.toContain(JSON.stringify(user.words.slice(0, 2)).slice(1, -1));
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name.endsWith("ck_session"));
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
      expect(session?.value).not.toContain(user.email.split("@")[0]);
    },
  );

  test("Restore Wallet and Create Wallet buttons", async ({ page }, testInfo) => {
    await visit(page, "/login", testInfo);
    await page.getByRole("link", { name: "Restore Wallet" }).click();
    await expect(page).toHaveURL(/\/restore-wallet$/);
    await page.goto("/login");
    await page.getByRole("link", { name: "Create Wallet" }).click();
    await expect(page).toHaveURL(/\/create-wallet$/);
  });

  test("errors hide themselves after 5 seconds with scripts, stay without", async ({ page }, testInfo) => {
    await visit(page, "/login", testInfo);
    await submitLogin(page, uniqueEmail("ghost"), "whatever");
    const error = page.getByText("User doesn't exist");
    await expect(error).toBeVisible();
    await page.waitForTimeout(5_600);
    if (jsEnabled(testInfo)) await expect(error).toHaveCount(0);
    else await expect(error).toBeVisible();
  });
});

test.describe("restore wallet", () => {
  test("wrong phrase, right phrase, new password", { tag: "@remote" }, async ({ page, user }, testInfo) => {
    await visit(page, "/restore-wallet", testInfo);
    await expect(page.getByText("Step 1 of 3")).toBeVisible();
    await expectAccessible(page);

    await page.getByLabel("Email").fill("nope");
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Please enter a valid email.")).toBeVisible();

    await page.getByLabel("Email").fill(uniqueEmail("unregistered"));
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("This email is not registered")).toBeVisible();

    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Email").press("Enter");
    await expect(page.getByText("Step 2 of 3")).toBeVisible();
    await waitForReady(page, testInfo);
    await expect(page.getByPlaceholder("1.", { exact: true })).toBeVisible();
    await expect(page.getByPlaceholder("12.", { exact: true })).toBeVisible();
    await expectAccessible(page);

    // Missing words.
    await page.getByLabel("Word 1", { exact: true }).fill(user.words[0]!);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("All 12 words are required.")).toBeVisible();

    // A wrong phrase: the right words in the wrong order.
    await fillWords(page, user.words.toReversed());
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Wrong 12 word phrase")).toBeVisible();

    // Pasting the whole phrase into the first box spreads it.
    if (jsEnabled(testInfo)) {
      await fillWords(page, []);
      await page.getByLabel("Word 1", { exact: true }).focus();
      await paste(page, user.words.join(" "));
      await expect(page.getByLabel("Word 12", { exact: true })).toHaveValue(user.words[11]!);
      await expect(page.getByLabel("Word 1", { exact: true })).toHaveValue(user.words[0]!);
    } else {
      // Without scripts the server spreads the words typed into the first box.
      await fillWords(page, [user.words.join(" ")]);
    }
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByText("Step 3 of 3")).toBeVisible();
    await expectAccessible(page);

    await chooseNewPassword(page, "brand new", "brand nee");
    await expect(page.getByText("Passwords do not match.")).toBeVisible();

    await chooseNewPassword(page, "brand new");
    await expect(page).toHaveURL(/\/login$/);
    await expect(
      page.getByText("Your password has been changed. Log in with your new password."),
    ).toBeVisible();
    await waitForReady(page, testInfo);

    // The old password no longer works; the new one does.
    await submitLogin(page, user.email, user.password);
    await expect(page.getByText("Incorrect password")).toBeVisible();
    await submitLogin(page, user.email, "brand new");
    await expect(page).toHaveURL(/\/home$/);
  });

  test("back arrow and close icon", async ({ page, user }, testInfo) => {
    await visit(page, "/restore-wallet", testInfo);
    await restoreStepOne(page, user.email);
    await page.getByRole("button", { name: "Back to the previous step" }).click();
    await expect(page.getByText("Step 1 of 3")).toBeVisible();
    await page.getByRole("link", { name: "Back to log in" }).click();
    await expect(page).toHaveURL(/\/login$/);

    await page.goto("/restore-wallet");
    await restoreStepOne(page, user.email);
    await page.getByRole("button", { name: "Close" }).click();
    await expect(page).toHaveURL(/\/$/);
    await page.goto("/restore-wallet");
    await expect(page.getByText("Step 1 of 3")).toBeVisible();
  });
});

test.describe("fast login", () => {
  test("logs in from the query and drops it from the URL", { tag: "@remote" }, async ({ page, user }) => {
    const query = new URLSearchParams({ email: user.email, password: user.password });
    const response = await page.goto(`/fast-login?${query}`);
    await expect(page).toHaveURL(/\/home$/);
    expect(page.url()).not.toContain("password");
    expect(response?.request().redirectedFrom()?.url()).toContain("/fast-login?");
    await expect(page.getByText(`Signed in as ${user.email}`)).toBeVisible();
  });

  test("renders only 'Fast Login' when it cannot log in", async ({ page, user }) => {
    for (const query of [
      new URLSearchParams({ email: user.email, password: "wrong" }),
      new URLSearchParams({ email: user.email }),
      new URLSearchParams({ password: "x" }),
    ]) {
      const response = await page.goto(`/fast-login?${query}`);
      await expect(page).toHaveURL(/\/fast-login$/);
      expect(response?.headers()["referrer-policy"]).toBe("no-referrer");
      await expect(page.locator("main")).toHaveText("Fast Login");
    }
    await page.goto("/home");
    await expect(page).toHaveURL(/\/$/);
  });
});

test.describe("pending states (scripts on)", () => {
  test("buttons say what is happening while a request is under way", async ({ page, user }, testInfo) => {
    test.skip(!jsEnabled(testInfo), "pending labels need scripts; without them the browser shows its own");
    // Hold each form submission for a moment so the pending state can be seen.
    await page.route(/\.data(\?|$)/, async (route) => {
      if (route.request().method() === "POST") await new Promise((r) => setTimeout(r, 1_000));
      await route.continue();
    });

    await visit(page, "/restore-wallet", testInfo);
    await page.getByLabel("Email").fill(user.email);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Loading…" })).toBeAttached();
    await expect(page.getByText("Step 2 of 3")).toBeVisible();
    await fillWords(page, user.words);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByRole("button", { name: "Checking..." })).toBeVisible();
    await expect(page.getByText("Step 3 of 3")).toBeVisible();
    await chooseNewPassword(page, "pending new");
    await expect(page.getByRole("button", { name: "Restoring..." })).toBeVisible();
    await expect(page).toHaveURL(/\/login$/);

    await visit(page, "/create-wallet", testInfo);
    await submitCreateWallet(page, uniqueEmail("pending-create"), "pw");
    await expect(page.getByRole("button", { name: "Creating..." })).toBeVisible();
    await expect(page.getByRole("heading", { name: "WARNING" })).toBeVisible();
  });
});
