// Watch-only deposit addresses (issue 16): each coin's account-level extended PUBLIC key,
// as an operator configures it, and the receive address at …/0/index below it. Nothing
// here ever takes, holds or returns a private key: an xprv/zprv/… is refused by name,
// so a pasted secret never gets further than the error that says so.
//
// Paths and formats (facts in shared/COINS.md):
//   BTC                      BIP-84 m/84'/0'/0'   zpub (or xpub, taken as the BIP-84 key)  bc1q… P2WPKH
//   ETH, BNB, USDT (ERC-20)  BIP-44 m/44'/60'/0'  xpub   EIP-55 0x…
//   DOGE                     BIP-44 m/44'/3'/0'   dgub or xpub                            D… (0x1e)
//   TRX, USDT (TRC-20)       BIP-44 m/44'/195'/0' xpub   T… (0x41 + keccak-256 of the key)
//   XRP                      BIP-44 m/44'/144'/0' xpub   r… classic address
//   ADA                      CIP-1852 m/1852'/1815'/0' acct_xvk or xpub1 (bech32)  addr1… base address
//                            (payment …/0/index, stake …/2/0; Bip32-Ed25519, in cardano.ts)
//   SOL has no public derivation (SLIP-0010 ed25519 is hardened-only): it uses an address pool.
// The paths are account 0's; any hardened account is taken. Coins that write their addresses
// alike get accounts of their own (record 054: BNB m/44'/60'/1', USDT m/44'/60'/2' or
// m/44'/195'/1'); server/config.ts refuses one key for two of them.
//
// An xpub carries no coin: the key of m/44'/60'/0' and that of m/84'/0'/0' look alike, so
// an ETH xpub configured for BTC cannot be refused here. A zpub, ypub, dgub or testnet key
// given for the wrong coin is refused by its version bytes.
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, concatBytes } from "@noble/hashes/utils.js";
import { HARDENED_OFFSET, HDKey } from "@scure/bip32";
import { base58, base58xrp, bech32, createBase58check } from "@scure/base";
import {
  CARDANO_ACCOUNT_PATH,
  CARDANO_PUBLIC_PREFIXES,
  cardanoReceiver,
  parseCardanoAccountKey,
} from "./cardano.ts";
import { toEip55, validateAddress, type UsdtNetwork } from "../../../common/addresses.ts";
import type { Ticker } from "../../../common/coins.ts";

/** The address schemes derivable from an extended public key. */
export type Scheme = "bip84-btc" | "bip44-evm" | "bip44-doge" | "bip44-tron" | "bip44-xrp" | "cip1852-ada";
type Secp256k1Scheme = Exclude<Scheme, "cip1852-ada">;

export interface DeriveOptions {
  /** Where USDT lives in this deployment (as in common/addresses.ts); "erc20" by default. */
  usdtNetwork?: UsdtNetwork;
}

/** The coins whose deposit addresses derive from an account key (SOL has none: it takes a pool). */
export const KEYED_COINS = [
  "BTC",
  "ETH",
  "BNB",
  "USDT",
  "DOGE",
  "TRX",
  "XRP",
  "ADA",
] as const satisfies readonly Ticker[];
export type KeyedCoin = (typeof KEYED_COINS)[number];

/** The configured account keys (ACCOUNT_KEY_<COIN>), each with its fingerprint (accountKeyFingerprint). */
export type ConfiguredKeys = Partial<Record<KeyedCoin, { key: AccountKey; fingerprint: string }>>;

/** BIP-32 account level: m / purpose' / coin' / account'. */
export const ACCOUNT_DEPTH = 3;
/** Receive addresses are at …/0/index; index is a non-hardened child number. */
export const MAX_ADDRESS_INDEX = HARDENED_OFFSET - 1;

// SLIP-0132 version bytes (and Dogecoin Core's chain parameters for dgub/dgpv).
const PUBLIC_VERSIONS = {
  xpub: 0x0488b21e,
  ypub: 0x049d7cb2,
  zpub: 0x04b24746,
  Ypub: 0x0295b43f,
  Zpub: 0x02aa7ed3,
  tpub: 0x043587cf,
  upub: 0x044a5262,
  vpub: 0x045f1cf6,
  dgub: 0x02facafd,
} as const;
type PublicPrefix = keyof typeof PUBLIC_VERSIONS;

const PRIVATE_VERSIONS: Readonly<Record<number, string>> = {
  0x0488ade4: "xprv",
  0x049d7878: "yprv",
  0x04b2430c: "zprv",
  0x0295b005: "Yprv",
  0x02aa7a99: "Zprv",
  0x04358394: "tprv",
  0x044a4e28: "uprv",
  0x045f18bc: "vprv",
  0x02fac398: "dgpv",
};

/** What each kind of extended public key is for, to say so when it is given to the wrong coin. */
const PREFIX_MEANING: Readonly<Record<PublicPrefix, string>> = {
  xpub: "a BIP-32/BIP-44 key",
  ypub: "a BIP-49 (wrapped SegWit, 3…) Bitcoin key",
  zpub: "a BIP-84 (native SegWit, bc1q…) Bitcoin key",
  Ypub: "a BIP-49 multisig Bitcoin key",
  Zpub: "a BIP-84 multisig Bitcoin key",
  tpub: "a test-network key",
  upub: "a test-network BIP-49 key",
  vpub: "a test-network BIP-84 key",
  dgub: "a Dogecoin key",
};

interface SchemeFacts {
  /** How the coin is named in messages. */
  label: string;
  /** The account path, for messages. */
  path: string;
  /** Extended public key prefixes taken for this scheme, the preferred first. */
  accepts: readonly string[];
  /** The ticker whose address check the derived address must pass. */
  check: { ticker: Ticker; opts?: DeriveOptions };
}

const SCHEMES: Readonly<Record<Scheme, SchemeFacts>> = {
  "bip84-btc": { label: "Bitcoin", path: "m/84'/0'/0'", accepts: ["zpub", "xpub"], check: { ticker: "BTC" } },
  "bip44-evm": {
    label: "Ethereum / BNB Smart Chain",
    path: "m/44'/60'/0'",
    accepts: ["xpub"],
    check: { ticker: "ETH" },
  },
  "bip44-doge": {
    label: "Dogecoin",
    path: "m/44'/3'/0'",
    accepts: ["dgub", "xpub"],
    check: { ticker: "DOGE" },
  },
  "bip44-tron": { label: "TRON", path: "m/44'/195'/0'", accepts: ["xpub"], check: { ticker: "TRX" } },
  "bip44-xrp": { label: "XRP Ledger", path: "m/44'/144'/0'", accepts: ["xpub"], check: { ticker: "XRP" } },
  "cip1852-ada": {
    label: "Cardano",
    path: CARDANO_ACCOUNT_PATH,
    accepts: CARDANO_PUBLIC_PREFIXES,
    check: { ticker: "ADA" },
  },
};

/** The address of a compressed secp256k1 public key. */
const SECP256K1_ADDRESS: Readonly<Record<Secp256k1Scheme, (publicKey: Uint8Array) => string>> = {
  "bip84-btc": (pub) => bech32.encode("bc", [0, ...bech32.toWords(hash160(pub))]),
  "bip44-evm": (pub) => toEip55(bytesToHex(keccakOfPoint(pub).subarray(-20))),
  "bip44-doge": (pub) => base58check.encode(concatBytes(Uint8Array.of(DOGE_P2PKH), hash160(pub))),
  "bip44-tron": (pub) =>
    base58check.encode(concatBytes(Uint8Array.of(TRON_PREFIX), keccakOfPoint(pub).subarray(-20))),
  "bip44-xrp": (pub) => {
    const body = concatBytes(Uint8Array.of(XRP_ACCOUNT_ID), hash160(pub));
    return base58xrp.encode(concatBytes(body, sha256(sha256(body)).subarray(0, 4)));
  },
};

const DOGE_P2PKH = 0x1e;
const TRON_PREFIX = 0x41;
const XRP_ACCOUNT_ID = 0x00;

/** The derivation scheme of a coin; throws for SOL, which has none. */
export function schemeOf(coin: Ticker, opts?: DeriveOptions): Scheme {
  switch (coin) {
    case "BTC":
      return "bip84-btc";
    case "ETH":
    case "BNB":
      return "bip44-evm";
    case "DOGE":
      return "bip44-doge";
    case "TRX":
      return "bip44-tron";
    case "XRP":
      return "bip44-xrp";
    case "USDT": {
      const network = opts?.usdtNetwork ?? "erc20";
      if (network === "erc20") return "bip44-evm";
      if (network === "trc20") return "bip44-tron";
      throw new TypeError(`Unknown USDT network: ${String(network)}`);
    }
    case "SOL":
      throw new Error(
        "Solana has no public key derivation (ed25519 under SLIP-0010 is hardened-only): SOL deposit addresses come from an address pool of public keys generated offline, not from an extended public key.",
      );
    case "ADA":
      return "cip1852-ada";
    default:
      throw new TypeError(`Unknown coin: ${String(coin)}`);
  }
}

/** Receive-address makers of the keys parseAccountKey made (so no other object passes for one). */
const receivers = new WeakMap<AccountKey, (index: number) => string>();

/**
 * A checked account-level extended public key. It holds no private key (there is none to
 * hold: only public keys are accepted) and shows only its public text when printed.
 */
export class AccountKey {
  readonly scheme: Scheme;
  /** The prefix it was given with: "zpub", "xpub", "dgub", "acct_xvk". */
  readonly prefix: string;
  /** The extended public key as given (trimmed). */
  readonly extendedKey: string;

  constructor(scheme: Scheme, prefix: string, extendedKey: string) {
    this.scheme = scheme;
    this.prefix = prefix;
    this.extendedKey = extendedKey;
  }

  toString(): string {
    return this.extendedKey;
  }

  toJSON(): { scheme: Scheme; extendedKey: string } {
    return { scheme: this.scheme, extendedKey: this.extendedKey };
  }
}

/**
 * Parses an operator-configured account-level extended public key for `coin`. Throws an
 * Error whose message names what is wrong: not an extended key, a broken checksum, a
 * private key, a prefix meant for another coin or network, or a key not at account level.
 */
export function parseAccountKey(coin: Ticker, text: string, opts?: DeriveOptions): AccountKey {
  const scheme = schemeOf(coin, opts);
  const facts = SCHEMES[scheme];
  const expected = `the ${facts.label} account key (${facts.accepts.join(" or ")} of ${facts.path})`;
  const input = typeof text === "string" ? text.trim() : "";
  if (input === "") throw new Error(`Expected ${expected}; got nothing.`);
  if (scheme === "cip1852-ada") {
    const { prefix, key, chainCode } = parseCardanoAccountKey(input, expected);
    return keep(new AccountKey(scheme, prefix, input), cardanoReceiver({ key, chainCode }), key, chainCode);
  }

  let raw: Uint8Array;
  try {
    raw = base58.decode(input);
  } catch {
    throw new Error(`Expected ${expected}; this is not base58 text.`);
  }
  // 78 bytes of key and 4 of checksum.
  if (raw.length !== 82) {
    throw new Error(`Expected ${expected}; this is not an extended key (wrong length).`);
  }
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(input);
  } catch {
    throw new Error(`This extended key's checksum does not match: a character is probably mistyped.`);
  }

  const version = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, false);
  const privateName = PRIVATE_VERSIONS[version];
  // Byte 45 is 0x00 before a private key, 0x02/0x03 before a compressed public key.
  if (privateName !== undefined || bytes[45] === 0) {
    throw new Error(
      `This is a private extended key${privateName ? ` (${privateName})` : ""}: never give a private key to the server. Configure the account's extended public key (${facts.accepts.join(" or ")}) instead, and keep the private key offline.`,
    );
  }
  const prefix = (Object.keys(PUBLIC_VERSIONS) as PublicPrefix[]).find((p) => PUBLIC_VERSIONS[p] === version);
  if (prefix === undefined) {
    throw new Error(
      `Expected ${expected}; this extended key's version (0x${version.toString(16)}) is unknown.`,
    );
  }
  if (!facts.accepts.includes(prefix)) {
    throw new Error(
      `Expected ${expected}; a ${prefix} is ${PREFIX_MEANING[prefix]}, not one for ${coinLabel(coin, scheme)}.`,
    );
  }

  const depth = bytes[4];
  if (depth !== ACCOUNT_DEPTH) {
    throw new Error(
      `Expected ${expected}; this key is at depth ${String(depth)}, not the account level (depth ${ACCOUNT_DEPTH}, ${facts.path}).`,
    );
  }
  const childNumber = new DataView(bytes.buffer, bytes.byteOffset + 9, 4).getUint32(0, false);
  if (childNumber < HARDENED_OFFSET) {
    throw new Error(
      `Expected ${expected}; this key is a non-hardened child (${childNumber}), and an account key is hardened (${facts.path}).`,
    );
  }

  let account: HDKey;
  try {
    account = HDKey.fromExtendedKey(input, { public: version, private: PRIVATE_VERSION_OF[prefix] });
  } catch {
    throw new Error(`Expected ${expected}; its public key is not a valid secp256k1 point.`);
  }
  if (account.privateKey !== null) throw new Error("Refusing a key that carries a private key.");
  // The external chain (…/0) once, so each address costs one child derivation.
  const receive = account.deriveChild(0);
  const address = SECP256K1_ADDRESS[scheme];
  return keep(
    new AccountKey(scheme, prefix, input),
    (index) => {
      const key = receive.deriveChild(index).publicKey;
      if (!key) throw new Error("Derivation gave no public key.");
      return address(key);
    },
    bytes.subarray(45, 78),
    bytes.subarray(13, 45),
  );
}

const fingerprints = new WeakMap<AccountKey, string>();

function keep(
  key: AccountKey,
  receiver: (index: number) => string,
  publicKey: Uint8Array,
  chainCode: Uint8Array,
): AccountKey {
  receivers.set(key, receiver);
  fingerprints.set(key, bytesToHex(sha256(concatBytes(publicKey, chainCode))).slice(0, 16));
  return key;
}

/**
 * A short public name of an account key (16 hex characters): from its public key and chain
 * code, not from its text, so the same account written as xpub or zpub (or acct_xvk or
 * xpub1) is the same key, and its index counter (custody_index_counters.key_id) continues.
 * Safe to log: it reveals less than the extended public key itself.
 */
export function accountKeyFingerprint(key: AccountKey): string {
  const found = fingerprints.get(key);
  if (found === undefined) throw new TypeError("Expected an account key made by parseAccountKey.");
  return found;
}

const PRIVATE_VERSION_OF: Readonly<Record<PublicPrefix, number>> = {
  xpub: 0x0488ade4,
  ypub: 0x049d7878,
  zpub: 0x04b2430c,
  Ypub: 0x0295b005,
  Zpub: 0x02aa7a99,
  tpub: 0x04358394,
  upub: 0x044a4e28,
  vpub: 0x045f18bc,
  dgub: 0x02fac398,
};

/**
 * The receive address at …/0/`index` below `accountKey` (parsed here when given as text).
 * `index` is an integer 0..2^31-1. The address is checked by common/addresses.ts before it
 * is returned, so nothing is issued that the app's own check would refuse.
 */
export function deriveAddress(
  coin: Ticker,
  accountKey: AccountKey | string,
  index: number,
  opts?: DeriveOptions,
): string {
  const scheme = schemeOf(coin, opts);
  const key = typeof accountKey === "string" ? parseAccountKey(coin, accountKey, opts) : accountKey;
  const receiver = key instanceof AccountKey ? receivers.get(key) : undefined;
  if (receiver === undefined) throw new TypeError("Expected an account key made by parseAccountKey.");
  if (key.scheme !== scheme) {
    throw new Error(
      `This account key was checked for ${SCHEMES[key.scheme].label} (${SCHEMES[key.scheme].path}), not for ${coinLabel(coin, scheme)}.`,
    );
  }
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_ADDRESS_INDEX) {
    throw new RangeError(
      `An address index is a whole number from 0 to ${MAX_ADDRESS_INDEX} (non-hardened); got ${String(index)}.`,
    );
  }

  const address = receiver(index);
  const { ticker, opts: checkOpts } = SCHEMES[scheme].check;
  const checked = validateAddress(ticker, address, checkOpts);
  if (!checked.ok || checked.address !== address) {
    throw new Error(`Derived ${coinLabel(coin, scheme)} address ${address} fails the address check.`);
  }
  return address;
}

// ---------------------------------------------------------------------------------------

const base58check = createBase58check(sha256);

function hash160(bytes: Uint8Array): Uint8Array {
  return ripemd160(sha256(bytes));
}

/** keccak-256 of the uncompressed point without its 0x04 byte (Ethereum, TRON). */
function keccakOfPoint(compressed: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(compressed).toBytes(false);
  return keccak_256(uncompressed.subarray(1));
}

function coinLabel(coin: Ticker, scheme: Scheme): string {
  return coin === "USDT" ? `USDT (${scheme === "bip44-tron" ? "TRC-20" : "ERC-20"})` : SCHEMES[scheme].label;
}
