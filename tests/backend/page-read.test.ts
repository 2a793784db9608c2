// A signed-in page's one read (issue 29, record 051): the words check, its two
// counters, the wallets with their balances and the unread count in one
// statement, on every database. Counted at the driver: every statement the
// backend sends goes through the database client's query().
import { randomUUID } from "node:crypto";
import { beforeAll, expect, test } from "vitest";
import { createInProcessClient } from "../../app/backend.server.ts";
import { tooManyAttempts } from "../../common/contract/refusals.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { pause } from "../../server/backend/domain/controls.ts";
import { balancesForUser } from "../../server/backend/domain/ledger.ts";
import { openMessage, sendMessage } from "../../server/backend/domain/messages.ts";
import { readPage } from "../../server/backend/domain/page-read.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import { unreadMessagesCount } from "../../server/backend/domain/wallets.ts";
import { describeEachDatabase } from "./api-suite.ts";
import {
  createTestHandler,
  fundedWallet,
  PLATFORM,
  randomAddress,
  sendCount,
  uniqueEmail,
  type TestHandler,
} from "./helpers.ts";

const WRONG_WORDS = Array.from({ length: 12 }, () => "abandon");

/** Counts the statements sent through the database's client while `run` runs. */
async function statementsOf<T>(db: AppDb, run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const client = (db as unknown as { $client: { query: (...args: unknown[]) => Promise<unknown> } }).$client;
  const query = client.query;
  let statements = 0;
  client.query = (...args: unknown[]) => {
    statements += 1;
    return query.apply(client, args);
  };
  try {
    return { result: await run(), statements };
  } finally {
    client.query = query;
  }
}

describeEachDatabase("a signed-in page's read on $name", (getDatabase) => {
  let db: AppDb;
  let handler: TestHandler;
  let holder: { email: string; twelveWords: string[]; userId: string };
  /** A request's client, as the web tier makes one per request. */
  const requestClient = () => createInProcessClient(handler.services, PLATFORM, "198.51.100.24");

  beforeAll(async () => {
    db = getDatabase().database.db;
    handler = createTestHandler(db, { rateLimits: DEFAULT_RATE_LIMITS });
    // Said before the account exists: a message to everyone then is not its to read.
    await sendMessage(db, { to: "all", message: "Before you joined." });
    const email = uniqueEmail("page");
    const created = await createInProcessClient(handler.services, PLATFORM, "198.51.100.20").createAccount({
      email,
      password: "pw-page-1",
      passwordConfirmed: "pw-page-1",
    });
    if (!created.ok) throw new Error("account");
    holder = { email, twelveWords: created.data.twelveWords, userId: created.data.newUserId };
    await fundedWallet(db, holder.userId, "BTC", { deposit: "1.25" });
    await fundedWallet(db, holder.userId, "XRP", { deposit: "12345678.123456" });
    await fundedWallet(db, holder.userId, "ETH");
    await pause(db, { what: "sends", scope: { coin: "XRP" }, reason: "page read test", actor: "test" });
    const own = await sendMessage(db, { to: { userId: holder.userId }, message: "Yours, unread." });
    const read = await sendMessage(db, { to: { userId: holder.userId }, message: "Yours, read." });
    await sendMessage(db, { to: "all", message: "To everyone, unread." });
    if (!own.ok || !read.ok) throw new Error("message");
    await openMessage(db, holder.userId, read.message.id);
  });

  test("the layout's call 4 and call 7 of one request: one statement, the answers of the reads one by one", async () => {
    const client = createInProcessClient(handler.services, PLATFORM, "198.51.100.21");
    const { result, statements } = await statementsOf(db, async () => {
      const balances = await client.clientBalances({
        email: holder.email,
        twelveWords: holder.twelveWords,
        transactionsLimit: 1,
        includeTransactions: false,
        includeMessages: false,
      });
      const unread = await client.newMessagesCount({ email: holder.email, twelvewords: holder.twelveWords });
      return { balances, unread };
    });
    expect(statements).toBe(1);
    if (!result.balances.ok || !result.unread.ok) throw new Error("refused");
    // The same figures as the separate reads give.
    expect(result.unread.data.newMessagesCount).toBe(2);
    expect(await unreadMessagesCount(db, holder.userId)).toBe(2);
    const separate = await balancesForUser(db, holder.userId);
    expect(result.balances.data.wallets.map((w) => [w.wallet_crypto, w.sends_paused ?? null])).toEqual(
      separate.map((w) => [w.coin, w.sendsPaused]),
    );
    expect(result.balances.data.wallets.map((w) => w.wallet_crypto)).toEqual(["BTC", "XRP", "ETH"]);
    expect(Object.values(result.balances.data.balances)).toEqual(["1.25", "12345678.123456", "0"]);
    expect(result.balances.data.wallets.find((w) => w.wallet_crypto === "XRP")?.sends_paused).toBe("coin");
  });

  test("the read itself: the account, its wallets in order and its unread count; an unknown e-mail reads nothing of anyone's", async () => {
    const page = await readPage(db, holder.email, null);
    expect(page.user?.id).toBe(holder.userId);
    expect(page.unread).toBe(2);
    expect(page.wallets).toEqual(await balancesForUser(db, holder.userId));
    expect(page.limits).toEqual([]);
    const nobody = await readPage(db, uniqueEmail("nobody"), null);
    expect(nobody).toEqual({ user: undefined, limits: [], wallets: [], unread: 0 });
  });

  test("a second call 7 in the same request reads afresh (what call 4 read is taken once)", async () => {
    const client = createInProcessClient(handler.services, PLATFORM, "198.51.100.22");
    await client.clientBalances({ email: holder.email, twelveWords: holder.twelveWords });
    const { statements } = await statementsOf(db, async () => {
      await client.newMessagesCount({ email: holder.email, twelvewords: holder.twelveWords });
      await client.newMessagesCount({ email: holder.email, twelvewords: holder.twelveWords });
    });
    expect(statements).toBe(1);
  });

  test("the words check still counts: wrong words through call 4 are failures, then even the right words wait", async () => {
    const ip = "203.0.113.40";
    // The limits' clock stands still: the 1 s backoff cannot run out between two calls.
    const at = new Date();
    const limited = createTestHandler(db, { rateLimits: DEFAULT_RATE_LIMITS, now: () => at });
    for (let i = 0; i < DEFAULT_RATE_LIMITS.freeFailures; i++) {
      const refused = await createInProcessClient(limited.services, PLATFORM, ip).clientBalances({
        email: holder.email,
        twelveWords: WRONG_WORDS,
      });
      expect(refused.ok ? 200 : refused.kind === "rejected" ? refused.status : 0).toBe(401);
    }
    const right = await createInProcessClient(limited.services, PLATFORM, ip).clientBalances({
      email: holder.email,
      twelveWords: holder.twelveWords,
    });
    expect(right.ok).toBe(false);
    if (right.ok || right.kind !== "rejected") throw new Error("not refused");
    expect(right.status).toBe(429);
    expect(right.message).toBe(tooManyAttempts(1).message);
    // Another address is not held up by this one's failures.
    const elsewhere = await createInProcessClient(limited.services, PLATFORM, "198.51.100.23").clientBalances(
      {
        email: holder.email,
        twelveWords: holder.twelveWords,
      },
    );
    expect(elsewhere.ok).toBe(true);
  });

  test("a send through call 6 without two-factor: its checks in one statement, then the hold; the same key again replays it", async () => {
    const { walletId } = await fundedWallet(db, holder.userId, "DOGE", { deposit: "100" });
    const send = {
      email: holder.email,
      twelveWords: holder.twelveWords,
      walletId,
      amount: "1.5",
      receiverWalletAddress: randomAddress("DOGE"),
      idempotencyKey: randomUUID(),
    };
    // A process's first send of a wallet reads the wallet (then known), and a coin's first send
    // makes the coin's held-sends account: the figure is a send's after those.
    const warm = await requestClient().requestTransaction({ ...send, idempotencyKey: randomUUID() });
    expect(warm.ok).toBe(true);
    const first = await statementsOf(db, () => requestClient().requestTransaction(send));
    expect(first.statements).toBe(2);
    if (!first.result.ok) throw new Error("the send was refused");
    const again = await statementsOf(db, () => requestClient().requestTransaction(send));
    expect(again.result).toEqual(first.result);
    expect(await sendCount(db, walletId)).toBe(2);
    const balances = await requestClient().clientBalances({
      email: holder.email,
      twelveWords: holder.twelveWords,
    });
    expect(balances.ok && balances.data.balances[walletId]).toBe("97");
  });
});
