// Calls 4 (aml-client-balances) and 5 (request-nonbtc-wallet): exact JSON
// answers through raw requests, for every database × transport (the handler
// in-process, and over HTTP).
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { eq, sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { messageReads, messages, wallets, withdrawals } from "../../server/backend/db/schema.ts";
import {
  creditDeposit,
  holdWithdrawal,
  postWithdrawal,
  voidWithdrawal,
} from "../../server/backend/domain/ledger.ts";
import { issueAddress } from "../../server/backend/domain/wallets.ts";
import { describeEachDatabaseAndTransport, type Api } from "./api-suite.ts";
import { randomAddress, uniqueEmail } from "./helpers.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function suite(api: Api) {
  const { call } = api;
  const newAccount = () => api.newAccount("wallets");

  type Account = Awaited<ReturnType<typeof newAccount>>;

  test("call 7: the unread count (twelvewords in lower case), only the caller's own and broadcast messages", async () => {
    const account = await newAccount();
    const other = await newAccount();
    const unread = () =>
      call("/aml-new-messages-count", { email: account.email, twelvewords: account.twelveWords });
    expect(await unread()).toEqual({ status: 200, body: { newMessagesCount: 0 } });

    const [mine] = await api.db
      .insert(messages)
      .values({ userId: account.userId, message: "For you." })
      .returning();
    await api.db.insert(messages).values({ userId: null, message: "For everyone." });
    await api.db.insert(messages).values({ userId: other.userId, message: "Not for you." });
    expect(await unread()).toEqual({ status: 200, body: { newMessagesCount: 2 } });

    if (!mine) throw new Error("message");
    await api.db.insert(messageReads).values({ messageId: mine.id, userId: account.userId });
    expect(await unread()).toEqual({ status: 200, body: { newMessagesCount: 1 } });

    // A newer account does not see broadcasts sent before it existed.
    const later = await newAccount();
    expect(
      await call("/aml-new-messages-count", { email: later.email, twelvewords: later.twelveWords }),
    ).toEqual({
      status: 200,
      body: { newMessagesCount: 0 },
    });

    const wrong = await call("/aml-new-messages-count", {
      email: account.email,
      twelvewords: other.twelveWords,
    });
    expect(wrong).toEqual({
      status: 401,
      body: { success: false, code: "invalid_credentials", message: "Invalid credentials." },
    });
    const camel = await call("/aml-new-messages-count", {
      email: account.email,
      twelveWords: account.twelveWords,
    });
    expect(camel.status).toBe(400);
  });
  const balancesOf = (a: Account, extra: Record<string, unknown> = {}) =>
    call("/aml-client-balances", { email: a.email, twelveWords: a.twelveWords, ...extra });
  const request = (a: Account, ticker: string) =>
    call("/request-nonbtc-wallet", { email: a.email, twelveWords: a.twelveWords, request_text: ticker });
  const walletCount = async (userId: string) =>
    (
      await api.db
        .select({ n: sql<number>`count(*)::int` })
        .from(wallets)
        .where(eq(wallets.userId, userId))
    )[0]?.n;

  test("a fresh account: empty balances, wallets, transactions and messages", async () => {
    const account = await newAccount();
    expect(await balancesOf(account)).toEqual({
      status: 200,
      body: { balances: {}, wallets: [], transactions: [], messages: [] },
    });
  });

  test("request → 'Wallet requested.', shown as 'Not added yet' with a zero balance; again → nothing new", async () => {
    const account = await newAccount();
    expect(await request(account, "ETH")).toEqual({
      status: 200,
      body: { success: true, message: "Wallet requested." },
    });
    const first = await balancesOf(account);
    const walletList = first.body.wallets as { id: string }[];
    expect(walletList).toHaveLength(1);
    const id = walletList[0]?.id ?? "";
    expect(id).toMatch(UUID);
    expect(first).toEqual({
      status: 200,
      body: {
        balances: { [id]: "0" },
        wallets: [{ id, wallet_crypto: "ETH", wallet_address: "Not added yet" }],
        transactions: [],
        messages: [],
      },
    });

    for (const spelling of ["ETH", "eth", " Eth "]) {
      expect(await request(account, spelling)).toEqual({
        status: 200,
        body: { success: true, message: "Wallet already requested." },
      });
    }
    expect(await walletCount(account.userId)).toBe(1);
    expect(await balancesOf(account)).toEqual(first);

    // Still 'already requested' once the address is issued.
    await issueAddress(api.db, id, `0x${randomBytes(20).toString("hex")}`);
    expect((await request(account, "eth")).body.message).toBe("Wallet already requested.");
  });

  test("BTC is requested through the same call, in any case", async () => {
    const account = await newAccount();
    expect((await request(account, "btc")).body).toEqual({ success: true, message: "Wallet requested." });
    const answer = await balancesOf(account);
    expect((answer.body.wallets as { wallet_crypto: string }[]).map((w) => w.wallet_crypto)).toEqual(["BTC"]);
  });

  test("concurrent requests for one coin create one wallet", async () => {
    const account = await newAccount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(account, "SOL")));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.message === "Wallet requested.")).toHaveLength(1);
    expect(answers.filter((a) => a.body.message === "Wallet already requested.")).toHaveLength(5);
    expect(await walletCount(account.userId)).toBe(1);
  });

  test("an unsupported coin → 400 'Unsupported coin.', nothing created", async () => {
    const account = await newAccount();
    for (const ticker of ["DOT", "", "ETH2", "bitcoin", "US DT"]) {
      expect(await request(account, ticker)).toEqual({
        status: 400,
        body: { success: false, code: "unsupported_coin", message: "Unsupported coin." },
      });
    }
    expect(await walletCount(account.userId)).toBe(0);
  });

  test("bad credentials → 401 'Invalid credentials.' on both calls, nothing created", async () => {
    const account = await newAccount();
    const words = account.twelveWords.split(" ");
    const wrong = {
      ...account,
      twelveWords: [words[0] === "abandon" ? "ability" : "abandon", ...words.slice(1)].join(" "),
    };
    const unknown = { ...account, email: uniqueEmail("nobody") };
    for (const who of [wrong, unknown]) {
      expect(await balancesOf(who)).toEqual({
        status: 401,
        body: { success: false, code: "invalid_credentials", message: "Invalid credentials." },
      });
      expect(await request(who, "ETH")).toEqual({
        status: 401,
        body: { success: false, code: "invalid_credentials", message: "Invalid credentials." },
      });
    }
    expect(await walletCount(account.userId)).toBe(0);
  });

  test("malformed bodies → 400 'Invalid request.'", async () => {
    const account = await newAccount();
    const base = { email: account.email, twelveWords: account.twelveWords };
    for (const extra of [
      { transactions_limit: 0 },
      { transactions_limit: 1001 },
      { transactions_limit: 2.5 },
      { transactions_limit: "10" },
      { transactions_before: "yesterday" },
      { transactions_before: "2025-01-01" },
      { transactions_before: 1735689600000 },
      { transactions_coin: "DOGECOIN" },
      { transactions_coin: 1 },
      { transactions_coin: "" },
      { include_transactions: "false" },
      { include_transactions: 0 },
      { include_messages: "no" },
      { include_messages: null },
    ]) {
      const answer = await call("/aml-client-balances", { ...base, ...extra });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toBe("Invalid request.");
    }
    for (const body of [
      { ...base },
      { ...base, request_text: 5 },
      { ...base, request_text: "x".repeat(65) },
    ]) {
      const answer = await call("/request-nonbtc-wallet", body);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toBe("Invalid request.");
    }
    expect(await walletCount(account.userId)).toBe(0);
  });

  test("unknown fields are ignored (record 004), never applied", async () => {
    const account = await newAccount();
    const base = { email: account.email, twelveWords: account.twelveWords };
    const balances = await call("/aml-client-balances", {
      ...base,
      unexpected: true,
      user_id: "someone-else",
    });
    expect(balances.status).toBe(200);
    expect(balances.body.wallets).toEqual([]);
    const requested = await call("/request-nonbtc-wallet", { ...base, request_text: "ETH", extra: 1 });
    expect(requested.status).toBe(200);
    expect(await walletCount(account.userId)).toBe(1);
  });

  test("the whole picture: exact balances, wallets, transactions (newest first) and messages", async () => {
    const account = await newAccount();
    const other = await newAccount();
    for (const t of ["ETH", "BTC", "XRP"]) await request(account, t);
    const list = (await balancesOf(account)).body.wallets as { id: string; wallet_crypto: string }[];
    const idOf = (t: string) => list.find((w) => w.wallet_crypto === t)?.id ?? "";
    const [eth, btc, xrp] = [idOf("ETH"), idOf("BTC"), idOf("XRP")];
    const suffix = account.userId.replaceAll("-", "").slice(0, 8);
    const ethAddress = `0x${suffix}${"a".repeat(32)}`;
    const btcAddress = `bc1q${suffix}test`;
    await issueAddress(api.db, eth, ethAddress);
    await issueAddress(api.db, btc, btcAddress);

    const steps: (() => Promise<void>)[] = [];
    const ids: Record<string, string> = {};
    const at: Record<string, string> = {};
    const ethTx = `0x${suffix}${"1".repeat(56)}`;
    const btcTx = `${suffix}${"2".repeat(56)}`;
    steps.push(async () => {
      const r = await creditDeposit(api.db, {
        walletId: eth,
        units: 2_500_000_000_000_000_000n,
        externalTxId: ethTx,
        amountUsd: "8000.5",
      });
      if (!r.ok) throw new Error("deposit");
      ids.ethDeposit = r.deposit.transferId;
      at.ethDeposit = r.deposit.createdAt.toISOString();
    });
    steps.push(async () => {
      const r = await creditDeposit(api.db, { walletId: btc, units: 1n, externalTxId: btcTx });
      if (!r.ok) throw new Error("deposit");
      ids.btcDeposit = r.deposit.transferId;
      at.btcDeposit = r.deposit.createdAt.toISOString();
    });
    for (const [name, units, outcome] of [
      ["posted", 500_000_000_000_000_000n, "post"],
      ["voided", 1_000_000_000_000_000_000n, "void"],
      ["pending", 1_000_000_000_000_000n, "none"],
    ] as const) {
      steps.push(async () => {
        const r = await holdWithdrawal(api.db, {
          walletId: eth,
          units,
          destination: `0x${"b".repeat(40)}`,
          amountUsd: name === "pending" ? null : "1600.1",
        });
        if (!r.ok) throw new Error("hold");
        ids[name] = r.withdrawalId;
        if (outcome === "post") await postWithdrawal(api.db, r.withdrawalId);
        if (outcome === "void") await voidWithdrawal(api.db, r.withdrawalId, "Declined by review.");
      });
    }
    for (const step of steps) {
      await step();
      await sleep(3);
    }
    const sends = await api.db.select().from(withdrawals);
    const sentAt = (id: string | undefined) =>
      sends.find((s) => s.id === id)?.createdAt.toISOString() ?? "missing";

    const [mine] = await api.db
      .insert(messages)
      .values({ userId: account.userId, message: "Your ETH wallet is ready." })
      .returning();
    await sleep(3);
    const [everyone] = await api.db
      .insert(messages)
      .values({ userId: null, message: "Maintenance tonight." })
      .returning();
    // Newest first: a distinct millisecond keeps the expected order from resting on random ids.
    await sleep(3);
    await api.db.insert(messages).values({ userId: other.userId, message: "Not for you." });
    if (!mine || !everyone) throw new Error("messages");
    await api.db.insert(messageReads).values({ messageId: mine.id, userId: account.userId });

    const answer = await balancesOf(account);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      balances: { [eth]: "1.999", [btc]: "0.00000001", [xrp]: "0" },
      wallets: [
        { id: eth, wallet_crypto: "ETH", wallet_address: ethAddress },
        { id: btc, wallet_crypto: "BTC", wallet_address: btcAddress },
        { id: xrp, wallet_crypto: "XRP", wallet_address: "Not added yet" },
      ],
      transactions: [
        {
          id: ids.pending,
          date: sentAt(ids.pending),
          wallet_id: eth,
          recipient_wallet: `0x${"b".repeat(40)}`,
          amount_in_crypto: "0.001",
          amount_in_dollar: null,
          transaction_id: ids.pending,
          transaction_crypto: "ETH",
          status: "pending",
        },
        {
          id: ids.voided,
          date: sentAt(ids.voided),
          wallet_id: eth,
          recipient_wallet: `0x${"b".repeat(40)}`,
          amount_in_crypto: "1",
          amount_in_dollar: "1600.1",
          transaction_id: ids.voided,
          transaction_crypto: "ETH",
          status: "Declined",
        },
        {
          id: ids.posted,
          date: sentAt(ids.posted),
          wallet_id: eth,
          recipient_wallet: `0x${"b".repeat(40)}`,
          amount_in_crypto: "0.5",
          amount_in_dollar: "1600.1",
          transaction_id: ids.posted,
          transaction_crypto: "ETH",
          status: "Confirmed",
        },
        {
          id: ids.btcDeposit,
          date: at.btcDeposit,
          wallet_id: btc,
          recipient_wallet: "Incoming Transaction",
          amount_in_crypto: "0.00000001",
          amount_in_dollar: null,
          transaction_id: btcTx,
          transaction_crypto: "BTC",
          status: "Confirmed",
        },
        {
          id: ids.ethDeposit,
          date: at.ethDeposit,
          wallet_id: eth,
          recipient_wallet: "Incoming Transaction",
          amount_in_crypto: "2.5",
          amount_in_dollar: "8000.5",
          transaction_id: ethTx,
          transaction_crypto: "ETH",
          status: "Confirmed",
        },
      ],
      messages: [
        {
          id: everyone.id,
          created_at: everyone.createdAt.toISOString(),
          message: "Maintenance tonight.",
          open_status: 0,
        },
        {
          id: mine.id,
          created_at: mine.createdAt.toISOString(),
          message: "Your ETH wallet is ready.",
          open_status: 1,
        },
      ],
    });
    for (const t of answer.body.transactions as { date: string }[]) {
      expect(new Date(t.date).toISOString()).toBe(t.date);
    }
    // The other user sees the message to everyone, unread, and none of these transactions.
    const theirs = await balancesOf(other);
    expect(theirs.body.transactions).toEqual([]);
    expect(
      (theirs.body.messages as { message: string; open_status: number }[]).map((m) => [
        m.message,
        m.open_status,
      ]),
    ).toEqual([
      ["Not for you.", 0],
      ["Maintenance tonight.", 0],
    ]);
  });

  test("paging: transactions_limit and transactions_before walk the whole history once", async () => {
    const account = await newAccount();
    await request(account, "TRX");
    const id = ((await balancesOf(account)).body.wallets as { id: string }[])[0]?.id ?? "";
    await issueAddress(api.db, id, `T${account.userId.replaceAll("-", "")}`);
    for (let i = 0; i < 5; i++) {
      await creditDeposit(api.db, {
        walletId: id,
        units: BigInt(10 + i),
        externalTxId: `${account.userId}-${i}`,
      });
      await sleep(3);
      if (i % 2 === 0) {
        await holdWithdrawal(api.db, { walletId: id, units: 1n, destination: "Tdest", amountUsd: null });
        await sleep(3);
      }
    }
    const everything = (await balancesOf(account)).body.transactions as { id: string; date: string }[];
    expect(everything).toHaveLength(8);
    const dates = everything.map((t) => t.date);
    expect(dates).toEqual(dates.toSorted().toReversed());

    const seen: string[] = [];
    let before: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await balancesOf(account, {
        transactions_limit: 3,
        ...(before ? { transactions_before: before } : {}),
      });
      const rows = answer.body.transactions as { id: string; date: string }[];
      expect(rows.length).toBeLessThanOrEqual(3);
      if (rows.length === 0) break;
      seen.push(...rows.map((r) => r.id));
      before = rows.at(-1)?.date;
    }
    expect(seen).toEqual(everything.map((t) => t.id));

    // transactions_before accepts an offset too; limit 1 is the newest.
    const newest = await balancesOf(account, { transactions_limit: 1 });
    expect(newest.body.transactions).toEqual([everything[0]]);
    const none = await balancesOf(account, { transactions_before: "2000-01-01T00:00:00+02:00" });
    expect(none.body.transactions).toEqual([]);
    // Paging does not cut balances or wallets.
    expect(none.body.balances).toEqual({ [id]: "0.000057" });
  });

  test("transactions_coin: only that coin's transactions (any case), paged alike; balances stay whole", async () => {
    const account = await newAccount();
    await request(account, "TRX");
    await request(account, "XRP");
    const owned = (await balancesOf(account)).body.wallets as { id: string; wallet_crypto: string }[];
    const trx = owned.find((w) => w.wallet_crypto === "TRX")?.id ?? "";
    const xrp = owned.find((w) => w.wallet_crypto === "XRP")?.id ?? "";
    await issueAddress(api.db, trx, randomAddress("TRX"));
    await issueAddress(api.db, xrp, randomAddress("XRP"));
    for (let i = 0; i < 3; i++) {
      await creditDeposit(api.db, { walletId: trx, units: 5n, externalTxId: `${account.userId}-t${i}` });
      await creditDeposit(api.db, { walletId: xrp, units: 7n, externalTxId: `${account.userId}-x${i}` });
      await sleep(3);
    }
    await holdWithdrawal(api.db, { walletId: xrp, units: 1n, destination: "rDest", amountUsd: null });
    const all = (await balancesOf(account)).body.transactions as {
      id: string;
      transaction_crypto: string;
    }[];
    expect(all).toHaveLength(7);
    const onlyXrp = await balancesOf(account, { transactions_coin: "xrp" });
    expect(onlyXrp.status).toBe(200);
    expect(onlyXrp.body.transactions).toEqual(all.filter((t) => t.transaction_crypto === "XRP"));
    expect(onlyXrp.body.transactions).toHaveLength(4);
    expect(onlyXrp.body.balances).toEqual((await balancesOf(account)).body.balances);
    const newestTrx = await balancesOf(account, { transactions_coin: "TRX", transactions_limit: 2 });
    expect(newestTrx.body.transactions).toEqual(
      all.filter((t) => t.transaction_crypto === "TRX").slice(0, 2),
    );
    expect((await balancesOf(account, { transactions_coin: "BTC" })).body.transactions).toEqual([]);
  });

  test("include_transactions / include_messages false: those lists empty, balances and wallets whole", async () => {
    const account = await newAccount();
    await request(account, "TRX");
    const owned = (await balancesOf(account)).body.wallets as { id: string; wallet_crypto: string }[];
    const trx = owned.find((w) => w.wallet_crypto === "TRX")?.id ?? "";
    await issueAddress(api.db, trx, randomAddress("TRX"));
    await creditDeposit(api.db, { walletId: trx, units: 5n, externalTxId: `${account.userId}-only` });
    await api.db.insert(messages).values({ userId: account.userId, message: "Only for you." });
    const whole = await balancesOf(account);
    expect(whole.body.transactions).toHaveLength(1);
    expect(whole.body.messages).toHaveLength(1);
    const bare = await balancesOf(account, { include_transactions: false, include_messages: false });
    expect(bare.status).toBe(200);
    expect(bare.body.transactions).toEqual([]);
    expect(bare.body.messages).toEqual([]);
    expect(bare.body.balances).toEqual(whole.body.balances);
    expect(bare.body.wallets).toEqual(whole.body.wallets);
    const noMessages = await balancesOf(account, { include_messages: false, include_transactions: true });
    expect(noMessages.body.transactions).toEqual(whole.body.transactions);
    expect(noMessages.body.messages).toEqual([]);
    const noTransactions = await balancesOf(account, { include_transactions: false });
    expect(noTransactions.body.transactions).toEqual([]);
    expect(noTransactions.body.messages).toEqual(whole.body.messages);
  });
}

describeEachDatabaseAndTransport("database: $name", suite);
