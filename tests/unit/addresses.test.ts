// Withdrawal-address checks per coin, against public test vectors (shared/COINS.md, BIP-84,
// BIP-44/49/86, BIP-350, EIP-55, CIP-19, XLS-5d / xrpl.js) and addresses derived here with
// @scure/base from known payloads.
import { sha256 } from "@noble/hashes/sha2.js";
import { hexToBytes } from "@noble/hashes/utils.js";
import { base58, base58xrp, bech32, createBase58check } from "@scure/base";
import { describe, expect, test } from "vitest";
import { TICKERS, type Ticker } from "../../common/coins.ts";
import { validateAddress, type UsdtNetwork } from "../../common/addresses.ts";

const b58check = createBase58check(sha256);
const BECH32_ALPHABET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const XRP_ALPHABET = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz";

// --- Vectors ---------------------------------------------------------------------------

/** Trust Wallet wallet-core cross-coin vectors (COINS.md), index 0. */
const TW = {
  BTC: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
  ETH: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  DOGE: "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f",
  TRX: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
  XRP: "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3",
  SOL: "2bUBiBNZyD29gP1oV6de7nxowMLoDBtopMMTGgMvjG5m",
  ADA: "addr1qyr8jjfnypp95eq74aqzn7ss687ehxclgj7mu6gratmg3mul2040vt35dypp042awzsjk5xm3zr3zm5qh7454uwdv08s84ray2",
} as const;

/** BIP-84 (abandon ×11 about), m/84'/0'/0'/0/0 and /0/1. */
const BIP84 = [
  "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
  "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
] as const;

const BTC_MORE = {
  /** BIP-44 m/44'/0'/0'/0/0 of the same mnemonic (P2PKH). */
  p2pkh: "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA",
  /** The genesis block's coinbase address (P2PKH). */
  genesis: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
  /** BIP-49 m/49'/0'/0'/0/0 (P2SH-P2WPKH). */
  p2sh: "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf",
  /** BIP-86 m/86'/0'/0'/0/0 (taproot). */
  taproot: "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr",
  /** BIP-350 valid v1 vector (taproot, the generator point's x). */
  taprootBip350: "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
  /** BIP-173 P2WSH example. */
  p2wsh: "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
} as const;

/** EIP-55's own examples. */
const EIP55_MIXED = [
  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
  "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
  "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
] as const;
const EIP55_ALL_CAPS = [
  "0x52908400098527886E0F7030069857D2E4169EE7",
  "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
] as const;
const EIP55_ALL_LOWER = [
  "0xde709f2102306220921060314715629080e2fb77",
  "0x27b1fdb04752bbc536007a920d24acb045561c26",
] as const;

/** xrpl.js (ripple-address-codec) vectors. */
const XRP_MORE = {
  classic: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59",
  classic2: "rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf",
  xNoTag: "X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ", // r9cZA1…, no tag
  xTag1: "X7AcgcsBL6XDcUb289X4mJ8djcdyKaGZMhc9YTE92ehJ2Fu", // r9cZA1…, tag 1
  xTag0: "XVLhHMPHU98es4dbozjVtdWzVrDjtV8AqEL4xcZj5whKbmc", // rGWrZy…, tag 0
  xTagMax: "XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi", // rGWrZy…, tag 4294967295
  xTestnet: "T7oKJ3q7s94kDH6tpkBowhetT1JKfcfdSCmAXbS75iATyLD", // r3SVzk…, tag 123, testnet
} as const;

/** CIP-19's mainnet vectors, one per Shelley payment-address type 0–7. */
const CIP19 = [
  "addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x",
  "addr1z8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gten0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs9yc0hh",
  "addr1yx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerkr0vd4msrxnuwnccdxlhdjar77j6lg0wypcc9uar5d2shs2z78ve",
  "addr1x8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gt7r0vd4msrxnuwnccdxlhdjar77j6lg0wypcc9uar5d2shskhj42g",
  "addr1gx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer5pnz75xxcrzqf96k",
  "addr128phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gtupnz75xxcrtw79hu",
  "addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8",
  "addr1w8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gtcyjy7wx",
] as const;
const CIP19_TESTNET =
  "addr_test1qz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs68faae";
const CIP19_STAKE = "stake1uyehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gh6ffgw";
const BYRON = "Ae2tdPwUPEZDuM3S8RBo5RYn25Tv4rEiu9MYephhjqL2ZxFAeoUzTXcVcpZ";

// --- Helpers ---------------------------------------------------------------------------

function accepted(ticker: Ticker, address: string, usdtNetwork?: UsdtNetwork): string {
  const result = validateAddress(ticker, address, usdtNetwork ? { usdtNetwork } : undefined);
  if (!result.ok) throw new Error(`${ticker} refused ${address}: ${result.reason}`);
  return result.address;
}

function refusal(ticker: Ticker, address: string, usdtNetwork?: UsdtNetwork): string {
  const result = validateAddress(ticker, address, usdtNetwork ? { usdtNetwork } : undefined);
  if (result.ok) throw new Error(`${ticker} accepted ${address} as ${result.address}`);
  return result.reason;
}

/** `text` with the character at `index` replaced by the next one in `alphabet`. */
function changeOne(text: string, alphabet: string, index = Math.floor(text.length / 2)): string {
  const at = alphabet.indexOf(text.charAt(index));
  if (at < 0) throw new Error(`${text.charAt(index)} is not in the alphabet`);
  const next = alphabet.charAt((at + 1) % alphabet.length);
  return text.slice(0, index) + next + text.slice(index + 1);
}

/** XRP base58 with the double-SHA-256 checksum (what xrpl.js calls encodeChecked). */
function xrpEncodeChecked(body: Uint8Array): string {
  return base58xrp.encode(new Uint8Array([...body, ...sha256(sha256(body)).subarray(0, 4)]));
}

function xrpAccountId(classic: string): Uint8Array {
  return base58xrp.decode(classic).subarray(1, 21);
}

/** An X-address body: mainnet prefix, account id, flag, 8-byte little-endian tag. */
function xAddress(accountId: Uint8Array, flag: number, tag: number[]): string {
  const tagBytes = [...tag, 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 8);
  return xrpEncodeChecked(new Uint8Array([0x05, 0x44, ...accountId, flag, ...tagBytes]));
}

const HASH160 = hexToBytes("751e76e8199196d454941c45d1b3a323f1433bd6"); // BIP-173's key hash
const base58Address = (version: number, payload: Uint8Array) =>
  b58check.encode(new Uint8Array([version, ...payload]));

const SENTENCE = /^[A-Z].*[.]$/;

/** Cardano bech32 needs a limit above the usual 90 characters. */
const encodeCardano = (bytes: Uint8Array) => bech32.encode("addr", bech32.toWords(bytes), 200);

// --- Tests -----------------------------------------------------------------------------

describe("known-valid addresses are accepted", () => {
  test.each([
    ["BTC", TW.BTC],
    ["ETH", TW.ETH],
    ["BNB", TW.ETH],
    ["USDT", TW.ETH],
    ["DOGE", TW.DOGE],
    ["TRX", TW.TRX],
    ["XRP", TW.XRP],
    ["SOL", TW.SOL],
    ["ADA", TW.ADA],
    ["BTC", BIP84[0]],
    ["BTC", BIP84[1]],
  ] as const)("%s %s (COINS.md)", (ticker, address) => {
    expect(accepted(ticker, address)).toBe(address);
  });

  test.each(Object.entries(BTC_MORE))("BTC %s %s", (_kind, address) => {
    expect(accepted("BTC", address)).toBe(address);
  });

  test("surrounding whitespace is trimmed", () => {
    expect(accepted("BTC", `  ${BIP84[0]}\n`)).toBe(BIP84[0]);
    expect(accepted("ETH", `\t${TW.ETH} `)).toBe(TW.ETH);
    expect(accepted("SOL", `\u00a0${TW.SOL}\u00a0`)).toBe(TW.SOL);
  });
});

describe("one character changed is refused (checksum)", () => {
  test.each([
    ["BTC", TW.BTC, BECH32_ALPHABET],
    ["BTC", BIP84[0], BECH32_ALPHABET],
    ["BTC", BIP84[1], BECH32_ALPHABET],
    ["BTC", BTC_MORE.p2pkh, BASE58_ALPHABET],
    ["BTC", BTC_MORE.p2sh, BASE58_ALPHABET],
    ["BTC", BTC_MORE.taproot, BECH32_ALPHABET],
    ["DOGE", TW.DOGE, BASE58_ALPHABET],
    ["TRX", TW.TRX, BASE58_ALPHABET],
    ["XRP", TW.XRP, XRP_ALPHABET],
    ["XRP", XRP_MORE.xTag1, XRP_ALPHABET],
    ["ADA", TW.ADA, BECH32_ALPHABET],
  ] as const)("%s %s", (ticker, address, alphabet) => {
    // Every position, not only one: each change keeps the alphabet, so only the
    // checksum (or, for the first characters, the version) can catch it.
    const stillAccepted = [...address]
      .map((char, i) => (alphabet.includes(char) ? changeOne(address, alphabet, i) : undefined))
      .filter((changed) => changed !== undefined) // skips the "1" separator, "bc", "addr"
      .filter((changed) => validateAddress(ticker, changed).ok);
    expect(stillAccepted).toEqual([]);
    expect(refusal(ticker, changeOne(address, alphabet))).toMatch(/checksum does not match/);
  });

  test.each([TW.ETH, ...EIP55_MIXED])("ETH, BNB, USDT: a digit changed in %s", (address) => {
    // Digits carry no case, so only the letters' EIP-55 case pattern can catch the change.
    for (let i = 2; i < address.length; i++) {
      if (!/[0-9]/.test(address.charAt(i))) continue;
      const changed = changeOne(address, "0123456789", i);
      for (const ticker of ["ETH", "BNB", "USDT"] as const) {
        expect({ changed, reason: refusal(ticker, changed) }).toEqual({
          changed,
          reason: expect.stringMatching(/does not match its checksum/),
        });
      }
    }
  });

  test("SOL has no checksum: a substitution is another valid key, a wrong length is refused", () => {
    // Documented limitation of the format, not of the check: any 32 bytes are a valid key.
    expect(accepted("SOL", changeOne(TW.SOL, BASE58_ALPHABET))).not.toBe(TW.SOL);
    expect(refusal("SOL", `${TW.SOL}z`)).toBe("This is not a valid Solana address.");
    expect(refusal("SOL", TW.SOL.slice(0, 30))).toBe("This is not a valid Solana address.");
  });
});

describe("Bitcoin", () => {
  test("derived P2PKH (0x00) and P2SH (0x05) from a known hash160 are accepted", () => {
    const p2pkh = base58Address(0x00, HASH160);
    const p2sh = base58Address(0x05, HASH160);
    expect(p2pkh).toBe("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH");
    expect(p2sh.startsWith("3")).toBe(true);
    expect(accepted("BTC", p2pkh)).toBe(p2pkh);
    expect(accepted("BTC", p2sh)).toBe(p2sh);
  });

  test("all-upper-case bech32 is accepted and stored lower-case", () => {
    expect(accepted("BTC", BIP84[0].toUpperCase())).toBe(BIP84[0]);
    expect(accepted("BTC", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4")).toBe(
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
    );
    expect(accepted("BTC", BTC_MORE.taproot.toUpperCase())).toBe(BTC_MORE.taproot);
  });

  test("mixed-case bech32 is refused", () => {
    const mixed = `bc1Q${BIP84[0].slice(4)}`;
    expect(refusal("BTC", mixed)).toMatch(/mixes upper- and lower-case/);
  });

  test.each([
    "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", // BIP-350
    "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c", // BIP-350
    "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", // BIP-44 testnet
    "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2", // BIP-49 testnet
  ])("testnet %s is refused", (address) => {
    expect(refusal("BTC", address)).toBe(
      "This is a Bitcoin test-network address; only main-network addresses can be used.",
    );
  });

  test("testnet base58 versions derived from a hash160 are refused", () => {
    expect(refusal("BTC", base58Address(0x6f, HASH160))).toMatch(/test-network/);
    expect(refusal("BTC", base58Address(0xc4, HASH160))).toMatch(/test-network/);
  });

  test.each([
    ["bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "bech32 for v1"],
    ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", "bech32m for v0"],
    ["BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "version 17"],
    ["bc1pw5dgrnzv", "1-byte program"],
    ["bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", "41-byte program"],
    ["BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "16-byte v0 program"],
    ["bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", "over-long padding"],
    ["bc1gmk9yu", "empty data"],
    ["bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", "bad checksum char"],
  ])("BIP-350 invalid %s (%s) is refused", (address) => {
    expect(refusal("BTC", address)).toMatch(SENTENCE);
  });

  test.each([
    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", // v1, 40 bytes
    "BC1SW50QGDZ25J", // v16
    "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", // v2
  ])("valid but unused segwit version %s is refused", (address) => {
    expect(refusal("BTC", address)).toMatch(/SegWit version Bitcoin does not use yet/);
  });

  test("burn addresses (all-zero hash) are refused", () => {
    expect(refusal("BTC", base58Address(0x00, new Uint8Array(20)))).toMatch(/burn address/);
    const zeroWitness = bech32.encode("bc", [0, ...bech32.toWords(new Uint8Array(20))]);
    expect(refusal("BTC", zeroWitness)).toMatch(/burn address/);
  });

  test("other base58 versions and payload sizes are refused", () => {
    expect(refusal("BTC", base58Address(0x30, HASH160))).toBe("This is not a valid Bitcoin address."); // Litecoin L…
    expect(refusal("BTC", base58Address(0x00, HASH160.subarray(1)))).toBe(
      "This is not a valid Bitcoin address.",
    );
  });
});

describe("Ethereum, BNB Smart Chain, USDT (ERC-20): EIP-55", () => {
  test.each(EIP55_MIXED)("%s is accepted as is, and from all-lower / all-upper", (address) => {
    for (const ticker of ["ETH", "BNB", "USDT"] as const) {
      expect(accepted(ticker, address)).toBe(address);
    }
    expect(accepted("ETH", address.toLowerCase())).toBe(address);
    expect(accepted("ETH", `0x${address.slice(2).toUpperCase()}`)).toBe(address);
  });

  test.each(EIP55_MIXED)("%s with one letter's case flipped is refused", (address) => {
    const i = [...address].findIndex((c, at) => at > 1 && /[a-fA-F]/.test(c));
    const c = address.charAt(i);
    const flipped =
      address.slice(0, i) +
      (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) +
      address.slice(i + 1);
    expect(refusal("ETH", flipped)).toBe(
      "This is not a valid Ethereum address: its mix of capital and small letters does not match its checksum, so a character is probably mistyped.",
    );
  });

  test.each([...EIP55_ALL_CAPS, ...EIP55_ALL_LOWER])(
    "%s (one case, no checksum) is accepted and stored checksummed",
    (address) => {
      const stored = accepted("ETH", address);
      expect(stored.toLowerCase()).toBe(address.toLowerCase());
      expect(accepted("ETH", stored)).toBe(stored);
    },
  );

  test("the COINS.md vector lower-cased is stored in EIP-55 form", () => {
    expect(accepted("BNB", TW.ETH.toLowerCase())).toBe(TW.ETH);
  });

  test("missing or upper-case 0x, and wrong lengths are refused", () => {
    expect(refusal("ETH", TW.ETH.slice(2))).toMatch(/should start with "0x"/);
    expect(refusal("ETH", `0X${TW.ETH.slice(2)}`)).toMatch(/should start with "0x"/);
    expect(refusal("ETH", TW.ETH.slice(0, -1))).toBe("This is not a valid Ethereum address.");
    expect(refusal("ETH", `${TW.ETH}0`)).toBe("This is not a valid Ethereum address.");
    expect(refusal("ETH", `0x${"g".repeat(40)}`)).toBe("This is not a valid Ethereum address.");
  });

  test("the zero address is refused", () => {
    expect(refusal("ETH", `0x${"0".repeat(40)}`)).toMatch(/burn address/);
  });

  test("a BNB Beacon Chain (bnb1…) address is refused with the reason", () => {
    const beacon = bech32.encode("bnb", bech32.toWords(HASH160));
    expect(refusal("BNB", beacon)).toMatch(/BNB Beacon Chain .* shut down/);
  });
});

describe("Dogecoin", () => {
  test("P2SH (0x16) built from the vector's hash is accepted", () => {
    const hash = b58check.decode(TW.DOGE).subarray(1);
    const p2sh = base58Address(0x16, hash);
    expect(p2sh).toMatch(/^[9A]/);
    expect(accepted("DOGE", p2sh)).toBe(p2sh);
  });

  test("the same hash as a Bitcoin address is refused, and vice versa", () => {
    const hash = b58check.decode(TW.DOGE).subarray(1);
    const asBitcoin = base58Address(0x00, hash);
    expect(accepted("BTC", asBitcoin)).toBe(asBitcoin);
    expect(refusal("DOGE", asBitcoin)).toBe("This is a Bitcoin address, not a Dogecoin address.");
    expect(refusal("BTC", TW.DOGE)).toBe("This is a Dogecoin address, not a Bitcoin address.");
  });

  test("testnet is refused", () => {
    expect(refusal("DOGE", base58Address(0x71, HASH160))).toMatch(/test-network/);
  });
});

describe("Solana", () => {
  test("any 32 bytes in base58 are accepted; other sizes are refused", () => {
    const key = base58.encode(sha256(new Uint8Array([1, 2, 3])));
    expect(accepted("SOL", key)).toBe(key);
    expect(refusal("SOL", base58.encode(new Uint8Array(31).fill(7)))).toMatch(SENTENCE);
    expect(refusal("SOL", base58.encode(new Uint8Array(33).fill(7)))).toMatch(SENTENCE);
  });

  test("the System Program (all zeros) is refused", () => {
    expect(refusal("SOL", "11111111111111111111111111111111")).toMatch(/burn address/);
  });

  test("characters outside base58 are refused", () => {
    expect(refusal("SOL", TW.SOL.replace("2", "0"))).toMatch(SENTENCE);
    expect(refusal("SOL", TW.SOL.replace("b", "l"))).toMatch(SENTENCE);
  });
});

describe("TRON", () => {
  test("the hex form (41…) is refused with a pointer to the T… form", () => {
    const hex = `41${Buffer.from(b58check.decode(TW.TRX).subarray(1)).toString("hex")}`;
    expect(refusal("TRX", hex)).toMatch(/starting with "T"/);
  });

  test("21 bytes with another first byte, or 20 bytes after 0x41, are refused", () => {
    const body = b58check.decode(TW.TRX);
    expect(refusal("TRX", b58check.encode(new Uint8Array([0x42, ...body.subarray(1)])))).toMatch(SENTENCE);
    expect(refusal("TRX", b58check.encode(body.subarray(0, 20)))).toMatch(SENTENCE);
  });

  test("the all-zero account is refused", () => {
    expect(refusal("TRX", base58Address(0x41, new Uint8Array(20)))).toMatch(/burn address/);
  });
});

describe("XRP", () => {
  test.each(Object.entries(XRP_MORE).filter(([kind]) => kind !== "xTestnet"))(
    "%s %s is accepted as typed",
    (_kind, address) => {
      expect(accepted("XRP", address)).toBe(address);
    },
  );

  test("the X-address layout matches xrpl.js (account id + flag + little-endian tag)", () => {
    const account = xrpAccountId(XRP_MORE.classic);
    expect(xAddress(account, 0, [])).toBe(XRP_MORE.xNoTag);
    expect(xAddress(account, 1, [1])).toBe(XRP_MORE.xTag1);
    expect(xAddress(xrpAccountId(XRP_MORE.classic2), 1, [255, 255, 255, 255])).toBe(XRP_MORE.xTagMax);
  });

  test("a testnet X-address is refused", () => {
    expect(refusal("XRP", XRP_MORE.xTestnet)).toBe(
      "This is an XRP test-network address; only main-network addresses can be used.",
    );
  });

  test("X-addresses with a reserved flag or an over-wide tag are refused", () => {
    const account = xrpAccountId(XRP_MORE.classic);
    expect(refusal("XRP", xAddress(account, 2, [1]))).toMatch(/destination tag/);
    expect(refusal("XRP", xAddress(account, 1, [1, 0, 0, 0, 1]))).toMatch(/destination tag/);
    expect(refusal("XRP", xAddress(account, 0, [5]))).toMatch(/destination tag/);
  });

  test("the same bytes in Bitcoin's alphabet are refused", () => {
    const sameBytes = b58check.encode(base58xrp.decode(TW.XRP).subarray(0, 21));
    expect(sameBytes.startsWith("1")).toBe(true);
    expect(refusal("XRP", sameBytes)).toBe("This is a Bitcoin address, not an XRP address.");
  });

  test("ACCOUNT_ZERO is refused", () => {
    expect(refusal("XRP", "rrrrrrrrrrrrrrrrrrrrrhoLvTp")).toMatch(/burn address/);
  });
});

describe("Cardano", () => {
  test.each(CIP19)("CIP-19 mainnet %s is accepted", (address) => {
    expect(accepted("ADA", address)).toBe(address);
  });

  test("addresses longer than bech32's usual 90 characters are accepted", () => {
    expect(TW.ADA.length).toBeGreaterThan(90);
    expect(accepted("ADA", TW.ADA)).toBe(TW.ADA);
  });

  test("all-upper-case is accepted and stored lower-case; mixed case is refused", () => {
    expect(accepted("ADA", TW.ADA.toUpperCase())).toBe(TW.ADA);
    expect(refusal("ADA", `addr1Q${TW.ADA.slice(6)}`)).toMatch(/mixes upper- and lower-case/);
  });

  test("testnet, stake and Byron addresses are refused with their reasons", () => {
    expect(refusal("ADA", CIP19_TESTNET)).toMatch(/test-network/);
    expect(refusal("ADA", CIP19_STAKE)).toMatch(/stake \(reward\) address/);
    expect(refusal("ADA", BYRON)).toMatch(/Byron-era/);
  });

  test("a testnet header under the addr prefix, and wrong payload lengths, are refused", () => {
    const body = bech32.fromWords(bech32.decode(CIP19[6], 200).words); // enterprise, 29 bytes
    expect(accepted("ADA", encodeCardano(body))).toBe(CIP19[6]);
    expect(refusal("ADA", encodeCardano(new Uint8Array([0x60, ...body.subarray(1)])))).toMatch(
      /test-network/,
    );
    expect(refusal("ADA", encodeCardano(body.subarray(0, 28)))).toMatch(SENTENCE);
    expect(refusal("ADA", encodeCardano(new Uint8Array([...body, 0])))).toMatch(SENTENCE);
    expect(refusal("ADA", encodeCardano(new Uint8Array([0x41, ...body.subarray(1), 1, 2])))).toMatch(
      SENTENCE,
    ); // pointer with two naturals, not three
  });
});

describe("USDT follows the configured network", () => {
  test("ERC-20 (the default)", () => {
    expect(accepted("USDT", TW.ETH)).toBe(TW.ETH);
    expect(accepted("USDT", TW.ETH, "erc20")).toBe(TW.ETH);
    expect(refusal("USDT", TW.TRX)).toBe(
      "This is a TRON address, but USDT is sent on Ethereum (ERC-20) here.",
    );
    expect(refusal("USDT", TW.TRX, "erc20")).toMatch(/Ethereum \(ERC-20\)/);
  });

  test("TRC-20", () => {
    expect(accepted("USDT", TW.TRX, "trc20")).toBe(TW.TRX);
    expect(refusal("USDT", TW.ETH, "trc20")).toBe(
      "This is an Ethereum or BNB Smart Chain address, but USDT is sent on TRON (TRC-20) here.",
    );
    expect(refusal("USDT", changeOne(TW.TRX, BASE58_ALPHABET), "trc20")).toMatch(
      /^This is not a valid USDT \(TRC-20\) address: its checksum/,
    );
  });

  test("an unknown network setting is a programming error", () => {
    expect(() => validateAddress("USDT", TW.ETH, { usdtNetwork: "bep20" as unknown as UsdtNetwork })).toThrow(
      TypeError,
    );
  });
});

describe("another coin's address is refused", () => {
  // One valid address per network family, and the tickers that must accept it.
  const FAMILY_SAMPLES: { address: string; accepts: readonly Ticker[] }[] = [
    { address: TW.BTC, accepts: ["BTC"] },
    { address: BTC_MORE.p2pkh, accepts: ["BTC"] },
    { address: BTC_MORE.p2sh, accepts: ["BTC"] },
    { address: BTC_MORE.taproot, accepts: ["BTC"] },
    { address: TW.ETH, accepts: ["ETH", "BNB", "USDT"] },
    { address: EIP55_ALL_LOWER[0], accepts: ["ETH", "BNB", "USDT"] },
    { address: TW.DOGE, accepts: ["DOGE"] },
    { address: TW.TRX, accepts: ["TRX"] },
    { address: TW.XRP, accepts: ["XRP"] },
    { address: XRP_MORE.xTag1, accepts: ["XRP"] },
    { address: TW.SOL, accepts: ["SOL"] },
    { address: TW.ADA, accepts: ["ADA"] },
  ];

  test.each(FAMILY_SAMPLES)("$address is accepted only by $accepts", ({ address, accepts }) => {
    for (const ticker of TICKERS) {
      const result = validateAddress(ticker, address);
      expect(result.ok, `${ticker} ${address}`).toBe(accepts.includes(ticker));
      if (!result.ok) expect(result.reason, `${ticker} ${address}`).toMatch(/^This is an? /);
    }
  });

  test.each([
    ["BTC", TW.ETH, "This is an Ethereum or BNB Smart Chain address, not a Bitcoin address."],
    ["XRP", TW.TRX, "This is a TRON address, not an XRP address."],
    ["TRX", TW.XRP, "This is an XRP Ledger address, not a TRON address."],
    ["ETH", TW.SOL, "This is a Solana address, not an Ethereum address."],
    ["SOL", TW.BTC, "This is a Bitcoin address, not a Solana address."],
    ["ADA", BIP84[0], "This is a Bitcoin address, not a Cardano address."],
    ["BNB", TW.DOGE, "This is a Dogecoin address, not a BNB Smart Chain address."],
  ] as const)("%s refuses %s with a reason naming the other network", (ticker, address, reason) => {
    expect(refusal(ticker, address)).toBe(reason);
  });
});

describe("junk is refused with a sentence", () => {
  const JUNK: [string, RegExp][] = [
    ["", /^Enter an? .+ address\.$/],
    ["   \n\t ", /^Enter an? .+ address\.$/],
    ["Not added yet", /contains spaces/],
    ["x".repeat(300), /too long/],
    ["a".repeat(201), /too long/],
    ["bitcoin", SENTENCE],
    ["0x", SENTENCE],
    ["null", SENTENCE],
    ["bс1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", /characters that never appear/], // Cyrillic с
    [`${TW.ETH}\u200b`, /characters that never appear/], // zero-width space, not trimmed
    ["🚀🚀🚀", /characters that never appear/],
    ["<script>alert(1)</script>", /characters that never appear/],
    [`${TW.TRX} ${TW.TRX}`, /contains spaces/],
  ];

  test.each(TICKERS)("%s", (ticker) => {
    for (const [input, reason] of JUNK) {
      expect({ input, reason: refusal(ticker, input) }).toEqual({
        input,
        reason: expect.stringMatching(reason),
      });
      expect(refusal(ticker, input)).toMatch(SENTENCE);
    }
  });

  test("a reason names the coin", () => {
    expect(refusal("BTC", "hello")).toBe("This is not a valid Bitcoin address.");
    expect(refusal("XRP", "")).toBe("Enter an XRP address.");
    expect(refusal("USDT", "hello", "trc20")).toBe("This is not a valid USDT (TRC-20) address.");
  });

  test("a non-string at run time is refused, not thrown", () => {
    expect(validateAddress("BTC", undefined as unknown as string).ok).toBe(false);
  });
});
