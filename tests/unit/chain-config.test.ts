// Issue 30 (record 053): the chain watchers' settings. What is watched, what the start log says is
// not, and each misconfiguration refused naming the variable, without repeating an endpoint
// (whose path may hold a provider's key).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { networkOfCoin, rpcOrigin } from "../../server/backend/chains/settings.ts";
import { ConfigError, loadConfig } from "../../server/config.ts";

const dirs: string[] = [];
const base = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-chain-config-"));
  dirs.push(dir);
  return { DATA_DIR: path.join(dir, "data") };
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function refusal(env: Record<string, string>): string {
  try {
    loadConfig({ ...base(), ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("accepted");
}

const TOKEN = "0xdAC17F958D2ee523a2206206994597C13D831ec7";

describe("chain watcher settings", () => {
  test("none by default: nothing watched, and the start log says so for each EVM coin", () => {
    const config = loadConfig(base());
    expect(config.chains).toEqual({
      networks: [],
      pollMs: 2000,
      unwatched: [
        "ETH deposits are not watched (CHAIN_RPC_ETH is not set)",
        "USDT deposits are not watched (CHAIN_RPC_ETH is not set)",
        "BNB deposits are not watched (CHAIN_RPC_BNB is not set)",
      ],
    });
  });

  test("ETH with the USDT token, BNB over a WebSocket", () => {
    const config = loadConfig({
      ...base(),
      CHAIN_RPC_ETH: "https://eth.example/v3/secret-key",
      CHAIN_TOKEN_USDT: TOKEN.toLowerCase(),
      CHAIN_RPC_BNB: "wss://bsc.example:8546",
      CHAIN_POLL_MS: "500",
    });
    expect(config.chains).toEqual({
      networks: [
        {
          network: "ETH",
          rpcUrl: "https://eth.example/v3/secret-key",
          native: "ETH",
          // Stored in EIP-55 form whatever case it was given in.
          token: { coin: "USDT", address: TOKEN },
        },
        { network: "BNB", rpcUrl: "wss://bsc.example:8546", native: "BNB", token: undefined },
      ],
      pollMs: 500,
      unwatched: [],
    });
    expect(loadConfig({ ...base(), CHAIN_RPC_ETH: "http://127.0.0.1:8545" }).chains.unwatched).toEqual([
      "USDT deposits are not watched (CHAIN_TOKEN_USDT is not set)",
      "BNB deposits are not watched (CHAIN_RPC_BNB is not set)",
    ]);
  });

  test("an endpoint that is not http(s) or ws(s) stops the start naming the variable, never the value", () => {
    for (const value of ["eth.example:8545", "ftp://eth.example/key-123", "file:///etc/passwd"]) {
      const message = refusal({ CHAIN_RPC_BNB: value });
      expect(message).toBe(
        "Invalid configuration:\n  CHAIN_RPC_BNB: must be the http(s):// or ws(s):// URL of the network's JSON-RPC endpoint",
      );
    }
    expect(refusal({ CHAIN_RPC_ETH: "ftp://eth.example/key-123" })).not.toContain("key-123");
  });

  test("a token address that is not one, or that nothing reads, stops the start naming CHAIN_TOKEN_USDT", () => {
    expect(refusal({ CHAIN_RPC_ETH: "http://127.0.0.1:8545", CHAIN_TOKEN_USDT: "0x1234" })).toMatch(
      /^Invalid configuration:\n {2}CHAIN_TOKEN_USDT: must be the token contract's 0x address\. /u,
    );
    // A checksum that does not match (one letter's case changed).
    expect(
      refusal({ CHAIN_RPC_ETH: "http://127.0.0.1:8545", CHAIN_TOKEN_USDT: TOKEN.replace("dAC", "DAC") }),
    ).toMatch(/^Invalid configuration:\n {2}CHAIN_TOKEN_USDT: must be the token contract's 0x address\. /u);
    expect(refusal({ CHAIN_TOKEN_USDT: TOKEN })).toBe(
      "Invalid configuration:\n  CHAIN_TOKEN_USDT: has no effect without CHAIN_RPC_ETH (the network the token is read on)",
    );
    expect(
      refusal({ CHAIN_RPC_ETH: "http://127.0.0.1:8545", CHAIN_TOKEN_USDT: TOKEN, USDT_NETWORK: "trc20" }),
    ).toBe(
      "Invalid configuration:\n  CHAIN_TOKEN_USDT: USDT_NETWORK is trc20 (TRON), whose deposits no watcher reads; remove this setting",
    );
    expect(refusal({ CHAIN_POLL_MS: "10" })).toMatch(/^Invalid configuration:\n {2}CHAIN_POLL_MS: /u);
  });

  test("which network a coin's deposits arrive on; an endpoint shown without its path or credentials", () => {
    expect(networkOfCoin("ETH", "erc20")).toBe("ETH");
    expect(networkOfCoin("BNB", "erc20")).toBe("BNB");
    expect(networkOfCoin("USDT", "erc20")).toBe("ETH");
    expect(networkOfCoin("USDT", "trc20")).toBeUndefined();
    expect(networkOfCoin("BTC", "erc20")).toBeUndefined();
    expect(rpcOrigin("https://user:pw@eth.example:8545/v3/secret-key?x=1")).toBe("https://eth.example:8545");
    expect(rpcOrigin("not a url")).toBe("(unparsable URL)");
  });
});
