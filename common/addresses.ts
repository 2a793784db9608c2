// Checking a withdrawal address typed (or pasted) by a user, per coin.
//
// validateAddress() trims the input, checks it against the format of the coin's network
// (facts in shared/COINS.md) and returns either the canonical form to store or a clear,
// user-facing English sentence saying what is wrong. Codecs and hashes come from the
// kept libraries (@scure/base, @noble/hashes); nothing here decodes base58 or bech32 by hand.
//
// Formats accepted:
//   BTC   bech32 bc1q… (segwit v0, 20- or 32-byte program), bech32m bc1p… (taproot v1,
//         32 bytes), all lower- or all upper-case (stored lower-case); base58check 1… (0x00)
//         and 3… (0x05) with a 20-byte hash.
//   ETH, BNB, USDT (ERC-20)
//         0x + 40 hex digits; all-lower or all-upper carries no checksum, mixed case must
//         match EIP-55. Stored in EIP-55 form.
//   DOGE  base58check D… (0x1e) or P2SH 9…/A… (0x16) with a 20-byte hash.
//   SOL   base58 decoding to exactly 32 bytes (Solana addresses carry no checksum).
//   TRX, USDT (TRC-20)
//         base58check of 21 bytes starting 0x41 (T…).
//   XRP   classic r… (XRP alphabet, version 0x00, 20-byte account id, double-SHA-256
//         checksum) and mainnet X-addresses (X…, XLS-5d), accepted as typed here; a send
//         resolves one into its classic address and destination tag (resolveDestination).
//   ADA   Shelley bech32 addr1… (mainnet payment addresses: base, pointer, enterprise).
//
// Refused on purpose, each with its own sentence: test-network addresses, segwit versions
// Bitcoin does not use yet (v2–v16, or v1 with a program other than 32 bytes: coins sent
// there can be taken by anyone), Cardano Byron and stake addresses, the TRON hex form, BNB
// Beacon Chain bnb1… addresses (that chain was shut down in December 2024), and
// burn addresses (an all-zero account: 0x000…000, 1111111111111111111114oLvT2, the Solana
// system program, XRP's ACCOUNT_ZERO…), where whatever is sent is lost for good.
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { base58, base58xrp, bech32, bech32m, createBase58check } from "@scure/base";
import { COINS, type Ticker } from "./coins.ts";
import { MAX_DESTINATION_TAG } from "./literals.ts";

export type UsdtNetwork = "erc20" | "trc20";

export type AddressCheck =
  | { ok: true; /** Canonical form to store. */ address: string }
  | { ok: false; /** A clear, user-facing English sentence. */ reason: string };

/** Longer input is refused before any decoding (the longest real address here is ~110). */
export const MAX_ADDRESS_LENGTH = 200;

/**
 * Checks `address` for `ticker`'s network. USDT's network is a deployment setting
 * (`opts.usdtNetwork`, "erc20" by default); every other coin has one network.
 */
export function validateAddress(
  ticker: Ticker,
  address: string,
  opts?: { usdtNetwork?: UsdtNetwork },
): AddressCheck {
  const usdtNetwork = opts?.usdtNetwork ?? "erc20";
  if (usdtNetwork !== "erc20" && usdtNetwork !== "trc20") {
    throw new TypeError(`Unknown USDT network: ${String(usdtNetwork)}`);
  }
  const family = familyOf(ticker, usdtNetwork);
  const label = labelOf(ticker, usdtNetwork);

  const input = typeof address === "string" ? address.trim() : "";
  if (input === "") return refuse(`Enter ${article(label)} ${label} address.`);
  if (input.length > MAX_ADDRESS_LENGTH) {
    return refuse(`This is too long to be ${article(label)} ${label} address.`);
  }
  // Every format here is plain ASCII letters and digits (plus the "_" of addr_test).
  if (!/^[0-9A-Za-z_]+$/.test(input)) {
    return refuse(
      /\s/.test(input)
        ? `This is not a valid ${label} address: it contains spaces.`
        : `This is not a valid ${label} address: it contains characters that never appear in one.`,
    );
  }

  const own = FAMILIES[family].parse(input, label);
  if (own.ok) return own;

  // A valid address of another network is the likeliest mix-up: say so.
  for (const other of FAMILY_IDS) {
    if (other === family || !FAMILIES[other].parse(input, "").ok) continue;
    const name = FAMILIES[other].name;
    if (ticker === "USDT" && (other === "evm" || other === "tron")) {
      const here = usdtNetwork === "erc20" ? "Ethereum (ERC-20)" : "TRON (TRC-20)";
      return refuse(`This is ${article(name)} ${name} address, but USDT is sent on ${here} here.`);
    }
    return refuse(`This is ${article(name)} ${name} address, not ${article(label)} ${label} address.`);
  }
  return refuse(own.reason ?? `This is not a valid ${label} address.`);
}

// ---------------------------------------------------------------------------------------
// Families of address formats

type Parsed = { ok: true; address: string } | { ok: false; reason: string | undefined };

type FamilyId = "bitcoin" | "evm" | "cardano" | "dogecoin" | "solana" | "tron" | "xrp";

const FAMILIES: Readonly<
  Record<FamilyId, { name: string; parse: (input: string, label: string) => Parsed }>
> = {
  bitcoin: { name: "Bitcoin", parse: parseBitcoin },
  evm: { name: "Ethereum or BNB Smart Chain", parse: parseEvm },
  cardano: { name: "Cardano", parse: parseCardano },
  dogecoin: { name: "Dogecoin", parse: parseDogecoin },
  solana: { name: "Solana", parse: parseSolana },
  tron: { name: "TRON", parse: parseTron },
  xrp: { name: "XRP Ledger", parse: parseXrp },
};

const FAMILY_IDS = Object.keys(FAMILIES) as FamilyId[];

function familyOf(ticker: Ticker, usdtNetwork: UsdtNetwork): FamilyId {
  switch (ticker) {
    case "BTC":
      return "bitcoin";
    case "ETH":
    case "BNB":
      return "evm";
    case "ADA":
      return "cardano";
    case "DOGE":
      return "dogecoin";
    case "SOL":
      return "solana";
    case "TRX":
      return "tron";
    case "XRP":
      return "xrp";
    case "USDT":
      return usdtNetwork === "trc20" ? "tron" : "evm";
  }
}

function labelOf(ticker: Ticker, usdtNetwork: UsdtNetwork): string {
  if (ticker === "USDT") return usdtNetwork === "trc20" ? "USDT (TRC-20)" : "USDT (ERC-20)";
  if (ticker === "BNB") return "BNB Smart Chain";
  return COINS[ticker].name;
}

function article(word: string): "a" | "an" {
  // "an Ethereum", "an XRP Ledger", "a USDT", "a Bitcoin"
  return /^[AEIOX]/.test(word) ? "an" : "a";
}

function refuse(reason: string): AddressCheck {
  return { ok: false, reason };
}

const ok = (address: string): Parsed => ({ ok: true, address });
const bad = (reason?: string): Parsed => ({ ok: false, reason });

const checksumMismatch = (label: string) =>
  `This is not a valid ${label} address: its checksum does not match, so a character is probably mistyped.`;
const burnAddress = (label: string) =>
  `This ${label} address is a burn address: anything sent to it is lost for good.`;
const testNetwork = (label: string) =>
  `This is ${article(label)} ${label} test-network address; only main-network addresses can be used.`;

function allZero(bytes: Uint8Array): boolean {
  return bytes.every((byte) => byte === 0);
}

// ---------------------------------------------------------------------------------------
// Base58check (Bitcoin alphabet): Bitcoin, Dogecoin, TRON

const base58check = createBase58check(sha256);

type Base58Decoded =
  | { kind: "ok"; bytes: Uint8Array }
  | { kind: "checksum" } // base58 text, wrong checksum
  | { kind: "format" }; // not base58 at all

/** Version byte(s) and payload of base58check text, without its 4-byte checksum. */
function decodeBase58check(input: string): Base58Decoded {
  try {
    base58.decode(input);
  } catch {
    return { kind: "format" };
  }
  try {
    return { kind: "ok", bytes: base58check.decode(input) };
  } catch {
    return { kind: "checksum" };
  }
}

// ---------------------------------------------------------------------------------------
// Bitcoin

const BTC_P2PKH = 0x00;
const BTC_P2SH = 0x05;
const BTC_TESTNET_VERSIONS = new Set([0x6f, 0xc4]); // m…/n…, 2…

function parseBitcoin(input: string, label: string): Parsed {
  const lower = input.toLowerCase();
  if (lower.startsWith("bc1")) return parseSegwit(input, label);
  if (/^(?:tb|bcrt)1/.test(lower)) {
    return bech32.decodeUnsafe(lower) || bech32m.decodeUnsafe(lower) ? bad(testNetwork(label)) : bad();
  }
  const decoded = decodeBase58check(input);
  if (decoded.kind === "format") return bad();
  if (decoded.kind === "checksum") return bad(checksumMismatch(label));
  const [version, ...rest] = decoded.bytes;
  if (rest.length !== 20) return bad();
  if (version === BTC_P2PKH || version === BTC_P2SH) {
    return allZero(decoded.bytes.subarray(1)) ? bad(burnAddress(label)) : ok(input);
  }
  if (version !== undefined && BTC_TESTNET_VERSIONS.has(version)) return bad(testNetwork(label));
  return bad();
}

/** Native segwit (BIP-173 / BIP-350) on mainnet: v0 P2WPKH / P2WSH and v1 P2TR only. */
function parseSegwit(input: string, label: string): Parsed {
  const lower = input.toLowerCase();
  if (input !== lower && input !== input.toUpperCase()) {
    return bad(
      `This ${label} address mixes upper- and lower-case letters; enter it exactly as given (all lower-case or all upper-case).`,
    );
  }
  // v0 uses the bech32 checksum, v1 and later bech32m; the other pairing is invalid.
  let words: number[];
  const asBech32 = bech32.decodeUnsafe(lower);
  if (asBech32) {
    if (asBech32.words[0] !== 0) return bad(checksumMismatch(label));
    words = asBech32.words;
  } else {
    const asBech32m = bech32m.decodeUnsafe(lower);
    if (!asBech32m || asBech32m.words[0] === 0) return bad(checksumMismatch(label));
    words = asBech32m.words;
  }
  const [version, ...data] = words;
  const program = data.length > 0 ? bech32.fromWordsUnsafe(data) : undefined;
  if (version === undefined || version > 16 || !program) return bad();
  if (program.length < 2 || program.length > 40) return bad();

  const known =
    (version === 0 && (program.length === 20 || program.length === 32)) ||
    (version === 1 && program.length === 32);
  if (!known) {
    return bad(
      `This ${label} address uses a SegWit version Bitcoin does not use yet; coins sent to it could be lost. Use a bc1q… or bc1p… address.`,
    );
  }
  return allZero(program) ? bad(burnAddress(label)) : ok(lower);
}

// ---------------------------------------------------------------------------------------
// Ethereum, BNB Smart Chain (EVM)

function parseEvm(input: string, label: string): Parsed {
  if (!/^0x[0-9a-fA-F]{40}$/.test(input)) {
    if (/^(?:0X)?[0-9a-fA-F]{40}$/.test(input)) {
      return bad(`This is not a valid ${label} address: it should start with "0x".`);
    }
    if (/^bnb1/i.test(input) && bech32.decodeUnsafe(input.toLowerCase())) {
      return bad(
        `This is a BNB Beacon Chain address, and that chain was shut down in December 2024; enter a BNB Smart Chain address starting with "0x".`,
      );
    }
    return bad();
  }
  const hex = input.slice(2);
  const checksummed = toEip55(hex.toLowerCase());
  const mixedCase = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
  if (mixedCase && input !== checksummed) {
    return bad(
      `This is not a valid ${label} address: its mix of capital and small letters does not match its checksum, so a character is probably mistyped.`,
    );
  }
  return /^0x0{40}$/.test(input) ? bad(burnAddress(label)) : ok(checksummed);
}

/** EIP-55: a hex letter is upper-case where the nibble of keccak-256(lower-case hex) is ≥ 8. */
export function toEip55(lowerHex: string): string {
  const hash = bytesToHex(keccak_256(utf8ToBytes(lowerHex)));
  let out = "0x";
  for (let i = 0; i < lowerHex.length; i++) {
    const char = lowerHex.charAt(i);
    out += Number.parseInt(hash.charAt(i), 16) >= 8 ? char.toUpperCase() : char;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Dogecoin

const DOGE_P2PKH = 0x1e;
const DOGE_P2SH = 0x16;
const DOGE_TESTNET_VERSIONS = new Set([0x71, 0xc4]);

function parseDogecoin(input: string, label: string): Parsed {
  const decoded = decodeBase58check(input);
  if (decoded.kind === "format") return bad();
  if (decoded.kind === "checksum") return bad(checksumMismatch(label));
  const [version, ...rest] = decoded.bytes;
  if (rest.length !== 20) return bad();
  if (version === DOGE_P2PKH || version === DOGE_P2SH) {
    return allZero(decoded.bytes.subarray(1)) ? bad(burnAddress(label)) : ok(input);
  }
  if (version !== undefined && DOGE_TESTNET_VERSIONS.has(version)) return bad(testNetwork(label));
  return bad();
}

// ---------------------------------------------------------------------------------------
// Solana

function parseSolana(input: string, label: string): Parsed {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(input);
  } catch {
    return bad();
  }
  if (bytes.length !== 32) return bad();
  // 111…1 is the System Program, not an account anyone can spend from.
  return allZero(bytes) ? bad(burnAddress(label)) : ok(input);
}

// ---------------------------------------------------------------------------------------
// TRON

const TRON_PREFIX = 0x41;

function parseTron(input: string, label: string): Parsed {
  if (/^41[0-9a-fA-F]{40}$/.test(input)) {
    return bad(`Enter the ${label} address in its usual form, starting with "T".`);
  }
  const decoded = decodeBase58check(input);
  if (decoded.kind === "format") return bad();
  if (decoded.kind === "checksum") return bad(checksumMismatch(label));
  if (decoded.bytes.length !== 21 || decoded.bytes[0] !== TRON_PREFIX) return bad();
  return allZero(decoded.bytes.subarray(1)) ? bad(burnAddress(label)) : ok(input);
}

// ---------------------------------------------------------------------------------------
// XRP Ledger

const XRP_ACCOUNT_ID = 0x00;
const XRP_X_MAINNET = [0x05, 0x44];
const XRP_X_TESTNET = [0x04, 0x93];

function parseXrp(input: string, label: string): Parsed {
  let raw: Uint8Array;
  try {
    raw = base58xrp.decode(input);
  } catch {
    return bad();
  }
  if (raw.length < 5) return bad();
  const body = raw.subarray(0, -4);
  if (!xrpChecksumMatches(raw)) {
    return raw.length === 25 || raw.length === 35 ? bad(checksumMismatch(label)) : bad();
  }

  // Classic address: version 0x00 and a 20-byte account id (r…).
  if (body.length === 21 && body[0] === XRP_ACCOUNT_ID) {
    return allZero(body.subarray(1)) ? bad(burnAddress(label)) : ok(input);
  }

  // X-address (XLS-5d): 2-byte network prefix, account id, tag flag, 8-byte little-endian tag.
  if (body.length === 31) {
    const prefix = [body[0], body[1]];
    if (sameBytes(prefix, XRP_X_TESTNET)) return bad(testNetwork(label));
    if (!sameBytes(prefix, XRP_X_MAINNET)) return bad();
    const flag = body[22];
    const tag = body.subarray(23);
    // Flag 0: no tag, so the tag bytes are zero. Flag 1: a 32-bit tag. Anything else
    // (64-bit tags) is reserved and refused by the ledger's own codec.
    const validTag = (flag === 0 && allZero(tag)) || (flag === 1 && allZero(tag.subarray(4)));
    if (!validTag) {
      return bad(`This ${label} X-address carries a destination tag this wallet cannot use.`);
    }
    return allZero(body.subarray(2, 22)) ? bad(burnAddress(label)) : ok(input);
  }
  return bad();
}

/** The last 4 bytes are the first 4 of SHA-256(SHA-256(the rest)). */
function xrpChecksumMatches(raw: Uint8Array): boolean {
  const body = raw.subarray(0, -4);
  const expected = sha256(sha256(body)).subarray(0, 4);
  return sameBytes(raw.subarray(-4), expected);
}

function sameBytes(a: ArrayLike<number | undefined>, b: ArrayLike<number | undefined>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------
// Cardano (Shelley, CIP-19)

/** Cardano addresses exceed bech32's usual 90 characters (a base address is 103). */
const CARDANO_BECH32_LIMIT = MAX_ADDRESS_LENGTH;
const CARDANO_MAINNET = 1;
const CARDANO_HASH = 28;

function parseCardano(input: string, label: string): Parsed {
  const lower = input.toLowerCase();
  if (lower.startsWith("addr_test1")) {
    return bech32.decodeUnsafe(lower, CARDANO_BECH32_LIMIT) ? bad(testNetwork(label)) : bad();
  }
  if (lower.startsWith("stake1")) {
    return bech32.decodeUnsafe(lower, CARDANO_BECH32_LIMIT)
      ? bad(`This is a ${label} stake (reward) address; enter a payment address starting with "addr1".`)
      : bad();
  }
  if (!lower.startsWith("addr1")) {
    if (/^(?:Ae2|DdzFF)/.test(input) && isByron(input)) {
      return bad(`This is an old Byron-era ${label} address; enter a Shelley address starting with "addr1".`);
    }
    return bad();
  }
  if (input !== lower && input !== input.toUpperCase()) {
    return bad(`This ${label} address mixes upper- and lower-case letters; enter it exactly as given.`);
  }
  const decoded = bech32.decodeUnsafe(lower, CARDANO_BECH32_LIMIT);
  if (!decoded) return bad(checksumMismatch(label));
  const bytes = bech32.fromWordsUnsafe(decoded.words);
  if (decoded.prefix !== "addr" || !bytes || bytes.length === 0) return bad();

  const header = bytes[0] ?? 0xff;
  const type = header >> 4;
  const network = header & 0x0f;
  if (network !== CARDANO_MAINNET) return bad(testNetwork(label));
  const valid =
    type <= 3 // base: payment + stake credential
      ? bytes.length === 1 + 2 * CARDANO_HASH
      : type <= 5 // pointer: payment credential + three variable-length naturals
        ? isPointer(bytes.subarray(1 + CARDANO_HASH))
        : type <= 7 // enterprise: payment credential only
          ? bytes.length === 1 + CARDANO_HASH
          : false;
  return valid ? ok(lower) : bad();
}

/** Exactly three base-128 naturals (high bit = more bytes follow). */
function isPointer(bytes: Uint8Array): boolean {
  let naturals = 0;
  let length = 0;
  for (const byte of bytes) {
    length++;
    if (length > 9) return false; // beyond 64 bits
    if ((byte & 0x80) === 0) {
      naturals++;
      length = 0;
    }
  }
  return naturals === 3 && length === 0;
}

/** Byron addresses are base58 (Bitcoin alphabet) CBOR, for a clearer refusal only. */
function isByron(input: string): boolean {
  try {
    return base58.decode(input).length > 30;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------
// XRP destination tags (issue 15)

export { MAX_DESTINATION_TAG };

export const DESTINATION_TAG_FORMAT = `A destination tag is a whole number from 0 to ${MAX_DESTINATION_TAG}, digits only.`;
export const DESTINATION_TAG_XRP_ONLY = "Only XRP sends take a destination tag.";

export function destinationTagConflict(tag: number): string {
  return `This X-address already carries destination tag ${tag}; leave the tag empty or enter ${tag}.`;
}

/** Whether `value` is a destination tag: an integer 0..4294967295. */
export function isDestinationTag(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_DESTINATION_TAG;
}

/**
 * A destination tag as typed: "" (after trimming) is none; otherwise decimal digits only
 * (no sign, no dot, no exponent, no spaces inside) of a value from 0 to 4294967295.
 */
export function parseDestinationTag(
  text: string,
): { ok: true; tag: number | null } | { ok: false; reason: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, tag: null };
  // At most 10 significant digits; leading zeros do not change the value.
  if (!/^[0-9]+$/.test(trimmed) || trimmed.replace(/^0+(?=.)/, "").length > 10) {
    return { ok: false, reason: DESTINATION_TAG_FORMAT };
  }
  const tag = Number(trimmed);
  return isDestinationTag(tag) ? { ok: true, tag } : { ok: false, reason: DESTINATION_TAG_FORMAT };
}

/**
 * A mainnet X-address (already accepted by validateAddress) as its classic r-address and
 * its tag (null when it carries none); undefined for anything else.
 */
export function decodeXAddress(input: string): { address: string; tag: number | null } | undefined {
  let raw: Uint8Array;
  try {
    raw = base58xrp.decode(input.trim());
  } catch {
    return undefined;
  }
  if (raw.length !== 35 || !xrpChecksumMatches(raw)) return undefined;
  const body = raw.subarray(0, -4);
  if (!sameBytes([body[0], body[1]], XRP_X_MAINNET)) return undefined;
  const flag = body[22];
  const tagBytes = body.subarray(23);
  if (!(flag === 0 && allZero(tagBytes)) && !(flag === 1 && allZero(tagBytes.subarray(4)))) return undefined;
  const classic = new Uint8Array(21);
  classic[0] = XRP_ACCOUNT_ID;
  classic.set(body.subarray(2, 22), 1);
  const check = sha256(sha256(classic)).subarray(0, 4);
  const address = base58xrp.encode(Uint8Array.from([...classic, ...check]));
  // Little-endian, 32 bits: bytes 0..3 of the tag field.
  const tag =
    flag === 1
      ? (tagBytes[0] ?? 0) +
        (tagBytes[1] ?? 0) * 0x100 +
        (tagBytes[2] ?? 0) * 0x1_00_00 +
        (tagBytes[3] ?? 0) * 0x1_00_00_00
      : null;
  return { address, tag };
}

/**
 * A classic r-address and a destination tag (or none) as one mainnet X-address
 * (XLS-5d), what decodeXAddress reads back; undefined for anything else. The
 * send form offers a saved XRP address with a tag this way: one value carries both.
 */
export function encodeXAddress(classic: string, tag: number | null): string | undefined {
  let raw: Uint8Array;
  try {
    raw = base58xrp.decode(classic.trim());
  } catch {
    return undefined;
  }
  if (raw.length !== 25 || raw[0] !== XRP_ACCOUNT_ID || !xrpChecksumMatches(raw)) return undefined;
  if (tag !== null && !isDestinationTag(tag)) return undefined;
  const body = new Uint8Array(31);
  body.set(XRP_X_MAINNET, 0);
  body.set(raw.subarray(1, 21), 2);
  if (tag !== null) {
    body[22] = 1;
    // Little-endian, 32 bits; the upper four bytes stay zero.
    for (let i = 0; i < 4; i++) body[23 + i] = Math.floor(tag / 0x100 ** i) % 0x100;
  }
  const check = sha256(sha256(body)).subarray(0, 4);
  return base58xrp.encode(Uint8Array.from([...body, ...check]));
}

export type DestinationCheck =
  | {
      ok: true;
      /** Canonical address to store (an X-address becomes its classic one). */ address: string;
      tag: number | null;
    }
  | { ok: false; field: "address" | "tag"; reason: string };

/**
 * Where a send goes: the address checked for the coin's network, and its destination tag.
 * Only XRP takes a tag. An X-address is resolved into its classic address and the tag it
 * carries; a tag given besides must then be the same one (an X-address without a tag takes
 * the tag given).
 */
export function resolveDestination(
  ticker: Ticker,
  address: string,
  tag: number | null,
  opts?: { usdtNetwork?: UsdtNetwork },
): DestinationCheck {
  const checked = validateAddress(ticker, address, opts);
  if (!checked.ok) return { ok: false, field: "address", reason: checked.reason };
  if (ticker !== "XRP") {
    return tag === null
      ? { ok: true, address: checked.address, tag: null }
      : { ok: false, field: "tag", reason: DESTINATION_TAG_XRP_ONLY };
  }
  if (tag !== null && !isDestinationTag(tag))
    return { ok: false, field: "tag", reason: DESTINATION_TAG_FORMAT };
  const x = checked.address.startsWith("X") ? decodeXAddress(checked.address) : undefined;
  if (!x) return { ok: true, address: checked.address, tag };
  if (x.tag !== null && tag !== null && x.tag !== tag) {
    return { ok: false, field: "tag", reason: destinationTagConflict(x.tag) };
  }
  return { ok: true, address: x.address, tag: x.tag ?? tag };
}
