// What the specs that send share: the receiver, the shipped price snapshot the e2e server
// serves (the figures the specs expect follow from it), a send through the API, and the send
// form's controls as the holder finds them.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { PLATFORM, type TestUser } from "./helpers.ts";

// A valid, EIP-55 checksummed ETH address (Trust Wallet wallet-core's test vector): never issued
// to a wallet here, so it is always someone else's.
export const RECEIVER = "0x8f348F300873Fd5DA36950B2aC75a26584584feE";

// The e2e server serves the shipped price snapshot (no internet).
export const snapshot = JSON.parse(readFileSync("server/backend/feeds/snapshot-prices.json", "utf8")) as {
  prices: Record<string, { lastPrice: string }>;
};

/** A send of `amount` ETH to RECEIVER through the API (call 6), as another client of the account would make it. */
export async function sendThroughApi(
  request: APIRequestContext,
  user: TestUser,
  walletId: string,
  amount: string,
) {
  const response = await request.post(`${process.env.E2E_API_URL ?? ""}/api/request-transaction`, {
    data: {
      platform: PLATFORM,
      email: user.email,
      twelveWords: user.words.join(" "),
      amount,
      receiver_wallet_address: RECEIVER,
      wallet_id: walletId,
      idempotency_key: randomUUID(),
    },
  });
  expect(response.status()).toBe(200);
}

export const sendButton = (page: Page) => page.getByRole("button", { name: "Send ETH", exact: true });
export const warning = (page: Page) => page.getByRole("dialog", { name: "Check before you send" });
export const address = (page: Page) => page.getByLabel("Receiver address", { exact: true });
export const coinAmount = (page: Page) => page.getByLabel("Amount in ETH", { exact: true });
export const fiatAmount = (page: Page, currency = "USD") =>
  page.getByLabel(`Amount in ${currency}`, { exact: true });

/** Confirm in the warning; answers the new send's id (from the 'Sent!' view's URL). */
export async function confirm(page: Page): Promise<string> {
  await warning(page).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("heading", { name: "Sent!" })).toBeVisible();
  const id = new URL(page.url()).searchParams.get("sent");
  expect(id).toBeTruthy();
  return id ?? "";
}
