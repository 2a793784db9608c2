// XRP destination tags (issue 15) in both projects (scripts on and off): the
// optional tag field, its check at the field, the tag on the risk warning, the
// operator's list and the expanded row; an X-address's own tag the same way.
import type { Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, fundXrp, jsEnabled, pendingSends, visit } from "./helpers.ts";

// ripple-address-codec's published vectors: r9cZA1… and its X-address with tag 11747.
const CLASSIC = "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59";
const X_TAG_11747 = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A";

const warning = (page: Page) => page.getByRole("dialog", { name: "Check before you send" });
const sendButton = (page: Page) => page.getByRole("button", { name: "Send XRP", exact: true });
const tagField = (page: Page) => page.getByLabel("Destination tag (optional)", { exact: true });
const txRow = (page: Page, id: string) => page.locator(`[id="tx-${id}"]`);

/** Opens the send form, fills in 1.5 XRP to `to` with `tag`, and presses 'Send XRP'. */
async function fillAndSend(page: Page, testInfo: TestInfo, to: string, tag: string) {
  await sendButton(page).click();
  await page.getByLabel("Receiver address", { exact: true }).fill(to);
  await tagField(page).fill(tag);
  await page.getByLabel("Amount in XRP", { exact: true }).fill("1.5");
  if (!jsEnabled(testInfo)) await page.getByRole("button", { name: "Convert XRP to USD" }).click();
  await expect(page.getByLabel("Amount in USD", { exact: true })).toHaveValue("3.21");
  await sendButton(page).click();
}

/** Confirm in the warning, then 'See transaction details': the new send's id, its row open. */
async function confirmAndShow(page: Page): Promise<string> {
  await warning(page).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
  const id = new URL(page.url()).searchParams.get("sent") ?? "";
  expect(id).toBeTruthy();
  await page.getByRole("link", { name: "See transaction details" }).click();
  await expect(txRow(page, id).locator("details")).toHaveAttribute("open", "");
  return id;
}

test.describe("XRP destination tag", () => {
  // Every test: a signed-in user with 100 XRP, on the XRP wallet page.
  test.beforeEach(async ({ page, request, signedIn }, testInfo) => {
    test.slow();
    await fundXrp(request, signedIn);
    await visit(page, "/wallet/xrp", testInfo);
  });

  test("a typed tag: checked at its field, on the warning, with the operator and in the row", async ({
    page,
    signedIn,
  }, testInfo) => {
    // Too large for 32 bits: an error at the field, the values kept (a round trip without scripts).
    await fillAndSend(page, testInfo, CLASSIC, "4294967296");
    await expect(
      page.getByText("A destination tag is a whole number from 0 to 4294967295, digits only."),
    ).toBeVisible();
    await expect(tagField(page)).toHaveAttribute("aria-invalid", "true");
    await expect(tagField(page)).toHaveValue("4294967296");
    await expect(warning(page)).toHaveCount(0);
    await expectAccessible(page);

    await tagField(page).fill("12345");
    await sendButton(page).click();
    await expect(warning(page)).toBeVisible();
    await expect(warning(page)).toContainText(CLASSIC);
    await expect(warning(page)).toContainText("Destination tag: 12345");
    await expectAccessible(page);
    const id = await confirmAndShow(page);

    expect(pendingSends(signedIn.email).map((s) => [s.sendId, s.address, s.destinationTag])).toEqual([
      [id, CLASSIC, 12345],
    ]);
    const details = txRow(page, id).locator(".tx-details");
    await expect(details).toContainText("Destination tag12345");
    await visit(page, "/history", testInfo);
    await txRow(page, id).locator("summary").click();
    await expect(txRow(page, id).locator(".tx-details")).toContainText("Destination tag12345");
  });

  test("an X-address: its tag on the warning, the classic address and the tag in the row", async ({
    page,
    signedIn,
  }, testInfo) => {
    await fillAndSend(page, testInfo, X_TAG_11747, "");
    await expect(warning(page)).toContainText(X_TAG_11747);
    await expect(warning(page)).toContainText("Destination tag: 11747");
    const id = await confirmAndShow(page);
    const details = txRow(page, id).locator(".tx-details");
    await expect(details).toContainText("Destination tag11747");
    expect(pendingSends(signedIn.email).map((s) => [s.address, s.destinationTag])).toEqual([
      [CLASSIC, 11747],
    ]);
  });
});
