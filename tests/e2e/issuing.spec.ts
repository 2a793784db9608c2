// Watch-only issuing (issue 16, record 039): the e2e server has DOGE's account key
// (scripts/e2e-server.mjs), so a user who requests a DOGE wallet sees its address at once:
// no 'Wallet Requested' step, nothing for an operator to do.
import { expect, test } from "./fixtures.ts";
import { expectAccessible, visit, waitForReady } from "./helpers.ts";

interface UserRow {
  email: string;
  wallets: { coin: string; state: string; address: string | null }[];
}

test("a DOGE wallet request shows its derived address at once", async ({
  page,
  signedIn: user,
  operator,
}, testInfo) => {
  await visit(page, "/wallet/doge", testInfo);
  await page.getByRole("button", { name: "Request DOGE Wallet" }).click();

  // The address issued in the request's own transaction, as the operator's list has it.
  await expect(page.getByRole("button", { name: "Send DOGE" })).toBeVisible();
  // Said as ready, not as requested.
  await expect(page.getByText("Your DOGE wallet is ready: its address is below.")).toBeVisible();
  await expect(page.getByText("Wallet requested.")).toHaveCount(0);
  await waitForReady(page, testInfo);
  const users = JSON.parse(operator.run("users", "--json")) as UserRow[];
  const doge = users.find((u) => u.email === user.email)?.wallets.find((w) => w.coin === "DOGE");
  expect(doge?.state).toBe("issued");
  const address = doge?.address ?? "";
  expect(address).toMatch(/^D[1-9A-HJ-NP-Za-km-z]{33}$/u);
  await expect(page.getByText(address, { exact: true }).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Wallet Requested" })).toHaveCount(0);
  await expect(page.getByText("We are preparing your DOGE address")).toHaveCount(0);
  await expectAccessible(page);

  // Nothing waits for an operator; the policy view says DOGE derives from its key.
  const waiting = JSON.parse(operator.run("requests", "--json")) as { email: string }[];
  expect(waiting.filter((r) => r.email === user.email)).toEqual([]);
  const custody = JSON.parse(operator.run("custody", "--json")) as { coin: string; mode: string }[];
  expect(custody.find((c) => c.coin === "DOGE")?.mode).toBe("derived");
});
