// The holder's main flows in a second engine: Firefox-ESR, driven by puppeteer-core over
// WebDriver BiDi (record 042), in project `js` with scripts on and in project `no-js` with
// `javascript.enabled` false. Playwright is only the runner here (its server, base URL and
// fixtures); the browser is Firefox, one per worker, with a browser context of its own per test.
// Selectors are input names, button values and texts, link addresses and labels, not CSS classes.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import type { TestInfo } from "@playwright/test";
import type { Browser } from "puppeteer-core";
import { expect, test as base } from "./fixtures.ts";
import { launchFirefox, Tab, type Query } from "./firefox-driver.ts";
import {
  enrolTwoFactor,
  jsEnabled,
  ops,
  recordSecret,
  requestedWalletId,
  freshEthAddress,
  uniqueEmail,
} from "./helpers.ts";

const test = base.extend<{ tab: Tab }, { firefox: Browser }>({
  firefox: [
    // oxlint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter.
    async ({}, provide, workerInfo) => {
      const browser = await launchFirefox(workerInfo.project.name === "js");
      try {
        await provide(browser);
      } finally {
        await closeBrowser(browser);
      }
    },
    { scope: "worker" },
  ],
  tab: async ({ firefox }, provide, testInfo) => {
    const tab = await Tab.open(firefox, jsEnabled(testInfo), String(testInfo.project.use.baseURL));
    try {
      await provide(tab);
    } finally {
      if (testInfo.status !== testInfo.expectedStatus) await attachPage(tab, testInfo);
      await remember(tab).catch(() => {});
      await tab.close().catch(() => {});
    }
  },
});

/** Closes Firefox; one that does not answer within 10 s is killed. */
async function closeBrowser(browser: Browser) {
  const closed = browser.close().then(
    () => true,
    () => false,
  );
  const inTime = await Promise.race([
    closed,
    new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref()),
  ]);
  if (!inTime) browser.process()?.kill("SIGKILL");
}

/** On a failure: the page's address, its HTML and (when Firefox can) a screenshot, in test-results. */
async function attachPage(tab: Tab, testInfo: TestInfo) {
  await testInfo.attach("firefox-url", { body: tab.page.url(), contentType: "text/plain" });
  const html = testInfo.outputPath("firefox.html");
  const content = await tab.page.content().catch((error: unknown) => `no HTML: ${String(error)}`);
  await writeFile(html, content);
  await testInfo.attach("firefox.html", { path: html, contentType: "text/html" });
  const png = testInfo.outputPath("firefox.png");
  const shot = await tab.page.screenshot({ path: png, fullPage: true }).then(
    () => true,
    () => false,
  );
  if (shot) await testInfo.attach("firefox.png", { path: png, contentType: "image/png" });
}

/** Notes the session cookie the tab holds now, for the log check (record 015). */
async function remember(tab: Tab) {
  for (const cookie of await tab.cookies()) {
    if (cookie.name.endsWith("ck_session")) recordSecret("cookie", cookie.value);
  }
}

// A valid, EIP-55 checksummed ETH address (Trust Wallet wallet-core's test vector), never issued here.
const RECEIVER = "0x8f348F300873Fd5DA36950B2aC75a26584584feE";

/** An open dialog (a modal with scripts, `<dialog open>` without). */
const DIALOG = "dialog[open]";
const heading = (text: string): Query => ({ css: "h1, h2, h3", text });
/** A link of the signed-in navigation, by its address: the first one on screen. */
const navLink = (href: string, text?: string | RegExp): Query => ({ css: `a[href="${href}"]`, text });
const modalLink = (modal: string, text: string): Query => ({ css: `a[href$="modal=${modal}"]`, text });
const button = (text: string | RegExp, within?: string): Query => ({ css: "button", text, within });
const intent = (value: string, text: string): Query => ({
  css: `button[name="intent"][value="${value}"]`,
  text,
});

/** Log In with e-mail and password, as a person does: lands on /home. */
async function logIn(tab: Tab, user: { email: string }, password: string) {
  await tab.goto("/login");
  await tab.fill('input[name="email"]', user.email);
  await tab.fill('input[name="password"]', password);
  await tab.click(button("Log In"), { navigates: true });
  await tab.at(/^\/home$/);
  await tab.sees(`Signed in as ${user.email}`);
  await remember(tab);
}

/** The words of a phrase grid (each item reads "1.word"). */
async function phraseWords(tab: Tab, label: string): Promise<string[]> {
  const list = `ol[aria-label="${label}"]`;
  await tab.shows(list);
  const items = await tab.findAll({ css: `${list} > li`, hidden: true });
  const words: string[] = [];
  for (const item of items) {
    words.push(await item.evaluate((node) => (node.textContent ?? "").replace(/^\s*\d+\.\s*/, "").trim()));
    await item.dispose();
  }
  return words;
}

function escaped(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
}

test.describe("Firefox: the holder's main flows", () => {
  test("create wallet → WARNING with 12 words → Next → /home; Exit → 'Are you sure you want to exit?' → Yes signs out", async ({
    tab,
  }) => {
    const email = uniqueEmail("ff-create");
    const password = `pw-${randomUUID()}`;
    recordSecret("password", password);
    await tab.goto("/create-wallet");
    await tab.shows(heading("Create wallet"));
    await tab.fill('input[name="email"]', email);
    await tab.fill('input[name="password"]', password);
    await tab.fill('input[name="confirmPassword"]', password);
    await tab.click(button("Next"), { navigates: true });

    await tab.shows(heading("WARNING"));
    await tab.sees("Do not share your 12-word phrase with anyone");
    const words = await phraseWords(tab, "Your 12-word phrase");
    recordSecret("phrase", words);
    expect(words).toHaveLength(12);
    for (const word of words) expect(word).toMatch(/^[a-z]+$/);
    await remember(tab);

    await tab.click(intent("enter", "Next"), { navigates: true });
    await tab.at(/^\/home$/);
    await tab.shows(heading("Wallet"));
    await tab.sees(`Signed in as ${email}`);
    await remember(tab);

    // Exit: No closes the dialog and stays; Yes signs out.
    const exit = { css: DIALOG, text: /Are you sure you want to exit\?/ };
    await tab.click(modalLink("exit", "Exit"), { navigates: true });
    await tab.at(/^\/home\?modal=exit$/);
    await tab.shows(exit);
    await tab.click({ css: "a", text: "No", within: DIALOG }, { navigates: true });
    await tab.gone(exit);
    await tab.at(/^\/home$/);
    await tab.click(modalLink("exit", "Exit"), { navigates: true });
    await tab.shows(exit);
    await tab.click(button("Yes", DIALOG), { navigates: true });
    await tab.at(/^\/$/);
    await tab.shows(heading("Secure Your Coins, Secure Your Future"));
    // Signed out: /home sends a visitor to /.
    await tab.goto("/home");
    await tab.at(/^\/$/);
  });

  test("log in: a wrong password shows 'Incorrect password', the right one goes to /home; the currency picker switches the total to €", async ({
    tab,
    user,
    fundEth,
  }) => {
    await fundEth(user, "1.5");
    await tab.goto("/login");
    await tab.shows(heading("Log in"));
    await tab.fill('input[name="email"]', user.email);
    await tab.fill('input[name="password"]', "wrong password");
    await tab.click(button("Log In"), { navigates: true });
    await tab.sees("Incorrect password");
    expect(tab.path()).toBe("/login");
    // The password is never sent back into the page: without scripts the field comes back empty.
    expect(await tab.value('input[name="password"]')).toBe(tab.scripts ? "wrong password" : "");

    await tab.fill('input[name="email"]', user.email);
    await tab.fill('input[name="password"]', user.password);
    await tab.click(button("Log In"), { navigates: true });
    await tab.at(/^\/home$/);
    await tab.sees(`Signed in as ${user.email}`);
    await remember(tab);

    // 1.5 ETH at the shipped snapshot's 2531.84 USD; in EUR at its rate 0.8686587908.
    const picker = 'summary[aria-label^="Currency:"]';
    expect(await tab.text(picker)).toBe("USD $");
    await tab.sees(/Total balance ?\$3797\.76/);
    await tab.click(picker);
    await tab.click({ css: 'button[name="currency"][value="EUR"]', text: "EUR €" }, { navigates: true });
    await tab.until("the picker to say EUR €", async () => (await tab.text(picker)) === "EUR €");
    await tab.sees(/Total balance ?€3298\.96/);
    expect(await tab.text()).not.toMatch(/Total balance ?\$/);
    expect(tab.path()).toBe("/home");
  });

  test("two-factor (issue 27): the password, then the authenticator's code on its own step → /home", async ({
    tab,
    user,
  }) => {
    const app = await enrolTwoFactor(user);
    await tab.goto("/login");
    await tab.fill('input[name="email"]', user.email);
    await tab.fill('input[name="password"]', user.password);
    await tab.click(button("Log In"), { navigates: true });
    await tab.at(/^\/login\/code$/);
    await tab.shows(heading("Two-factor authentication"));
    await tab.fill('input[name="code"]', app.wrongCode());
    await tab.click(button("Verify"), { navigates: true });
    await tab.sees("That code is not right.");
    await tab.fill('input[name="code"]', await app.code());
    await tab.click(button("Verify"), { navigates: true });
    await tab.at(/^\/home$/);
    await tab.sees(`Signed in as ${user.email}`);
  });

  test("request a wallet: 'Request ETH Wallet' → 'Wallet Requested', then the issued address; DOGE's address at once", async ({
    tab,
    user,
  }) => {
    await logIn(tab, user, user.password);
    await tab.goto("/wallet/eth");
    await tab.sees("Your transactions will appear here");
    await tab.click(intent("request", "Request ETH Wallet"), { navigates: true });
    await tab.shows(button("Wallet Requested"));
    expect(await tab.attribute(button("Wallet Requested"), "disabled")).not.toBeNull();
    await tab.sees("Wallet requested.");
    await tab.sees("We are preparing your ETH address. It will appear here once issued.");
    expect(await tab.count(intent("request", "Request ETH Wallet"))).toBe(0);

    // The operator issues an address: the page shows it, and 'Send ETH'.
    const walletId = requestedWalletId(user.email, "ETH");
    const issued = /Issued (0x[0-9a-fA-F]{40}) /u.exec(
      ops("issue-address", walletId, freshEthAddress()),
    )?.[1];
    expect(issued).toBeTruthy();
    await tab.goto("/wallet/eth");
    await tab.sees(issued ?? "");
    await tab.shows({ css: 'button[name="send"]', text: "Send ETH" });
    expect(await tab.count(button("Wallet Requested"))).toBe(0);

    // DOGE derives its address in the request itself (the e2e server has its account key).
    await tab.goto("/wallet/doge");
    await tab.click(intent("request", "Request DOGE Wallet"), { navigates: true });
    await tab.sees("Your DOGE wallet is ready: its address is below.");
    await tab.shows({ css: 'button[name="send"]', text: "Send DOGE" });
    const users = JSON.parse(ops("users", "--json")) as {
      email: string;
      wallets: { coin: string; address: string | null }[];
    }[];
    const doge = users.find((u) => u.email === user.email)?.wallets.find((w) => w.coin === "DOGE")?.address;
    expect(doge).toMatch(/^D[1-9A-HJ-NP-Za-km-z]{33}$/u);
    await tab.sees(doge ?? "");
  });

  test("send 0.5 ETH through the risk warning → 'Sent!'; the /history row expands to the amounts", async ({
    tab,
    user,
    fundEth,
    operator,
  }) => {
    await fundEth(user, "1.5");
    await logIn(tab, user, user.password);
    await tab.goto("/wallet/eth");
    await tab.sees("1.5000 ETH");

    // The first press reveals the form (in place with scripts, as ?send=1 without).
    await tab.click({ css: 'button[name="send"]', text: "Send ETH" }, { navigates: true });
    await tab.shows('input[name="address"]');
    expect(tab.path()).toBe(tab.scripts ? "/wallet/eth" : "/wallet/eth?send=1");
    await tab.fill('input[name="address"]', RECEIVER);
    await tab.fill('input[name="coin"]', "0.5");
    await tab.fill('input[name="fiat"]', "1265.92");
    expect(await tab.value('input[name="address"]')).toBe(RECEIVER);
    expect(await tab.value('input[name="coin"]')).toBe("0.5");
    expect(await tab.value('input[name="fiat"]')).toBe("1265.92");

    // The next press opens the risk warning.
    await tab.click(intent("review", "Send ETH"), { navigates: true });
    await tab.shows({ css: DIALOG, text: /Check before you send/ });
    await tab.sees("You are sending 0.5 ETH (about $1265.92) on the Ethereum network to:", DIALOG);
    await tab.sees(RECEIVER, DIALOG);
    await tab.sees("Crypto transfers are irreversible", DIALOG);

    await tab.click(intent("confirm", "Confirm"), { navigates: true });
    await tab.shows(heading("Sent!"));
    await tab.at(/^\/wallet\/eth\?sent=[^&]+$/);
    const id = new URL(tab.page.url()).searchParams.get("sent") ?? "";
    await tab.sees("0.5000 ETH");
    await tab.sees(RECEIVER);
    await tab.sees(/Balance: ?1\.0000 ETH/);
    expect(operator.pendingSends(user.email).map((s) => [s.sendId, s.coin, s.amount, s.address])).toEqual([
      [id, "ETH", "0.5", RECEIVER],
    ]);

    // /history: the row says what it is; opened, it shows the amounts.
    await tab.click(navLink("/history", "History"), { navigates: true });
    await tab.at(/^\/history$/);
    await tab.shows(heading("History"));
    const row = `li[id="tx-${id}"]`;
    const summary = await tab.text(`${row} summary`);
    expect(summary).toContain("Sent");
    expect(summary).toContain("−0.500 ETH");
    expect(summary).toContain("Unconfirmed");
    expect(await tab.attribute(`${row} details`, "open")).toBeNull();
    expect(await tab.text(row)).not.toContain("$1265.92");

    await tab.click(`${row} summary`);
    await tab.until("the row to open", async () => (await tab.attribute(`${row} details`, "open")) !== null);
    await tab.sees("0.5 ETH", row);
    await tab.sees("$1265.92", row);
    await tab.sees(RECEIVER.slice(-6), row);
    // The deposit is there too.
    await tab.sees(/Received.*\+1\.500 ETH.*Confirmed/, { css: 'li[id^="tx-"]', text: /Received/ });
  });

  test("notifications: the operator's message shows unread; opening it marks it read", async ({
    tab,
    user,
    operator,
  }) => {
    const text = `Compliance check ${randomUUID().slice(0, 8)}: please confirm the source of your funds.`;
    operator.message(user.email, text);
    await logIn(tab, user, user.password);
    const link = navLink("/notifications");
    expect(await tab.text(link)).toMatch(/^Notifications ?1 unread$/);

    await tab.click(link, { navigates: true });
    await tab.at(/^\/notifications$/);
    await tab.shows(heading("Notifications"));
    const found = { css: 'li[id^="message-"]', text: escaped(text) };
    const rowId = await tab.attribute(found, "id");
    const row = `li[id="${rowId}"]`;
    await tab.sees(text, row);
    expect(await tab.text(row)).toContain("Unread:");

    // Without scripts the row is a button that posts; with them a disclosure that opens in place.
    await tab.click(`${row} :is(button, summary)`, { navigates: true });
    if (tab.scripts) expect(tab.path()).toBe("/notifications");
    else await tab.at(/^\/notifications\?open=/);
    await tab.until("the message to be read", async () => !(await tab.text(row)).includes("Unread:"));
    await tab.until("the body to show", async () => (await tab.count({ css: `${row} p`, text })) === 1);
    await tab.until("the badge to go", async () => (await tab.text(link)) === "Notifications");

    // Read stays read.
    await tab.goto("/notifications");
    expect(await tab.text(row)).not.toContain("Unread:");
    expect(await tab.text(link)).toBe("Notifications");
  });

  test("support: 'Start Here', filled in, Send → 'Message sent!'", async ({ tab, user }) => {
    await logIn(tab, user, user.password);
    await tab.goto("/history");
    await tab.click(modalLink("support", "Support"), { navigates: true });
    await tab.at(/^\/history\?modal=support$/);
    await tab.shows({ css: DIALOG, text: /Start Here/ });
    await tab.sees("Please, enter your email where we can contact you", DIALOG);
    expect(await tab.value(`${DIALOG} input[type="email"]`)).toBe(user.email);
    expect(await tab.attribute(`${DIALOG} input[type="email"]`, "disabled")).not.toBeNull();

    const comment = `Please call me about my withdrawal ${randomUUID().slice(0, 8)}.`;
    await tab.fill(`${DIALOG} input[name="fullName"]`, "Ada Lovelace");
    await tab.fill(`${DIALOG} input[name="phone"]`, "+442079460000");
    await tab.fill(`${DIALOG} textarea[name="comment"]`, comment);
    await tab.click(button("Send", DIALOG), { navigates: true });

    await tab.at(/^\/history$/);
    await tab.sees("Message sent!");
    await tab.gone(DIALOG);
    await tab.shows(heading("History"));
    const sent = (
      JSON.parse(ops("support", "--kind", "support", "--json")) as Record<string, unknown>[]
    ).find((row) => row["comment"] === comment);
    expect(sent).toMatchObject({ email: user.email, fullName: "Ada Lovelace", phone: "+442079460000" });
  });

  test("security: the password and the ticked box reveal the user's 12 words", async ({ tab, user }) => {
    await logIn(tab, user, user.password);
    await tab.click(navLink("/security", "Security"), { navigates: true });
    await tab.at(/^\/security$/);
    await tab.sees("In order to reveal your 12 word security phrase, please enter your password");
    await tab.sees("IMPORTANT! Do not share your 12 word security phrase to anyone.");
    await tab.sees("I have read important note.");
    expect(await tab.count('ol[aria-label="Your 12 word security phrase"]')).toBe(0);

    await tab.fill('input[name="password"]', user.password);
    await tab.click('input[name="acknowledged"]');
    await tab.click(button("Next"), { navigates: true });
    await tab.shows(heading("Your 12 word security phrase"));
    expect(await phraseWords(tab, "Your 12 word security phrase")).toEqual(user.words);
    expect(tab.path()).toBe("/security");
  });

  test("restore: e-mail, 12 words, new password → /login; the new password logs in", async ({
    tab,
    user,
  }) => {
    await tab.goto("/restore-wallet");
    await tab.sees("Step 1 of 3");
    await tab.fill('input[name="email"]', user.email);
    await tab.click(intent("email", "Next"), { navigates: true });

    await tab.sees("Step 2 of 3");
    for (const [i, word] of user.words.entries()) await tab.fill(`input[name="word${i + 1}"]`, word);
    await tab.click(intent("words", "Next"), { navigates: true });

    await tab.sees("Step 3 of 3");
    const password = `pw-${randomUUID()}`;
    recordSecret("password", password);
    await tab.fill('input[name="password"]', password);
    await tab.fill('input[name="confirmPassword"]', password);
    await tab.click(intent("password", "Confirm"), { navigates: true });

    await tab.at(/^\/login$/);
    await tab.sees("Your password has been changed. Log in with your new password.");
    await logIn(tab, user, password);
  });
});
