// The send form's rules (spec section 5, "Send"), shared by the server (always)
// and the browser (as an enhancement): what an amount may look like, how the
// coin and fiat amounts convert into each other, what 'Full' fills in. Exact
// decimal arithmetic throughout; never a float.
import type { SubmissionResult } from "@conform-to/react";
import {
  AMOUNT_COMPLETE,
  AMOUNT_TYPING,
  FIAT_DECIMALS,
  fixedUsdPrice,
  SEND_DECIMALS,
} from "../../common/contract/amounts.ts";
import type { BackendFailure } from "../../common/contract/client.ts";
import {
  divide,
  isPositive,
  multiply,
  parseDecimal,
  round,
  toFixed,
  toPlain,
  type Decimal,
} from "../../common/decimal.ts";

export const FILL_OUT_ALL_FIELDS = "Please fill out all fields.";
export const AMOUNT_POSITIVE = "Enter an amount greater than 0.";

/** The values of the send form, as typed; `tag` is XRP's optional destination tag ("" for none). */
export interface SendValues {
  address: string;
  coin: string;
  fiat: string;
  tag: string;
}

export const EMPTY_SEND_VALUES: SendValues = { address: "", coin: "", fiat: "", tag: "" };

/** Whether an amount input may take this text (a keystroke that leaves it otherwise is refused). */
export function acceptsAmountInput(text: string): boolean {
  return AMOUNT_TYPING.test(text);
}

/** A finished amount as an exact decimal ("0.5", ".5", "5."), or undefined. */
export function parseAmount(text: string): Decimal | undefined {
  const trimmed = text.trim();
  if (!AMOUNT_COMPLETE.test(trimmed)) return undefined;
  const [whole = "", fraction = ""] = trimmed.split(".");
  return parseDecimal(`${whole || "0"}${fraction ? `.${fraction}` : ""}`);
}

/**
 * The coin's USD price for sends: USDT is always 1 (spec section 5 and 9);
 * other coins their last price, when one is known and positive.
 */
export function sendPrice(ticker: string, lastPrice: string | null): Decimal | undefined {
  const price = parseDecimal(fixedUsdPrice(ticker) ?? lastPrice);
  return price && isPositive(price) ? price : undefined;
}

/** Coin → fiat in the display currency: coin × USD price × multiplier, 2 decimals (half away from zero). */
export function coinToFiat(coin: Decimal, price: Decimal, multiplier: Decimal): string {
  return toFixed(multiply(multiply(coin, price), multiplier), FIAT_DECIMALS);
}

/**
 * Fiat → coin: fiat ÷ (USD price × multiplier), truncated to 4 decimals so the
 * coin amount never exceeds what the fiat figure buys. Undefined without a rate.
 */
export function fiatToCoin(fiat: Decimal, price: Decimal, multiplier: Decimal): string | undefined {
  const rate = multiply(price, multiplier);
  if (!isPositive(rate)) return undefined;
  return toPlain(divide(fiat, rate, SEND_DECIMALS, { truncate: true }));
}

/** The two amounts of the form. */
export type SendAmounts = Pick<SendValues, "coin" | "fiat">;

/**
 * The coin amount typed: the fiat one follows when there is a price. An
 * unfinished amount ('0.', '.') leaves it as it is; an emptied one empties it.
 */
export function withCoinAmount(
  amounts: SendAmounts,
  text: string,
  price: Decimal | undefined,
  multiplier: Decimal,
): SendAmounts {
  const coin = parseAmount(text);
  return { coin: text, fiat: coin && price ? coinToFiat(coin, price, multiplier) : text ? amounts.fiat : "" };
}

/** The fiat amount typed: the coin one follows, as withCoinAmount does the other way. */
export function withFiatAmount(
  amounts: SendAmounts,
  text: string,
  price: Decimal | undefined,
  multiplier: Decimal,
): SendAmounts {
  const fiat = parseAmount(text);
  const coin = fiat && price ? fiatToCoin(fiat, price, multiplier) : undefined;
  return { fiat: text, coin: coin ?? (text ? amounts.coin : "") };
}

/**
 * The amounts 'Send' reviews (issue 24): when exactly one is given and it is a
 * finished amount, the other follows from the price as 'Convert' and typing
 * fill it in (withCoinAmount / withFiatAmount); otherwise, or without a price,
 * they stay as they are and the form's rules refuse them as before.
 */
export function completeAmounts(
  amounts: SendAmounts,
  price: Decimal | undefined,
  multiplier: Decimal,
): SendAmounts {
  const coin = amounts.coin.trim();
  const fiat = amounts.fiat.trim();
  if (coin && !fiat && parseAmount(coin)) return withCoinAmount(amounts, coin, price, multiplier);
  if (fiat && !coin && parseAmount(fiat)) return withFiatAmount(amounts, fiat, price, multiplier);
  return amounts;
}

/** 'Full': the whole available balance, truncated to 4 decimals (never more than the balance). */
export function fullAmount(balance: Decimal): string {
  return isPositive(balance) ? amountToSend(balance) : "0";
}

export function truncate4(value: Decimal): Decimal {
  return round(value, SEND_DECIMALS, { truncate: true });
}

/**
 * The amount sent: truncated (not rounded) to 4 decimals, so a send is never
 * larger than what was typed or held. Typed amounts already have at most 4.
 */
export function amountToSend(coin: Decimal): string {
  return toPlain(truncate4(coin));
}

/** The send's USD value (what call 6 takes as amount_in_usd), 2 decimals; "0" when no price is known. */
export function usdValueOf(coin: Decimal, price: Decimal | undefined): string {
  return price ? toFixed(multiply(coin, price), FIAT_DECIMALS) : "0";
}

/**
 * The network a send of this coin travels on, for the risk warning. USDT runs
 * on Ethereum or TRON depending on the deployment: the wallet's own address
 * says which.
 */
/** The network USDT is sent on here, told by the wallet's own address (TRON's start with T). */
export function usdtNetworkOf(ownAddress: string | null): "erc20" | "trc20" {
  return ownAddress?.startsWith("T") ? "trc20" : "erc20";
}

/**
 * The network a deposit must arrive on, as exchanges name it: the token
 * standard where a coin's name alone is ambiguous (USDT, BNB).
 */
export function receiveNetwork(ticker: string, network: string, ownAddress: string | null): string {
  if (ticker === "BNB") return "BNB Smart Chain (BEP-20)";
  return sendNetwork(ticker, network, ownAddress);
}

export function sendNetwork(ticker: string, network: string, ownAddress: string | null): string {
  if (ticker !== "USDT" || !ownAddress) return network;
  if (ownAddress.startsWith("T")) return "TRON (TRC-20)";
  if (ownAddress.startsWith("0x")) return "Ethereum (ERC-20)";
  return network;
}

/** A saved address the send form offers in the address field's suggestions: the value to type, its label. */
export interface AddressOffer {
  value: string;
  label: string;
}

/** A send key: 16–128 of [A-Za-z0-9_-] (the backend's idempotency key format). */
export const SEND_KEY = /^[A-Za-z0-9_-]{16,128}$/u;

/** The intents of the send form's buttons. */
export const SEND_INTENTS = ["convert-coin", "convert-fiat", "full", "review", "edit", "confirm"] as const;
export type SendIntent = (typeof SEND_INTENTS)[number];

export function isSendIntent(value: unknown): value is SendIntent {
  return typeof value === "string" && (SEND_INTENTS as readonly string[]).includes(value);
}

export interface SendErrors {
  form?: string[];
  address?: string[];
  tag?: string[];
  coin?: string[];
  fiat?: string[];
  /** Two-factor's step-up code (issue 27), in the risk warning. */
  code?: string[];
}

/** Which fields an error list leaves empty, to mark them invalid beside the form-level message. */
export function emptyFields(values: Pick<SendValues, "address" | "coin" | "fiat">): (keyof SendValues)[] {
  return (["address", "coin", "fiat"] as const).filter((name) => !values[name].trim());
}

/** What the action answers for a send step that stays on the page (see send.server.ts). */
export interface SendReply {
  /** "form": the form, open; "confirm": the risk warning over it. */
  step: "form" | "confirm";
  /** The values to show: as posted, or as 'Full' or 'Convert' filled them in. */
  values: SendValues;
  /** The idempotency key the form carries on. */
  key: string;
  /** The submission's reply (conform): its errors are the form's. */
  result: SubmissionResult<string[]>;
  /** Fields to mark invalid beside a form-level message (the empty ones). */
  invalid: (keyof SendValues)[];
  /**
   * The field 'Full' or 'Convert' filled in: without scripts the page comes
   * back with it focused, so it lands on the form, not at the top (issue 15).
   */
  filled?: keyof SendValues;
  /**
   * The risk warning's destination tag (XRP): the one typed, or the one an
   * X-address carries. Only on the "confirm" step, only when there is one.
   */
  tag?: number;
  /** Two-factor's step-up (issue 27): the risk warning asks for a code. */
  needsCode?: boolean;
}

/**
 * Call 6's refusals that belong to the address field (record 048): the allowlist's. The form
 * shows them there, as its own check of the address would.
 */
export function addressRefusal(failure: BackendFailure): string | undefined {
  return failure.kind === "rejected" &&
    (failure.code === "address_not_saved" || failure.code === "address_not_usable_yet")
    ? failure.message
    : undefined;
}

/**
 * The message shown when call 6 refuses or fails (spec section 8): an
 * insufficient balance and paused sends (record 041) as the backend words
 * them, anything else as 'Transaction failed: …'. Decided by the refusal's
 * code, never its text.
 */
export function sendFailureMessage(failure: BackendFailure): string {
  return failure.kind === "rejected" &&
    (failure.code === "insufficient_balance" ||
      failure.code === "sends_paused" ||
      failure.code === "two_factor_hold")
    ? failure.message
    : `Transaction failed: ${failure.message}`;
}
