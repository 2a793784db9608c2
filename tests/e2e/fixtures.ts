// Playwright fixtures for the people of a test: a user made through the
// backend API (with their password and 12 words), the same user signed in on
// the test's page, and the operator, who runs the operator commands against
// the running e2e server's database. A spec imports `test` and `expect` from
// here instead of from @playwright/test to use them.
import { randomBytes } from "node:crypto";
import { test as base } from "@playwright/test";
import {
  createUser,
  fundedEthWallet,
  login,
  ops,
  pendingSends,
  type PendingSend,
  type TestUser,
} from "./helpers.ts";

export { expect } from "@playwright/test";

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
  operator: Operator;
  /**
   * Gives a user an ETH wallet with an issued address and amount deposited (through the API and
   * the operator), and returns its id and address.
   */
  fundEth: (user: TestUser, amount: string) => Promise<{ walletId: string; address: string }>;
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
  // oxlint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter.
  operator: async ({}, provide) => {
    await provide(operator);
  },
  fundEth: async ({ request }, provide) => {
    await provide((user, amount) => fundedEthWallet(request, user, amount));
  },
});
