// The staff console (issue 26), end to end with scripts on and off: the first
// admin made on the command line enrols; in the console they add two approvers
// and a support member, who each enrol with a code the test computes and sign
// in; support sees no send queue; a send above the four-eyes threshold stays
// waiting after one approval, the same approver cannot approve twice, and the
// second approver confirms it (the holder sees Unconfirmed, then Confirmed); a
// support reply reaches the holder's Notifications with the badge; the audit
// page shows it all with who and why, and its CSV export escapes formula cells.
import { randomUUID } from "node:crypto";
import type { Page, TestInfo } from "@playwright/test";
import { totpCode } from "../support/staff.ts";
import { expect, test } from "./fixtures.ts";
import {
  expectAccessible,
  jsEnabled,
  ops,
  PLATFORM,
  recordSecret,
  recordSessionCookies,
  DESKTOP,
  freshXrpAddress,
  fundXrp,
  MOBILE,
  sidebar,
  tabTo,
  typeInto,
  uniqueEmail,
  visit,
} from "./helpers.ts";
import { body, expectReadable, Lynx } from "./lynx.ts";
import { RECEIVER } from "./send-helpers.ts";

interface Member {
  email: string;
  password: string;
  secret: string;
  /** The time of the last code used (the next must be of a later step). */
  lastCode: number;
}

/** The TOTP time step of a moment. */
const step = (t: number) => Math.floor(t / 30_000);

/** The console's pages an admin reads (the users page searching for `holder`). */
const CONSOLE_PAGES = (holder: string) => [
  "/ops",
  "/ops/sends",
  "/ops/requests",
  "/ops/messages",
  `/ops/users?q=${encodeURIComponent(holder)}`,
  "/ops/money",
  "/ops/thresholds",
  "/ops/audit",
  "/ops/staff",
];

const txRow = (page: Page, id: string) => page.locator(`[id="tx-${id}"]`);

/** Opens an enrolment link in `page` and enrols: a password and the app's current code. */
async function enrol(page: Page, testInfo: TestInfo, link: string, email: string): Promise<Member> {
  const url = new URL(link);
  recordSecret("token", url.searchParams.get("token") ?? "");
  await page.goto(`${url.pathname}${url.search}`);
  // The token left the address bar at once.
  await expect(page).toHaveURL(/\/ops\/enrol$/u);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Set up your staff account");
  await expect(page.getByText(`You are enrolling ${email}`)).toBeVisible();
  await expect(page.getByRole("img", { name: "QR code of your authenticator secret" })).toBeVisible();
  const secret = ((await page.locator("#totp-secret").textContent()) ?? "").replace(/\s/gu, "");
  recordSecret("totp", secret);
  const password = `staff-${randomUUID()}`;
  recordSecret("password", password);
  await page.getByLabel("Password (at least 12 characters)").fill(password);
  await page.getByLabel("Confirm password").fill(password);
  const at = Date.now();
  await page.getByLabel("The 6-digit code your app shows now").fill(totpCode(secret, at));
  await page.getByRole("button", { name: "Finish enrolment" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("You are enrolled");
  const codes = await page
    .getByRole("list", { name: "Recovery codes" })
    .getByRole("listitem")
    .allTextContents();
  expect(codes).toHaveLength(10);
  for (const code of codes) recordSecret("token", code);
  void testInfo;
  return { email, password, secret, lastCode: at };
}

/** Signs a member in on `page`: e-mail and password, then a code of a step not used yet. */
async function signIn(page: Page, testInfo: TestInfo, who: Member) {
  await visit(page, "/ops/login", testInfo);
  await page.getByLabel("E-mail").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Enter your code" })).toBeVisible();
  // ±1 step is accepted: the next step's code works at once when this step's is used.
  const at = Math.max(Date.now(), (step(who.lastCode) + 1) * 30_000);
  if (at - Date.now() > 30_000) await page.waitForTimeout(at - Date.now() - 30_000 + 500);
  await page.getByRole("textbox", { name: "Code" }).fill(totpCode(who.secret, at));
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/ops$/u);
  await expect(page.getByText(`Signed in as ${who.email}`)).toBeVisible();
  who.lastCode = at;
  await recordSessionCookies(page.context());
}

/** Adds a member on the admin's Staff page; returns their enrolment link. */
async function addMember(page: Page, testInfo: TestInfo, email: string, roles: string[]): Promise<string> {
  await visit(page, "/ops/staff", testInfo);
  const form = page.locator("section", { has: page.getByRole("heading", { name: "Add a member" }) });
  await form.getByLabel("E-mail").fill(email);
  for (const role of roles) await form.getByRole("checkbox", { name: role, exact: true }).check();
  await form.getByRole("button", { name: "Add member" }).click();
  const shown = page.locator("section", { has: page.getByRole("heading", { name: `Added ${email}` }) });
  await expect(shown).toBeVisible();
  return ((await shown.locator(".mono").textContent()) ?? "").trim();
}

test.describe("the staff console", () => {
  test.describe.configure({ timeout: 300_000 });

  test("an admin adds two approvers and support; four-eyes on a large send; a reply reaches the holder; the audit log says who and why", async ({
    page,
    otherBrowser,
    request,
    newUser,
    fundEth,
  }, testInfo) => {
    const js = jsEnabled(testInfo) ? "js" : "nojs";
    // The first admin, from the command line.
    const adminEmail = uniqueEmail(`admin-${js}`);
    const added = JSON.parse(ops("staff", "add", adminEmail, "--role", "admin,compliance", "--json")) as {
      enrolmentUrl: string;
    };
    const admin = await enrol(page, testInfo, added.enrolmentUrl, adminEmail);
    await signIn(page, testInfo, admin);
    await expectAccessible(page);

    // The admin adds the others in the console; each enrols in a browser of their own.
    const people: Record<"first" | "second" | "support", { email: string; roles: string[] }> = {
      first: { email: uniqueEmail(`approver1-${js}`), roles: ["approver"] },
      second: { email: uniqueEmail(`approver2-${js}`), roles: ["approver"] },
      support: { email: uniqueEmail(`support-${js}`), roles: ["support"] },
    };
    const pages: Partial<Record<keyof typeof people, Page>> = {};
    const members: Partial<Record<keyof typeof people, Member>> = {};
    for (const key of ["first", "second", "support"] as const) {
      const link = await addMember(page, testInfo, people[key].email, people[key].roles);
      const own = await otherBrowser();
      members[key] = await enrol(own, testInfo, link, people[key].email);
      await signIn(own, testInfo, members[key]);
      pages[key] = own;
    }
    const first = pages.first!;
    const second = pages.second!;
    const support = pages.support!;

    // Support sees no send queue: no link, and the page itself is refused naming the role.
    await expect(
      support.getByRole("navigation", { name: "Console" }).getByRole("link", { name: /Sends/u }),
    ).toHaveCount(0);
    const refused = await support.goto("/ops/sends");
    expect(refused?.status()).toBe(403);
    await expect(support.getByText("This page needs the approver role.")).toBeVisible();
    await expect(support.locator('a[href="/ops/sends"]')).toHaveCount(0);

    // A holder with 5 ETH sends 4.5 ETH (worth more than the default 10,000 USD).
    const holder = await newUser(`console-holder-${js}`);
    const wallet = await fundEth(holder, "5");
    // With scripts, the first approver's open queue shows the new send without a reload.
    if (jsEnabled(testInfo)) {
      await visit(first, "/ops/sends", testInfo);
      await first.evaluate(() => {
        (window as unknown as { stayed?: boolean }).stayed = true;
      });
    }
    const sent = await request.post(`${process.env.E2E_API_URL ?? ""}/api/request-transaction`, {
      data: {
        platform: PLATFORM,
        email: holder.email,
        twelveWords: holder.words.join(" "),
        amount: "4.5",
        receiver_wallet_address: RECEIVER,
        wallet_id: wallet.walletId,
        idempotency_key: randomUUID(),
      },
    });
    expect(sent.status()).toBe(200);
    const sendId = ((await sent.json()) as { transaction: { id: string } }).transaction.id;
    if (jsEnabled(testInfo)) {
      await expect(first.locator(`[data-send="${sendId}"]`)).toBeVisible();
      expect(await first.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    }
    const holderPage = await otherBrowser();
    await visit(holderPage, "/login", testInfo);
    await holderPage.getByLabel("Email").fill(holder.email);
    await holderPage.getByLabel("Password").fill(holder.password);
    await holderPage.getByRole("button", { name: "Log In" }).click();
    await expect(holderPage).toHaveURL(/\/home$/u);
    await visit(holderPage, "/history", testInfo);
    await expect(txRow(holderPage, sendId).locator("summary")).toContainText("Unconfirmed");

    // The first approver approves: it stays waiting for a second approver. (With scripts the
    // queue is open already and the send came in live; without, the page is loaded again.)
    if (!jsEnabled(testInfo)) await visit(first, "/ops/sends", testInfo);
    const card = (p: Page) => p.locator(`[data-send="${sendId}"]`);
    await expect(card(first)).toContainText(`4.5 ETH for ${holder.email}`);
    await expect(card(first).locator("[data-approvals]")).toContainText("0 of 2");
    await card(first).getByRole("button", { name: "Approve" }).click();
    await expect(first.getByRole("status").filter({ hasText: "1 of 2 approvals" })).toBeVisible();
    // With scripts the decision went through without a page load.
    if (jsEnabled(testInfo)) {
      expect(await first.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    }
    await expect(card(first).locator("[data-approvals]")).toContainText(`1 of 2 (${members.first!.email}`);
    // The same approver again: refused, and nothing changes.
    await card(first).getByRole("button", { name: "Approved by you" }).click();
    await expect(
      card(first)
        .getByRole("alert")
        .filter({ hasText: "it needs a second approval by someone else. Nothing changed." }),
    ).toBeVisible();
    await visit(holderPage, "/history", testInfo);
    await expect(txRow(holderPage, sendId).locator("summary")).toContainText("Unconfirmed");

    // The second approver sees where it stands, and confirms it.
    await visit(second, "/ops/sends", testInfo);
    await expect(card(second).locator("[data-approvals]")).toContainText("waiting for a second approver");
    await expectAccessible(second);
    await card(second).getByRole("button", { name: "Approve" }).click();
    await expect(second.getByRole("status").filter({ hasText: "Confirmed" })).toBeVisible();
    await expect(card(second)).toHaveCount(0);
    await visit(holderPage, "/history", testInfo);
    await expect(txRow(holderPage, sendId).locator("summary")).toContainText("Confirmed");

    // A support message from the holder; support answers it in the console.
    const question = `Where is my send? ${randomUUID()}`;
    const asked = await request.post(`${process.env.E2E_API_URL ?? ""}/api/request-message`, {
      data: { platform: PLATFORM, email: holder.email, full_name: "Console Holder", comment: question },
    });
    expect(asked.status()).toBe(200);
    await visit(support, "/ops/messages?state=unanswered", testInfo);
    const message = support.locator("article", { hasText: question });
    await expect(message).toBeVisible();
    const answer = `It went out; reply ${randomUUID()}`;
    await message.getByLabel(`Reply to ${holder.email} (shown in their Notifications)`).fill(answer);
    await message.getByRole("button", { name: "Send reply" }).click();
    await expect(support.getByRole("status").filter({ hasText: "Reply sent" })).toBeVisible();
    await expectAccessible(support);
    await visit(holderPage, "/notifications", testInfo);
    await expect(
      holderPage
        .getByRole("region", { name: "Notifications" })
        .getByRole("listitem")
        .filter({ hasText: answer }),
    ).toHaveCount(1);
    await visit(holderPage, "/home", testInfo);
    await expect(
      sidebar(holderPage)
        .getByRole("link", { name: /^Notifications/u })
        .locator(".badge"),
    ).toHaveText("1 unread");

    // The audit log: each of these with who (and their roles) and why.
    await visit(page, `/ops/audit?user=${encodeURIComponent(holder.email)}`, testInfo);
    const rows = page.locator("tbody tr");
    const approvals = rows.filter({ hasText: "send.approve" });
    await expect(approvals).toHaveCount(2);
    await expect(approvals.filter({ hasText: `${members.first!.email} (approver)` })).toHaveCount(1);
    await expect(approvals.filter({ hasText: `${members.second!.email} (approver)` })).toHaveCount(1);
    await expect(
      rows.filter({ hasText: "support.reply" }).filter({ hasText: `${members.support!.email} (support)` }),
    ).toHaveCount(1);
    await visit(page, `/ops/audit?action=staff.add&actor=${encodeURIComponent(adminEmail)}`, testInfo);
    await expect(page.locator("tbody tr")).toHaveCount(3);
    await expectAccessible(page);

    // A reason that a spreadsheet would run as a formula, then the CSV export.
    const formula = `=HYPERLINK("http://evil.example","${js}")`;
    await visit(page, "/ops/staff", testInfo);
    const row = page.locator("section", { has: page.getByRole("heading", { name: members.support!.email }) });
    await row.getByLabel("Reason for ending the sessions").fill(formula);
    await row.getByRole("button", { name: "End sessions" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Ended" })).toBeVisible();
    await visit(
      page,
      `/ops/audit?action=staff.end-sessions&actor=${encodeURIComponent(adminEmail)}`,
      testInfo,
    );
    const href = await page.getByRole("link", { name: "Download CSV" }).getAttribute("href");
    expect(href).toContain("/ops/audit.csv?");
    const csv = await page.request.get(href ?? "");
    expect(csv.status()).toBe(200);
    expect(csv.headers()["content-type"]).toContain("text/csv");
    const text = await csv.text();
    expect(text.split("\r\n")[0]).toBe(
      '"id","at","actor","roles","action","subject","user_id","reason","details"',
    );
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""${js}"")"`);
    expect(text).not.toMatch(/(^|,)"?=HYPERLINK/mu);
    // Support was signed out by it.
    await support.goto("/ops");
    await expect(support).toHaveURL(/\/ops\/login$/u);
  });

  test("sign-in and a decision from the keyboard alone; every console page axe-clean on a phone and a desktop", async ({
    page,
    request,
    newUser,
  }, testInfo) => {
    const js = jsEnabled(testInfo) ? "js" : "nojs";
    const email = uniqueEmail(`keyboard-staff-${js}`);
    const added = JSON.parse(
      ops("staff", "add", email, "--role", "admin,approver,support,compliance,treasury", "--json"),
    ) as { enrolmentUrl: string };
    const link = new URL(added.enrolmentUrl);
    recordSecret("token", link.searchParams.get("token") ?? "");

    // Enrolment by keyboard: Tab to each field, type, Enter.
    await page.goto(`${link.pathname}${link.search}`);
    await expectAccessible(page);
    const secret = ((await page.locator("#totp-secret").textContent()) ?? "").replace(/\s/gu, "");
    recordSecret("totp", secret);
    const password = `staff-${randomUUID()}`;
    recordSecret("password", password);
    await typeInto(page, "Password (at least 12 characters)", password);
    await typeInto(page, "Confirm password", password);
    const enrolledAt = Date.now();
    await typeInto(page, "The 6-digit code your app shows now", totpCode(secret, enrolledAt));
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("You are enrolled");
    await expectAccessible(page);

    // Sign-in by keyboard.
    await visit(page, "/ops/login", testInfo);
    await expectAccessible(page);
    await typeInto(page, "E-mail", email);
    await typeInto(page, "Password", password);
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Enter your code" })).toBeVisible();
    await expectAccessible(page);
    const at = (Math.floor(enrolledAt / 30_000) + 1) * 30_000;
    await tabTo(page, page.getByRole("textbox", { name: "Code" }));
    await page.keyboard.type(totpCode(secret, at));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/ops$/u);
    await recordSessionCookies(page.context());

    // A small send, declined with a reason by keyboard. It is in XRP, which few other tests
    // send, and the queue is filtered to XRP with the keyboard: the shared queue holds every
    // test's waiting ETH sends, oldest first, so an ETH card could be pages away.
    const holder = await newUser(`keyboard-holder-${js}`);
    const walletId = await fundXrp(request, holder);
    const sent = await request.post(`${process.env.E2E_API_URL ?? ""}/api/request-transaction`, {
      data: {
        platform: PLATFORM,
        email: holder.email,
        twelveWords: holder.words.join(" "),
        amount: "1",
        receiver_wallet_address: freshXrpAddress(),
        wallet_id: walletId,
        idempotency_key: randomUUID(),
      },
    });
    expect(sent.status()).toBe(200);
    const sendId = ((await sent.json()) as { transaction: { id: string } }).transaction.id;
    await tabTo(
      page,
      page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: /^Sends/u }),
    );
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sends waiting for a decision");
    const filter = page.getByRole("form", { name: "Filter sends" });
    await tabTo(page, filter.getByLabel("Coin"));
    await page.keyboard.type("XRP");
    await expect(filter.getByLabel("Coin")).toHaveValue("XRP");
    await tabTo(page, filter.getByRole("button", { name: "Show" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/[?&]coin=XRP/u);
    const card = page.locator(`[data-send="${sendId}"]`);
    await tabTo(page, card.getByRole("button", { name: "Decline" }));
    await page.keyboard.press("Enter");
    await expect(card.getByText("Say why the send is declined.")).toBeVisible();
    await tabTo(page, card.getByLabel("Reason to decline"));
    await page.keyboard.type("Address on a sanctions list");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("status").filter({ hasText: `Declined the send ${sendId}` })).toBeVisible();
    await expect(card).toHaveCount(0);

    // A threshold set in the console (to the default's figure, so no other test's send changes).
    await visit(page, "/ops/thresholds", testInfo);
    const trx = page.locator("section", { has: page.getByRole("heading", { name: "TRX", exact: true }) });
    await trx.getByLabel("TRX threshold in USD").fill("10000.00");
    await trx.getByLabel("Reason for the TRX change").fill("keep the default, on record");
    await trx.getByRole("button", { name: "Set the TRX threshold" }).click();
    await expect(
      page
        .getByRole("status")
        .filter({ hasText: "Sends of TRX worth 10000.00 USD or more now need two approvers." }),
    ).toBeVisible();
    await expect(page.getByRole("row", { name: /^TRX 10000/u })).toContainText(email);

    // Every page, at a phone's width and a desktop's.
    for (const viewport of [MOBILE, DESKTOP]) {
      await page.setViewportSize(viewport);
      for (const path of CONSOLE_PAGES(holder.email)) {
        await visit(page, path, testInfo);
        await expect(page.getByRole("heading", { level: 1 })).toHaveCount(1);
        await expectAccessible(page);
      }
      await visit(page, `/ops/users?q=${encodeURIComponent(holder.email)}`, testInfo);
      await page.getByRole("link", { name: holder.email }).first().click();
      await expect(page.getByRole("heading", { level: 1 })).toContainText(holder.email);
      await expectAccessible(page);
    }

    // Money shows where the chain watchers are (issue 30): the e2e server watches ETH on its
    // local node (scripts/e2e-server.mjs), and says what it does not watch.
    await visit(page, "/ops/money", testInfo);
    const chains = page.getByRole("table", { name: "Chain watchers" });
    await expect(chains.getByRole("row", { name: /^ETH ETH \d+ \d+ \d+ blocks? none$/u })).toBeVisible();
    for (const sentence of [
      "USDT deposits are not watched (CHAIN_TOKEN_USDT is not set).",
      "BNB deposits are not watched (CHAIN_RPC_BNB is not set).",
    ]) {
      await expect(page.getByRole("listitem").filter({ hasText: sentence })).toHaveCount(1);
    }

    // Without CSS or scripts (no-js project): every page reads right in lynx, the member's
    // session in lynx's own cookie file (record 043).
    if (!jsEnabled(testInfo)) {
      const lynx = new Lynx(testInfo.project.use.baseURL);
      await lynx.takeCookies(page.context());
      for (const path of CONSOLE_PAGES(holder.email)) {
        const dump = lynx.dump(path);
        expect(body(dump), path).toContain(`Signed in as ${email}`);
        // Every console page shows what the other tests wrote (their messages, pause reasons,
        // audit rows, ids), which the check of words run together cannot tell from markup: it
        // is left out here; the checks of the markup itself stay.
        expectReadable(dump, path, { words: false });
      }
      const money = body(lynx.dump("/ops/money"));
      expect(money).toContain("Chain watchers");
      expect(money).toMatch(/^\s*ETH\s+ETH\s+\d+\s+\d+\s+\d+ blocks?\s+none\s*$/mu);
      expect(money).toContain("BNB deposits are not watched (CHAIN_RPC_BNB is not set).");
    }
  });
});
