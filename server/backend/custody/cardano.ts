// Cardano watch-only addresses (CIP-1852): the account's extended verification key
// (m/1852'/1815'/account', CIP-5 `acct_xvk1…`, or cardano-address's `xpub1…`) and the
// Bip32-Ed25519 soft (non-hardened) public derivation below it (Khovratovich & Law):
//   Z  = HMAC-SHA512(chain code, 0x02 ‖ A ‖ index as 4 bytes little-endian)
//   A' = A + 8·int_le(Z[0..28])·G,  chain code' = HMAC-SHA512(chain code, 0x03 ‖ A ‖ index)[32..64]
// A base address (CIP-19 header 0x01: key payment credential, key stake credential, mainnet)
// holds blake2b-224 of the payment key at …/0/index and of the stake key at …/2/0.
// Only public keys are taken; hardened derivation (which needs the private key) is not here.
import { ed25519 } from "@noble/curves/ed25519.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes } from "@noble/hashes/utils.js";
import { bech32 } from "@scure/base";

/** Cardano's bech32 strings are longer than bech32's usual 90 characters. */
const BECH32_LIMIT = 200;
const BASE_ADDRESS_MAINNET = 0x01;
const PAYMENT_CHAIN = 0;
const STAKE_CHAIN = 2;

export const CARDANO_ACCOUNT_PATH = "m/1852'/1815'/0'";
export const CARDANO_PUBLIC_PREFIXES = ["acct_xvk", "xpub"] as const;
/** CIP-5 prefixes of private keys (and cardano-address's xprv): refused by name. */
const PRIVATE_PREFIXES = ["acct_xsk", "root_xsk", "addr_xsk", "stake_xsk", "acct_sk", "xprv", "root_sk"];
/** CIP-5 public keys of other levels than the account. */
const OTHER_LEVELS: Readonly<Record<string, string>> = {
  root_xvk: "the root key (m)",
  addr_xvk: "an address key (…/0/i)",
  stake_xvk: "a stake key (…/2/0)",
  acct_vk: "an account key without its chain code",
  addr_vk: "an address key without its chain code",
  stake_vk: "a stake key without its chain code",
};

interface Node {
  key: Uint8Array; // 32-byte ed25519 point
  chainCode: Uint8Array; // 32 bytes
}

/**
 * Parses a Cardano account-level extended public key, returning its two halves, or throws an
 * Error naming what is wrong (`expected` describes what was wanted, for the message).
 */
export function parseCardanoAccountKey(input: string, expected: string): Node & { prefix: string } {
  const decoded = bech32.decodeUnsafe(input.toLowerCase(), BECH32_LIMIT);
  if (!decoded || (input !== input.toLowerCase() && input !== input.toUpperCase())) {
    const prefix = /^([a-z_]+)1/i.exec(input)?.[1]?.toLowerCase();
    if (prefix && PRIVATE_PREFIXES.includes(prefix)) throw privateKeyError(prefix);
    if (prefix && (CARDANO_PUBLIC_PREFIXES as readonly string[]).includes(prefix)) {
      throw new Error(`This extended key's checksum does not match: a character is probably mistyped.`);
    }
    throw new Error(`Expected ${expected}; this is not a bech32 Cardano key.`);
  }
  const { prefix, words } = decoded;
  if (PRIVATE_PREFIXES.includes(prefix)) throw privateKeyError(prefix);
  const level = OTHER_LEVELS[prefix];
  if (level !== undefined) {
    throw new Error(`Expected ${expected}; a ${prefix} is ${level}, not the account level.`);
  }
  if (!(CARDANO_PUBLIC_PREFIXES as readonly string[]).includes(prefix)) {
    throw new Error(`Expected ${expected}; a ${prefix}… is not a Cardano account key.`);
  }
  const bytes = bech32.fromWordsUnsafe(words);
  if (!bytes || bytes.length !== 64) {
    throw new Error(
      `Expected ${expected}; it holds ${bytes ? bytes.length : 0} bytes, not 64 (public key and chain code).`,
    );
  }
  const key = bytes.slice(0, 32);
  try {
    ed25519.Point.fromBytes(key);
  } catch {
    throw new Error(`Expected ${expected}; its public key is not a valid ed25519 point.`);
  }
  return { prefix, key, chainCode: bytes.slice(32) };
}

function privateKeyError(prefix: string): Error {
  return new Error(
    `This is a private extended key (${prefix}): never give a private key to the server. Configure the account's extended public key (acct_xvk or xpub) instead, and keep the private key offline.`,
  );
}

/** A function giving the mainnet base address at payment …/0/index with the stake key …/2/0. */
export function cardanoReceiver(account: Node): (index: number) => string {
  const payments = softChild(account, PAYMENT_CHAIN);
  const stakeHash = blake2b224(softChild(softChild(account, STAKE_CHAIN), 0).key);
  return (index) => {
    const paymentHash = blake2b224(softChild(payments, index).key);
    const bytes = new Uint8Array(1 + 28 + 28);
    bytes[0] = BASE_ADDRESS_MAINNET;
    bytes.set(paymentHash, 1);
    bytes.set(stakeHash, 29);
    return bech32.encode("addr", bech32.toWords(bytes), BECH32_LIMIT);
  };
}

function softChild(parent: Node, index: number): Node {
  const i = new Uint8Array(4);
  new DataView(i.buffer).setUint32(0, index, true);
  const z = hmac(sha512, parent.chainCode, concatBytes(Uint8Array.of(0x02), parent.key, i));
  const zl = littleEndian(z.subarray(0, 28));
  const tweak = ed25519.Point.BASE.multiply(8n * zl);
  const key = ed25519.Point.fromBytes(parent.key).add(tweak).toBytes();
  const chainCode = hmac(sha512, parent.chainCode, concatBytes(Uint8Array.of(0x03), parent.key, i)).slice(32);
  return { key, chainCode };
}

function blake2b224(bytes: Uint8Array): Uint8Array {
  return blake2b(bytes, { dkLen: 28 });
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}
