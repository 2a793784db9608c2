// The withdrawal address allowlist under attack (issue 27 item 2, record 048).
// Someone holding a victim's e-mail and 12 words (and perhaps the password)
// tries to move coins to an address of their own while "Only send to saved
// addresses" is on: call 6 straight through the contract, an address written
// another way (an X-address with another tag, EVM case games, padding), the
// same address under another coin, a removed address, another holder's list;
// or tries to change the list without the password or the code, or to remove
// another holder's entry. Every refusal leaves the money tables as they were.
// Then, against the host serving the production build, each new form posted
// without its CSRF token.
import { randomUUID } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { encodeXAddress, toEip55 } from "../../common/addresses.ts";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { withdrawalAddresses } from "../../server/backend/db/schema.ts";
import { callApi, describeEachDatabase } from "../backend/api-suite.ts";
import { createTestHandler, fundedWallet, randomAddress } from "../backend/helpers.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";
import { inputValue } from "../../scripts/html-forms.ts";
import { changedTables, createHolder, snapshot, type Holder } from "./fuzz-support.ts";
import { cookiesOf, createAccount, fastLoginPath, raw, rawCall } from "./support/http.ts";

const HOUR = 3_600_000;
let holdNow = Date.now();
let codeNow = Date.now();

const creds = (h: Holder) => ({ email: h.email, twelveWords: h.words });

describeEachDatabase("the allowlist under attack ($name)", (getDatabase) => {
  let db: AppDb;
  let api: ApiHandler;

  beforeAll(() => {
    db = getDatabase().database.db;
    api = createTestHandler(db, { holdClock: () => new Date(holdNow), now: () => new Date(codeNow) });
  });

  const call = (path: string, body: Record<string, unknown>) => callApi(api, path, body);
  const add = (h: Holder, fields: Record<string, unknown>) =>
    call("/allowlist/add", { ...creds(h), password: h.password, coin: "ETH", label: "Mine", ...fields });
  const send = (h: Holder, to: string, fields: Record<string, unknown> = {}) =>
    call("/request-transaction", {
      ...creds(h),
      wallet_id: h.walletId,
      amount: "1",
      receiver_wallet_address: to,
      idempotency_key: randomUUID(),
      ...fields,
    });

  /** A holder with the allowlist on and one ETH address saved 25 hours ago (usable now). */
  async function guarded(label: string, saved = randomAddress("ETH")) {
    holdNow = Date.now() - 25 * HOUR;
    const holder = await createHolder(db, { label });
    const added = await add(holder, { address: saved });
    expect(added.status).toBe(200);
    expect(
      (await call("/allowlist/set", { ...creds(holder), password: holder.password, on: true })).status,
    ).toBe(200);
    holdNow = Date.now();
    return {
      holder,
      saved: toEip55(saved.slice(2).toLowerCase()),
      id: (added.body.address as { id: string }).id,
    };
  }

  /** The attempt is refused with `code` and the money tables are exactly as they were. */
  async function expectRefusedUntouched(
    attempt: () => Promise<{ status: number; body: unknown }>,
    code: string,
  ) {
    const before = await snapshot(db);
    const answer = await attempt();
    expect(answer.body).toMatchObject({ success: false, code });
    expect(changedTables(before, await snapshot(db))).toEqual([]);
  }

  test("call 6 straight through the contract, to the attacker's address: refused, nothing held", async () => {
    const { holder, saved } = await guarded("al-bypass");
    const attacker = randomAddress("ETH");
    await expectRefusedUntouched(() => send(holder, attacker), "address_not_saved");
    // No idempotency key, a huge amount, the wallet's own id spelled in capitals: the same.
    await expectRefusedUntouched(
      () => send(holder, attacker, { idempotency_key: undefined, wallet_id: holder.walletId.toUpperCase() }),
      "address_not_saved",
    );
    expect((await send(holder, saved)).status).toBe(200);
  });

  test("EVM case games: the saved address in any case is the saved address; another one is not", async () => {
    const { holder, saved } = await guarded("al-case");
    const hex = saved.slice(2);
    for (const spelling of [saved.toLowerCase(), `0x${hex.toUpperCase()}`, `  ${saved}  `]) {
      const sent = await send(holder, spelling);
      expect(sent.status).toBe(200);
      expect((sent.body.transaction as { recipient_wallet: string }).recipient_wallet).toBe(saved);
    }
    // One hex digit changed, in the saved address's pattern of capitals: another address (or a
    // checksum error), never the saved one.
    const last = hex.at(-1) ?? "0";
    const other = `0x${hex.slice(0, -1)}${last === "0" || last === "a" || last === "A" ? "1" : "0"}`;
    const answer = await send(holder, other);
    expect(answer.status === 400 || answer.status === 403).toBe(true);
    expect(["invalid_address", "address_not_saved"]).toContain((answer.body as { code: string }).code);
    // The same address under another EVM coin of the holder: saved per coin, so refused.
    const bnb = await fundedWallet(db, holder.userId, "BNB", { deposit: "10" });
    await expectRefusedUntouched(() => send(holder, saved, { wallet_id: bnb.walletId }), "address_not_saved");
  });

  test("XRP: an X-address of the saved account with another tag, or none, is refused; the saved pair goes", async () => {
    holdNow = Date.now() - 25 * HOUR;
    const holder = await createHolder(db, { label: "al-xrp", coin: "XRP", deposit: "1000" });
    const exchange = randomAddress("XRP");
    expect((await add(holder, { coin: "XRP", address: exchange, destination_tag: 11747 })).status).toBe(200);
    expect(
      (await call("/allowlist/set", { ...creds(holder), password: holder.password, on: true })).status,
    ).toBe(200);
    holdNow = Date.now();
    const otherTag = encodeXAddress(exchange, 11748) ?? "";
    const noTag = encodeXAddress(exchange, null) ?? "";
    await expectRefusedUntouched(() => send(holder, otherTag), "address_not_saved");
    await expectRefusedUntouched(() => send(holder, exchange), "address_not_saved");
    await expectRefusedUntouched(() => send(holder, noTag), "address_not_saved");
    await expectRefusedUntouched(
      () => send(holder, exchange, { destination_tag: 11748 }),
      "address_not_saved",
    );
    // The X-address carrying the saved tag, or the classic address with it: the saved pair.
    expect((await send(holder, encodeXAddress(exchange, 11747) ?? "")).status).toBe(200);
    expect((await send(holder, exchange, { destination_tag: 11747 })).status).toBe(200);
  });

  test("a removed address is refused at once; another holder's list lets nothing through", async () => {
    const { holder, saved, id } = await guarded("al-removed");
    expect(
      (await call("/allowlist/remove", { ...creds(holder), password: holder.password, id })).status,
    ).toBe(200);
    await expectRefusedUntouched(() => send(holder, saved), "address_not_saved");
    // Another holder (the attacker's own account) saved the attacker's address long ago.
    const { saved: theirs } = await guarded("al-theirs");
    await expectRefusedUntouched(() => send(holder, theirs), "address_not_saved");
  });

  test("another holder's entry id in remove: the same answer as an unknown id, their entry stays", async () => {
    const victim = await guarded("al-victim");
    const attacker = await createHolder(db, { label: "al-attacker" });
    const remove = (id: string) =>
      call("/allowlist/remove", { ...creds(attacker), password: attacker.password, id });
    const theirs = await remove(victim.id);
    const unknown = await remove(randomUUID());
    const malformed = await remove("' OR 1=1 --");
    expect(theirs).toEqual({
      status: 404,
      body: { success: false, code: "saved_address_not_found", message: "Saved address not found." },
    });
    expect(unknown).toEqual(theirs);
    expect(malformed).toEqual(theirs);
    expect(theirs.text).toBe(unknown.text);
    const rows = await db
      .select({ n: count() })
      .from(withdrawalAddresses)
      .where(eq(withdrawalAddresses.id, victim.id));
    expect(rows[0]?.n).toBe(1);
  });

  test("the phrase alone does not change the list: no password, a wrong one, no code, someone else's grant", async () => {
    const { holder, id } = await guarded("al-nopass");
    const attacker = randomAddress("ETH");
    const rows = async () =>
      (
        await db
          .select({ n: count() })
          .from(withdrawalAddresses)
          .where(eq(withdrawalAddresses.userId, holder.userId))
      )[0]?.n;
    const without = { ...creds(holder), coin: "ETH", label: "x", address: attacker };
    expect((await call("/allowlist/add", without)).body).toMatchObject({ code: "invalid_request" });
    expect((await call("/allowlist/add", { ...without, password: "guess" })).body).toMatchObject({
      code: "wrong_password",
    });
    expect(
      (await call("/allowlist/set", { ...creds(holder), password: "guess", on: false })).body,
    ).toMatchObject({
      code: "wrong_password",
    });
    expect((await call("/allowlist/remove", { ...creds(holder), password: "guess", id })).body).toMatchObject(
      {
        code: "wrong_password",
      },
    );
    expect(await rows()).toBe(1);
    expect((await call("/allowlist", creds(holder))).body).toMatchObject({ on: true, off_at: null });

    // With two-factor on, the password is not enough; a code of another account is no code.
    const begun = await call("/two-factor/begin", { ...creds(holder), password: holder.password });
    const secret = begun.body.secret as string;
    const code = (s: string) =>
      new TOTP({ secret: Secret.fromBase32(s), digits: 6, period: 30 }).generate({ timestamp: codeNow });
    codeNow += 30_000;
    expect(
      (await call("/two-factor/enable", { ...creds(holder), secret, two_factor_code: code(secret) })).status,
    ).toBe(200);
    const other = await createHolder(db, { label: "al-other" });
    const otherBegun = await call("/two-factor/begin", { ...creds(other), password: other.password });
    const otherSecret = otherBegun.body.secret as string;
    codeNow += 30_000;
    await call("/two-factor/enable", {
      ...creds(other),
      secret: otherSecret,
      two_factor_code: code(otherSecret),
    });
    codeNow += 30_000;
    const grant = (await call("/two-factor/verify", { ...creds(other), two_factor_code: code(otherSecret) }))
      .body.grant as string;
    const proven = { ...without, password: holder.password };
    expect((await call("/allowlist/add", proven)).body).toMatchObject({ code: "two_factor_required" });
    expect(
      (await call("/allowlist/add", { ...proven, two_factor_code: code(otherSecret) })).body,
    ).toMatchObject({
      code: "two_factor_invalid",
    });
    expect((await call("/allowlist/add", { ...proven, two_factor_grant: grant })).body).toMatchObject({
      code: "two_factor_required",
    });
    expect(
      (
        await call("/allowlist/set", {
          ...creds(holder),
          password: holder.password,
          on: false,
          two_factor_grant: grant,
        })
      ).body,
    ).toMatchObject({ code: "two_factor_required" });
    expect(await rows()).toBe(1);
    expect((await call("/allowlist", creds(holder))).body).toMatchObject({ on: true, off_at: null });
  });

  test("a turn-off cannot be hurried: asking again keeps its time, and until then sends stay guarded", async () => {
    const { holder } = await guarded("al-hurry");
    const set = (on: boolean) => call("/allowlist/set", { ...creds(holder), password: holder.password, on });
    const first = await set(false);
    const offAt = first.body.off_at as string;
    expect(Date.parse(offAt) - holdNow).toBe(24 * HOUR);
    holdNow += 23 * HOUR;
    expect((await set(false)).body.off_at).toBe(offAt);
    await expectRefusedUntouched(() => send(holder, randomAddress("ETH")), "address_not_saved");
    // A new address added meanwhile waits its own 24 hours from now, whatever the switch does.
    const late = randomAddress("ETH");
    expect((await add(holder, { address: late })).status).toBe(200);
    await expectRefusedUntouched(() => send(holder, late), "address_not_usable_yet");
  });
});

// ---------------------------------------------------------------------------
// The page's forms without their CSRF token (a host over the production build).

const describeBuilt = built ? describe : describe.skip;

describeBuilt("the saved addresses page's forms without their CSRF token", () => {
  let host: RunningHost;

  beforeAll(async () => {
    host = await startHost();
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  test("add, remove, on and off: 403 'This form has expired…', nothing changes", async () => {
    const account = await createAccount(host.port, "al-csrf");
    const who = { email: account.email, twelveWords: account.words, password: account.password };
    const added = await rawCall(host.port, "/allowlist/add", {
      ...who,
      coin: "ETH",
      label: "Mine",
      address: randomAddress("ETH"),
    });
    expect(added.status).toBe(200);
    const id = (JSON.parse(added.text) as { address: { id: string } }).address.id;
    const signedIn = await raw(host.port, { path: fastLoginPath(account) });
    const cookie = cookiesOf(signedIn);
    const page = await raw(host.port, { path: `/security/addresses?remove=${id}`, headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers["cache-control"]).toBe("no-store");
    const withCsrf = [cookie, cookiesOf(page)].filter(Boolean).join("; ");
    const forms: Record<string, string>[] = [
      {
        intent: "add",
        coin: "ETH",
        label: "Attacker",
        address: randomAddress("ETH"),
        password: account.password,
      },
      { intent: "remove", id, password: account.password },
      { intent: "on", password: account.password },
      { intent: "off", password: account.password },
    ];
    const state = async () =>
      (await rawCall(host.port, "/allowlist", { email: who.email, twelveWords: who.twelveWords })).text;
    const before = await state();
    for (const fields of forms) {
      for (const csrf of [undefined, "forged-token", `m.${"A".repeat(43)}.${"B".repeat(43)}`]) {
        const answer = await raw(host.port, {
          method: "POST",
          path: `/security/addresses${fields.intent === "remove" ? `?remove=${id}` : ""}`,
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            origin: `http://127.0.0.1:${host.port}`,
            cookie: withCsrf,
          },
          body: new URLSearchParams({ ...fields, ...(csrf === undefined ? {} : { csrf }) }).toString(),
        });
        expect([fields.intent, csrf, answer.status]).toEqual([fields.intent, csrf, 403]);
        expect(answer.text).toContain("This form has expired. Go back, reload the page and try again.");
      }
    }
    expect(await state()).toBe(before);
    // The same post with the page's own token goes through: the token was all that was missing.
    const token = inputValue(page.text, "csrf");
    const on = await raw(host.port, {
      method: "POST",
      path: "/security/addresses",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: `http://127.0.0.1:${host.port}`,
        cookie: withCsrf,
      },
      body: new URLSearchParams({ intent: "on", password: account.password, csrf: token }).toString(),
    });
    expect([on.status, on.headers.location]).toEqual([302, "/security/addresses"]);
    expect(JSON.parse(await state())).toMatchObject({ on: true });
  });
});
