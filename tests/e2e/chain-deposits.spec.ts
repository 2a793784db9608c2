// Deposits found on the chain (issue 30, record 053), as the holder sees them: ETH sent on the
// local chain (the Hardhat node scripts/e2e-server.mjs starts and the server watches) to the
// holder's issued address shows as 'Unconfirmed' on /wallet/eth and /history, outside the
// balance; once the block has the policy's 12 confirmations it shows 'Confirmed' and the
// balance includes it. With scripts on, the open pages follow through the event stream, without
// a reload (the page's clock stands still, so the minute's refresh cannot bring it); without
// scripts, a reload shows each step.
import { mkdir, rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { Locator, Page } from "@playwright/test";
import type { Address } from "viem";
import { connectEvmNode } from "../support/evm-node.ts";
import { expect, test } from "./fixtures.ts";
import { jsEnabled, visit } from "./helpers.ts";

const ETH = 10n ** 18n;
/** The default confirmations policy of ETH (README, "Deposits"), which the e2e server keeps. */
const POLICY = 12;

const balance = (page: Page) => page.locator(".wallet-balance");
const liveShell = (page: Page) => page.locator('.app-shell[data-live="open"]');
/** A transaction's row, found by the transaction id its details show (shortened as the page does). */
const rowOf = (page: Page, txid: string) =>
  page.locator(".tx-list li").filter({ hasText: `${txid.slice(0, 6)}…${txid.slice(-6)}` });
const status = (row: Locator) => row.locator("summary .status");

/**
 * The whole suite shares one chain: a test that mines would confirm another's deposit before
 * that one saw it Unconfirmed. Each test sends and mines holding this lock (a folder beside the
 * server's data, which scripts/e2e-server.mjs clears at its start).
 */
async function holdingTheChain(body: () => Promise<void>) {
  const lock = `${process.env.E2E_DATA_DIR}.chain-lock`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() > deadline) {
        throw new Error(`the chain is still held by another test (${lock})`, { cause: error });
      }
      await sleep(200);
    }
  }
  try {
    await body();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** The server's ETH watcher has read the node's newest block (ops chains). */
async function watcherCaughtUp(operator: { run(...args: string[]): string }, head: number) {
  await expect
    .poll(
      () =>
        (
          JSON.parse(operator.run("chains", "--json")) as {
            networks: { network: string; cursor: number | null }[];
          }
        ).networks.find((n) => n.network === "ETH")?.cursor,
      { timeout: 30_000 },
    )
    .toBe(head);
}

test("ETH sent on the chain shows as Unconfirmed, then Confirmed with the balance, on /wallet/eth and /history", async ({
  page,
  ethWalletAt,
  operator,
}, testInfo) => {
  const rpc = process.env.E2E_CHAIN_RPC;
  if (!rpc) throw new Error("E2E_CHAIN_RPC is not set (playwright.config.ts sets it)");
  const node = await connectEvmNode(rpc);
  const scripts = jsEnabled(testInfo);
  // With scripts the pages' clock stands still once they are open and moves only when the test
  // moves it (100 ms at a time, past the 50 ms a live event waits): no timer (the minute's
  // refresh, the unread poll) can bring the deposit, only the stream's event.
  if (scripts) await page.clock.install();
  const { address } = await ethWalletAt("0");
  // With scripts, /history is open beside the wallet page in a second tab of the same browser.
  const history = scripts ? await page.context().newPage() : page;
  if (scripts) {
    await visit(history, "/history", testInfo);
    await expect(liveShell(page)).toHaveCount(1);
    await expect(liveShell(history)).toHaveCount(1);
    await page.clock.pauseAt(Date.now() + 1_000);
  }
  await expect(balance(page)).toHaveText("Balance: 0 ETH");
  const loads = { wallet: 0, history: 0 };
  page.on("load", () => loads.wallet++);
  if (scripts) history.on("load", () => loads.history++);

  /** Passes once `at` shows what `check` expects: by itself with scripts, after reloads of `path` without. */
  const shown = async (at: Page, path: string, check: () => Promise<void>) => {
    if (scripts) {
      await expect(async () => {
        await page.clock.runFor(100);
        await check();
      }).toPass({ timeout: 15_000 });
    } else {
      await expect(async () => {
        await visit(at, path, testInfo);
        await check();
      }).toPass({ timeout: 15_000 });
    }
  };
  const quick = { timeout: 1_000 };

  await holdingTheChain(async () => {
    // A dev account of its own per concurrently running test: their nonces never race.
    const txid = await node.sendEth(address as Address, ETH / 4n, { from: 1 + testInfo.parallelIndex });
    const sentIn = (await node.client.getTransactionReceipt({ hash: txid })).blockNumber;

    const walletRow = rowOf(page, txid);
    await shown(page, "/wallet/eth", async () => {
      await expect(status(walletRow)).toHaveText("Unconfirmed", quick);
    });
    await expect(walletRow.locator("summary")).toContainText("Received");
    await expect(walletRow.locator("summary")).toContainText("+0.250 ETH");
    await expect(balance(page)).toHaveText("Balance: 0 ETH");
    const historyRow = rowOf(history, txid);
    await shown(history, "/history", async () => {
      await expect(status(historyRow)).toHaveText("Unconfirmed", quick);
    });
    await expect(historyRow.locator("summary")).toContainText("+0.250 ETH");

    // One block short of the policy: the watcher has read it, and the deposit still waits.
    await node.mine(POLICY - 2);
    await watcherCaughtUp(operator, Number(sentIn) + POLICY - 2);
    if (!scripts) await visit(page, "/wallet/eth", testInfo);
    await expect(status(walletRow)).toHaveText("Unconfirmed");
    await expect(balance(page)).toHaveText("Balance: 0 ETH");

    await node.mine(1);
    await shown(page, "/wallet/eth", async () => {
      await expect(status(walletRow)).toHaveText("Confirmed", quick);
      await expect(balance(page)).toHaveText("Balance: 0.2500 ETH", quick);
    });
    await expect(walletRow.locator("summary")).toContainText("+0.250 ETH");
    await expect(page.locator(".tx-list li")).toHaveCount(1);
    await shown(history, "/history", async () => {
      await expect(status(historyRow)).toHaveText("Confirmed", quick);
    });
    await expect(history.locator(".tx-list li")).toHaveCount(1);
  });

  // With scripts neither page was loaded again: each change came through the stream.
  if (scripts) expect(loads).toEqual({ wallet: 0, history: 0 });
});
