import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { validateAddress } from "../../common/addresses.ts";
import {
  accountKeyFingerprint,
  deriveAddress,
  KEYED_COINS,
  parseAccountKey,
} from "../../server/backend/custody/derive.ts";
import { ConfigError, loadConfig, PLACEHOLDER_COMPANY_NUMBER, sharedSecrets } from "../../server/config.ts";
import {
  CONFIGURED_INDEX0,
  SEPARATE_ACCOUNTS,
  TRON_KEY,
  TRUST_INDEX0,
  TRUST_KEY_ENV,
  TRUST_KEYS,
} from "../fixtures/account-keys.ts";

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-config-"));
  dirs.push(dir);
  return path.join(dir, "data");
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("configuration", () => {
  test("the secrets checked against the database (record 051): where a generated one is kept; BACKEND_SECRET only with the backend here", () => {
    const dir = dataDir();
    const generated = loadConfig({ DATA_DIR: dir });
    expect(sharedSecrets(generated)).toEqual([
      {
        name: "BACKEND_SECRET",
        value: readFileSync(path.join(dir, "backend-secret"), "utf8").trim(),
        keptIn: path.join(dir, "backend-secret"),
      },
      {
        name: "SESSION_SECRET",
        value: readFileSync(path.join(dir, "session-secret"), "utf8").trim(),
        keptIn: path.join(dir, "session-secret"),
      },
    ]);
    const set = { DATA_DIR: dataDir(), BACKEND_SECRET: "b".repeat(32), SESSION_SECRET: "s".repeat(32) };
    expect(sharedSecrets(loadConfig(set))).toEqual([
      { name: "BACKEND_SECRET", value: "b".repeat(32), keptIn: undefined },
      { name: "SESSION_SECRET", value: "s".repeat(32), keptIn: undefined },
    ]);
    // A web tier fronting a remote backend derives nothing from BACKEND_SECRET.
    expect(sharedSecrets(loadConfig({ ...set, BACKEND_URL: "https://backend.internal/api" }))).toEqual([
      { name: "SESSION_SECRET", value: "s".repeat(32), keptIn: undefined },
    ]);
  });

  test("defaults serve a local run", () => {
    const config = loadConfig({ DATA_DIR: dataDir() });
    expect(config).toMatchObject({
      port: 3000,
      host: "127.0.0.1",
      platform: "CK",
      databaseUrl: undefined,
      backendUrl: undefined,
      cookieSecure: false,
      maxBodyBytes: 16_384,
      fourEyesUsd: "10000",
    });
  });

  test("FOUR_EYES_USD: a plain decimal, normalised; anything else is refused by name", () => {
    expect(loadConfig({ DATA_DIR: dataDir(), FOUR_EYES_USD: "02500.50" }).fourEyesUsd).toBe("2500.5");
    expect(loadConfig({ DATA_DIR: dataDir(), FOUR_EYES_USD: "0" }).fourEyesUsd).toBe("0");
    for (const bad of ["-1", "1e4", "10,000", "$10000", " 10000", "1.", "abc"]) {
      expect(() => loadConfig({ DATA_DIR: dataDir(), FOUR_EYES_USD: bad })).toThrow(
        "Invalid configuration:\n  FOUR_EYES_USD: must be a plain decimal number of USD, like 10000 or 2500.50",
      );
    }
  });

  test("SMTP_URL and MAIL_FROM (record 049): off by default; a malformed one stops the start by name, never showing the password", () => {
    const off = loadConfig({ DATA_DIR: dataDir() });
    expect(off.smtp).toBeUndefined();
    expect(off.mailFrom).toBe("Coinkeep <no-reply@coinkeep.example>");
    expect(
      loadConfig({ DATA_DIR: dataDir(), SMTP_URL: "smtps://mailer:s3cr%40t@mail.example.com" }).smtp,
    ).toEqual({ host: "mail.example.com", port: 465, secure: true, user: "mailer", pass: "s3cr@t" });
    for (const bad of [
      "mail.example.com:587",
      "http://user:hunter2@mail.example.com",
      "smtp://user:hunter2@h/x",
    ]) {
      let message = "";
      try {
        loadConfig({ DATA_DIR: dataDir(), SMTP_URL: bad });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^Invalid configuration:\n {2}SMTP_URL: /u);
      expect(message).not.toContain("hunter2");
    }
    expect(loadConfig({ DATA_DIR: dataDir(), MAIL_FROM: "Alerts <alerts@example.com>" }).mailFrom).toBe(
      "Alerts <alerts@example.com>",
    );
    expect(() => loadConfig({ DATA_DIR: dataDir(), MAIL_FROM: "not an address" })).toThrow(
      /MAIL_FROM: must be/u,
    );
    expect(() => loadConfig({ DATA_DIR: dataDir(), MAIL_FROM: "A <a@b.c>\r\nBcc: x@y.z" })).toThrow(
      /MAIL_FROM/u,
    );
  });

  test("RATE_LIMIT_IP_FAILURES: 100 by default; a whole number from 10; anything else refused by name", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).ipFailureLimit).toBe(100);
    expect(loadConfig({ DATA_DIR: dataDir(), RATE_LIMIT_IP_FAILURES: "500" }).ipFailureLimit).toBe(500);
    for (const bad of ["5", "1.5", "lots"]) {
      expect(() => loadConfig({ DATA_DIR: dataDir(), RATE_LIMIT_IP_FAILURES: bad })).toThrow(
        /RATE_LIMIT_IP_FAILURES/u,
      );
    }
  });

  test("the legal facts default to placeholders for a local run", () => {
    const config = loadConfig({ DATA_DIR: dataDir() });
    expect(config).toMatchObject({
      supportEmail: "support@coinkeep.example",
      companyName: "Coinkeep Ltd",
      companyNumber: "00000000",
      legalEmail: "legal@coinkeep.example",
    });
    expect(PLACEHOLDER_COMPANY_NUMBER).toBe("00000000");
  });

  test("configured legal facts win, trimmed", () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      COMPANY_NAME: "  Example Custody Ltd ",
      COMPANY_NUMBER: " SC123456 ",
      LEGAL_EMAIL: "compliance@example.com",
      SUPPORT_EMAIL: "help@example.com",
    });
    expect(config).toMatchObject({
      companyName: "Example Custody Ltd",
      companyNumber: "SC123456",
      legalEmail: "compliance@example.com",
      supportEmail: "help@example.com",
    });
  });

  test("secrets are generated once into the data folder and kept", () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
    expect(first.sessionSecret).toHaveLength(43);
    expect(second.sessionSecret).toBe(first.sessionSecret);
    expect(second.backendSecret).toBe(first.backendSecret);
    expect(first.backendSecret).not.toBe(first.sessionSecret);
    expect(readFileSync(path.join(dir, "session-secret"), "utf8").trim()).toBe(first.sessionSecret);
    expect(statSync(path.join(dir, "backend-secret")).mode & 0o777).toBe(0o600);
  });

  test("configured secrets win and nothing is written", () => {
    const dir = dataDir();
    const config = loadConfig({
      DATA_DIR: dir,
      SESSION_SECRET: "s".repeat(32),
      BACKEND_SECRET: "b".repeat(40),
    });
    expect(config.sessionSecret).toBe("s".repeat(32));
    expect(config.backendSecret).toBe("b".repeat(40));
    expect(() => statSync(dir)).toThrow(/ENOENT/);
  });

  test("production turns on secure cookies unless told otherwise", () => {
    expect(loadConfig({ DATA_DIR: dataDir(), NODE_ENV: "production" }).cookieSecure).toBe(true);
    expect(
      loadConfig({ DATA_DIR: dataDir(), NODE_ENV: "production", COOKIE_SECURE: "false" }).cookieSecure,
    ).toBe(false);
  });

  test.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["DATABASE_URL", "mysql://root@localhost/db"],
    ["BACKEND_URL", "ftp://example.com/api"],
    ["PLATFORM_CODE", "ck lower"],
    ["SESSION_SECRET", "too-short"],
    ["BACKEND_SECRET", "too-short"],
    ["COOKIE_SECURE", "yes please"],
    ["NODE_ENV", "staging"],
    ["SUPPORT_EMAIL", "not an address"],
    ["LEGAL_EMAIL", "legal at example"],
    ["COMPANY_NUMBER", "<b>12</b>"],
    ["COMPANY_NUMBER", "1".repeat(33)],
    ["COMPANY_NAME", "x".repeat(121)],
    ["COMPANY_NAME", "   "],
    ["MAX_BODY_BYTES", "10"],
  ])("a bad %s stops start-up with a message naming it", (name, value) => {
    const load = () => loadConfig({ DATA_DIR: dataDir(), [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}: `));
  });

  test("WEB_TIER_HOSTS: none by default; a list of loopback, addresses and CIDR blocks, only with BACKEND_TOKEN", () => {
    const token = "web-tier-token-0123456789abcdefghij";
    expect(loadConfig({ DATA_DIR: dataDir() })).toMatchObject({ webTierHosts: [], backendToken: undefined });
    expect(loadConfig({ DATA_DIR: dataDir(), WEB_TIER_HOSTS: "none" }).webTierHosts).toEqual([]);
    expect(
      loadConfig({
        DATA_DIR: dataDir(),
        WEB_TIER_HOSTS: "loopback, 10.0.0.0/8,192.0.2.7",
        BACKEND_TOKEN: token,
      }),
    ).toMatchObject({
      webTierHosts: [
        { kind: "loopback" },
        { kind: "subnet", network: "10.0.0.0", prefix: 8, family: 4 },
        { kind: "subnet", network: "192.0.2.7", prefix: 32, family: 4 },
      ],
      backendToken: token,
    });
    // An address alone is not enough (record 026).
    expect(() => loadConfig({ DATA_DIR: dataDir(), WEB_TIER_HOSTS: "loopback" })).toThrow(
      /^Invalid configuration:\n {2}WEB_TIER_HOSTS: needs BACKEND_TOKEN/u,
    );
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), WEB_TIER_HOSTS: "10.0.0.0/33", BACKEND_TOKEN: token }),
    ).toThrow(
      /^Invalid configuration:\n {2}WEB_TIER_HOSTS: "10.0.0.0\/33" has a prefix length outside 0-32/u,
    );
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), WEB_TIER_HOSTS: "web.internal", BACKEND_TOKEN: token }),
    ).toThrow(
      /^Invalid configuration:\n {2}WEB_TIER_HOSTS: "web.internal" is not "none", "loopback", an IP address or a CIDR block/u,
    );
    // A web tier (BACKEND_URL) serves no API: the setting belongs on the backend.
    expect(() =>
      loadConfig({
        DATA_DIR: dataDir(),
        WEB_TIER_HOSTS: "loopback",
        BACKEND_TOKEN: token,
        BACKEND_URL: "http://127.0.0.1:4801/api",
      }),
    ).toThrow(/^Invalid configuration:\n {2}WEB_TIER_HOSTS: has no effect with BACKEND_URL/u);
    // The web tier's side: BACKEND_URL with the token it sends.
    expect(
      loadConfig({ DATA_DIR: dataDir(), BACKEND_URL: "http://127.0.0.1:4801/api", BACKEND_TOKEN: token }),
    ).toMatchObject({ backendUrl: "http://127.0.0.1:4801/api", backendToken: token });
  });

  test.each([
    ["too short", "short-token"],
    ["with a space", "a token with spaces 0123456789abcdef"],
    ["not ASCII", "jeton-\u00e9\u00e9\u00e9-0123456789abcdefghijklmn"],
  ])("a BACKEND_TOKEN %s stops start-up", (_label, value) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), BACKEND_TOKEN: value })).toThrow(
      /^Invalid configuration:\n {2}BACKEND_TOKEN: /u,
    );
  });

  test("BACKEND_TOKEN must not be BACKEND_SECRET (the token leaves the backend)", () => {
    const shared = "one-value-for-both-0123456789abcdef";
    expect(() => loadConfig({ DATA_DIR: dataDir(), BACKEND_SECRET: shared, BACKEND_TOKEN: shared })).toThrow(
      /^Invalid configuration:\n {2}BACKEND_TOKEN: must not be BACKEND_SECRET/u,
    );
  });

  test("empty values count as unset", () => {
    expect(loadConfig({ DATA_DIR: dataDir(), PORT: "", DATABASE_URL: "" })).toMatchObject({
      port: 3000,
      databaseUrl: undefined,
    });
  });
});

test("a damaged kept secret stops start-up with a message naming the file", async () => {
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const dir = dataDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "session-secret"), "short\n");
  expect(() => loadConfig({ DATA_DIR: dir })).toThrow(/session-secret: must hold at least 32 characters/);
});

test("FAST_LOGIN_ORIGINS: none by default; a comma list of origins; anything else stops start-up", () => {
  expect(loadConfig({ DATA_DIR: dataDir() }).fastLoginOrigins).toEqual([]);
  expect(
    loadConfig({
      DATA_DIR: dataDir(),
      FAST_LOGIN_ORIGINS: " https://partner.example , http://127.0.0.1:8080/,https://a.example:8443",
    }).fastLoginOrigins,
  ).toEqual(["https://partner.example", "http://127.0.0.1:8080", "https://a.example:8443"]);
  for (const bad of [
    "partner.example",
    "https://partner.example/path",
    "javascript:alert(1)",
    "ftp://x.example",
  ]) {
    const load = () => loadConfig({ DATA_DIR: dataDir(), FAST_LOGIN_ORIGINS: bad });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/FAST_LOGIN_ORIGINS: /u);
  }
});

const secretsOnly = { SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) };

/** The configuration's refusal of `env` (with both secrets set), or "no error". */
function refusalOf(env: Record<string, string>): string {
  try {
    loadConfig({ DATA_DIR: dataDir(), ...secretsOnly, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return "no error";
}

describe("watch-only account keys (record 039)", () => {
  // A real-looking private key (the BIP-32 test vector 1 master key): refused by name, never echoed.
  const XPRV =
    "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi";

  test("none by default; each configured key parsed with its fingerprint, USDT's for USDT_NETWORK", () => {
    const none = loadConfig({ DATA_DIR: dataDir(), ...secretsOnly });
    expect(none.accountKeys).toEqual({});
    expect(none.poolLowWater).toBe(20);

    const all = loadConfig({ DATA_DIR: dataDir(), ...secretsOnly, ...TRUST_KEY_ENV, POOL_LOW_WATER: "5" });
    expect(Object.keys(all.accountKeys).toSorted()).toEqual([...KEYED_COINS].toSorted());
    expect(all.poolLowWater).toBe(5);
    for (const coin of KEYED_COINS) {
      const configured = all.accountKeys[coin];
      if (!configured) throw new Error(coin);
      expect([coin, configured.fingerprint]).toEqual([coin, expect.stringMatching(/^[0-9a-f]{16}$/u)]);
      expect(deriveAddress(coin, configured.key, 0)).toBe(CONFIGURED_INDEX0[coin]);
    }
    // One account per coin (record 054): every fingerprint differs.
    const fingerprints = Object.values(all.accountKeys).map((configured) => configured.fingerprint);
    expect(new Set(fingerprints).size).toBe(KEYED_COINS.length);

    const tron = loadConfig({
      DATA_DIR: dataDir(),
      ...secretsOnly,
      USDT_NETWORK: "trc20",
      ACCOUNT_KEY_USDT: TRON_KEY,
    });
    const usdt = tron.accountKeys.USDT;
    if (!usdt) throw new Error("USDT");
    expect(deriveAddress("USDT", usdt.key, 0, { usdtNetwork: "trc20" })).toBe(TRUST_INDEX0.TRX);
    expect(validateAddress("USDT", TRUST_INDEX0.TRX, { usdtNetwork: "trc20" }).ok).toBe(true);
  });

  test("errors name the variable and never repeat the value", () => {
    const privateKey = refusalOf({ ACCOUNT_KEY_ETH: XPRV });
    expect(privateKey).toBe(
      "Invalid configuration:\n  ACCOUNT_KEY_ETH: This is a private extended key (xprv): never give a private key to the server. Configure the account's extended public key (xpub) instead, and keep the private key offline.",
    );
    expect(privateKey).not.toContain(XPRV.slice(4, 20));
    expect(refusalOf({ ACCOUNT_KEY_SOL: "anything" })).toBe(
      "Invalid configuration:\n  ACCOUNT_KEY_SOL: Solana has no public key derivation; SOL deposit addresses come from the address pool (ops pool add SOL <file>), so remove this setting",
    );
    expect(refusalOf({ ACCOUNT_KEY_BTC: "not a key" })).toMatch(
      /^Invalid configuration:\n {2}ACCOUNT_KEY_BTC: Expected the Bitcoin account key/u,
    );
    // A zpub is a BIP-84 Bitcoin key: refused for DOGE by its version bytes.
    expect(refusalOf({ ACCOUNT_KEY_DOGE: TRUST_KEYS.BTC })).toMatch(
      /^Invalid configuration:\n {2}ACCOUNT_KEY_DOGE: Expected the Dogecoin account key .*a zpub is a BIP-84/u,
    );
    expect(refusalOf({ ACCOUNT_KEY_USDT: TRUST_KEYS.ADA, USDT_NETWORK: "trc20" })).toMatch(
      /^Invalid configuration:\n {2}ACCOUNT_KEY_USDT \(USDT_NETWORK=trc20\): Expected the TRON account key/u,
    );
    expect(refusalOf({ POOL_LOW_WATER: "-1" })).toMatch(/POOL_LOW_WATER: /u);
    // An empty value counts as unset, as everywhere.
    expect(refusalOf({ ACCOUNT_KEY_BTC: "" })).toBe("no error");
  });
});

describe("one address, one holder: an account key for two coins (record 054)", () => {
  const evm = accountKeyFingerprint(parseAccountKey("ETH", TRUST_KEYS.ETH));
  const tron = accountKeyFingerprint(parseAccountKey("TRX", TRON_KEY));
  const evmFix =
    "configure a separate account for one of them (e.g. m/44'/60'/1' for BNB and m/44'/60'/2' for USDT) and never repeat the key value";

  test("ETH and BNB with one key: refused, naming both variables and the fix", () => {
    const refused = refusalOf({ ACCOUNT_KEY_ETH: TRUST_KEYS.ETH, ACCOUNT_KEY_BNB: TRUST_KEYS.ETH });
    expect(refused).toBe(
      `Invalid configuration:\n  ACCOUNT_KEY_ETH and ACCOUNT_KEY_BNB: the same account key (fingerprint ${evm}) would give ETH and BNB the same addresses, each from its own index counter, so one address would be two holders' wallets; ${evmFix}`,
    );
    expect(refused).not.toContain(TRUST_KEYS.ETH.slice(4, 40));
  });

  test("ETH and USDT on ERC-20 (the default network): refused; ETH, BNB and USDT together: one line each", () => {
    const usdt = `  ACCOUNT_KEY_ETH and ACCOUNT_KEY_USDT (USDT_NETWORK=erc20): the same account key (fingerprint ${evm}) would give ETH and USDT the same addresses, each from its own index counter, so one address would be two holders' wallets; ${evmFix}`;
    expect(refusalOf({ ACCOUNT_KEY_ETH: TRUST_KEYS.ETH, ACCOUNT_KEY_USDT: TRUST_KEYS.ETH })).toBe(
      `Invalid configuration:\n${usdt}`,
    );
    expect(
      refusalOf({
        ACCOUNT_KEY_ETH: TRUST_KEYS.ETH,
        ACCOUNT_KEY_USDT: TRUST_KEYS.ETH,
        USDT_NETWORK: "erc20",
      }),
    ).toBe(`Invalid configuration:\n${usdt}`);
    const three = refusalOf({
      ACCOUNT_KEY_ETH: TRUST_KEYS.ETH,
      ACCOUNT_KEY_BNB: TRUST_KEYS.ETH,
      ACCOUNT_KEY_USDT: TRUST_KEYS.ETH,
    }).split("\n");
    expect(three).toHaveLength(3);
    expect(three[1]).toMatch(/^ {2}ACCOUNT_KEY_ETH and ACCOUNT_KEY_BNB: /u);
    expect(three[2]).toBe(usdt);
    // Without ETH, BNB and USDT still collide.
    expect(refusalOf({ ACCOUNT_KEY_BNB: TRUST_KEYS.ETH, ACCOUNT_KEY_USDT: TRUST_KEYS.ETH })).toMatch(
      /^Invalid configuration:\n {2}ACCOUNT_KEY_BNB and ACCOUNT_KEY_USDT \(USDT_NETWORK=erc20\): the same account key/u,
    );
  });

  test("TRX and USDT on TRC-20: refused, pointing at m/44'/195'/1'", () => {
    expect(refusalOf({ ACCOUNT_KEY_TRX: TRON_KEY, ACCOUNT_KEY_USDT: TRON_KEY, USDT_NETWORK: "trc20" })).toBe(
      `Invalid configuration:\n  ACCOUNT_KEY_TRX and ACCOUNT_KEY_USDT (USDT_NETWORK=trc20): the same account key (fingerprint ${tron}) would give TRX and USDT the same addresses, each from its own index counter, so one address would be two holders' wallets; configure a separate account for one of them (e.g. m/44'/195'/1' for USDT) and never repeat the key value`,
    );
  });

  test("the same key for coins whose addresses differ is not refused: they cannot issue one address twice", () => {
    // An xpub taken by BTC (as BIP-84, bc1q…) and DOGE (D…): the same fingerprint, other addresses.
    const btcDoge = loadConfig({
      DATA_DIR: dataDir(),
      ...secretsOnly,
      ACCOUNT_KEY_BTC: TRUST_KEYS.DOGE,
      ACCOUNT_KEY_DOGE: TRUST_KEYS.DOGE,
    }).accountKeys;
    expect(btcDoge.BTC?.fingerprint).toBe(btcDoge.DOGE?.fingerprint);
    const [btc, doge] = [btcDoge.BTC, btcDoge.DOGE];
    if (!btc || !doge) throw new Error("BTC, DOGE");
    expect(deriveAddress("BTC", btc.key, 0)).toMatch(/^bc1q/u);
    expect(deriveAddress("DOGE", doge.key, 0)).toMatch(/^D/u);
    // ETH's key for TRX (a misconfiguration derive.ts cannot see): 0x… and T…, never equal.
    expect(refusalOf({ ACCOUNT_KEY_ETH: TRUST_KEYS.ETH, ACCOUNT_KEY_TRX: TRUST_KEYS.ETH })).toBe("no error");
    // USDT on TRC-20 with ETH's key shares nothing with ETH's 0x… addresses.
    expect(
      refusalOf({ ACCOUNT_KEY_ETH: TRUST_KEYS.ETH, ACCOUNT_KEY_USDT: TRUST_KEYS.ETH, USDT_NETWORK: "trc20" }),
    ).toBe("no error");
  });

  test("separate accounts of one mnemonic are accepted", () => {
    expect(
      refusalOf({
        ACCOUNT_KEY_ETH: TRUST_KEYS.ETH,
        ACCOUNT_KEY_BNB: SEPARATE_ACCOUNTS.BNB.key,
        ACCOUNT_KEY_USDT: SEPARATE_ACCOUNTS.USDT_ERC20.key,
        ACCOUNT_KEY_TRX: TRON_KEY,
      }),
    ).toBe("no error");
    expect(
      refusalOf({
        ACCOUNT_KEY_TRX: TRON_KEY,
        ACCOUNT_KEY_USDT: SEPARATE_ACCOUNTS.USDT_TRC20.key,
        USDT_NETWORK: "trc20",
      }),
    ).toBe("no error");
    expect(refusalOf(TRUST_KEY_ENV)).toBe("no error");
  });
});
