// The withdrawal address allowlist over the contract (issue 27, record 048):
// every database × transport, with the holds' clock (and the codes' clock)
// moved by the test. Saved addresses are checked as a send's destination is;
// a change needs the password (and with two-factor on a code or a grant) and
// is audited; with the allowlist on, a send to anything but a saved address
// whose hold has ended is refused at the address field with nothing held.
import { randomUUID } from "node:crypto";
import { and, count, eq, like } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { beforeEach, describe, expect, test } from "vitest";
import { toEip55 } from "../../common/addresses.ts";
import { auditLog, withdrawalAddresses } from "../../server/backend/db/schema.ts";
import { connectApi, describeEachDatabase, refusedAnswer, type Api, type ApiAccount } from "./api-suite.ts";
import { fundedWallet, randomAddress, sendCount, transports } from "./helpers.ts";

const HOUR = 3_600_000;

/** The holds' clock and the codes' clock, moved by the tests. */
let holdNow = Date.now();
let codeNow = Date.now();

/** ripple-address-codec's published vectors: one account, its X-addresses with and without a tag. */
const XRP_CLASSIC = "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59";
const XRP_X_TAG_11747 = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A";

const iso = (ms: number) => new Date(ms).toISOString();

const two = (n: number) => String(n).padStart(2, "0");

/** dd.mm.yy hh:mm UTC, rounded up to the minute (common/allowlist.ts utcMinute). */
function shown(ms: number): string {
  const d = new Date(Math.ceil(ms / 60_000) * 60_000);
  return `${two(d.getUTCDate())}.${two(d.getUTCMonth() + 1)}.${two(d.getUTCFullYear() % 100)} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

const NOT_SAVED =
  "Only your saved addresses can receive sends. Add this address on the Security page; it can be used 24 hours after you add it.";

function codeOf(secret: string, at = codeNow): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: at });
}

const creds = ({ email, twelveWords }: ApiAccount) => ({ email, twelveWords });

function suite(api: Api) {
  const { call } = api;

  async function holder(label: string) {
    const account = await api.newAccount(label);
    const { walletId } = await fundedWallet(api.db, account.userId, "ETH", { deposit: "2" });
    return { account, walletId };
  }

  const add = (account: ApiAccount, fields: Record<string, unknown>) =>
    call("/allowlist/add", { ...creds(account), password: "pw", coin: "ETH", label: "Mine", ...fields });
  const set = (account: ApiAccount, on: boolean, fields: Record<string, unknown> = {}) =>
    call("/allowlist/set", { ...creds(account), password: "pw", on, ...fields });
  const send = (account: ApiAccount, walletId: string, to: string, fields: Record<string, unknown> = {}) =>
    call("/request-transaction", {
      ...creds(account),
      wallet_id: walletId,
      amount: "0.1",
      receiver_wallet_address: to,
      idempotency_key: randomUUID(),
      ...fields,
    });

  async function savedRows(userId: string) {
    const [row] = await api.db
      .select({ n: count() })
      .from(withdrawalAddresses)
      .where(eq(withdrawalAddresses.userId, userId));
    return row?.n ?? 0;
  }

  async function auditActions(userId: string) {
    const rows = await api.db
      .select({ action: auditLog.action, details: auditLog.details })
      .from(auditLog)
      .where(and(eq(auditLog.subject, userId), like(auditLog.action, "allowlist.%")))
      .orderBy(auditLog.id);
    return rows;
  }

  test("add, list, switch on and off, remove: the exact answers, each change audited", async () => {
    const { account, walletId } = await holder("al-basic");
    expect(await call("/allowlist", creds(account))).toEqual({
      status: 200,
      body: { success: true, on: false, off_at: null, hold_hours: 24, usdt_network: "erc20", addresses: [] },
    });

    const lower = randomAddress("ETH");
    const added = await add(account, { address: lower, label: "  Kraken deposit  " });
    expect(added.status).toBe(200);
    const id = (added.body.address as { id: string }).id;
    const entry = {
      id,
      coin: "ETH",
      address: toEip55(lower.slice(2)),
      destination_tag: null,
      label: "Kraken deposit",
      created_at: iso(holdNow),
      usable_from: iso(holdNow + 24 * HOUR),
      usable: false,
    };
    expect(added.body).toEqual({ success: true, message: "Address saved.", address: entry });
    expect((await call("/allowlist", creds(account))).body.addresses).toEqual([entry]);

    expect(await set(account, true)).toEqual({
      status: 200,
      body: {
        success: true,
        message: "Only your saved addresses can receive sends now.",
        on: true,
        off_at: null,
      },
    });
    // Asking for what already is changes nothing.
    expect((await set(account, true)).body).toEqual({
      success: true,
      message: "Only your saved addresses can receive sends.",
      on: true,
      off_at: null,
    });
    const offAt = holdNow + 24 * HOUR;
    const off = {
      success: true,
      message: `Sends can go to any address from ${shown(offAt)}. Until then, only your saved addresses can receive them.`,
      on: true,
      off_at: iso(offAt),
    };
    expect((await set(account, false)).body).toEqual(off);
    // A second turn-off an hour later keeps the first one's time.
    holdNow += HOUR;
    expect((await set(account, false)).body).toEqual(off);
    expect(await call("/allowlist", creds(account))).toMatchObject({
      status: 200,
      body: { on: true, off_at: iso(offAt) },
    });
    // On again while the turn-off waits: the turn-off is called off.
    expect((await set(account, true)).body).toEqual({
      success: true,
      message: "Only your saved addresses can receive sends now.",
      on: true,
      off_at: null,
    });

    expect(await call("/allowlist/remove", { ...creds(account), password: "pw", id })).toEqual({
      status: 200,
      body: { success: true, message: "Address removed." },
    });
    expect((await call("/allowlist", creds(account))).body.addresses).toEqual([]);
    expect(await call("/allowlist/remove", { ...creds(account), password: "pw", id })).toEqual(
      refusedAnswer(404, "saved_address_not_found", "Saved address not found."),
    );

    const audited = await auditActions(account.userId);
    expect(audited.map((row) => row.action)).toEqual([
      "allowlist.added",
      "allowlist.on",
      "allowlist.off-requested",
      "allowlist.on",
      "allowlist.removed",
    ]);
    // Over HTTP the client's address rides along (details.ip); in-process there is none to give.
    expect(audited[0]?.details).toMatchObject({
      id,
      coin: "ETH",
      address: entry.address,
      usableFrom: entry.usable_from,
    });
    expect(audited[2]?.details).toMatchObject({ offAt: iso(offAt) });
    expect(audited[3]?.details).toMatchObject({ cancelledOffAt: iso(offAt) });
    // The label is the holder's own words: not in the audit log.
    expect(JSON.stringify(audited)).not.toContain("Kraken");
    expect(await sendCount(api.db, walletId)).toBe(0);
  });

  test("a bad address, tag, label or coin is refused at its field, with nothing written", async () => {
    const { account } = await holder("al-bad");
    const good = randomAddress("ETH");
    const typo = `0x${good.slice(2, 41)}${good.at(-1) === "0" ? "1" : "0"}`;
    const mixed = toEip55(typo.slice(2).toLowerCase());
    // A mixed-case address whose checksum does not match (one letter's case flipped).
    const flip = mixed.replace(/[a-f]/u, (c) => c.toUpperCase());
    const checksum =
      "This is not a valid Ethereum address: its mix of capital and small letters does not match its checksum, so a character is probably mistyped.";
    expect(await add(account, { address: flip })).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_address",
        message: checksum,
        issues: [{ path: "address", message: checksum }],
      },
    });
    const bitcoin = "This is a Bitcoin address, not an Ethereum address.";
    expect(await add(account, { address: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d" })).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_address",
        message: bitcoin,
        issues: [{ path: "address", message: bitcoin }],
      },
    });
    const xrpOnly = "Only XRP sends take a destination tag.";
    expect(await add(account, { address: good, destination_tag: 7 })).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_destination_tag",
        message: xrpOnly,
        issues: [{ path: "destination_tag", message: xrpOnly }],
      },
    });
    const conflict = await add(account, { coin: "XRP", address: XRP_X_TAG_11747, destination_tag: 5 });
    expect(conflict).toMatchObject({ status: 400, body: { code: "invalid_destination_tag" } });
    expect(conflict.body.issues).toEqual([{ path: "destination_tag", message: conflict.body.message }]);
    for (const [label, text] of [
      ["   ", 'Enter a label, like "My exchange".'],
      ["x".repeat(51), "A label is at most 50 characters."],
      ["two\nlines", "A label cannot contain line breaks or other control characters."],
    ] as const) {
      expect(await add(account, { address: good, label })).toEqual({
        status: 400,
        body: {
          success: false,
          code: "invalid_request",
          message: "Invalid request.",
          issues: [{ path: "label", message: text }],
        },
      });
    }
    expect(await add(account, { address: good, coin: "LTC" })).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_request",
        message: "Invalid request.",
        issues: [{ path: "coin", message: "Must be one of the coins' tickers, like BTC." }],
      },
    });
    expect(await add(account, { address: good, destination_tag: "7" })).toMatchObject({
      status: 400,
      body: { code: "invalid_request", issues: [{ path: "destination_tag" }] },
    });
    expect(await savedRows(account.userId)).toBe(0);
    expect(await auditActions(account.userId)).toEqual([]);

    // Fifty characters of any script are a label; the address is saved once, whatever its case.
    expect((await add(account, { address: good.toLowerCase(), label: "é".repeat(50) })).status).toBe(200);
    const upper = `0x${good.slice(2).toUpperCase()}`;
    expect(await add(account, { address: upper })).toEqual({
      status: 409,
      body: {
        success: false,
        code: "saved_address_exists",
        message: "This address is saved already.",
        issues: [{ path: "address", message: "This address is saved already." }],
      },
    });
    expect(await savedRows(account.userId)).toBe(1);
  });

  test("XRP: an X-address is saved as its classic address and tag; the same account with another tag is another entry", async () => {
    const { account } = await holder("al-xrp");
    const x = await add(account, { coin: "xrp", address: XRP_X_TAG_11747, label: "Exchange" });
    expect(x.body.address).toMatchObject({ coin: "XRP", address: XRP_CLASSIC, destination_tag: 11747 });
    expect((await add(account, { coin: "XRP", address: XRP_CLASSIC, destination_tag: 11747 })).status).toBe(
      409,
    );
    const none = await add(account, { coin: "XRP", address: XRP_CLASSIC });
    expect(none.body.address).toMatchObject({ address: XRP_CLASSIC, destination_tag: null });
    const zero = await add(account, { coin: "XRP", address: XRP_CLASSIC, destination_tag: 0 });
    expect(zero.body.address).toMatchObject({ address: XRP_CLASSIC, destination_tag: 0 });
    expect(await savedRows(account.userId)).toBe(3);
  });

  test("the in-process client names the refused fields as the form does", async () => {
    const { account } = await holder("al-client");
    const answer = await api.connection.client.allowlistAdd({
      ...creds(account),
      password: "pw",
      coin: "ETH",
      address: randomAddress("ETH"),
      destinationTag: 1,
      label: "Mine",
    });
    expect(answer).toMatchObject({
      ok: false,
      kind: "rejected",
      code: "invalid_destination_tag",
      issues: [{ path: "destinationTag", message: "Only XRP sends take a destination tag." }],
    });
  });

  test("every change needs the password; nothing is written without it", async () => {
    const { account } = await holder("al-password");
    const saved = await add(account, { address: randomAddress("ETH") });
    const id = (saved.body.address as { id: string }).id;
    const wrong = refusedAnswer(401, "wrong_password", "Password is inccorect");
    expect(await add(account, { address: randomAddress("ETH"), password: "nope" })).toEqual(wrong);
    expect(await set(account, true, { password: "nope" })).toEqual(wrong);
    expect(await call("/allowlist/remove", { ...creds(account), password: "nope", id })).toEqual(wrong);
    const missing = await call("/allowlist/set", { ...creds(account), on: true });
    expect(missing).toMatchObject({
      status: 400,
      body: { code: "invalid_request", issues: [{ path: "password" }] },
    });
    expect(await savedRows(account.userId)).toBe(1);
    expect((await call("/allowlist", creds(account))).body.on).toBe(false);
    // The reading needs the phrase, as every call of an account does.
    expect(
      await call("/allowlist", { email: account.email, twelveWords: "abandon ".repeat(12).trim() }),
    ).toEqual(refusedAnswer(401, "invalid_credentials", "Invalid credentials."));
  });

  test("with two-factor on, a change needs a code (once) or a grant", async () => {
    const { account } = await holder("al-2fa");
    const begun = await call("/two-factor/begin", { ...creds(account), password: "pw" });
    const secret = begun.body.secret as string;
    codeNow += 30_000;
    expect(
      (await call("/two-factor/enable", { ...creds(account), secret, two_factor_code: codeOf(secret) }))
        .status,
    ).toBe(200);
    codeNow += 30_000;
    const address = randomAddress("ETH");
    expect(await add(account, { address })).toEqual(
      refusedAnswer(
        401,
        "two_factor_required",
        "Enter the 6-digit code from your authenticator app, or a recovery code.",
      ),
    );
    const right = codeOf(secret);
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, "0");
    expect(await add(account, { address, two_factor_code: wrong })).toMatchObject({
      status: 401,
      body: { code: "two_factor_invalid" },
    });
    expect(await savedRows(account.userId)).toBe(0);
    const added = await add(account, { address, two_factor_code: right });
    expect(added.status).toBe(200);
    // The same code again is refused: it was spent.
    expect(await set(account, true, { two_factor_code: right })).toMatchObject({
      status: 401,
      body: { code: "two_factor_replayed" },
    });
    // A grant of the last 5 minutes stands in for a code.
    codeNow += 30_000;
    const verified = await call("/two-factor/verify", { ...creds(account), two_factor_code: codeOf(secret) });
    const grant = verified.body.grant as string;
    expect(await set(account, true, { two_factor_grant: grant })).toMatchObject({
      status: 200,
      body: { on: true },
    });
    const id = (added.body.address as { id: string }).id;
    expect(
      await call("/allowlist/remove", { ...creds(account), password: "pw", id, two_factor_grant: grant }),
    ).toMatchObject({ status: 200 });
    // The grant does not stand in for the password.
    expect(await set(account, false, { password: "nope", two_factor_grant: grant })).toMatchObject({
      status: 401,
      body: { code: "wrong_password" },
    });
  });

  test("a new address is refused for sends until its hold ends, then accepted", async () => {
    const { account, walletId } = await holder("al-hold");
    const to = toEip55(randomAddress("ETH").slice(2));
    const addedAt = holdNow;
    await add(account, { address: to });
    expect((await set(account, true)).status).toBe(200);
    const usableFrom = addedAt + 24 * HOUR;
    const waiting = `This saved address can receive sends from ${shown(usableFrom)}, once its waiting time is over.`;
    holdNow = usableFrom - 1;
    expect(await send(account, walletId, to)).toEqual({
      status: 403,
      body: {
        success: false,
        code: "address_not_usable_yet",
        message: waiting,
        issues: [{ path: "receiver_wallet_address", message: waiting }],
      },
    });
    await api.expectUntouched(account, walletId, "2");
    holdNow = usableFrom;
    const sent = await send(account, walletId, to.toLowerCase());
    expect(sent.status).toBe(200);
    expect(sent.body.transaction).toMatchObject({ recipient_wallet: to, amount_in_crypto: "0.1" });
    expect((await call("/allowlist", creds(account))).body.addresses).toMatchObject([{ usable: true }]);
  });

  test("with it on, a send to an unlisted address is refused at the field and nothing is held; a replay still answers", async () => {
    const { account, walletId } = await holder("al-unlisted");
    const elsewhere = randomAddress("ETH");
    const key = randomUUID();
    const first = await send(account, walletId, elsewhere, { idempotency_key: key });
    expect(first.status).toBe(200);
    expect((await set(account, true)).status).toBe(200);
    // The same request again (a retried form) answers what was recorded: it was made before.
    const replay = await send(account, walletId, elsewhere, { idempotency_key: key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await send(account, walletId, elsewhere)).toEqual({
      status: 403,
      body: {
        success: false,
        code: "address_not_saved",
        message: NOT_SAVED,
        issues: [{ path: "receiver_wallet_address", message: NOT_SAVED }],
      },
    });
    expect(await sendCount(api.db, walletId)).toBe(1);
    expect((await api.balances(account)).balances[walletId]).toBe("1.9");
    // The in-process client hands the web tier the field by the form's name.
    const refused = await api.connection.client.requestTransaction({
      ...creds(account),
      walletId,
      amount: "0.1",
      receiverWalletAddress: elsewhere,
      idempotencyKey: randomUUID(),
    });
    expect(refused).toMatchObject({
      ok: false,
      kind: "rejected",
      code: "address_not_saved",
      message: NOT_SAVED,
      issues: [{ path: "receiverWalletAddress", message: NOT_SAVED }],
    });
    expect(await sendCount(api.db, walletId)).toBe(1);
  });

  test("a waiting turn-off still enforces until its hold ends; then it is off, and audited", async () => {
    const { account, walletId } = await holder("al-off");
    expect((await set(account, true)).status).toBe(200);
    const asked = holdNow;
    expect((await set(account, false)).body.off_at).toBe(iso(asked + 24 * HOUR));
    const elsewhere = randomAddress("ETH");
    holdNow = asked + 24 * HOUR - 1;
    expect(await send(account, walletId, elsewhere)).toMatchObject({
      status: 403,
      body: { code: "address_not_saved" },
    });
    expect(await sendCount(api.db, walletId)).toBe(0);
    holdNow = asked + 24 * HOUR;
    expect((await send(account, walletId, elsewhere)).status).toBe(200);
    expect(await call("/allowlist", creds(account))).toMatchObject({ body: { on: false, off_at: null } });
    expect((await auditActions(account.userId)).map((row) => row.action)).toEqual([
      "allowlist.on",
      "allowlist.off-requested",
      "allowlist.off",
    ]);
    // Read again: carried out once.
    await call("/allowlist", creds(account));
    expect((await auditActions(account.userId)).length).toBe(3);
  });
}

describeEachDatabase("withdrawal address allowlist, database: $name", (getDatabase) => {
  for (const transport of transports) {
    describe(`transport: ${transport.name}`, () => {
      beforeEach(() => {
        holdNow = Date.now();
        codeNow = Date.now();
      });
      suite(
        connectApi(transport, getDatabase, {
          now: () => new Date(codeNow),
          holdClock: () => new Date(holdNow),
        }),
      );
    });
  }
});
