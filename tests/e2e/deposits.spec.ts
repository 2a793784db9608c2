// Deposits keyed on the chain (record 040), as the holder sees them: an
// output the operator reports with fewer confirmations than the coin's policy
// (ETH: 12) shows as 'Unconfirmed' on the wallet page and is not in the
// balance; once reported with enough it shows 'Confirmed', under the same row
// id, and the balance rises. Both with and without scripts.
import { randomBytes } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { expectAccessible, visit } from "./helpers.ts";

const balance = (page: Page) => page.locator(".wallet-balance");
const txRow = (page: Page, id: string) => page.locator(`[id="tx-${id}"]`);

test("a pending deposit shows as Unconfirmed, then Confirmed with the balance once confirmed", async ({
  page,
  signedIn,
  fundEth,
  operator,
}, testInfo) => {
  const { address } = await fundEth(signedIn, "0");
  const txid = `0x${randomBytes(32).toString("hex")}`;
  const seen = JSON.parse(
    operator.run("deposit", "ETH", txid, "0", address, "0.75", "--confirmations", "2", "--json"),
  ) as { status: string; id: string; confirmations: number; required: number };
  expect(seen).toMatchObject({ status: "pending", confirmations: 2, required: 12 });

  await visit(page, "/wallet/eth", testInfo);
  await expect(balance(page)).toHaveText("Balance: 0 ETH");
  const row = txRow(page, seen.id);
  await expect(row.locator("summary")).toContainText("Received");
  await expect(row.locator("summary")).toContainText("+0.750 ETH");
  await expect(row.locator("summary")).toContainText("Unconfirmed");
  await expectAccessible(page);

  const confirmed = JSON.parse(
    operator.run("deposit", "ETH", txid, "0", address, "0.75", "--confirmations", "12", "--json"),
  ) as { status: string; id: string };
  expect(confirmed).toMatchObject({ status: "credited", id: seen.id });

  // With scripts the open page follows by itself (live events); without, a reload shows it.
  await visit(page, "/wallet/eth", testInfo);
  await expect(balance(page)).toHaveText("Balance: 0.7500 ETH");
  await expect(row.locator("summary")).toContainText("Confirmed");
  await expect(row.locator("summary")).not.toContainText("Unconfirmed");
  await expect(page.locator(".tx-list li")).toHaveCount(1);
});
