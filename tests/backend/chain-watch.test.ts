// Issue 30: the EVM deposit watcher against a real local node (Hardhat's EDR), on PGlite and
// PostgreSQL. Deposits found on the chain are pending until the policy, then credited exactly
// once; a reorganisation withdraws a pending deposit and pauses the coin on a credited one;
// a rescan records nothing twice; a transfer to an address we never issued is ignored.
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { evmSource, type EvmSource } from "../../server/backend/chains/evm-source.ts";
import { createChainWatcher, type ChainWatcher } from "../../server/backend/chains/watcher.ts";
import { auditLog, chainDeposits } from "../../server/backend/db/schema.ts";
import { listCursors, rescan } from "../../server/backend/domain/chain-watch.ts";
import { activePause, resume } from "../../server/backend/domain/controls.ts";
import { recordDeposit, type DepositPolicy } from "../../server/backend/domain/deposits.ts";
import { walletBalance } from "../../server/backend/domain/ledger.ts";
import { deriveAddress } from "../../server/backend/custody/derive.ts";
import { CONFIGURED_KEYS } from "../fixtures/account-keys.ts";
import { startEvmNode, type EvmNode } from "../support/evm-node.ts";
import { databaseTargets, fundedWallet, insertUser, randomAddress, type OpenedDatabase } from "./helpers.ts";

const ETH_WEI = 10n ** 18n;
const POLICY: DepositPolicy = {
  confirmations: { BTC: 3, ETH: 3, ADA: 15, BNB: 15, DOGE: 40, SOL: 32, TRX: 19, XRP: 1, USDT: 2 },
  usdtNetwork: "erc20",
};

let node: EvmNode;
/** Each wallet the next receive address of COINS.md's account key, across both databases (they share one chain). */
let nextIndex = 0;

/** A wallet whose address is derived from the coin's account key, as issuing would give it. */
function issuedWallet(db: OpenedDatabase["database"]["db"], coin: "ETH" | "USDT") {
  return insertUser(db, "chain").then((user) =>
    fundedWallet(db, user, coin, { address: deriveAddress(coin, CONFIGURED_KEYS[coin], nextIndex++) }),
  );
}
let token: `0x${string}`;
let port = 8730;

beforeAll(async () => {
  node = await startEvmNode({ port: port++ });
  token = await node.deployToken();
  await node.setAutomine(false);
}, 120_000);

afterAll(async () => {
  await node?.stop();
});

async function deposits(db: OpenedDatabase["database"]["db"], txid: string) {
  return db
    .select({
      status: chainDeposits.status,
      confirmations: chainDeposits.confirmations,
      amount: chainDeposits.amount,
      block: chainDeposits.blockNumber,
      orphanedAt: chainDeposits.orphanedAt,
    })
    .from(chainDeposits)
    .where(eq(chainDeposits.txid, txid));
}

/** Steps until the watcher has read the node's head. */
async function catchUp(watcher: ChainWatcher) {
  for (let i = 0; i < 50; i++) {
    const outcome = await watcher.step();
    if (outcome === "caught-up") return;
    if (outcome === "failed" || outcome === "not-leader") throw new Error(`watcher step ${outcome}`);
  }
  throw new Error("the watcher did not catch up");
}

describe.each(databaseTargets())("chain watcher on $name", (target) => {
  let opened: OpenedDatabase;
  let watcher: ChainWatcher;

  beforeAll(async () => {
    opened = await target.open();
    const { database } = opened;
    watcher = createChainWatcher({
      db: database.db,
      setting: {
        network: "ETH",
        rpcUrl: node.rpcUrl,
        native: "ETH",
        token: { coin: "USDT", address: token },
      },
      policy: POLICY,
      pollMs: 50,
      holdLock: (key) => database.holdLock(key),
      batchBlocks: 5,
    });
    // The watcher starts at the head less the deepest policy: from here on, everything is read.
    await catchUp(watcher);
  }, 60_000);

  afterAll(async () => {
    await watcher?.stop();
    await opened?.dispose();
  });

  test("an ETH and a token transfer to issued addresses: pending, then credited once at the policy; others ignored", async () => {
    const db = opened.database.db;
    const eth = await issuedWallet(db, "ETH");
    const usdt = await issuedWallet(db, "USDT");

    const ethTx = await node.sendEth(eth.address as `0x${string}`, 2n * ETH_WEI);
    const tokenTx = await node.sendToken(token, usdt.address as `0x${string}`, 5_000_000n);
    const strangerTx = await node.sendEth(randomAddress("ETH") as `0x${string}`, ETH_WEI);
    await node.mine(1);
    await catchUp(watcher);

    expect(await deposits(db, ethTx)).toEqual([
      {
        status: "pending",
        confirmations: 1,
        amount: 2n * ETH_WEI,
        block: expect.any(Number),
        orphanedAt: null,
      },
    ]);
    expect(await deposits(db, tokenTx)).toMatchObject([
      { status: "pending", confirmations: 1, amount: 5_000_000n },
    ]);
    expect(await deposits(db, strangerTx)).toEqual([]);
    expect(await walletBalance(db, eth.walletId)).toBe(0n);

    // USDT's policy here is 2 confirmations, ETH's 3.
    await node.mine(1);
    await catchUp(watcher);
    expect(await deposits(db, tokenTx)).toMatchObject([{ status: "credited", confirmations: 2 }]);
    expect(await walletBalance(db, usdt.walletId)).toBe(5_000_000n);
    expect(await deposits(db, ethTx)).toMatchObject([{ status: "pending", confirmations: 2 }]);

    await node.mine(1);
    await catchUp(watcher);
    expect(await deposits(db, ethTx)).toMatchObject([{ status: "credited", confirmations: 3 }]);
    expect(await walletBalance(db, eth.walletId)).toBe(2n * ETH_WEI);

    // Read again from before both: nothing is recorded twice.
    const [cursor] = await listCursors(db);
    const block = (await deposits(db, ethTx))[0]?.block ?? 0;
    const again = await rescan(db, { network: "ETH", from: block, actor: "test" });
    expect(again).toMatchObject({ ok: true, from: block, before: cursor?.blockNumber });
    await catchUp(watcher);
    expect(await walletBalance(db, eth.walletId)).toBe(2n * ETH_WEI);
    expect(await walletBalance(db, usdt.walletId)).toBe(5_000_000n);
    const credits = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(auditLog)
      .where(and(eq(auditLog.action, "deposit.credit"), eq(auditLog.subject, eth.walletId)));
    expect(credits[0]?.n).toBe(1);
  });

  test("what a block scan cannot see: ETH paid to us by a contract's internal call (record 053)", async () => {
    const db = opened.database.db;
    const eth = await issuedWallet(db, "ETH");
    const internal = await node.sendInternal(eth.address as `0x${string}`, ETH_WEI);
    await node.mine(3);
    await catchUp(watcher);
    // The value arrived on the chain…
    expect(await node.client.getBalance({ address: eth.address as `0x${string}` })).toBe(ETH_WEI);
    // …but no transaction names our address and no log tells it: nothing recorded, for the operator to report.
    expect(await deposits(db, internal)).toEqual([]);
    expect(await walletBalance(db, eth.walletId)).toBe(0n);
  });

  test("an output an operator reported with another amount: left as it was, written down, and the watcher reads on", async () => {
    const db = opened.database.db;
    const typo = await issuedWallet(db, "ETH");
    const other = await issuedWallet(db, "ETH");
    const typoTx = await node.sendEth(typo.address as `0x${string}`, 3n * ETH_WEI);
    const otherTx = await node.sendEth(other.address as `0x${string}`, ETH_WEI);
    // Reported by hand before the block is read, with 30 ETH instead of 3.
    const byHand = await recordDeposit(
      db,
      {
        coin: "ETH",
        txid: typoTx,
        outputIndex: 0,
        address: typo.address,
        units: 30n * ETH_WEI,
        confirmations: 0,
      },
      POLICY,
    );
    expect(byHand).toMatchObject({ ok: true, outcome: "pending" });
    await node.mine(3);
    await catchUp(watcher);
    expect(await deposits(db, typoTx)).toMatchObject([{ status: "pending", amount: 30n * ETH_WEI }]);
    expect(await deposits(db, otherTx)).toMatchObject([{ status: "credited", amount: ETH_WEI }]);
    const [conflict] = await db
      .select({ reason: auditLog.reason })
      .from(auditLog)
      .where(and(eq(auditLog.action, "deposit.conflict"), eq(auditLog.subject, typoTx)));
    expect(conflict?.reason).toBe(
      `Refused: ETH output ${typoTx}:0 is already recorded with amount 30 ETH, not 3 ETH. Nothing written.`,
    );
    expect((await listCursors(db))[0]?.lastError).toBeNull();
  });

  test("a reorganisation withdraws a pending deposit and pauses the coin on a credited one", async () => {
    const db = opened.database.db;
    const eth = await issuedWallet(db, "ETH");
    const usdt = await issuedWallet(db, "USDT");
    const snapshot = await node.snapshot();

    // A token deposit credited at 2 confirmations, then an ETH one seen once.
    const tokenTx = await node.sendToken(token, usdt.address as `0x${string}`, 7_000_000n);
    await node.mine(2);
    const ethTx = await node.sendEth(eth.address as `0x${string}`, ETH_WEI);
    await node.mine(1);
    await catchUp(watcher);
    expect(await deposits(db, tokenTx)).toMatchObject([{ status: "credited" }]);
    expect(await deposits(db, ethTx)).toMatchObject([{ status: "pending", confirmations: 1 }]);

    // The chain forgets all three blocks and grows another branch, longer, without them.
    await node.revert(snapshot);
    await node.sendEth(randomAddress("ETH") as `0x${string}`, 1n);
    await node.mine(4);
    await catchUp(watcher);

    // The pending one is gone; the credited one stays credited, marked, and USDT deposits pause.
    expect(await deposits(db, ethTx)).toEqual([]);
    const [orphaned] = await deposits(db, tokenTx);
    expect(orphaned?.status).toBe("credited");
    expect(orphaned?.orphanedAt).toBeInstanceOf(Date);
    expect(await walletBalance(db, usdt.walletId)).toBe(7_000_000n);
    const paused = await activePause(db, "deposits", { coin: "USDT" });
    expect(paused).toMatchObject({ automatic: true, actor: "chain-watcher" });
    expect(paused?.reason).toContain(tokenTx);
    const withdrawn = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(auditLog)
      .where(eq(auditLog.action, "deposit.withdrawn"));
    expect(withdrawn[0]?.n).toBe(1);

    // While USDT deposits are paused a new token deposit holds the watcher back (nothing missed);
    // resumed, the watcher goes on and records it.
    const later = await node.sendToken(token, usdt.address as `0x${string}`, 1_000_000n);
    await node.mine(2);
    expect(await watcher.step()).toBe("failed");
    expect((await listCursors(db))[0]?.lastError).toMatch(/Deposits are paused for USDT/u);
    expect(await deposits(db, later)).toEqual([]);
    await resume(db, {
      what: "deposits",
      scope: { coin: "USDT" },
      reason: "checked: the reorg's token deposit",
      actor: "test",
    });
    await catchUp(watcher);
    expect(await deposits(db, later)).toMatchObject([{ status: "credited" }]);
    expect((await listCursors(db))[0]?.lastError).toBeNull();
  });
});

describe.each(databaseTargets())("a node whose answers disagree, on $name", (target) => {
  test("a block that does not follow the unchanged block before it is a failure retried with backoff, not a reorganisation", async () => {
    const opened = await target.open();
    const honest = evmSource(node.rpcUrl);
    let lying: number | undefined;
    // The real node, except that one block claims another parent (as a node mid-import may).
    const source: EvmSource = {
      ...honest,
      async block(n) {
        const block = await honest.block(n);
        return block && n === lying ? { ...block, parentHash: `0x${"0".repeat(64)}` } : block;
      },
    };
    const watcher = createChainWatcher({
      db: opened.database.db,
      setting: { network: "ETH", rpcUrl: node.rpcUrl, native: "ETH" },
      policy: POLICY,
      pollMs: 50,
      holdLock: (key) => opened.database.holdLock(key),
      source,
    });
    try {
      await catchUp(watcher);
      const [before] = await listCursors(opened.database.db);
      await node.mine(1);
      lying = (before?.blockNumber ?? 0) + 1;
      expect(await watcher.step()).toBe("failed");
      const [after] = await listCursors(opened.database.db);
      expect(after?.blockNumber).toBe(before?.blockNumber);
      expect(after?.lastError).toBe(
        `the node's block ${lying} does not follow its block ${lying - 1}, which is unchanged`,
      );
      lying = undefined;
      await catchUp(watcher);
      expect((await listCursors(opened.database.db))[0]).toMatchObject({
        blockNumber: (after?.blockNumber ?? 0) + 1,
        lastError: null,
      });
    } finally {
      await watcher.stop();
      await opened.dispose();
    }
  });
});

describe.each(databaseTargets())("a step with many deposits, on $name", (target) => {
  test("stops at the block that passes the most a step records; the next step reads on", async () => {
    const opened = await target.open();
    const db = opened.database.db;
    const watcher = createChainWatcher({
      db,
      setting: { network: "ETH", rpcUrl: node.rpcUrl, native: "ETH" },
      policy: POLICY,
      pollMs: 50,
      holdLock: (key) => opened.database.holdLock(key),
      maxTransfersPerStep: 2,
    });
    try {
      await catchUp(watcher);
      const start = (await listCursors(db))[0]?.blockNumber ?? 0;
      // Three blocks of two deposits each to our wallets.
      const wallets = await Promise.all(Array.from({ length: 6 }, () => issuedWallet(db, "ETH")));
      for (let b = 0; b < 3; b++) {
        for (const w of wallets.slice(b * 2, b * 2 + 2))
          await node.sendEth(w.address as `0x${string}`, ETH_WEI);
        await node.mine(1);
      }
      // Each step: one block (two deposits); the third block would pass the limit of two.
      for (let b = 1; b <= 3; b++) {
        expect(await watcher.step()).toBe("read");
        expect((await listCursors(db))[0]?.blockNumber).toBe(start + b);
      }
      expect(await watcher.step()).toBe("caught-up");
      const rows = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(chainDeposits)
        .where(eq(chainDeposits.network, "ETH"));
      expect(rows[0]?.n).toBe(6);
    } finally {
      await watcher.stop();
      await opened.dispose();
    }
  });
});
