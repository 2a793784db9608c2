// Call 6 (request-transaction): exact JSON answers through raw requests, for
// every database × transport. A refused request must leave nothing behind:
// each refusal is followed by a look at the withdrawals and the balances.
import { randomBytes } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { expect, test } from "vitest";
import { TICKERS, type Ticker } from "../../common/coins.ts";
import { sendRequests } from "../../server/backend/db/schema.ts";
import { validateAddress } from "../../common/addresses.ts";
import { postWithdrawal, voidWithdrawal } from "../../server/backend/domain/ledger.ts";
import { requestWallet } from "../../server/backend/domain/wallets.ts";
import { describeEachDatabaseAndTransport, refusedAnswer, type Api } from "./api-suite.ts";
import { randomAddress, fundedWallet, sendCount } from "./helpers.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Known-valid addresses (COINS.md test vectors); USDT is checked as ERC-20 (the default network). */
const VALID: Record<Ticker, string> = {
  BTC: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
  ETH: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  ADA: "addr1qyr8jjfnypp95eq74aqzn7ss687ehxclgj7mu6gratmg3mul2040vt35dypp042awzsjk5xm3zr3zm5qh7454uwdv08s84ray2",
  BNB: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  DOGE: "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f",
  SOL: "2bUBiBNZyD29gP1oV6de7nxowMLoDBtopMMTGgMvjG5m",
  TRX: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
  USDT: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  XRP: "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3",
};
/** A second valid ETH address to send to (all lower case: no checksum to match). */
const DESTINATION = "0x52908400098527886e0f7030069857d2e4169ee7";
const DESTINATION_CANONICAL = "0x52908400098527886E0F7030069857D2E4169EE7";

/** One character changed (in the middle, to another character of the same alphabet). */
function mistyped(address: string): string {
  const i = Math.floor(address.length / 2);
  const c = address[i] ?? "";
  const replacement =
    c === "2" ? "3" : c === "a" ? "b" : /[0-9]/.test(c) ? "2" : c === c.toLowerCase() ? "a" : "B";
  return `${address.slice(0, i)}${replacement}${address.slice(i + 1)}`;
}

function suite(api: Api) {
  const { call } = api;
  const newAccount = () => api.newAccount("sends");
  type Account = Awaited<ReturnType<typeof newAccount>>;

  /** A wallet of the coin with an address and, when given, a deposit (decimal text). */
  const walletOf = async (account: Account, coin: Ticker, deposit?: string) =>
    (await fundedWallet(api.db, account.userId, coin, { deposit })).walletId;

  /** A user with 1.5 ETH on a wallet of their own address. */
  async function ethHolder() {
    const account = await newAccount();
    const address = randomAddress("ETH");
    const { walletId } = await fundedWallet(api.db, account.userId, "ETH", { deposit: "1.5", address });
    return { account, walletId, address };
  }

  function send(account: Account, walletId: string, fields: Record<string, unknown> = {}) {
    return call("/request-transaction", {
      email: account.email,
      twelveWords: account.twelveWords,
      amount: "0.5",
      amount_in_usd: "1500.25",
      receiver_wallet_address: DESTINATION,
      wallet_id: walletId,
      ...fields,
    });
  }

  const { balances } = api;
  const sendsOf = (walletId: string) => sendCount(api.db, walletId);
  /** The refusal left the wallet as it was: no send, the same balance. */
  const expectUntouched = (account: Account, walletId: string, balance = "1.5") =>
    api.expectUntouched(account, walletId, balance);

  test("a send holds the amount at once: pending, priced by the server, listed by call 4", async () => {
    const { account, walletId } = await ethHolder();
    const answer = await send(account, walletId, { amount_in_usd: "999999" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("idempotent-replayed")).toBeNull();
    const transaction = answer.body.transaction as Record<string, unknown>;
    expect(answer.body).toEqual({ success: true, message: "Transaction requested.", transaction });
    expect(transaction).toEqual({
      id: expect.stringMatching(UUID),
      date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      wallet_id: walletId,
      recipient_wallet: DESTINATION_CANONICAL,
      amount_in_crypto: "0.5",
      // 0.5 × 3000.5 by the server's price; the client's 999999 is ignored.
      amount_in_dollar: "1500.25",
      transaction_crypto: "ETH",
      status: "pending",
    });

    const after = await balances(account);
    expect(after.balances[walletId]).toBe("1");
    expect(after.transactions[0]).toEqual({
      id: transaction.id,
      date: transaction.date,
      wallet_id: walletId,
      recipient_wallet: DESTINATION_CANONICAL,
      amount_in_crypto: "0.5",
      amount_in_dollar: "1500.25",
      transaction_id: transaction.id,
      transaction_crypto: "ETH",
      status: "pending",
    });
  });

  test("'Insufficient balance.' when the available balance is short, held sends included", async () => {
    const { account, walletId } = await ethHolder();
    expect(await send(account, walletId, { amount: "2" })).toMatchObject(
      refusedAnswer(422, "insufficient_balance", "Insufficient balance."),
    );
    await expectUntouched(account, walletId);
    expect((await send(account, walletId, { amount: "1" })).status).toBe(200);
    // 0.5 + 1 would be 1.5 in all, but 1 is already held: 0.5001 is too much.
    expect((await send(account, walletId, { amount: "0.5001" })).body.message).toBe("Insufficient balance.");
    expect((await send(account, walletId, { amount: "0.5" })).status).toBe(200);
    expect((await balances(account)).balances[walletId]).toBe("0");
    expect((await send(account, walletId, { amount: "0.0001" })).status).toBe(422);
  });

  test.each([
    ["negative", "-1", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["negative number", -1, "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["zero", "0", "Invalid amount: Amount must be greater than zero."],
    ["zero with decimals", "0.0000", "Invalid amount: Amount must be greater than zero."],
    ["zero number", 0, "Invalid amount: Amount must be greater than zero."],
    ["exponent", "1e-3", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["exponent number", 1e-7, "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["huge number", 1e21, "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["NaN", "NaN", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["Infinity", "Infinity", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["5 decimals", "0.00001", "Invalid amount: At most 4 decimals for ETH."],
    ["5 decimals number", 0.12345, "Invalid amount: At most 4 decimals for ETH."],
    ["huge", "1".repeat(31), "Invalid amount: Amount is too large (at most 30 digits before the dot)."],
    ["non-numeric", "abc", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["empty", "", "Invalid amount: Enter an amount."],
    ["spaces", " 1", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["comma", "1,5", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["two dots", "1.2.3", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["a lone dot", ".", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
    ["hex", "0x10", "Invalid amount: Amount must be a plain decimal number, like 0.5."],
  ])("a bad amount (%s) is refused with what is wrong", async (_name, amount, message) => {
    const { account, walletId } = await ethHolder();
    expect(await send(account, walletId, { amount })).toMatchObject({
      status: 400,
      body: { success: false, code: "invalid_amount", message },
    });
    await expectUntouched(account, walletId);
  });

  test.each([
    ["boolean", true],
    ["null", null],
    ["object", { value: "1" }],
    ["array", ["1"]],
    ["missing", undefined],
  ])("an amount of the wrong type (%s) is an invalid request", async (_name, amount) => {
    const { account, walletId } = await ethHolder();
    const answer = await send(account, walletId, { amount });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe("Invalid request.");
    expect((answer.body.issues as { path: string }[]).map((i) => i.path)).toEqual(["amount"]);
    await expectUntouched(account, walletId);
  });

  test("amounts: a JSON number, trailing zeros and a leading dot are fine; 4 decimals at most", async () => {
    const { account, walletId } = await ethHolder();
    expect((await send(account, walletId, { amount: 0.25 })).body.transaction).toMatchObject({
      amount_in_crypto: "0.25",
    });
    expect((await send(account, walletId, { amount: "0.100000" })).body.transaction).toMatchObject({
      amount_in_crypto: "0.1",
    });
    expect((await send(account, walletId, { amount: ".0001" })).body.transaction).toMatchObject({
      amount_in_crypto: "0.0001",
      amount_in_dollar: "0.3",
    });
    expect((await balances(account)).balances[walletId]).toBe("1.1499");
  });

  test("another user's wallet is answered exactly as a wallet that does not exist", async () => {
    const victim = await ethHolder();
    const caller = await newAccount();
    const foreign = await send(caller, victim.walletId);
    const missing = await send(caller, "6f1b1a52-27c6-4b1c-9d1f-0c7f7f0e9a11");
    const malformed = await send(caller, "not-a-wallet");
    for (const answer of [foreign, missing, malformed]) {
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        success: false,
        code: "wallet_not_found",
        message: "Wallet not found.",
      });
    }
    await expectUntouched(victim.account, victim.walletId);
  });

  test("a wallet still waiting for its address cannot send", async () => {
    const account = await newAccount();
    const requested = await requestWallet(api.db, account.userId, "ETH");
    if (!requested.ok) throw new Error("request failed");
    expect(await send(account, requested.wallet.id)).toMatchObject(
      refusedAnswer(409, "wallet_has_no_address", "This wallet has no address yet."),
    );
    expect(await sendsOf(requested.wallet.id)).toBe(0);
  });

  test("wrong credentials: 401 and nothing sent", async () => {
    const { account, walletId } = await ethHolder();
    const other = await newAccount();
    expect(await send({ ...account, twelveWords: other.twelveWords }, walletId)).toMatchObject(
      refusedAnswer(401, "invalid_credentials", "Invalid credentials."),
    );
    await expectUntouched(account, walletId);
  });

  test("the wallet's own address is refused, in any spelling", async () => {
    const { account, walletId, address: own } = await ethHolder();
    const canonical = validateAddress("ETH", own);
    if (!canonical.ok) throw new Error(canonical.reason);
    for (const address of [own, canonical.address, ` ${canonical.address} `]) {
      expect(await send(account, walletId, { receiver_wallet_address: address })).toMatchObject(
        refusedAnswer(400, "own_address", "You cannot send to this wallet's own address."),
      );
    }
    await expectUntouched(account, walletId);
  });

  test("a bad destination is refused for every coin: mistyped, another coin's, junk", async () => {
    const account = await newAccount();
    for (const coin of TICKERS) {
      const walletId = await walletOf(account, coin, "10");
      const otherCoin = coin === "BTC" ? VALID.XRP : VALID.BTC;
      // Solana addresses carry no checksum: a mistyped one of the right length is a valid
      // address (decision record 009); one character short is not.
      const typo = coin === "SOL" ? VALID.SOL.slice(0, -1) : mistyped(VALID[coin]);
      for (const address of [typo, otherCoin, "junk", ""]) {
        const answer = await send(account, walletId, { receiver_wallet_address: address, amount: "1" });
        expect(answer.status, `${coin} → ${address}`).toBe(400);
        expect(answer.body.success).toBe(false);
        expect(answer.body.message, `${coin} → ${address}`).toMatch(/address/i);
      }
      expect(await sendsOf(walletId)).toBe(0);
    }
    // Nothing was held on any of the nine wallets.
    const all = (await balances(account)).balances;
    expect(Object.values(all)).toEqual(TICKERS.map(() => "10"));
  });

  test("a BTC send to another valid BTC address goes through", async () => {
    const account = await newAccount();
    const walletId = await walletOf(account, "BTC", "0.01");
    const answer = await send(account, walletId, {
      amount: "0.0025",
      receiver_wallet_address: "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
    });
    expect(answer.status).toBe(200);
    expect(answer.body.transaction).toMatchObject({ amount_in_crypto: "0.0025", amount_in_dollar: "150" });
  });

  test("idempotency: the same key again answers the first answer and creates nothing", async () => {
    const { account, walletId } = await ethHolder();
    const key = `key-${randomBytes(12).toString("hex")}`;
    const first = await send(account, walletId, { idempotency_key: key });
    expect(first.status).toBe(200);
    const again = await send(account, walletId, { idempotency_key: key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // The address spelled differently and the amount with a trailing zero are the same request.
    const spelled = await send(account, walletId, {
      idempotency_key: key,
      amount: "0.50",
      receiver_wallet_address: DESTINATION_CANONICAL,
      amount_in_usd: "1",
    });
    expect(spelled.body).toEqual(first.body);
    expect(await sendsOf(walletId)).toBe(1);
    expect((await balances(account)).balances[walletId]).toBe("1");

    // The same key for a different request (amount, or destination) is refused, and creates nothing.
    for (const change of [{ amount: "0.4" }, { receiver_wallet_address: `0x${"ab".repeat(20)}` }]) {
      expect(await send(account, walletId, { idempotency_key: key, ...change })).toMatchObject(
        refusedAnswer(
          409,
          "idempotency_conflict",
          "This idempotency key was already used for a different transaction.",
        ),
      );
    }
    expect(await sendsOf(walletId)).toBe(1);
    expect((await balances(account)).balances[walletId]).toBe("1");

    // A new key is a new send.
    expect((await send(account, walletId, { idempotency_key: `${key}-2` })).status).toBe(200);
    expect(await sendsOf(walletId)).toBe(2);
  });

  test("idempotency: keys are the caller's own, and a refused request leaves its key free", async () => {
    const a = await ethHolder();
    const b = await ethHolder();
    const key = `shared-${randomBytes(12).toString("hex")}`;
    expect((await send(a.account, a.walletId, { idempotency_key: key })).status).toBe(200);
    // Another user with the same key sends their own coins.
    const other = await send(b.account, b.walletId, { idempotency_key: key });
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();

    const fresh = `retry-${randomBytes(12).toString("hex")}`;
    expect((await send(a.account, a.walletId, { idempotency_key: fresh, amount: "5" })).status).toBe(422);
    const corrected = await send(a.account, a.walletId, { idempotency_key: fresh, amount: "0.25" });
    expect(corrected.status).toBe(200);
    expect(await sendsOf(a.walletId)).toBe(2);
    const keys = await api.db
      .select({ n: count() })
      .from(sendRequests)
      .where(eq(sendRequests.userId, a.account.userId));
    expect(keys[0]?.n).toBe(2);
  });

  test("idempotency: the same key sent five times at once makes one send", async () => {
    const { account, walletId } = await ethHolder();
    const key = `burst-${randomBytes(12).toString("hex")}`;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => send(account, walletId, { idempotency_key: key, amount: "1" })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const ids = new Set(answers.map((a) => (a.body.transaction as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(await sendsOf(walletId)).toBe(1);
    expect((await balances(account)).balances[walletId]).toBe("0.5");
  });

  test.each([["short"], ["has spaces in it ok"], ["x".repeat(129)], ["ключ-ключ-ключ-ключ"]])(
    "a malformed idempotency key (%s) is an invalid request",
    async (key) => {
      const { account, walletId } = await ethHolder();
      const answer = await send(account, walletId, { idempotency_key: key });
      expect(answer.status).toBe(400);
      expect((answer.body.issues as { path: string }[]).map((i) => i.path)).toEqual(["idempotency_key"]);
      await expectUntouched(account, walletId);
    },
  );

  test("approve and decline resolve a send once: Confirmed keeps the funds out, Declined returns them exactly", async () => {
    const { account, walletId } = await ethHolder();
    const first = (await send(account, walletId, { amount: "0.5" })).body.transaction as { id: string };
    const second = (await send(account, walletId, { amount: "0.25" })).body.transaction as { id: string };
    expect((await balances(account)).balances[walletId]).toBe("0.75");

    const [declined, declinedAgain] = await Promise.all([
      voidWithdrawal(api.db, first.id, "Failed the compliance check."),
      postWithdrawal(api.db, first.id),
    ]);
    expect([declined.ok, declinedAgain.ok].filter(Boolean)).toHaveLength(1);
    const firstOutcome = declined.ok ? "Declined" : "Confirmed";
    expect((await postWithdrawal(api.db, second.id)).ok).toBe(true);
    expect(await voidWithdrawal(api.db, second.id, "late")).toEqual({
      ok: false,
      reason: "already-decided",
      status: "Confirmed",
    });

    const after = await balances(account);
    expect(after.balances[walletId]).toBe(firstOutcome === "Declined" ? "1.25" : "0.75");
    const statuses = Object.fromEntries(after.transactions.map((t) => [t.id, t.status]));
    expect(statuses[first.id]).toBe(firstOutcome);
    expect(statuses[second.id]).toBe("Confirmed");
  });
}

describeEachDatabaseAndTransport("call 6 on $name", suite, { openTimeout: 60_000 });
