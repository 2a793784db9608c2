// The withdrawal address allowlist end to end (issue 27 item 2, record 048),
// with scripts on and off: a holder saves an address (shown "usable from …"),
// turns on "Only send to saved addresses", a send to it before its hold ends is
// refused at the address field with nothing held; with the server's holds'
// clock moved past the hold the send goes through (the send form offering it);
// a send anywhere else is refused with nothing held; removing works.
//
// The server's clock is one for both projects (and any other spec that waits
// out a hold): each test holds it (withHoldClock) from the first address saved
// until the clock is back at 0.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIRequestContext, BrowserContext, Page, TestInfo } from "@playwright/test";
import { toEip55 } from "../../common/addresses.ts";
import { expect, test } from "./fixtures.ts";
import { withHoldClock } from "./hold-clock.ts";
import {
  ddmmyy,
  enrolTwoFactor,
  expectAccessible,
  freshEthAddress,
  jsEnabled,
  pendingSends,
  PLATFORM,
  tabTo,
  typeText,
  visit,
  waitForReady,
  type TestUser,
} from "./helpers.ts";
import { address, coinAmount, fiatAmount, sendButton, warning } from "./send-helpers.ts";

const HOUR = 3_600_000;
const NOT_SAVED =
  "Only your saved addresses can receive sends. Add this address on the Security page; it can be used 24 hours after you add it.";

const balance = (page: Page) => page.locator(".wallet-balance");
const addForm = (page: Page) => page.locator("form#allowlist-add");
const switchForm = (page: Page) => page.locator("form#allowlist-switch");
const savedList = (page: Page) => page.getByRole("region", { name: "Your saved addresses" });
const addressErrors = (page: Page) => page.locator("#send-address-error");

const two = (n: number) => String(n).padStart(2, "0");

/** dd.mm.yy hh:mm UTC, the minute rounded up, as the page shows "usable from". */
function shownTime(ms: number): string {
  const at = new Date(Math.ceil(ms / 60_000) * 60_000);
  return `${ddmmyy(at)} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())} UTC`;
}

/** The allowlist's calls as another client of the account makes them (the contract, not the page). */
async function callAllowlist(request: APIRequestContext, user: TestUser, call: string, fields: object) {
  const response = await request.post(`${process.env.E2E_API_URL ?? ""}/api/allowlist${call}`, {
    data: { platform: PLATFORM, email: user.email, twelveWords: user.words.join(" "), ...fields },
  });
  expect(response.status()).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** What a person reads in a text browser (`lynx -dump`, no scripts, no CSS), signed in as the page is. */
async function lynxDump(context: BrowserContext, origin: string, pathname: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-lynx-"));
  const cookies = path.join(dir, "cookies.txt");
  const host = new URL(origin).hostname;
  const lines = (await context.cookies()).map((c) =>
    [host, "FALSE", c.path, c.secure ? "TRUE" : "FALSE", "2000000000", c.name, c.value].join("\t"),
  );
  writeFileSync(cookies, `${lines.join("\n")}\n`);
  writeFileSync(
    path.join(dir, "lynx.cfg"),
    `PERSISTENT_COOKIES:TRUE\nCOOKIE_FILE:${cookies}\nCOOKIE_SAVE_FILE:${path.join(dir, "saved.txt")}\nACCEPT_ALL_COOKIES:TRUE\nCHARACTER_SET:utf-8\n`,
  );
  const dump = execFileSync(
    process.env.LYNX_PATH ?? "/usr/bin/lynx",
    [
      `-cfg=${path.join(dir, "lynx.cfg")}`,
      "-dump",
      "-width=100",
      "-display_charset=utf-8",
      `${origin}${pathname}`,
    ],
    { encoding: "utf8" },
  );
  return dump.split(/^References$/mu)[0] ?? dump;
}

/** Saves an ETH address on /security/addresses: with scripts, by keyboard alone. */
async function saveAddress(page: Page, testInfo: TestInfo, user: TestUser, to: string, label: string) {
  const form = addForm(page);
  if (jsEnabled(testInfo)) {
    await tabTo(page, form.getByLabel("Coin"));
    await page.keyboard.type("Ethereum");
    await tabTo(page, form.getByLabel("Label"));
    await typeText(page, label);
    await page.keyboard.press("Tab");
    await typeText(page, to);
    await tabTo(page, form.getByLabel("Password"));
    await typeText(page, user.password);
    await page.keyboard.press("Enter");
  } else {
    await form.getByLabel("Coin").selectOption("ETH");
    await form.getByLabel("Label").fill(label);
    await form.getByLabel("Address").fill(to);
    await form.getByLabel("Password").fill(user.password);
    await form.getByRole("button", { name: "Save address" }).click();
  }
}

/** The send form open on the wallet page, `to` and `amount` typed, 'Send ETH' pressed. */
async function pressSend(page: Page, testInfo: TestInfo, to: string, amount: string) {
  await visit(page, "/wallet/eth", testInfo);
  await sendButton(page).click();
  await expect(address(page)).toBeVisible();
  await address(page).fill(to);
  await coinAmount(page).fill(amount);
  if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Convert ETH to USD" }).click();
  await expect(fiatAmount(page)).not.toHaveValue("");
  await sendButton(page).click();
}

/** Refused at the address field, before the warning: the balance as it was, nothing waiting. */
async function expectRefusedAtAddress(page: Page, user: TestUser, text: string, held: number) {
  await expect(addressErrors(page)).toHaveText(text);
  await expect(address(page)).toHaveAttribute("aria-invalid", "true");
  await expect(warning(page)).toHaveCount(0);
  await expect(balance(page)).toHaveText(held ? "Balance: 1.4000 ETH" : "Balance: 1.5000 ETH");
  expect(pendingSends(user.email)).toHaveLength(held);
}

test("save an address, turn the allowlist on: refused before the hold, sent after; elsewhere refused; remove", async ({
  page,
  request,
  holder: { user },
}, testInfo) => {
  // A long journey without scripts (about 20 page loads), and it may wait for the other project's
  // copy to give the clock back.
  test.setTimeout(420_000);
  const lower = freshEthAddress();
  const saved = toEip55(lower.slice(2));
  const elsewhere = freshEthAddress();

  await visit(page, "/security", testInfo);
  await page.getByRole("link", { name: "Saved addresses" }).click();
  await expect(page).toHaveURL(/\/security\/addresses$/u);
  await waitForReady(page, testInfo);
  await expect(page.getByRole("heading", { level: 1, name: "Saved addresses" })).toBeVisible();
  await expect(savedList(page)).toContainText("No saved addresses yet.");
  await expect(switchForm(page).getByRole("button", { name: "Turn on" })).toBeVisible();

  // A mistyped address is refused at its field; nothing is saved.
  await addForm(page).getByLabel("Coin").selectOption("ETH");
  await addForm(page).getByLabel("Label").fill("Typo");
  await addForm(page).getByLabel("Address").fill("0x1234");
  await addForm(page).getByLabel("Password").fill(user.password);
  await addForm(page).getByRole("button", { name: "Save address" }).click();
  await expect(addForm(page).getByLabel("Address")).toHaveAttribute("aria-invalid", "true");
  await expect(addForm(page)).toContainText("This is not a valid Ethereum address");
  await expect(savedList(page)).toContainText("No saved addresses yet.");
  await expectAccessible(page);

  await withHoldClock(async (clock) => {
    await visit(page, "/security/addresses", testInfo);
    const addedAt = Date.now();
    await saveAddress(page, testInfo, user, lower, "Cold storage");
    await expect(savedList(page)).toContainText("Cold storage");
    const entry = savedList(page).getByRole("listitem").filter({ hasText: "Cold storage" });
    await expect(entry).toContainText(saved);
    await expect(entry).toContainText("Ethereum (ETH)");
    const usableText = (await entry.getByText(/^Usable from /u).textContent()) ?? "";
    // Saved between the two readings of the clock: usable 24 hours later.
    expect([shownTime(addedAt + 24 * HOUR), shownTime(Date.now() + 24 * HOUR)]).toContain(
      usableText.replace("Usable from ", ""),
    );
    await expect(page.getByRole("status").filter({ hasText: "Address saved." })).toBeVisible();
    // A second one, saved by another client of the account through the contract.
    const exchangeLower = freshEthAddress();
    const exchange = toEip55(exchangeLower.slice(2));
    await callAllowlist(request, user, "/add", {
      password: user.password,
      coin: "eth",
      address: exchangeLower,
      label: "Exchange",
    });
    if (!jsEnabled(testInfo)) {
      // In a text browser: each entry in reading order, the switch with its state, the forms' labels.
      const read = await lynxDump(page.context(), new URL(page.url()).origin, "/security/addresses");
      const text = read.replace(/\s+/gu, " ");
      for (const words of [
        "Only send to saved addresses Off: sends can go to any address.",
        `Cold storage Coin: Ethereum (ETH) Address: ${saved} ${usableText}`,
        `Exchange Coin: Ethereum (ETH) Address: ${exchange}`,
        "Remove Cold storage",
        "Add an address",
        "Destination tag (XRP only, optional)",
      ]) {
        expect(text).toContain(words);
      }
    }

    // On at once.
    await switchForm(page).getByLabel("Password").fill(user.password);
    await switchForm(page).getByRole("button", { name: "Turn on" }).click();
    await expect(page.getByRole("region", { name: "Only send to saved addresses" })).toContainText(
      "On: sends can go only to your saved addresses",
    );
    await expect(switchForm(page).getByRole("button", { name: "Turn off" })).toBeVisible();
    await expectAccessible(page);

    // Before the hold ends: refused at the address, nothing held; the form does not offer it yet.
    await pressSend(page, testInfo, saved, "0.1");
    await expectRefusedAtAddress(
      page,
      user,
      `This saved address can receive sends from ${usableText.replace("Usable from ", "")}, once its waiting time is over.`,
      0,
    );
    await expect(page.locator("datalist#send-address-saved")).toHaveCount(0);

    // Past the hold (the server's clock moved 25 hours on): offered by the form, and sent.
    clock.set(25 * HOUR);
    await visit(page, "/security/addresses", testInfo);
    await expect(
      savedList(page)
        .getByRole("listitem")
        .filter({ hasText: "Cold storage" })
        .getByText("Usable", { exact: true }),
    ).toBeVisible();
    await visit(page, "/wallet/eth", testInfo);
    await sendButton(page).click();
    await expect(address(page)).toHaveAttribute("list", "send-address-saved");
    const offered = page.locator("datalist#send-address-saved option");
    await expect(offered).toHaveCount(2);
    await expect(offered.filter({ hasText: "Cold storage" })).toHaveAttribute("value", saved);
    await expect(offered.filter({ hasText: "Exchange" })).toHaveAttribute("value", exchange);
    await pressSend(page, testInfo, saved, "0.1");
    await expect(warning(page)).toBeVisible();
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
    await expect(balance(page)).toHaveText("Balance: 1.4000 ETH");
    expect(pendingSends(user.email).map((s) => s.address)).toEqual([saved]);

    // Anywhere else: refused at the address, nothing held.
    await pressSend(page, testInfo, elsewhere, "0.1");
    await expectRefusedAtAddress(page, user, NOT_SAVED, 1);
    await expectAccessible(page);

    // Removed (by another client) while the warning is open: Confirm is refused by call 6, and
    // the form says so at the address, nothing held.
    await pressSend(page, testInfo, exchange, "0.1");
    await expect(warning(page)).toBeVisible();
    const list = await callAllowlist(request, user, "", {});
    const exchangeId = (list.addresses as { id: string; label: string }[]).find(
      (a) => a.label === "Exchange",
    )?.id;
    await callAllowlist(request, user, "/remove", { password: user.password, id: exchangeId });
    await warning(page).getByRole("button", { name: "Confirm" }).click();
    await expectRefusedAtAddress(page, user, NOT_SAVED, 1);
    await expect(address(page)).toHaveValue(exchange);
  });

  // Removed at once (the hold is not needed for that).
  await visit(page, "/security/addresses", testInfo);
  const entry = savedList(page).getByRole("listitem").filter({ hasText: "Cold storage" });
  await entry.getByRole("link", { name: "Remove Cold storage" }).click();
  const confirmRemove = page.getByRole("form", { name: "Remove Cold storage?" });
  await expect(confirmRemove.getByLabel("Password")).toBeFocused();
  await confirmRemove.getByLabel("Password").fill("not-the-password");
  await confirmRemove.getByRole("button", { name: "Remove" }).click();
  await expect(page.getByRole("form", { name: "Remove Cold storage?" })).toContainText("Incorrect password");
  await expect(savedList(page)).toContainText("Cold storage");
  await expectAccessible(page);
  await page.getByRole("form", { name: "Remove Cold storage?" }).getByLabel("Password").fill(user.password);
  await page
    .getByRole("form", { name: "Remove Cold storage?" })
    .getByRole("button", { name: "Remove" })
    .click();
  await expect(savedList(page)).toContainText("No saved addresses yet.");
  await expect(page.getByRole("status").filter({ hasText: "Address removed." })).toBeVisible();
  // Still on: the removed address is refused like any other.
  await pressSend(page, testInfo, saved, "0.1");
  await expectRefusedAtAddress(page, user, NOT_SAVED, 1);
});

test("with two-factor on, the switch asks for the code; a turn-off waits and 'Keep it on' calls it off", async ({
  page,
  signedIn: user,
}, testInfo) => {
  // Three codes, each of its own 30-second step.
  test.slow();
  const app = await enrolTwoFactor(user);
  await visit(page, "/security/addresses", testInfo);
  const section = page.getByRole("region", { name: "Only send to saved addresses" });
  const form = switchForm(page);
  await expect(form.getByLabel("Authentication code")).toBeVisible();

  // The password alone is not enough: the code is asked for at its field; nothing changes.
  await form.getByLabel("Password").fill(user.password);
  await form.getByRole("button", { name: "Turn on" }).click();
  await expect(form.getByLabel("Authentication code")).toHaveAttribute("aria-invalid", "true");
  await expect(form).toContainText("Enter the 6-digit code from your authenticator app, or a recovery code.");
  await expect(section).toContainText("Off: sends can go to any address.");
  await expectAccessible(page);

  await form.getByLabel("Password").fill(user.password);
  await form.getByLabel("Authentication code").fill(await app.code());
  await form.getByRole("button", { name: "Turn on" }).click();
  await expect(section).toContainText("On: sends can go only to your saved addresses");

  // Off waits 24 hours; until then it is on, and says when it turns off.
  await switchForm(page).getByLabel("Password").fill(user.password);
  await switchForm(page)
    .getByLabel("Authentication code")
    .fill(await app.code());
  await switchForm(page).getByRole("button", { name: "Turn off" }).click();
  await expect(section).toContainText(/Turning off at \d\d\.\d\d\.\d\d \d\d:\d\d UTC\. Until then/u);
  await expect(
    page.getByRole("status").filter({ hasText: /^Sends can go to any address from / }),
  ).toBeVisible();

  // 'Keep it on' calls the turn-off off.
  await switchForm(page).getByLabel("Password").fill(user.password);
  await switchForm(page)
    .getByLabel("Authentication code")
    .fill(await app.code());
  await switchForm(page).getByRole("button", { name: "Keep it on" }).click();
  await expect(switchForm(page).getByRole("button", { name: "Turn off" })).toBeVisible();
  await expect(section).not.toContainText("Turning off at");
});
