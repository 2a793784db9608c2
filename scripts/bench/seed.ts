// Realistic data for the benchmark, written through the backend's own domain
// functions (as server/ops/demo.ts does), so everything in the database is
// something the server itself would have written.
//
// - The page user: all nine wallets issued and 1,000 ledger transactions
//   (deposits and sends; sends Confirmed, Declined or pending), mostly BTC.
// - The capacity pool: accounts with four wallets (three issued with a
//   deposit, one requested), a Confirmed send, and messages (one read, two
//   unread, plus one to everyone).
// - The senders (money path): accounts with an ETH wallet holding 1,000 ETH.
//
// Account creation costs two argon2id hashes (by design), so accounts are
// created a few at a time in parallel.
import { randomBytes } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58, base58xrp, bech32, createBase58check } from "@scure/base";
import { COINS, TICKERS, type Ticker } from "../../common/coins.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { createAccount, type AccountsContext } from "../../server/backend/domain/accounts.ts";
import { validateAddress } from "../../common/addresses.ts";
import {
  creditDeposit,
  holdWithdrawal,
  postWithdrawal,
  voidWithdrawal,
} from "../../server/backend/domain/ledger.ts";
import { openMessage, sendMessage } from "../../server/backend/domain/messages.ts";
import { issueAddress, requestWallet } from "../../server/backend/domain/wallets.ts";
import { callOpsSocket, opsSocketPath } from "../../server/ops/socket.ts";

export const PASSWORD = "bench-password-1";

const base58check = createBase58check(sha256);

export interface SeededUser {
  email: string;
  password: string;
  userId: string;
  words: string[];
}

export interface Sender extends SeededUser {
  walletId: string;
  destination: string;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
) {
  const results: R[] = Array.from({ length: items.length });
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, () => worker()));
  return results;
}

/** `n` random bytes, standing for a key hash or public key nobody holds. */
function hash(n: number): Uint8Array {
  return Uint8Array.from(randomBytes(n));
}

/** A fresh, valid address nobody has, in the coin's usual format (checked by the backend's validator). */
export function freshAddress(coin: Ticker): string {
  let raw: string;
  switch (coin) {
    case "BTC":
      raw = bech32.encode("bc", [0, ...bech32.toWords(hash(20))]);
      break;
    case "SOL":
      raw = base58.encode(hash(32));
      break;
    case "DOGE":
      raw = base58check.encode(Uint8Array.of(0x1e, ...hash(20)));
      break;
    case "TRX":
      raw = base58check.encode(Uint8Array.of(0x41, ...hash(20)));
      break;
    case "XRP": {
      const body = Uint8Array.of(0x00, ...hash(20));
      raw = base58xrp.encode(Uint8Array.of(...body, ...sha256(sha256(body)).subarray(0, 4)));
      break;
    }
    case "ADA":
      // A Shelley enterprise address (header 0x61: key hash, mainnet).
      raw = bech32.encode("addr", bech32.toWords(Uint8Array.of(0x61, ...hash(28))), 200);
      break;
    default:
      raw = `0x${randomBytes(20).toString("hex")}`;
  }
  const checked = validateAddress(coin, raw);
  if (!checked.ok) throw new Error(`generated ${coin} address refused: ${checked.reason}`);
  return checked.address;
}

/** Illustrative USD prices in cents, for the recorded USD values of seeded transactions. */
const PRICE_CENTS: Record<Ticker, bigint> = {
  BTC: 6_500_000n,
  ETH: 320_000n,
  ADA: 45n,
  BNB: 60_000n,
  DOGE: 15n,
  SOL: 15_000n,
  TRX: 12n,
  USDT: 100n,
  XRP: 55n,
};

function usdValue(coin: Ticker, units: bigint): string {
  const cents = (units * PRICE_CENTS[coin]) / 10n ** BigInt(COINS[coin].decimals);
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;
}

/** `whole` coins plus a random fraction, in base units. */
function someUnits(coin: Ticker, whole: number): bigint {
  const scale = 10n ** BigInt(COINS[coin].decimals);
  return BigInt(whole) * scale + (BigInt(randomBytes(4).readUInt32BE()) * scale) / 2n ** 32n;
}

function txid(): string {
  return randomBytes(32).toString("hex");
}

async function newAccount(ctx: AccountsContext, email: string, password: string): Promise<SeededUser> {
  const created = await createAccount(ctx, email, password);
  if (!created.ok) throw new Error(`could not create ${email}: ${created.reason}`);
  return { email, password, userId: created.userId, words: created.words };
}

async function issuedWallet(db: AppDb, userId: string, coin: Ticker): Promise<string> {
  const requested = await requestWallet(db, userId, coin);
  if (!requested.ok) throw new Error(`request ${coin}: ${requested.reason}`);
  const issued = await issueAddress(db, requested.wallet.id, freshAddress(coin));
  if (!issued.ok) throw new Error(`issue ${coin}: ${issued.reason}`);
  return requested.wallet.id;
}

async function deposit(db: AppDb, walletId: string, coin: Ticker, units: bigint): Promise<void> {
  const done = await creditDeposit(db, {
    walletId,
    units,
    externalTxId: txid(),
    amountUsd: usdValue(coin, units),
  });
  if (!done.ok) throw new Error(`deposit ${coin}: ${done.reason}`);
}

async function send(
  db: AppDb,
  walletId: string,
  coin: Ticker,
  units: bigint,
  outcome: "pending" | "Confirmed" | "Declined",
): Promise<void> {
  const hold = await holdWithdrawal(db, {
    walletId,
    units,
    destination: freshAddress(coin),
    amountUsd: usdValue(coin, units),
  });
  if (!hold.ok) throw new Error(`send ${coin}: ${hold.reason}`);
  if (outcome === "Confirmed") await postWithdrawal(db, hold.withdrawalId);
  if (outcome === "Declined")
    await voidWithdrawal(db, hold.withdrawalId, "Declined by compliance review (bench).");
}

/** How many of the page user's 1,000 transactions each coin gets: mostly BTC. */
function transactionsPerCoin(total: number): Map<Ticker, number> {
  const others = TICKERS.filter((t) => t !== "BTC");
  const each = Math.floor((total * 0.4) / others.length);
  const counts = new Map<Ticker, number>(others.map((t) => [t, each]));
  counts.set("BTC", total - each * others.length);
  return counts;
}

/**
 * The page user: nine issued wallets and `transactions` ledger transactions.
 * Per coin, three in five are deposits and two in five sends (of those, seven
 * in ten Confirmed, two Declined, one pending), interleaved in time.
 */
export async function seedPageUser(
  ctx: AccountsContext,
  email: string,
  transactions = 1000,
): Promise<SeededUser & { walletIds: Record<Ticker, string> }> {
  const user = await newAccount(ctx, email, PASSWORD);
  const walletIds = {} as Record<Ticker, string>;
  for (const coin of TICKERS) walletIds[coin] = await issuedWallet(ctx.db, user.userId, coin);
  await inParallel([...transactionsPerCoin(transactions)], 4, async ([coin, count]) => {
    const walletId = walletIds[coin];
    // A large first deposit, so the sends never run the wallet dry.
    await deposit(ctx.db, walletId, coin, someUnits(coin, 1000));
    for (let i = 1; i < count; i++) {
      if (i % 5 < 3) {
        await deposit(ctx.db, walletId, coin, someUnits(coin, 1 + (i % 7)));
      } else {
        const kind = i % 10;
        const outcome = kind === 4 || kind === 9 ? (i % 20 === 9 ? "pending" : "Declined") : "Confirmed";
        await send(ctx.db, walletId, coin, someUnits(coin, 0), outcome);
      }
    }
  });
  return { ...user, walletIds };
}

/** The capacity pool: `count` accounts with wallets, a send and messages. */
export async function seedCapacityAccounts(ctx: AccountsContext, count: number, concurrency: number) {
  const accounts = await inParallel(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const user = await newAccount(ctx, `capacity-${i}@bench.example`, PASSWORD);
      const btc = await issuedWallet(ctx.db, user.userId, "BTC");
      const eth = await issuedWallet(ctx.db, user.userId, "ETH");
      const usdt = await issuedWallet(ctx.db, user.userId, "USDT");
      const sol = await requestWallet(ctx.db, user.userId, "SOL");
      if (!sol.ok) throw new Error("request SOL");
      await deposit(ctx.db, btc, "BTC", someUnits("BTC", 1));
      await deposit(ctx.db, eth, "ETH", someUnits("ETH", 10));
      await deposit(ctx.db, usdt, "USDT", someUnits("USDT", 2500));
      await send(ctx.db, btc, "BTC", someUnits("BTC", 0) / 10n + 1n, "Confirmed");
      const texts = [
        "Welcome to Coinkeep! Your deposit addresses are ready on their wallet pages.",
        "Compliance check: please confirm the purpose of your last send through Support.",
        "Your BTC send has been confirmed.",
      ];
      for (const [n, text] of texts.entries()) {
        const sent = await sendMessage(ctx.db, { to: { userId: user.userId }, message: text });
        if (!sent.ok) throw new Error("message");
        if (n === 0) await openMessage(ctx.db, user.userId, sent.message.id);
      }
      return user;
    },
  );
  await sendMessage(ctx.db, { to: "all", message: "Scheduled maintenance on Sunday 02:00–03:00 UTC." });
  return accounts;
}

/** The money path's senders: an ETH wallet with 1,000 ETH each. */
export async function seedSenders(
  ctx: AccountsContext,
  count: number,
  concurrency: number,
  /** The e-mails' start (`<tag>-<i>@bench.example`): another tag, other senders on the same database. */
  tag = "sender",
): Promise<Sender[]> {
  return inParallel(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const user = await newAccount(ctx, `${tag}-${i}@bench.example`, PASSWORD);
      const walletId = await issuedWallet(ctx.db, user.userId, "ETH");
      await deposit(ctx.db, walletId, "ETH", 1000n * 10n ** 18n);
      return { ...user, walletId, destination: freshAddress("ETH") };
    },
  );
}

/**
 * The capacity levels' change (record 033's live events): a message to one of `accounts` in
 * turn, as an operator sends it — on `db` when given (PostgreSQL, a connection of the bench's
 * own, as `npm run ops` does), else through the running server's ops socket in `dataDir`
 * (PGlite, which one process holds).
 */
export function messageRaiser(
  accounts: readonly SeededUser[],
  via: { db: AppDb } | { dataDir: string },
): (index: number) => Promise<void> {
  let changeCount = 0;
  return async (index) => {
    const account = accounts[index % accounts.length] as SeededUser;
    const text = `Bench notice ${++changeCount}: please review your account.`;
    if ("db" in via) {
      const sent = await sendMessage(via.db, { to: { userId: account.userId }, message: text });
      if (!sent.ok) throw new Error("the message was not sent");
      return;
    }
    const answer = await callOpsSocket(opsSocketPath(via.dataDir), [
      "--as=bench",
      "message",
      "--to",
      account.email,
      text,
    ]);
    if (answer?.code !== 0) throw new Error(`the message was not sent: ${answer?.stderr ?? "no server"}`);
  };
}
