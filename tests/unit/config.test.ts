import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ConfigError, loadConfig, PLACEHOLDER_COMPANY_NUMBER } from "../../server/host/config.ts";

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
    });
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
