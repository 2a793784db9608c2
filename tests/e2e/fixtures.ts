// Playwright fixtures for the people of a test: a user made through the
// backend API (with their password and 12 words), the same user signed in on
// the test's page, and the operator, who runs the operator commands against
// the running e2e server's database; more users and more browsers when a test
// needs them. A spec imports `test` and `expect` from here instead of from
// @playwright/test to use them.
import { randomBytes } from "node:crypto";
import { expect, test as base, type Page } from "@playwright/test";
import {
  createUser,
  fundedEthWallet,
  login,
  newPage,
  ops,
  pendingSends,
  visit,
  type PendingSend,
  type TestUser,
} from "./helpers.ts";
import { snapshot } from "./send-helpers.ts";

export { expect };

/** The operator, at the e2e server's database (npm run ops -- …, as OPERATOR e2e-operator). */
export interface Operator {
  /** Runs any command and returns what it printed. */
  run(...args: string[]): string;
  /** Credits a deposit of amount (decimal text) under a fresh transaction id. */
  credit(walletId: string, amount: string): void;
  /** The user's sends waiting for a decision. */
  pendingSends(email: string): PendingSend[];
  approve(sendId: string): void;
  decline(sendId: string, reason: string): void;
  /** Sends a compliance message to one user; returns its id. */
  message(email: string, text: string): string;
}

const operator: Operator = {
  run: ops,
  credit(walletId, amount) {
    ops("credit", walletId, amount, `0x${randomBytes(32).toString("hex")}`);
  },
  pendingSends,
  approve(sendId) {
    ops("approve", sendId);
  },
  decline(sendId, reason) {
    ops("decline", sendId, "--reason", reason);
  },
  message(email, text) {
    return (JSON.parse(ops("message", "--to", email, text, "--json")) as { messageId: string }).messageId;
  },
};

interface People {
  /** Labels the e-mail addresses of the test's users (default "user"). */
  userTag: string;
  /** A new user, made through the backend API (call 1). */
  user: TestUser;
  /** The new user, signed in on the test's page (on /home). */
  signedIn: TestUser;
  /** Signs the new user in on the test's page, then opens `path` there; answers the user. */
  signInAt: (path: string) => Promise<TestUser>;
  /** Makes one more user (the victim beside an attacker, a second account), labelled `tag`. */
  newUser: (tag: string) => Promise<TestUser>;
  /**
   * Opens another browser (another person, or the same person elsewhere) with the test's scripts
   * setting; it is closed when the test ends.
   */
  otherBrowser: () => Promise<Page>;
  operator: Operator;
  /**
   * Gives a user an ETH wallet with an issued address and amount deposited (through the API and
   * the operator), and returns its id and address.
   */
  fundEth: (user: TestUser, amount: string) => Promise<{ walletId: string; address: string }>;
  /**
   * Gives the signed-in user an ETH wallet holding `amount` (as fundEth does), then opens `path`
   * (the wallet's page by default) on the test's page; answers the wallet's id and address.
   */
  ethWalletAt: (amount: string, path?: string) => Promise<{ walletId: string; address: string }>;
  /**
   * The send specs' holder: the user, signed in, with an ETH wallet holding 1.5 ETH (its id and
   * address). The specs' figures follow from the shipped price snapshot the e2e server serves:
   * its ETH price is checked first.
   */
  holder: { user: TestUser; walletId: string; address: string };
}

export const test = base.extend<People>({
  userTag: ["user", { option: true }],
  user: async ({ request, userTag }, provide) => {
    await provide(await createUser(request, userTag));
  },
  signedIn: async ({ page, user }, provide, testInfo) => {
    await login(page, testInfo, user);
    await provide(user);
  },
  signInAt: async ({ page, user }, provide, testInfo) => {
    await provide(async (path) => {
      await login(page, testInfo, user);
      await visit(page, path, testInfo);
      return user;
    });
  },
  newUser: async ({ request }, provide) => {
    await provide((tag) => createUser(request, tag));
  },
  otherBrowser: async ({ browser }, provide, testInfo) => {
    const opened: Page[] = [];
    await provide(async () => {
      const page = await newPage(browser, testInfo);
      opened.push(page);
      return page;
    });
    for (const page of opened) await page.context().close();
  },
  // oxlint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter.
  operator: async ({}, provide) => {
    await provide(operator);
  },
  fundEth: async ({ request }, provide) => {
    await provide((user, amount) => fundedEthWallet(request, user, amount));
  },
  ethWalletAt: async ({ page, signedIn, fundEth }, provide, testInfo) => {
    await provide(async (amount, path = "/wallet/eth") => {
      const wallet = await fundEth(signedIn, amount);
      await visit(page, path, testInfo);
      return wallet;
    });
  },
  holder: async ({ signedIn, fundEth }, provide) => {
    expect(snapshot.prices.ETH?.lastPrice).toBe("2531.84");
    await provide({ user: signedIn, ...(await fundEth(signedIn, "1.5")) });
  },
});

/** A group of tests that run at `viewport` (a phone's or a desktop's). */
export function describeAt(title: string, viewport: { width: number; height: number }, body: () => void) {
  test.describe(title, () => {
    test.use({ viewport });
    body();
  });
}
