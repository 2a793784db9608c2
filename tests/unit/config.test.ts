import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ConfigError, loadConfig, PLACEHOLDER_COMPANY_NUMBER } from "../../server/config.ts";

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
