// Issue 24: the pages as a holder reads them without scripts or CSS, in a text
// browser (Debian's lynx, `lynx -dump`). lynx fetches every page itself, with
// the signed-in browser's cookies in a cookie file of its own; the steps that
// only a form post reaches (the phrase on the warning screen and on /security)
// are posted by lynx too, with the form's own tokens. Runs once, in the no-js
// project (lynx runs no scripts either).
import { expect, test } from "./fixtures.ts";
import { body, expectReadable, Lynx } from "./lynx.ts";
import { sendThroughApi } from "./send-helpers.ts";
import { ddmmyy, enrolTwoFactor, recordSecret, SITE_PAGES, uniqueEmail } from "./helpers.ts";

test.skip(
  ({ javaScriptEnabled }) => javaScriptEnabled !== false,
  "lynx runs no scripts: checked in the no-js project",
);

/** A hidden or text input's value in a page's HTML. */
function inputValue(html: string, name: string): string {
  const tag = new RegExp(`<input[^>]*name="${name}"[^>]*>`, "u").exec(html)?.[0];
  const value = tag === undefined ? undefined : /value="([^"]*)"/u.exec(tag)?.[1];
  if (value === undefined) throw new Error(`no input ${name}`);
  return value.replaceAll("&amp;", "&").replaceAll("&quot;", '"');
}

/** How many links are labelled `label` (lynx writes a link as "[n]label"). */
function linksLabelled(dump: string, label: string): number {
  return body(dump).match(new RegExp(`\\[\\d+\\]${label}(?![\\w])`, "gu"))?.length ?? 0;
}

const PUBLIC_PAGES = [...SITE_PAGES, "/?modal=contact", "/?modal=contact&step=2"];

test("public pages read right in lynx: no honeypot, every control named, no words run together", async ({
  baseURL,
}) => {
  const lynx = new Lynx(baseURL);
  for (const where of PUBLIC_PAGES) {
    await test.step(where, () => {
      const dump = lynx.dump(where);
      expectReadable(dump, where);
    });
  }
  // The honeypot's token is a hidden input, not a field showing its value (defect 2).
  const login = lynx.dump("/login");
  expect(body(login)).toMatch(/Email _+\n\s*Password _+/u);
  // The public header's links, once each.
  for (const label of ["About us", "How it works"]) expect(linksLabelled(login, label)).toBe(1);
});

test("the contact popup is the first thing a reader meets (defect 7)", async ({ baseURL }) => {
  const lynx = new Lynx(baseURL);
  const text = body(lynx.dump("/about-us?modal=contact"));
  const popup = text.indexOf("Send message");
  expect(popup).toBeGreaterThan(-1);
  expect(popup).toBeLessThan(text.indexOf("]About us"));
});

test("signed-in pages read right in lynx", async ({
  page,
  signedIn,
  fundEth,
  operator,
  context,
  baseURL,
}) => {
  test.setTimeout(240_000);
  const { walletId, address } = await fundEth(signedIn, "2.5");
  await sendThroughApi(page.request, signedIn, walletId, "0.25");
  operator.message(signedIn.email, "Please confirm your identity (lynx).");
  const lynx = new Lynx(baseURL);
  await lynx.takeCookies(context);
  const today = ddmmyy(new Date());

  await test.step("/home: the navigation, the total and the picker once each (defect 6)", () => {
    const dump = lynx.dump("/home");
    expectReadable(dump, "/home");
    const text = body(dump);
    for (const label of ["Wallet", "Buy Crypto", "History", "Notifications", "Security", "Support", "Exit"]) {
      expect(linksLabelled(dump, label), label).toBe(1);
    }
    expect(text.match(/Total balance/gu)).toHaveLength(1);
    expect(text.match(/Choose a currency/gu)).toHaveLength(1);
    // Defect 4: each pair with its space.
    expect(text).toMatch(/Total balance \$\d/u);
    expect(text).toMatch(/\]Notifications 1 unread/u);
    expect(text).toMatch(/\]Ethereum ETH/u);
  });

  await test.step("/wallet/eth and its send form", () => {
    const dump = lynx.dump("/wallet/eth");
    expectReadable(dump, "/wallet/eth");
    const text = body(dump);
    expect(text).toContain(`Wallet address ${address}`);
    expect(text).toContain("Date Action Amount Status");
    expect(text).toContain(`Date: ${today} Action: Received Amount: +2.500 ETH Status: Confirmed`);
    expect(text).toContain(`Date: ${today} Action: Sent Amount: −0.250 ETH Status: Unconfirmed`);
    expect(text).toContain(`${address} (your wallet)`);
    expect(text).toContain("Refresh");
    expect(text).toContain("Close");
    expectReadable(lynx.dump("/wallet/eth?send=1"), "/wallet/eth?send=1");
  });

  for (const where of [
    "/history",
    "/notifications",
    "/security",
    "/security/email",
    "/verify-email?result=invalid",
    "/home?modal=exit",
  ]) {
    await test.step(where, () => expectReadable(lynx.dump(where), where));
  }

  await test.step("Support and Exit open where the reader is (defect 7)", () => {
    for (const [modal, title] of [
      ["support", "Start Here"],
      ["exit", "Are you sure you want to exit?"],
    ] as const) {
      const text = body(lynx.dump(`/history?modal=${modal}`));
      expect(text.indexOf(title), modal).toBeGreaterThan(-1);
      expect(text.indexOf(title), modal).toBeLessThan(text.indexOf("Total balance"));
    }
  });

  await test.step("/notifications: header and row", () => {
    const text = body(lynx.dump("/notifications"));
    expect(text).toContain("Message Date");
  });

  await test.step("/security: the phrase, numbered once (defect 5)", async () => {
    const html = await (await page.request.get("/security")).text();
    await lynx.takeCookies(context);
    const dump = lynx.dump("/security", {
      csrf: inputValue(html, "csrf"),
      password: signedIn.password,
      acknowledged: "on",
    });
    expectReadable(dump, "/security, revealed");
    expectPhrase(body(dump), signedIn.words);
  });
});

/** The 12 words as an ordered list: "1. word" … "12. word", no second number. */
function expectPhrase(text: string, words: readonly string[]) {
  expect(text).not.toMatch(/^\s*\d+\.\s*\d+\./mu);
  words.forEach((word, i) => {
    expect(text).toMatch(new RegExp(`^\\s*${i + 1}\\. ${word}$`, "mu"));
  });
}

test("the create-wallet warning's phrase reads once numbered, and the forms show no honeypot", async ({
  browser,
  baseURL,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false, baseURL });
  try {
    const html = await (await context.request.get("/create-wallet")).text();
    const lynx = new Lynx(baseURL);
    await lynx.takeCookies(context);
    const email = uniqueEmail("lynx");
    const password = `pw-${crypto.randomUUID()}`;
    recordSecret("password", password);
    const dump = lynx.dump("/create-wallet", {
      csrf: inputValue(html, "csrf"),
      ck_name__confirm: "",
      ck_from__confirm: inputValue(html, "ck_from__confirm"),
      email,
      password,
      confirmPassword: password,
    });
    expectReadable(dump, "/create-wallet, warning");
    const text = body(dump);
    expect(text).toContain("WARNING");
    const words = [...text.matchAll(/^\s*\d+\. ([a-z]+)$/gmu)].map((m) => m[1] ?? "");
    expect(words).toHaveLength(12);
    recordSecret("phrase", words);
    expectPhrase(text, words);
  } finally {
    await context.close();
  }
});

test("the two-factor pages read right in lynx (issue 27)", async ({ signedIn, context, baseURL }) => {
  const lynx = new Lynx(baseURL);
  await lynx.takeCookies(context);
  await test.step("off, and the enrolment's first step", () => {
    const off = lynx.dump("/security/two-factor");
    expectReadable(off, "/security/two-factor");
    expect(body(off)).toContain("Off. Add a second step");
    expect(linksLabelled(off, "Turn on two-factor authentication")).toBe(1);
    const enrol = lynx.dump("/security/two-factor/enrol");
    expectReadable(enrol, "/security/two-factor/enrol");
    expect(body(enrol)).toMatch(/Password _+/u);
  });
  await test.step("on, and the sign-in's code step", async () => {
    await enrolTwoFactor(signedIn);
    const on = lynx.dump("/security/two-factor");
    expectReadable(on, "/security/two-factor (on)");
    expect(body(on)).toContain("Recovery codes left: 10 of 10.");
    const fresh = new Lynx(baseURL);
    const query = new URLSearchParams({ email: signedIn.email, password: signedIn.password });
    const code = fresh.dump(`/fast-login?${query.toString()}`);
    expectReadable(code, "/login/code");
    expect(body(code)).toMatch(/Authentication code _+/u);
  });
});
