// Sends (call 6): a user asks to move coins out of one of their wallets.
//
// The request is checked in this order, and nothing is written unless every
// check passes: the wallet is the caller's (anyone else's wallet is answered
// exactly as a wallet that does not exist), the amount is a positive decimal
// with at most 4 decimals, the destination is a valid address of the wallet's
// coin (an XRP X-address resolved into its classic address and tag) with a
// destination tag only for XRP, and not the wallet's own, sends are not paused for the coin or the
// user (record 041), the wallet has an address, with the holder's allowlist on the destination is
// one of their saved addresses whose hold has ended (record 048), and the available balance covers
// the amount. The send is then a hold in the ledger (see
// ledger.ts), 'pending' until an operator approves or declines it.
//
// Idempotency: a request may carry a key. The first request with a key that
// creates a send records (user, key, request hash, answer) in the same
// transaction as the hold; the same key again with the same request answers
// the recorded answer and writes nothing; with a different request it is
// refused. A refused request records nothing, so its key stays free.
import { createHash } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import { SEND_DECIMALS } from "../../../common/contract/amounts.ts";
import type { CallBody } from "../../../common/contract/calls.ts";
import { perDatabase, type AppDb } from "../db/index.ts";
import { sendRequests, wallets } from "../db/schema.ts";
import { isUniqueViolation } from "./accounts.ts";
import { resolveDestination, type UsdtNetwork } from "../../../common/addresses.ts";
import { formatAmount, parseAmount, usdValue } from "./amounts.ts";
import { holdSend, isUuid, type HoldSendResult } from "./ledger.ts";
import type { ClientTransaction } from "./wallets.ts";

// Spec section 5: the amount sent has at most SEND_DECIMALS (4) decimals (the contract's rule).

/**
 * The send as call 6 answers it: the shape of a call-4 transaction without its transaction_id,
 * always pending (destination_tag for XRP sends with a destination tag only).
 */
export type SentTransaction = Omit<ClientTransaction, "transaction_id" | "status"> & { status: "pending" };

/**
 * Call 6's decoded body (the amount as received: decimal text or a JSON number; XRP's
 * destination tag, which an X-address may carry too), and who sends.
 */
export interface SendInput extends Pick<
  CallBody<"requestTransaction">,
  "walletId" | "amount" | "receiverWalletAddress" | "destinationTag" | "idempotencyKey"
> {
  userId: string;
  /** The coin's USD price now (plain decimal), or null when none is known. */
  usdPrice: (coin: Ticker) => Promise<string | null>;
  usdtNetwork?: UsdtNetwork;
  /** The holds' clock now: the allowlist's holds end by it (record 048). Default: the system clock. */
  allowlistAt?: Date;
}

export type SendResult =
  | { ok: true; replayed: boolean; transaction: SentTransaction }
  | { ok: false; reason: "wallet-not-found" | "no-address" | "own-address" | "idempotency-conflict" }
  | { ok: false; reason: "invalid-amount" | "invalid-address" | "invalid-destination-tag"; detail: string }
  | { ok: false; reason: "insufficient-balance" }
  /** Sends are paused for the wallet's coin or for its user (record 041). */
  | { ok: false; reason: "sends-paused"; scope: "coin" | "user"; coin: Ticker }
  /** Only saved addresses may receive sends, and this is none, or not yet usable (record 048). */
  | { ok: false; reason: "not-allowlisted"; usableFrom: Date | null };

/** The amount's decimal text: a JSON number by its shortest round-trip text ("1e-7" stays refused). */
function amountText(amount: string | number): string {
  return typeof amount === "number" ? String(amount) : amount;
}

function requestHash(walletId: string, units: bigint, destination: string, tag: number | null): string {
  // Without a tag the hash is the one recorded before tags existed.
  const request = [walletId, units.toString(), destination, ...(tag === null ? [] : [tag])];
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

async function recorded(
  db: AppDb,
  userId: string,
  key: string,
): Promise<{ requestHash: string; response: SentTransaction } | undefined> {
  const [row] = await db
    .select({ requestHash: sendRequests.requestHash, response: sendRequests.response })
    .from(sendRequests)
    .where(and(eq(sendRequests.userId, userId), eq(sendRequests.idempotencyKey, key)));
  return row ? { requestHash: row.requestHash, response: row.response as SentTransaction } : undefined;
}

/** Whether the user's send under this idempotency key is recorded (its replay needs no step-up). */
export async function sendRecorded(db: AppDb, userId: string, key: string): Promise<boolean> {
  return (await recorded(db, userId, key)) !== undefined;
}

function replay(found: { requestHash: string; response: SentTransaction }, hash: string): SendResult {
  return found.requestHash === hash
    ? { ok: true, replayed: true, transaction: found.response }
    : { ok: false, reason: "idempotency-conflict" };
}

// The wallet read of every send, prepared once per database (built once, planned once per connection).
const walletQuery = perDatabase((db) =>
  db
    .select({ id: wallets.id, userId: wallets.userId, coin: wallets.coin })
    .from(wallets)
    .where(eq(wallets.id, sql.placeholder("id")))
    .prepare("coinkeep_sends_find_wallet"),
);

interface KnownWallet {
  id: string;
  userId: string;
  coin: Ticker;
}

/**
 * Wallets already read, per database and by id as given: a wallet's id, owner
 * and coin never change once it exists (only its address is set, once), so a
 * known wallet needs no read. The hold checks the owner and the coin again
 * under its lock. Bounded: the oldest entries go first.
 */
const knownWallets = perDatabase(() => new Map<string, KnownWallet>());
const MAX_KNOWN_WALLETS = 50_000;

/** The wallet's id as the database spells it, its owner and its coin; undefined when there is none. */
async function findWallet(db: AppDb, walletId: string): Promise<KnownWallet | undefined> {
  const known = knownWallets(db);
  const cached = known.get(walletId);
  if (cached) return cached;
  const [row] = await walletQuery(db).execute({ id: walletId });
  if (!row) return undefined;
  if (!isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
  const wallet = { id: row.id, userId: row.userId, coin: row.coin };
  if (known.size >= MAX_KNOWN_WALLETS) {
    const oldest = known.keys().next();
    if (!oldest.done) known.delete(oldest.value);
  }
  known.set(walletId, wallet);
  return wallet;
}

/**
 * Round trips: the wallet's owner and coin (one read, none once the wallet is
 * known), then one statement that looks the key up and, unless recorded or
 * refused, holds and records (holdSend in ledger.ts). A race between two
 * requests with one key costs one more read.
 */
export async function requestSend(db: AppDb, input: SendInput): Promise<SendResult> {
  const { userId, idempotencyKey: key } = input;
  const wallet = isUuid(input.walletId) ? await findWallet(db, input.walletId) : undefined;
  if (!wallet || wallet.userId !== userId) return { ok: false, reason: "wallet-not-found" };
  const { id: walletId, coin } = wallet;

  const amount = parseAmount(coin, amountText(input.amount), { maxDecimals: SEND_DECIMALS });
  if (!amount.ok) return { ok: false, reason: "invalid-amount", detail: amount.reason };
  // An X-address becomes its classic address and the tag it carries (common/addresses.ts).
  const checked = resolveDestination(
    coin,
    input.receiverWalletAddress,
    input.destinationTag ?? null,
    input.usdtNetwork ? { usdtNetwork: input.usdtNetwork } : {},
  );
  if (!checked.ok) {
    return checked.field === "tag"
      ? { ok: false, reason: "invalid-destination-tag", detail: checked.reason }
      : { ok: false, reason: "invalid-address", detail: checked.reason };
  }
  const { address: destination, tag } = checked;
  const hash = requestHash(walletId, amount.units, destination, tag);

  const price = await input.usdPrice(coin);
  const amountUsd = price === null ? null : usdValue(coin, amount.units, price);
  // The answer; the hold's statement adds the withdrawal's id and date (also to the recorded copy).
  const answer: Omit<SentTransaction, "id" | "date"> = {
    wallet_id: walletId,
    recipient_wallet: destination,
    amount_in_crypto: formatAmount(coin, amount.units),
    amount_in_dollar: amountUsd,
    transaction_crypto: coin,
    status: "pending",
    ...(tag === null ? {} : { destination_tag: tag }),
  };

  let held: HoldSendResult;
  try {
    held = await holdSend(db, {
      walletId,
      ownerId: userId,
      coin,
      units: amount.units,
      destination,
      destinationTag: tag,
      amountUsd,
      ...(input.allowlistAt ? { allowlistAt: input.allowlistAt } : {}),
      ...(key === undefined ? {} : { record: { userId, key, requestHash: hash, response: answer } }),
    });
  } catch (error) {
    // A concurrent request with the same key committed first: its hold stands, ours rolled back.
    if (key === undefined || !isUniqueViolation(error)) throw error;
    const found = await recorded(db, userId, key);
    if (!found) throw error;
    return replay(found, hash);
  }
  if (held.ok) {
    const transaction: SentTransaction = { id: held.withdrawalId, date: held.date, ...answer };
    return { ok: true, replayed: false, transaction };
  }
  if (held.reason === "recorded") {
    return replay({ requestHash: held.requestHash, response: held.response as SentTransaction }, hash);
  }
  // Refused after waiting for a concurrent request with the same key (its hold took the balance):
  // that request is this one, so its answer is ours.
  if (key !== undefined) {
    const found = await recorded(db, userId, key);
    if (found) return replay(found, hash);
  }
  if (held.reason === "sends-paused") return { ok: false, reason: "sends-paused", scope: held.scope, coin };
  if (held.reason === "not-allowlisted") {
    return { ok: false, reason: "not-allowlisted", usableFrom: held.usableFrom };
  }
  return held.reason === "insufficient-balance"
    ? { ok: false, reason: "insufficient-balance" }
    : { ok: false, reason: held.reason };
}
