// Issue 13: a rule of the contract is written once, in common/contract, and
// both tiers follow it. Each test reads the rule from the contract and checks
// what the backend answers (over both transports) and what the web tier shows
// or refuses — so a newcomer who changes a refusal text or the send decimals
// there sees both tiers change with it, and a tier that kept its own copy fails here.
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, test } from "vitest";
import { createInProcessClient } from "../../app/backend.server.ts";
import { checkSend } from "../../app/send/schema.ts";
import { parseAmount as parseFormAmount, sendFailureMessage, sendPrice } from "../../app/send/rules.ts";
import { parseDecimal } from "../../common/decimal.ts";
import {
  AMOUNT_FORMAT,
  SEND_DECIMALS,
  USDT_USD_PRICE,
  fixedUsdPrice,
} from "../../common/contract/amounts.ts";
import { CALLS } from "../../common/contract/calls.ts";
import { REFUSALS } from "../../common/contract/refusals.ts";
import { eq } from "drizzle-orm";
import type { AppDb } from "../../server/backend/db/index.ts";
import { users } from "../../server/backend/db/schema.ts";
import { creditDeposit } from "../../server/backend/domain/ledger.ts";
import {
  createTestHandler,
  randomAddress,
  transports,
  uniqueEmail,
  type Connection,
  clientHolder,
} from "./helpers.ts";
import { describeEachDatabase, connectApi } from "./api-suite.ts";

describeEachDatabase("the contract is written once ($name)", { openTimeout: 120_000 }, (getDatabase) => {
  let db: AppDb;

  beforeAll(() => {
    db = getDatabase().database.db;
  });

  /** A new account holding 1.5 ETH on a wallet with an address; its e-mail, words and wallet id. */
  const holder = (connection: Connection) =>
    clientHolder(connection, db, { label: "contract", coin: "ETH", deposit: "1.5" });

  for (const transport of transports) {
    describe(`over ${transport.name}`, () => {
      const api = connectApi(transport, getDatabase);

      const sendFrom = (
        who: Awaited<ReturnType<typeof holder>>,
        fields: { amount: string; walletId?: string },
      ) =>
        api.connection.client.requestTransaction({
          email: who.email,
          twelveWords: who.twelveWords,
          walletId: fields.walletId ?? who.walletId,
          amount: fields.amount,
          amountInUsd: "0",
          receiverWalletAddress: randomAddress("ETH"),
        });

      test("a refusal's text: the backend answers the contract's, the send form shows it by its code", async () => {
        const who = await holder(api.connection);
        const poor = await sendFrom(who, { amount: "2" });
        expect(poor).toEqual({
          ok: false,
          kind: "rejected",
          code: "insufficient_balance",
          status: REFUSALS.insufficient_balance.status,
          message: REFUSALS.insufficient_balance.message,
        });
        if (poor.ok) throw new Error("sent");
        expect(sendFailureMessage(poor)).toBe(REFUSALS.insufficient_balance.message);

        const lost = await sendFrom(who, { amount: "0.1", walletId: "00000000-0000-4000-8000-000000000000" });
        if (lost.ok) throw new Error("sent");
        expect(lost).toMatchObject({ code: "wallet_not_found", message: REFUSALS.wallet_not_found.message });
        expect(sendFailureMessage(lost)).toBe(`Transaction failed: ${REFUSALS.wallet_not_found.message}`);
      });

      test("the send decimals: both tiers take SEND_DECIMALS and refuse one more", async () => {
        const who = await holder(api.connection);
        const most = `0.${"1".repeat(SEND_DECIMALS)}`;
        const tooMany = `0.${"1".repeat(SEND_DECIMALS + 1)}`;
        // The web form (server-side check, and the input's typing rule).
        expect(checkSend({ address: "0xabc", coin: most, fiat: "1" })).toMatchObject({ ok: true });
        expect(checkSend({ address: "0xabc", coin: tooMany, fiat: "1" })).toEqual({
          ok: false,
          errors: { coin: [AMOUNT_FORMAT] },
        });
        expect(AMOUNT_FORMAT).toContain(`at most ${SEND_DECIMALS} decimals`);
        expect(parseFormAmount(tooMany)).toBeUndefined();
        // The backend (call 6).
        expect(await sendFrom(who, { amount: most })).toMatchObject({ ok: true });
        expect(await sendFrom(who, { amount: tooMany })).toEqual({
          ok: false,
          kind: "rejected",
          code: "invalid_amount",
          status: 400,
          message: `Invalid amount: At most ${SEND_DECIMALS} decimals for ETH.`,
        });
      });
    });
  }

  test("USDT's price is the contract's, whatever a feed says; other coins take the feed's", () => {
    expect(sendPrice("USDT", "0.98")).toEqual(parseDecimal(USDT_USD_PRICE));
    expect(fixedUsdPrice("USDT")).toBe(USDT_USD_PRICE);
    expect(sendPrice("BTC", "0.98")).toEqual(parseDecimal("0.98"));
    expect(fixedUsdPrice("BTC")).toBeNull();
  });

  test("every call has one path of its own", () => {
    const paths = Object.values(CALLS).map((call) => call.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).toContain("/aml-authentication");
    expect(paths).toContain("/request-message");
  });

  // One credential check per web request, in-process.
  test("the request's client answers its later calls from the first check; the next request checks again", async () => {
    const handler = createTestHandler(db);
    const email = uniqueEmail("once");
    const first = createInProcessClient(handler.services, "CK", undefined);
    const created = await first.createAccount({ email, password: "pw-1234", passwordConfirmed: "pw-1234" });
    if (!created.ok) throw new Error("account");
    const me = { email, twelveWords: created.data.twelveWords };

    // One request: three calls at once (as a page's loaders make them), then the phrase stops checking out.
    const request = createInProcessClient(handler.services, "CK", undefined);
    const answers = await Promise.all([
      request.clientBalances(me),
      request.newMessagesCount({ email: me.email, twelvewords: me.twelveWords }),
      request.checkLoggedIn(me),
    ]);
    expect(answers.map((a) => a.ok)).toEqual([true, true, true]);
    await db
      .update(users)
      .set({ phraseHmac: "0".repeat(64) })
      .where(eq(users.email, email));
    // Still this request: answered from its check, as the whole request was made by that user.
    expect(await request.newMessagesCount({ email: me.email, twelvewords: me.twelveWords })).toEqual({
      ok: true,
      data: { newMessagesCount: 0 },
    });
    // The next request checks again, and is refused.
    const next = createInProcessClient(handler.services, "CK", undefined);
    expect(await next.newMessagesCount({ email: me.email, twelvewords: me.twelveWords })).toMatchObject({
      ok: false,
      code: "invalid_credentials",
    });
    // A wrong phrase is never remembered: each call checks it.
    const wrong = { email, twelveWords: [...me.twelveWords.slice(1), me.twelveWords[0] ?? ""] };
    expect(await request.checkLoggedIn(wrong)).toMatchObject({ ok: false, code: "invalid_credentials" });
  });

  // The layout's and the wallet page's loaders both ask for the balances (call 4) at once.
  test("a request's calls that read the balances at once share one read; a read after it sees a change", async () => {
    let selects = 0;
    const counted = new Proxy(db, {
      get(inner, key, receiver) {
        const value: unknown = Reflect.get(inner, key, receiver);
        if (key !== "select" || typeof value !== "function") return value;
        return (...args: unknown[]) => {
          selects++;
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
    const handler = createTestHandler(counted);
    const setup = createInProcessClient(handler.services, "CK", undefined);
    const me = await holder({
      client: setup,
      clientFor: () => setup,
      baseUrl: "",
      fetch: () => Promise.reject(new Error("not used")),
      close: () => Promise.resolve(),
    });
    const only = { ...me, includeTransactions: false, includeMessages: false };

    const alone = createInProcessClient(handler.services, "CK", undefined);
    await alone.checkLoggedIn(me);
    selects = 0;
    const one = await alone.clientBalances(only);
    const oneRead = selects;
    expect(oneRead).toBeGreaterThan(0);

    const request = createInProcessClient(handler.services, "CK", undefined);
    await request.checkLoggedIn(me);
    selects = 0;
    const both = await Promise.all([request.clientBalances(only), request.clientBalances(only)]);
    expect(selects).toBe(oneRead);
    expect(both.map((a) => (a.ok ? a.data.balances[me.walletId] : null))).toEqual(["1.5", "1.5"]);
    expect(one.ok && one.data.balances[me.walletId]).toBe("1.5");

    // Settled reads are not kept: a deposit made now shows in the same request's next read.
    await creditDeposit(db, {
      walletId: me.walletId,
      units: 1n,
      externalTxId: `tx-${randomBytes(8).toString("hex")}`,
    });
    const after = await request.clientBalances(only);
    expect(after.ok && after.data.balances[me.walletId]).toBe("1.500000000000000001");
  });
});
