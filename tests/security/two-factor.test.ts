// Holder two-factor under attack (issue 27, record 048), over HTTP against the
// host serving the production build: the code step without its CSRF token or
// from another site, another account's code, guessing codes until the
// backoff, replaying a code, and sends and reveals without the second factor.
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";
import { csrfOf, get, Jar, post } from "../support/staff.ts";
import { phrasePairsIn } from "../backend/helpers.ts";
import { createAccount, fastLoginPath, rawCall } from "./support/http.ts";

const describeBuilt = built ? describe : describe.skip;

/** Codes of a secret, each step once and in order (the server takes now ±1 step; waits when it must). */
function authenticator(secret: string) {
  let step = -Infinity;
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
  return {
    async next(): Promise<string> {
      for (;;) {
        const current = Math.floor(Date.now() / 30_000);
        const lowest = Date.now() % 30_000 > 24_000 ? current : current - 1;
        const wanted = Math.max(step + 1, lowest);
        if (wanted <= current + 1) {
          step = wanted;
          return totp.generate({ timestamp: wanted * 30_000 + 1 });
        }
        await new Promise((resolve) => setTimeout(resolve, (wanted - 1) * 30_000 - Date.now() + 200));
      }
    },
  };
}

describeBuilt("holder two-factor under attack (a host over the production build)", () => {
  let host: RunningHost;
  let base: string;

  beforeAll(async () => {
    host = await startHost({});
    base = host.base;
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  async function enrolled(tag: string) {
    const account = await createAccount(host.port, tag);
    const who = { email: account.email, twelveWords: account.words };
    const begun = await rawCall(host.port, "/two-factor/begin", { ...who, password: account.password });
    expect(begun.status).toBe(200);
    const { secret } = JSON.parse(begun.text) as { secret: string };
    const app = authenticator(secret);
    const on = await rawCall(host.port, "/two-factor/enable", {
      ...who,
      secret,
      two_factor_code: await app.next(),
    });
    expect(on.status).toBe(200);
    return {
      ...account,
      app,
      recoveryCodes: (JSON.parse(on.text) as { recovery_codes: string[] }).recovery_codes,
    };
  }

  /** The password step (fast login): the jar then holds the code step. */
  async function atCodeStep(account: { email: string; password: string }) {
    const jar = new Jar();
    const answer = await get(base, fastLoginPath(account), jar);
    expect(answer.headers.get("location")).toBe("/login/code");
    expect((await get(base, "/login/code", jar)).status).toBe(200);
    return jar;
  }

  test("the code step: no CSRF token, or another site's post, signs nobody in", async () => {
    const victim = await enrolled("tfa-csrf");
    const jar = await atCodeStep(victim);
    // The refused posts are refused before any code is looked at: the same code serves after them.
    const code = await victim.app.next();
    const noToken = await post(base, "/login/code", jar, { code });
    expect(noToken.status).toBe(403);
    const csrf = await csrfOf(base, "/login/code", jar);
    const crossSite = await fetch(new URL("/login/code", base), {
      method: "POST",
      headers: {
        cookie: jar.header(),
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
      },
      body: new URLSearchParams({ csrf, code }).toString(),
      redirect: "manual",
    });
    expect(crossSite.status).toBe(403);
    expect((await get(base, "/home", jar)).headers.get("location")).toBe("/");
    // The right post still works afterwards.
    const ok = await post(base, "/login/code", jar, { csrf, code });
    expect(ok.headers.get("location")).toBe("/home");
  });

  test("another account's code and a replayed code are refused; guessing meets the backoff", async () => {
    const victim = await enrolled("tfa-victim");
    const attacker = await enrolled("tfa-attacker");
    const jar = await atCodeStep(victim);
    const csrf = await csrfOf(base, "/login/code", jar);
    const theirs = await post(base, "/login/code", jar, { csrf, code: await attacker.app.next() });
    expect(theirs.status).toBe(400);
    expect(await theirs.text()).toContain("That code is not right.");
    const theirRecovery = await post(base, "/login/code", jar, {
      csrf,
      code: attacker.recoveryCodes[0] ?? "",
    });
    expect(theirRecovery.status).toBe(400);
    // Guessing: after the free failures (the password step without a code counted one) the
    // account's backoff answers 429 on the code step's page.
    let last = 0;
    let text = "";
    for (let i = 0; i < 8 && last !== 429; i++) {
      const answer = await post(base, "/login/code", jar, { csrf, code: "000000" });
      last = answer.status;
      text = await answer.text();
    }
    expect(last).toBe(429);
    expect(text).toContain("Too many attempts. Please wait");
  });

  test("a replayed sign-in code is refused over the contract", async () => {
    const victim = await enrolled("tfa-replay");
    const code = await victim.app.next();
    const first = await rawCall(host.port, "/aml-authorization", {
      email: victim.email,
      password: victim.password,
      two_factor_code: code,
    });
    expect(first.status).toBe(200);
    const again = await rawCall(host.port, "/aml-authorization", {
      email: victim.email,
      password: victim.password,
      two_factor_code: code,
    });
    expect(again.status).toBe(401);
    expect(JSON.parse(again.text)).toMatchObject({ code: "two_factor_replayed" });
  });

  test("step-up bypass: the contract without a code sends nothing and reveals no phrase", async () => {
    const victim = await enrolled("tfa-bypass");
    const words = { email: victim.email, twelveWords: victim.words };
    await rawCall(host.port, "/request-nonbtc-wallet", { ...words, request_text: "ETH" });
    const balances = JSON.parse((await rawCall(host.port, "/aml-client-balances", words)).text) as {
      wallets: { id: string; wallet_crypto: string }[];
    };
    const walletId = balances.wallets.find((w) => w.wallet_crypto === "ETH")?.id ?? "";
    const send = await rawCall(host.port, "/request-transaction", {
      ...words,
      wallet_id: walletId,
      amount: "0.01",
      receiver_wallet_address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
    });
    expect(send.status).toBe(401);
    expect(JSON.parse(send.text)).toMatchObject({ code: "two_factor_required" });
    const forged = await rawCall(host.port, "/request-transaction", {
      ...words,
      wallet_id: walletId,
      amount: "0.01",
      receiver_wallet_address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
      two_factor_grant: `v1.${Date.now() + 60_000}.${"A".repeat(43)}`,
    });
    expect(JSON.parse(forged.text)).toMatchObject({ code: "two_factor_required" });
    const reveal = await rawCall(host.port, "/aml-authorization", {
      email: victim.email,
      password: victim.password,
      purpose: "reveal",
    });
    expect(reveal.status).toBe(401);
    expect(phrasePairsIn(reveal.text, victim.words)).toEqual([]);
    // A misspelt code field is no way around it either.
    const misspelt = await rawCall(host.port, "/aml-authorization", {
      email: victim.email,
      password: victim.password,
      twoFactorCode: await victim.app.next(),
    });
    expect(misspelt.status).not.toBe(200);
  });

  test("the two-factor pages refuse posts without the CSRF token", async () => {
    const account = await createAccount(host.port, "tfa-pages");
    const jar = new Jar();
    expect((await get(base, fastLoginPath(account), jar)).headers.get("location")).toBe("/home");
    for (const path of ["/security/two-factor", "/security/two-factor/enrol", "/security"]) {
      const answer = await post(base, path, jar, { intent: "begin", password: account.password });
      expect({ path, status: answer.status }).toEqual({ path, status: 403 });
    }
    // Nothing was begun: the enrolment page still asks for the password.
    const page = await (await get(base, "/security/two-factor/enrol", jar)).text();
    expect(page).toContain('name="password"');
    expect(page).not.toContain("totp-secret");
  });
});
