// Holder two-factor over the contract (issue 27, record 048): every database ×
// transport, with the codes' clock and the holds' clock moved by the test.
import { count, eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { beforeEach, describe, expect, test } from "vitest";
import { auditLog, holderRecoveryCodes, holderTwoFactor } from "../../server/backend/db/schema.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import { connectApi, describeEachDatabase, refusedAnswer, type Api, type ApiAccount } from "./api-suite.ts";
import { fundedWallet, phrasePairsIn, randomAddress, sendCount, transports } from "./helpers.ts";

const REQUIRED = refusedAnswer(
  401,
  "two_factor_required",
  "Enter the 6-digit code from your authenticator app, or a recovery code.",
);
const INVALID = refusedAnswer(
  401,
  "two_factor_invalid",
  "That code is not right. Enter the current 6-digit code from your authenticator app, or a recovery code.",
);
const REPLAYED = refusedAnswer(
  401,
  "two_factor_replayed",
  "That code was used already. Wait for the next code in your authenticator app.",
);
const LOCK = 12;

/** The codes' clock and the holds' clock, moved by the tests. */
let codeNow = Date.now();
let holdNow = Date.now();

function codeOf(secret: string, at = codeNow): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: at });
}

/** Moves the codes' clock to the next 30-second step (a new code). */
function nextStep(): void {
  codeNow += 30_000;
}

interface Enrolled extends ApiAccount {
  secret: string;
  recoveryCodes: string[];
}

function suite(api: Api) {
  async function enrolled(label: string): Promise<Enrolled> {
    const account = await api.newAccount(label);
    const { email, twelveWords } = account;
    const begun = await api.call("/two-factor/begin", { email, twelveWords, password: "pw" });
    expect(begun.status).toBe(200);
    const secret = begun.body.secret as string;
    nextStep();
    const on = await api.call("/two-factor/enable", {
      email,
      twelveWords,
      secret,
      two_factor_code: codeOf(secret),
    });
    expect(on.status).toBe(200);
    return { ...account, secret, recoveryCodes: on.body.recovery_codes as string[] };
  }

  test("enrolment: the password, then a code of the secret; a wrong code stores nothing", async () => {
    const { email, twelveWords, userId } = await api.newAccount("tfa-enrol");
    expect(await api.call("/two-factor", { email, twelveWords })).toEqual({
      status: 200,
      body: { success: true, enabled: false, removal_at: null, recovery_codes_left: 0 },
    });
    expect(await api.call("/two-factor/begin", { email, twelveWords, password: "nope" })).toEqual(
      refusedAnswer(401, "wrong_password", "Password is inccorect"),
    );
    const begun = await api.call("/two-factor/begin", { email, twelveWords, password: "pw" });
    expect(begun.status).toBe(200);
    const secret = begun.body.secret as string;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/u);
    expect(begun.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/Coinkeep:.+\?.*secret=[A-Z2-7]{32}/u);
    nextStep();
    const wrong = String((Number(codeOf(secret)) + 1) % 1_000_000).padStart(6, "0");
    expect(
      await api.call("/two-factor/enable", { email, twelveWords, secret, two_factor_code: wrong }),
    ).toEqual(INVALID);
    const rows = await api.db
      .select({ n: count() })
      .from(holderTwoFactor)
      .where(eq(holderTwoFactor.userId, userId));
    expect(rows[0]?.n).toBe(0);
    const on = await api.call("/two-factor/enable", {
      email,
      twelveWords,
      secret,
      two_factor_code: codeOf(secret),
    });
    expect(on.status).toBe(200);
    expect(on.body.message).toBe("Two-factor authentication is on.");
    const codes = on.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/u);
    // Stored hashed, the secret sealed: neither appears as given.
    const [stored] = await api.db.select().from(holderTwoFactor).where(eq(holderTwoFactor.userId, userId));
    expect(stored?.secretSealed).not.toContain(secret);
    const hashes = await api.db
      .select()
      .from(holderRecoveryCodes)
      .where(eq(holderRecoveryCodes.userId, userId));
    expect(hashes.map((h) => h.codeHash)).not.toContain(codes[0]);
    expect(await api.call("/two-factor/begin", { email, twelveWords, password: "pw" })).toEqual(
      refusedAnswer(409, "two_factor_already_on", "Two-factor authentication is already on."),
    );
    expect(await api.call("/two-factor", { email, twelveWords })).toEqual({
      status: 200,
      body: { success: true, enabled: true, removal_at: null, recovery_codes_left: 10 },
    });
  });

  test("sign-in: no phrase without a code; a wrong code, a right one, the same again", async () => {
    const who = await enrolled("tfa-login");
    const { email } = who;
    const missing = await api.call("/aml-authorization", { email, password: "pw" });
    expect(missing).toEqual(REQUIRED);
    expect(phrasePairsIn(missing.text, who.twelveWords)).toEqual([]);
    nextStep();
    const right = codeOf(who.secret);
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, "0");
    expect(await api.call("/aml-authorization", { email, password: "pw", two_factor_code: wrong })).toEqual(
      INVALID,
    );
    const signedIn = await api.call("/aml-authorization", { email, password: "pw", two_factor_code: right });
    expect(signedIn.status).toBe(200);
    expect((signedIn.body.user as { twelveWords: string }).twelveWords).toBe(who.twelveWords);
    expect(signedIn.body.two_factor_grant).toMatch(/^v1\./u);
    expect(await api.call("/aml-authorization", { email, password: "pw", two_factor_code: right })).toEqual(
      REPLAYED,
    );
    // A wrong password is still the spec's answer, code or not.
    expect(await api.call("/aml-authorization", { email, password: "x", two_factor_code: right })).toEqual(
      refusedAnswer(401, "wrong_password", "Password is inccorect"),
    );
  });

  test("a recovery code signs in once, not twice; another account's code is refused", async () => {
    const who = await enrolled("tfa-recovery");
    const other = await enrolled("tfa-other");
    const [first] = who.recoveryCodes;
    const once = await api.call("/aml-authorization", {
      email: who.email,
      password: "pw",
      two_factor_code: (first ?? "").toUpperCase(),
    });
    expect(once.status).toBe(200);
    expect(
      await api.call("/aml-authorization", { email: who.email, password: "pw", two_factor_code: first }),
    ).toEqual(INVALID);
    expect(
      await api.call("/aml-authorization", {
        email: who.email,
        password: "pw",
        two_factor_code: other.recoveryCodes[0],
      }),
    ).toEqual(INVALID);
    nextStep();
    expect(
      await api.call("/aml-authorization", {
        email: who.email,
        password: "pw",
        two_factor_code: codeOf(other.secret),
      }),
    ).toEqual(INVALID);
    expect(
      (await api.call("/two-factor", { email: who.email, twelveWords: who.twelveWords })).body
        .recovery_codes_left,
    ).toBe(9);
  });

  test("step-up: a send asks for a code, nothing held without one; a grant covers 5 minutes", async () => {
    const who = await enrolled("tfa-send");
    const { email, twelveWords } = who;
    const { walletId } = await fundedWallet(api.db, who.userId, "ETH", { deposit: "1" });
    const send = {
      email,
      twelveWords,
      wallet_id: walletId,
      amount: "0.01",
      receiver_wallet_address: randomAddress("ETH"),
    };
    expect(await api.call("/request-transaction", send)).toEqual(REQUIRED);
    expect(
      await api.call("/request-transaction", { ...send, two_factor_grant: "v1.9999999999999.forged" }),
    ).toEqual(REQUIRED);
    expect(await sendCount(api.db, walletId)).toBe(0);
    nextStep();
    const withCode = await api.call("/request-transaction", { ...send, two_factor_code: codeOf(who.secret) });
    expect(withCode.status).toBe(200);
    nextStep();
    const verified = await api.call("/two-factor/verify", {
      email,
      twelveWords,
      two_factor_code: codeOf(who.secret),
    });
    expect(verified.status).toBe(200);
    const grant = verified.body.grant as string;
    expect(Date.parse(verified.body.expires_at as string) - codeNow).toBe(5 * 60_000);
    expect((await api.call("/request-transaction", { ...send, two_factor_grant: grant })).status).toBe(200);
    // The reveal takes the grant too; sign-in does not.
    const reveal = await api.call("/aml-authorization", {
      email,
      password: "pw",
      purpose: "reveal",
      two_factor_grant: grant,
    });
    expect(reveal.status).toBe(200);
    expect(await api.call("/aml-authorization", { email, password: "pw", two_factor_grant: grant })).toEqual(
      REQUIRED,
    );
    // Another holder's grant is no grant here.
    const other = await enrolled("tfa-send-other");
    nextStep();
    const theirs = await api.call("/two-factor/verify", {
      email: other.email,
      twelveWords: other.twelveWords,
      two_factor_code: codeOf(other.secret),
    });
    expect(await api.call("/request-transaction", { ...send, two_factor_grant: theirs.body.grant })).toEqual(
      REQUIRED,
    );
    codeNow += 5 * 60_000 + 1;
    expect(await api.call("/request-transaction", { ...send, two_factor_grant: grant })).toEqual(REQUIRED);
    expect(await sendCount(api.db, walletId)).toBe(2);
  });

  test("wrong codes count toward the account's lock", async () => {
    const who = await enrolled("tfa-lock");
    const { email, twelveWords } = who;
    nextStep();
    const right = codeOf(who.secret);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    let last = await api.call("/two-factor/verify", { email, twelveWords, two_factor_code: wrong });
    for (let i = 1; i < LOCK + 2 && last.body.code !== "account_locked"; i++) {
      last = await api.call("/two-factor/verify", {
        email,
        twelveWords,
        two_factor_code: wrong,
        i: undefined,
      });
    }
    expect(last.body.code).toBe("account_locked");
    // Locked: even the right password and code are refused.
    expect(
      (await api.call("/aml-authorization", { email, password: "pw", two_factor_code: right })).body.code,
    ).toBe("account_locked");
    const failed = await api.db
      .select({ n: count() })
      .from(auditLog)
      .where(eq(auditLog.action, "auth.two-factor.failed"));
    expect(failed[0]?.n).toBeGreaterThanOrEqual(LOCK);
  });

  test("turning it off needs the password and a code", async () => {
    const who = await enrolled("tfa-off");
    const { email, twelveWords } = who;
    nextStep();
    expect(
      await api.call("/two-factor/disable", {
        email,
        twelveWords,
        password: "no",
        two_factor_code: codeOf(who.secret),
      }),
    ).toEqual(refusedAnswer(401, "wrong_password", "Password is inccorect"));
    expect(
      await api.call("/two-factor/disable", {
        email,
        twelveWords,
        password: "pw",
        two_factor_code: "000000",
      }),
    ).toEqual(INVALID);
    const off = await api.call("/two-factor/disable", {
      email,
      twelveWords,
      password: "pw",
      two_factor_code: codeOf(who.secret),
    });
    expect(off).toEqual({
      status: 200,
      body: { success: true, message: "Two-factor authentication is off." },
    });
    const signedIn = await api.call("/aml-authorization", { email, password: "pw" });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.two_factor_grant).toBeUndefined();
  });

  test("restore: with a code two-factor stays; without one it goes after 48 h, sends waiting", async () => {
    const who = await enrolled("tfa-restore");
    const { email, twelveWords } = who;
    expect((await api.call("/request-change-password", { email, twelveWords })).body).toEqual({
      success: true,
      message: "Phrase accepted.",
      two_factor: true,
    });
    const restore = { email, twelveWords, password: "new-pw", confirmPassword: "new-pw" };
    expect(await api.call("/aml-client-change-password", { ...restore, two_factor_code: "123 456" })).toEqual(
      INVALID,
    );
    nextStep();
    const kept = await api.call("/aml-client-change-password", {
      ...restore,
      two_factor_code: codeOf(who.secret),
    });
    expect(kept).toEqual({ status: 200, body: { success: true, message: "Password changed." } });
    expect((await api.call("/two-factor", { email, twelveWords })).body.removal_at).toBeNull();

    const lost = await api.call("/aml-client-change-password", {
      ...restore,
      password: "pw2",
      confirmPassword: "pw2",
    });
    expect(lost.status).toBe(200);
    const due = Date.parse(lost.body.two_factor_removal_at as string);
    expect(due - holdNow).toBe(48 * 3_600_000);
    // During the hold: signing in needs no code, sends are refused saying until when.
    expect((await api.call("/aml-authorization", { email, password: "pw2" })).status).toBe(200);
    const { walletId } = await fundedWallet(api.db, who.userId, "ETH", { deposit: "1" });
    const send = {
      email,
      twelveWords,
      wallet_id: walletId,
      amount: "0.01",
      receiver_wallet_address: randomAddress("ETH"),
    };
    const when = new Date(due).toISOString().slice(0, 16).replace("T", " ");
    expect(await api.call("/request-transaction", send)).toEqual(
      refusedAnswer(
        423,
        "two_factor_hold",
        `Sends are paused until ${when} UTC while two-factor authentication is removed from your account after a restore.`,
      ),
    );
    // A second restore without a code does not push the removal back.
    holdNow += 3_600_000;
    const again = await api.call("/aml-client-change-password", {
      ...restore,
      password: "pw3",
      confirmPassword: "pw3",
    });
    expect(Date.parse(again.body.two_factor_removal_at as string)).toBe(due);
    // After the hold two-factor is gone and sends go.
    holdNow = due + 1;
    expect((await api.call("/two-factor", { email, twelveWords })).body.enabled).toBe(false);
    expect((await api.call("/request-transaction", send)).status).toBe(200);
    expect(await sendCount(api.db, walletId)).toBe(1);
  });

  test("a code during the hold calls the removal off", async () => {
    const who = await enrolled("tfa-cancel");
    const { email, twelveWords } = who;
    const lost = await api.call("/aml-client-change-password", {
      email,
      twelveWords,
      password: "pw2",
      confirmPassword: "pw2",
    });
    expect(lost.body.two_factor_removal_at).toBeTypeOf("string");
    nextStep();
    const verified = await api.call("/two-factor/verify", {
      email,
      twelveWords,
      two_factor_code: codeOf(who.secret),
    });
    expect(verified.body.removal_cancelled).toBe(true);
    expect((await api.call("/two-factor", { email, twelveWords })).body.removal_at).toBeNull();
    expect(await api.call("/aml-authorization", { email, password: "pw2" })).toEqual(REQUIRED);
  });

  test("holders without two-factor see no change", async () => {
    const { email, twelveWords, userId } = await api.newAccount("tfa-none");
    const signedIn = await api.call("/aml-authorization", { email, password: "pw" });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.two_factor_grant).toBeUndefined();
    expect((await api.call("/request-change-password", { email, twelveWords })).body).toEqual({
      success: true,
      message: "Phrase accepted.",
    });
    const { walletId } = await fundedWallet(api.db, userId, "ETH", { deposit: "1" });
    const sent = await api.call("/request-transaction", {
      email,
      twelveWords,
      wallet_id: walletId,
      amount: "0.01",
      receiver_wallet_address: randomAddress("ETH"),
    });
    expect(sent.status).toBe(200);
    expect(await api.call("/two-factor/verify", { email, twelveWords, two_factor_code: "123456" })).toEqual(
      refusedAnswer(409, "two_factor_off", "Two-factor authentication is off."),
    );
  });
}

describeEachDatabase("holder two-factor, database: $name", (getDatabase) => {
  for (const transport of transports) {
    describe(`transport: ${transport.name}`, () => {
      beforeEach(() => {
        codeNow = Date.now();
        holdNow = Date.now();
      });
      suite(
        connectApi(transport, getDatabase, {
          now: () => new Date(codeNow),
          holdClock: () => new Date(holdNow),
          rateLimits: { ...DEFAULT_RATE_LIMITS, accountLockFailures: LOCK, freeFailures: 100 },
        }),
      );
    });
  }
});
