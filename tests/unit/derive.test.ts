// Watch-only address derivation (issue 16): account keys made here from the public test
// mnemonics of shared/COINS.md, exactly as an operator would export them, and the addresses
// derive.ts gives below them checked against the published vectors.
import { readFileSync } from "node:fs";
import path from "node:path";
import { HDKey, type Versions } from "@scure/bip32";
import { mnemonicToEntropy, mnemonicToSeedSync } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { base58, bech32, createBase58check } from "@scure/base";
import { ed25519 } from "@noble/curves/ed25519.js";
import { hmac } from "@noble/hashes/hmac.js";
import { pbkdf2 } from "@noble/hashes/pbkdf2.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { concatBytes } from "@noble/hashes/utils.js";
import { describe, expect, test } from "vitest";
import { validateAddress } from "../../common/addresses.ts";
import type { Ticker } from "../../common/coins.ts";
import {
  AccountKey,
  MAX_ADDRESS_INDEX,
  type KeyedCoin,
  deriveAddress,
  parseAccountKey,
} from "../../server/backend/custody/derive.ts";
import {
  CONFIGURED_INDEX0,
  CONFIGURED_KEYS,
  SEPARATE_ACCOUNTS,
  TRON_KEY,
  TRUST_INDEX0,
  TRUST_KEYS,
} from "../fixtures/account-keys.ts";

const TRUST = "shoot island position soft burden budget tooth cruel issue economy destroy above";
const ABANDON =
  "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";

const XPUB: Versions = { private: 0x0488ade4, public: 0x0488b21e };
const ZPUB: Versions = { private: 0x04b2430c, public: 0x04b24746 };
const YPUB: Versions = { private: 0x049d7878, public: 0x049d7cb2 };
const DGUB: Versions = { private: 0x02fac398, public: 0x02facafd };
const TPUB: Versions = { private: 0x04358394, public: 0x043587cf };

const seeds = new Map<string, Uint8Array>();
function account(mnemonic: string, accountPath: string, versions: Versions = XPUB): HDKey {
  let seed = seeds.get(mnemonic);
  if (!seed) {
    seed = mnemonicToSeedSync(mnemonic);
    seeds.set(mnemonic, seed);
  }
  return HDKey.fromMasterSeed(seed, versions).derive(accountPath);
}
/** The neutered account key, serialized: what an operator configures. */
function publicKeyOf(mnemonic: string, accountPath: string, versions: Versions = XPUB): string {
  return account(mnemonic, accountPath, versions).wipePrivateData().publicExtendedKey;
}

// shared/COINS.md, "Account keys for tests".
const PUBLISHED_BTC_ZPUB =
  "zpub6r7CMEBpuNt4XH7pAVT2eH5kcz3S6w37AXHRpBfNPc4tAVuyaX4dahz5zs5knwVQH26bLKUDj3webt2NjpYD3i6mqqZ3Xa7vnaS4WW13fGW";
const PUBLISHED_ETH_XPUB =
  "xpub6CvTnSYULpXZu6gxwF4MWhvQFWrNPBtoxxuh4xGEXQFYfpdmhZRNo9RGu4tL1rCvxYesWaHHsMKzUVm1nwkeEKfwFJW8fiX4NWGUFDBggvU";

const btcZpub = publicKeyOf(TRUST, "m/84'/0'/0'", ZPUB);
const btcXpub = publicKeyOf(TRUST, "m/84'/0'/0'", XPUB);
const ethXpub = publicKeyOf(TRUST, "m/44'/60'/0'");
const dogeXpub = publicKeyOf(TRUST, "m/44'/3'/0'");
const dogeDgub = publicKeyOf(TRUST, "m/44'/3'/0'", DGUB);
const trxXpub = publicKeyOf(TRUST, "m/44'/195'/0'");
const xrpXpub = publicKeyOf(TRUST, "m/44'/144'/0'");

/**
 * Cardano's account key as a wallet exports it: the Icarus master key (PBKDF2-HMAC-SHA512 of
 * the mnemonic's entropy, 4096 rounds, 96 bytes, clamped) and Bip32-Ed25519 hardened private
 * derivation to m/1852'/1815'/0'; returns the public key and chain code. Test-only: the server
 * never sees the private half.
 */
function cardanoAccount(mnemonic: string): Uint8Array {
  const data = pbkdf2(sha512, new Uint8Array(0), mnemonicToEntropy(mnemonic, wordlist), {
    c: 4096,
    dkLen: 96,
  });
  let kl: Uint8Array = data.slice(0, 32);
  let kr: Uint8Array = data.slice(32, 64);
  let chain: Uint8Array = data.slice(64);
  kl[0] = (kl[0] ?? 0) & 0b1111_1000;
  kl[31] = ((kl[31] ?? 0) & 0b0001_1111) | 0b0100_0000;
  for (const index of [1852, 1815, 0].map((i) => i + 2 ** 31)) {
    const i = new Uint8Array(4);
    new DataView(i.buffer).setUint32(0, index, true);
    const z = hmac(sha512, chain, concatBytes(Uint8Array.of(0x00), kl, kr, i));
    chain = hmac(sha512, chain, concatBytes(Uint8Array.of(0x01), kl, kr, i)).slice(32);
    kl = fromNumberLe(8n * numberLe(z.subarray(0, 28)) + numberLe(kl), 32);
    kr = fromNumberLe((numberLe(z.subarray(32)) + numberLe(kr)) % 2n ** 256n, 32);
  }
  const publicKey = ed25519.Point.BASE.multiply(numberLe(kl) % ed25519.Point.Fn.ORDER).toBytes();
  return concatBytes(publicKey, chain);
}
function numberLe(bytes: Uint8Array): bigint {
  return bytes.reduceRight((n, byte) => (n << 8n) | BigInt(byte), 0n);
}
function fromNumberLe(n: bigint, length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => Number((n >> (8n * BigInt(i))) & 0xffn));
}
const adaAccount = cardanoAccount(TRUST);
const adaXvk = bech32.encode("acct_xvk", bech32.toWords(adaAccount), 200);

describe("account keys from the Trust Wallet test mnemonic", () => {
  test("the BTC and ETH account keys are the published ones", () => {
    expect(btcZpub).toBe(PUBLISHED_BTC_ZPUB);
    expect(ethXpub).toBe(PUBLISHED_ETH_XPUB);
  });

  // shared/COINS.md, Trust Wallet wallet-core's cross-coin vectors at index 0.
  const vectors: [Ticker, string, string][] = [
    ["BTC", btcZpub, "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d"],
    ["ETH", ethXpub, "0x8f348F300873Fd5DA36950B2aC75a26584584feE"],
    ["BNB", ethXpub, "0x8f348F300873Fd5DA36950B2aC75a26584584feE"],
    ["USDT", ethXpub, "0x8f348F300873Fd5DA36950B2aC75a26584584feE"],
    ["DOGE", dogeXpub, "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f"],
    ["TRX", trxXpub, "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio"],
    ["XRP", xrpXpub, "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3"],
  ];
  test.each(vectors)("%s index 0 is the published address", (coin, key, address) => {
    expect(deriveAddress(coin, key, 0)).toBe(address);
    expect(deriveAddress(coin, parseAccountKey(coin, key), 0)).toBe(address);
  });

  test("USDT on TRON derives from the TRON account key", () => {
    expect(deriveAddress("USDT", trxXpub, 0, { usdtNetwork: "trc20" })).toBe(
      "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
    );
  });

  test("BTC takes the same account as an xpub (read as BIP-84), DOGE as a dgub", () => {
    expect(deriveAddress("BTC", btcXpub, 0)).toBe("bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d");
    expect(deriveAddress("DOGE", dogeDgub, 0)).toBe("DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f");
    expect(parseAccountKey("DOGE", dogeDgub).prefix).toBe("dgub");
    expect(dogeDgub.startsWith("dgub")).toBe(true);
  });

  test("surrounding spaces in the configured key are ignored", () => {
    expect(deriveAddress("ETH", `  ${ethXpub}\n`, 0)).toBe("0x8f348F300873Fd5DA36950B2aC75a26584584feE");
  });
});

describe("the fixtures' account keys (tests/fixtures/account-keys.ts) are the mnemonic's", () => {
  test("TRUST_KEYS and TRUST_INDEX0: the published keys and addresses", () => {
    expect(TRUST_KEYS).toEqual({
      BTC: btcZpub,
      ETH: ethXpub,
      BNB: ethXpub,
      USDT: ethXpub,
      DOGE: dogeXpub,
      TRX: trxXpub,
      XRP: xrpXpub,
      ADA: adaXvk,
    });
    expect(TRON_KEY).toBe(trxXpub);
    for (const [coin, key] of Object.entries(TRUST_KEYS) as [Ticker, string][]) {
      expect([coin, deriveAddress(coin, key, 0)]).toEqual([
        coin,
        TRUST_INDEX0[coin as keyof typeof TRUST_INDEX0],
      ]);
    }
  });

  // Record 054: BNB and USDT get accounts of their own, so no two coins issue one address.
  test.each([
    ["BNB", SEPARATE_ACCOUNTS.BNB, "erc20"],
    ["USDT", SEPARATE_ACCOUNTS.USDT_ERC20, "erc20"],
    ["USDT", SEPARATE_ACCOUNTS.USDT_TRC20, "trc20"],
  ] as const)("%s at %j: the key and its index-0 address", (coin, separate, usdtNetwork) => {
    expect(publicKeyOf(TRUST, separate.path)).toBe(separate.key);
    expect(deriveAddress(coin, separate.key, 0, { usdtNetwork })).toBe(separate.index0);
  });

  test("CONFIGURED_KEYS: one account per coin, every index-0 address its own", () => {
    expect(SEPARATE_ACCOUNTS.BNB.path).toBe("m/44'/60'/1'");
    expect(SEPARATE_ACCOUNTS.USDT_ERC20.path).toBe("m/44'/60'/2'");
    expect(SEPARATE_ACCOUNTS.USDT_TRC20.path).toBe("m/44'/195'/1'");
    expect(new Set(Object.values(CONFIGURED_KEYS)).size).toBe(Object.keys(CONFIGURED_KEYS).length);
    for (const [coin, key] of Object.entries(CONFIGURED_KEYS) as [KeyedCoin, string][]) {
      expect([coin, deriveAddress(coin, key, 0)]).toEqual([coin, CONFIGURED_INDEX0[coin]]);
    }
    const addresses = Object.values(CONFIGURED_INDEX0).map((address) => address.toLowerCase());
    expect(new Set(addresses).size).toBe(addresses.length);
    // USDT on TRC-20's own account differs from TRX's.
    expect(SEPARATE_ACCOUNTS.USDT_TRC20.index0).not.toBe(TRUST_INDEX0.TRX);
  });
});

describe("Cardano (CIP-1852) from the Trust Wallet test mnemonic", () => {
  test("acct_xvk and xpub1 forms give the published base address at index 0", () => {
    const address =
      "addr1qyr8jjfnypp95eq74aqzn7ss687ehxclgj7mu6gratmg3mul2040vt35dypp042awzsjk5xm3zr3zm5qh7454uwdv08s84ray2";
    expect(deriveAddress("ADA", adaXvk, 0)).toBe(address);
    expect(deriveAddress("ADA", bech32.encode("xpub", bech32.toWords(adaAccount), 200), 0)).toBe(address);
    expect(parseAccountKey("ADA", adaXvk).prefix).toBe("acct_xvk");
    expect(deriveAddress("ADA", adaXvk, 1)).not.toBe(address);
  });
});

describe("BIP-84's own vectors (abandon ×11 about)", () => {
  const zpub = publicKeyOf(ABANDON, "m/84'/0'/0'", ZPUB);

  test("the account key is BIP-84's", () => {
    expect(zpub).toBe(
      "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
    );
  });

  test("receive addresses 0 and 1", () => {
    const key = parseAccountKey("BTC", zpub);
    expect(deriveAddress("BTC", key, 0)).toBe("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu");
    expect(deriveAddress("BTC", key, 1)).toBe("bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g");
  });
});

describe("every derived address passes the app's own address check", () => {
  const cases: [Ticker, string, { usdtNetwork: "erc20" | "trc20" } | undefined][] = [
    ["BTC", btcZpub, undefined],
    ["ETH", ethXpub, undefined],
    ["BNB", ethXpub, undefined],
    ["USDT", ethXpub, { usdtNetwork: "erc20" }],
    ["USDT", trxXpub, { usdtNetwork: "trc20" }],
    ["DOGE", dogeXpub, undefined],
    ["TRX", trxXpub, undefined],
    ["XRP", xrpXpub, undefined],
    ["ADA", adaXvk, undefined],
  ];
  test.each(cases)("%s, indexes 0..19 and the last one: valid, distinct, canonical", (coin, text, opts) => {
    const key = parseAccountKey(coin, text, opts);
    const indexes = [...Array.from({ length: 20 }, (_, i) => i), MAX_ADDRESS_INDEX];
    const addresses = indexes.map((i) => deriveAddress(coin, key, i, opts));
    for (const address of addresses) {
      expect(validateAddress(coin, address, opts)).toEqual({ ok: true, address });
    }
    expect(new Set(addresses).size).toBe(addresses.length);
  });
});

describe("refusals, each with a message that names the problem", () => {
  const ethPrivate = account(TRUST, "m/44'/60'/0'").privateExtendedKey;
  const btcZprv = account(TRUST, "m/84'/0'/0'", ZPUB).privateExtendedKey;

  test("a private key (xprv, zprv, dgpv) is never taken", () => {
    expect(ethPrivate.startsWith("xprv")).toBe(true);
    expect(btcZprv.startsWith("zprv")).toBe(true);
    expect(() => parseAccountKey("ETH", ethPrivate)).toThrow(
      /This is a private extended key \(xprv\): never give a private key to the server/,
    );
    expect(() => parseAccountKey("BTC", btcZprv)).toThrow(
      /private extended key \(zprv\): never give a private key/,
    );
    expect(() => deriveAddress("BTC", btcZprv, 0)).toThrow(/never give a private key/);
    const dgpv = account(TRUST, "m/44'/3'/0'", DGUB).privateExtendedKey;
    expect(() => parseAccountKey("DOGE", dgpv)).toThrow(/private extended key \(dgpv\)/);
  });

  test("a private key under a public version is still refused", () => {
    // Re-label an xprv's body with the xpub version: byte 45 is still 0x00 (a private key).
    const check = createBase58check(sha256);
    const bytes = check.decode(ethPrivate);
    bytes.set([0x04, 0x88, 0xb2, 0x1e], 0);
    expect(() => parseAccountKey("ETH", check.encode(bytes))).toThrow(
      /This is a private extended key: never/,
    );
  });

  test("a broken checksum", () => {
    // Change one character to another base58 character: the checksum no longer matches.
    const at = 60;
    const swapped = btcZpub[at] === "a" ? "b" : "a";
    const broken = btcZpub.slice(0, at) + swapped + btcZpub.slice(at + 1);
    expect(base58.decode(broken)).toHaveLength(82);
    expect(() => parseAccountKey("BTC", broken)).toThrow(
      "This extended key's checksum does not match: a character is probably mistyped.",
    );
  });

  test("a key whose prefix belongs to another coin or network", () => {
    expect(() => parseAccountKey("ETH", btcZpub)).toThrow(
      "Expected the Ethereum / BNB Smart Chain account key (xpub of m/44'/60'/0'); a zpub is a BIP-84 (native SegWit, bc1q…) Bitcoin key, not one for Ethereum / BNB Smart Chain.",
    );
    expect(() => parseAccountKey("TRX", dogeDgub)).toThrow(/a dgub is a Dogecoin key, not one for TRON/);
    expect(() => parseAccountKey("BTC", dogeDgub)).toThrow(/a dgub is a Dogecoin key, not one for Bitcoin/);
    expect(() => parseAccountKey("BTC", publicKeyOf(TRUST, "m/49'/0'/0'", YPUB))).toThrow(
      /a ypub is a BIP-49 \(wrapped SegWit, 3…\) Bitcoin key, not one for Bitcoin/,
    );
    expect(() => parseAccountKey("BTC", publicKeyOf(TRUST, "m/84'/1'/0'", TPUB))).toThrow(
      /a tpub is a test-network key/,
    );
    expect(() => parseAccountKey("USDT", btcZpub, { usdtNetwork: "trc20" })).toThrow(
      /not one for USDT \(TRC-20\)/,
    );
  });

  test("an xpub carries no coin: an ETH xpub given for BTC is taken (documented limit), and gives another address", () => {
    // Both accounts are xpubs at depth 3, hardened index 0': nothing in the key tells them apart.
    // The operator-facing guard is to compare the first derived address with the wallet's own.
    const address = deriveAddress("BTC", ethXpub, 0);
    expect(address).not.toBe("bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d");
    expect(validateAddress("BTC", address)).toEqual({ ok: true, address });
  });

  test("a key checked for one coin is not used for another", () => {
    const btc = parseAccountKey("BTC", btcXpub);
    expect(() => deriveAddress("ETH", btc, 0)).toThrow(
      "This account key was checked for Bitcoin (m/84'/0'/0'), not for Ethereum / BNB Smart Chain.",
    );
    const trx = parseAccountKey("TRX", trxXpub);
    expect(() => deriveAddress("USDT", trx, 0)).toThrow(/checked for TRON .* not for USDT \(ERC-20\)/);
  });

  test("a key that is not at the account level (depth 3, hardened)", () => {
    const depth4 = account(TRUST, "m/44'/60'/0'/0").wipePrivateData().publicExtendedKey;
    expect(() => parseAccountKey("ETH", depth4)).toThrow(
      "Expected the Ethereum / BNB Smart Chain account key (xpub of m/44'/60'/0'); this key is at depth 4, not the account level (depth 3, m/44'/60'/0').",
    );
    const depth2 = account(TRUST, "m/44'/60'").wipePrivateData().publicExtendedKey;
    expect(() => parseAccountKey("ETH", depth2)).toThrow(/this key is at depth 2, not the account level/);
    const soft = account(TRUST, "m/44'/60'/0").wipePrivateData().publicExtendedKey;
    expect(() => parseAccountKey("ETH", soft)).toThrow(/this key is a non-hardened child \(0\)/);
  });

  test("text that is not an extended key", () => {
    expect(() => parseAccountKey("BTC", "")).toThrow(
      "Expected the Bitcoin account key (zpub or xpub of m/84'/0'/0'); got nothing.",
    );
    expect(() => parseAccountKey("BTC", "zpub-not-base58!")).toThrow(/this is not base58 text/);
    expect(() => parseAccountKey("BTC", "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d")).toThrow(
      /not base58 text/,
    );
    expect(() => parseAccountKey("DOGE", "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f")).toThrow(
      /this is not an extended key \(wrong length\)/,
    );
  });

  test.each([-1, 2 ** 31, 1.5, Number.NaN, Infinity])("index %s", (index) => {
    expect(() => deriveAddress("ETH", ethXpub, index)).toThrow(
      `An address index is a whole number from 0 to 2147483647 (non-hardened); got ${String(index)}.`,
    );
  });

  test("SOL has no public derivation: it uses an address pool", () => {
    expect(() => deriveAddress("SOL", ethXpub, 0)).toThrow(
      /Solana has no public key derivation.*address pool/,
    );
    expect(() => parseAccountKey("SOL", ethXpub)).toThrow(/address pool/);
  });

  test("ADA: private, other-level, non-Cardano and mistyped keys", () => {
    const secret = bech32.encode("acct_xsk", bech32.toWords(new Uint8Array(96).fill(7)), 300);
    expect(() => parseAccountKey("ADA", secret)).toThrow(
      /This is a private extended key \(acct_xsk\): never give a private key to the server/,
    );
    const root = bech32.encode("root_xvk", bech32.toWords(adaAccount.slice()), 200);
    expect(() => parseAccountKey("ADA", root)).toThrow(
      /a root_xvk is the root key \(m\), not the account level/,
    );
    expect(() => parseAccountKey("ADA", ethXpub)).toThrow(
      "Expected the Cardano account key (acct_xvk or xpub of m/1852'/1815'/0'); this is not a bech32 Cardano key.",
    );
    const typo = adaXvk.slice(0, 20) + (adaXvk[20] === "q" ? "p" : "q") + adaXvk.slice(21);
    expect(() => parseAccountKey("ADA", typo)).toThrow("This extended key's checksum does not match");
    const short = bech32.encode("acct_xvk", bech32.toWords(adaAccount.slice(0, 32)), 200);
    expect(() => parseAccountKey("ADA", short)).toThrow(/it holds 32 bytes, not 64/);
    expect(() => deriveAddress("ADA", adaXvk, 2 ** 31)).toThrow(/An address index is a whole number/);
  });
});

describe("no private key in, none out", () => {
  test("a parsed key shows only its public text", () => {
    const key = parseAccountKey("BTC", btcZpub);
    expect(key).toBeInstanceOf(AccountKey);
    expect(String(key)).toBe(btcZpub);
    expect(JSON.parse(JSON.stringify(key))).toEqual({ scheme: "bip84-btc", extendedKey: btcZpub });
    expect(Object.keys(key).toSorted()).toEqual(["extendedKey", "prefix", "scheme"]);
    // Only parseAccountKey makes a key deriveAddress takes.
    expect(() => deriveAddress("BTC", new AccountKey("bip84-btc", "zpub", btcZpub), 0)).toThrow(
      "Expected an account key made by parseAccountKey.",
    );
  });

  test.each(["derive.ts", "cardano.ts"])("%s never reaches for private key material", (file) => {
    const source = readFileSync(
      path.resolve(import.meta.dirname, "../../server/backend/custody", file),
      "utf8",
    );
    for (const use of [
      "fromMasterSeed",
      "privateExtendedKey",
      "toPrivateJSON",
      ".sign(",
      "bip39",
      "pbkdf2",
    ]) {
      expect(source).not.toContain(use);
    }
  });
});
