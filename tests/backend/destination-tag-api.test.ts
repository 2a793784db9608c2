// XRP destination tags on call 6 (issue 15, record 022): an optional
// destination_tag (a JSON number 0..4294967295), XRP only; an X-address is
// stored as its classic address and the tag it carries. Stored with the send,
// listed back by call 4 and to the operator. Every database × transport; a
// refused request leaves nothing behind.
import { randomBytes } from "node:crypto";
import { expect, test } from "vitest";
import type { Ticker } from "../../common/coins.ts";
import { findSend, pendingSends } from "../../server/backend/domain/wallets.ts";
import { describeEachDatabaseAndTransport, refusedAnswer, type Api } from "./api-suite.ts";
import { fundedWallet } from "./helpers.ts";

/** ripple-address-codec's published vectors: one account, its X-addresses with and without a tag. */
const CLASSIC = "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59";
const X_NO_TAG = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ";
const X_TAG_11747 = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A";

/** The id of the send an answer of call 6 created. */
const sentId = (answer: { body: Record<string, unknown> }) =>
  String((answer.body.transaction as { id: string }).id);

function suite(api: Api) {
  const { call } = api;
  const newAccount = () => api.newAccount("tags");
  type Account = Awaited<ReturnType<typeof newAccount>>;

  async function holder(coin: Ticker = "XRP") {
    const account = await newAccount();
    const { walletId } = await fundedWallet(api.db, account.userId, coin, { deposit: "100" });
    return { account, walletId };
  }

  function send(account: Account, walletId: string, fields: Record<string, unknown> = {}) {
    return call("/request-transaction", {
      email: account.email,
      twelveWords: account.twelveWords,
      amount: "1.5",
      receiver_wallet_address: CLASSIC,
      wallet_id: walletId,
      ...fields,
    });
  }

  const listed = api.balances;
  const expectUntouched = (account: Account, walletId: string) =>
    api.expectUntouched(account, walletId, "100");

  test("a tag is stored with the send, answered, listed by call 4 and shown to the operator", async () => {
    const { account, walletId } = await holder();
    const answer = await send(account, walletId, { destination_tag: 12345 });
    expect(answer.status).toBe(200);
    const transaction = answer.body.transaction as Record<string, unknown>;
    expect(transaction).toMatchObject({
      recipient_wallet: CLASSIC,
      destination_tag: 12345,
      status: "pending",
    });

    const after = await listed(account);
    expect(after.balances[walletId]).toBe("98.5");
    expect(after.transactions[0]).toMatchObject({
      id: transaction.id,
      recipient_wallet: CLASSIC,
      transaction_crypto: "XRP",
      destination_tag: 12345,
    });
    const id = String(transaction.id);
    expect(await findSend(api.db, id)).toMatchObject({ address: CLASSIC, destinationTag: 12345 });
    const pending = (await pendingSends(api.db)).find((s) => s.sendId === id);
    expect(pending).toMatchObject({ address: CLASSIC, destinationTag: 12345 });
  });

  test("the largest tag, 4294967295, and 0 are kept exactly; no tag is no field", async () => {
    const { account, walletId } = await holder();
    const max = await send(account, walletId, { destination_tag: 4_294_967_295 });
    expect(max.status).toBe(200);
    const zero = await send(account, walletId, { destination_tag: 0 });
    expect(zero.status).toBe(200);
    const none = await send(account, walletId, { destination_tag: null });
    expect(none.status).toBe(200);
    expect(none.body.transaction).not.toHaveProperty("destination_tag");
    const tags = Object.fromEntries(
      (await listed(account)).transactions.map((t) => [String(t.id), t.destination_tag]),
    );
    expect(tags[sentId(max)]).toBe(4_294_967_295);
    expect(tags[sentId(zero)]).toBe(0);
    expect(tags[sentId(none)]).toBeUndefined();
    expect((await findSend(api.db, sentId(none)))?.destinationTag).toBeNull();
  });

  test.each([
    ["4294967296", 4_294_967_296],
    ["-1", -1],
    ["1.5", 1.5],
    ['"abc"', "abc"],
    ['"12345" (a string)', "12345"],
    ["true", true],
  ])("destination_tag %s is refused with 400 and nothing is written", async (_label, tag) => {
    const { account, walletId } = await holder();
    const answer = await send(account, walletId, { destination_tag: tag });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false });
    expect(JSON.stringify(answer.body)).toContain("Must be a whole number from 0 to 4294967295");
    await expectUntouched(account, walletId);
  });

  test("a tag is refused for any coin but XRP (400, nothing written)", async () => {
    const { account, walletId } = await holder("ETH");
    const answer = await send(account, walletId, {
      destination_tag: 1,
      receiver_wallet_address: "0x52908400098527886e0f7030069857d2e4169ee7",
    });
    expect(answer).toEqual(
      refusedAnswer(400, "invalid_destination_tag", "Only XRP sends take a destination tag."),
    );
    await expectUntouched(account, walletId);
  });

  test("an X-address is stored as its classic address with the tag it carries", async () => {
    const { account, walletId } = await holder();
    const tagged = await send(account, walletId, { receiver_wallet_address: X_TAG_11747 });
    expect(tagged.status).toBe(200);
    expect(tagged.body.transaction).toMatchObject({ recipient_wallet: CLASSIC, destination_tag: 11747 });
    // The same tag given besides is fine; an X-address without a tag takes the one given.
    const same = await send(account, walletId, {
      receiver_wallet_address: X_TAG_11747,
      destination_tag: 11747,
    });
    expect(same.body.transaction).toMatchObject({ recipient_wallet: CLASSIC, destination_tag: 11747 });
    const given = await send(account, walletId, { receiver_wallet_address: X_NO_TAG, destination_tag: 7 });
    expect(given.body.transaction).toMatchObject({ recipient_wallet: CLASSIC, destination_tag: 7 });
    const bare = await send(account, walletId, { receiver_wallet_address: X_NO_TAG });
    expect(bare.body.transaction).toMatchObject({ recipient_wallet: CLASSIC });
    expect(bare.body.transaction).not.toHaveProperty("destination_tag");
  });

  test("an X-address with a tag and a different tag given is refused (400, nothing written)", async () => {
    const { account, walletId } = await holder();
    const answer = await send(account, walletId, {
      receiver_wallet_address: X_TAG_11747,
      destination_tag: 5,
    });
    expect(answer).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_destination_tag",
        message: "This X-address already carries destination tag 11747; leave the tag empty or enter 11747.",
      },
    });
    await expectUntouched(account, walletId);
  });

  test("the tag is part of an idempotent request: the same key with another tag is a conflict", async () => {
    const { account, walletId } = await holder();
    const key = randomBytes(16).toString("hex");
    expect((await send(account, walletId, { destination_tag: 1, idempotency_key: key })).status).toBe(200);
    const replay = await send(account, walletId, { destination_tag: 1, idempotency_key: key });
    expect(replay.status).toBe(200);
    expect(replay.body.transaction).toMatchObject({ destination_tag: 1 });
    expect((await send(account, walletId, { destination_tag: 2, idempotency_key: key })).status).toBe(409);
    const sends = (await listed(account)).transactions.filter((t) => t.status === "pending");
    expect(sends).toHaveLength(1);
  });
}

describeEachDatabaseAndTransport("call 6 with an XRP destination tag on $name", suite, {
  openTimeout: 60_000,
});
