// The send flow's server side (spec section 4, "Send flow"): every step as a
// round trip for pages without scripts (convert, 'Full', review, back to the
// form), and the one call that moves coins (Confirm → call 6), for both modes.
import { randomBytes } from "node:crypto";
import { data, redirect, type RouterContextProvider } from "react-router";
import type { Ticker } from "../common/coins";
import { AMOUNT_FORMAT } from "../common/contract/amounts";
import { log } from "../common/log";
import { backend } from "./api.server";
import { parseDecimal, ZERO } from "../common/decimal";
import {
  amountToSend,
  checkSend,
  coinToFiat,
  emptyFields,
  fiatToCoin,
  fullAmount,
  parseAmount,
  SEND_KEY,
  sendFailureMessage,
  sendPrice,
  usdValueOf,
  type SendErrors,
  type SendValues,
} from "./send";
import { forgetWalletView, loadWalletView } from "./wallet-view.server";

/** The intents of the send form's buttons. */
export const SEND_INTENTS = ["convert-coin", "convert-fiat", "full", "review", "edit", "confirm"] as const;
export type SendIntent = (typeof SEND_INTENTS)[number];

export function isSendIntent(value: unknown): value is SendIntent {
  return typeof value === "string" && (SEND_INTENTS as readonly string[]).includes(value);
}

/** What the action answers for a send step that stays on the page. */
export interface SendReply {
  /** "form": the form, open; "confirm": the risk warning over it. */
  step: "form" | "confirm";
  values: SendValues;
  /** The idempotency key the form carries on. */
  key: string;
  errors: SendErrors;
  /** Fields to mark invalid beside a form-level message (e.g. the empty ones). */
  invalid: (keyof SendValues)[];
}

/**
 * A fresh idempotency key for a send form: 32 characters of [A-Za-z0-9_-]
 * (192 random bits). Not a secret: it only tells two submissions of one form apart.
 */
export function newSendKey(): string {
  return randomBytes(24).toString("base64url");
}

function readValues(formData: FormData): SendValues {
  const text = (name: string) => {
    const value = formData.get(name);
    return typeof value === "string" ? value.slice(0, 256) : "";
  };
  return { address: text("address").trim(), coin: text("coin").trim(), fiat: text("fiat").trim() };
}

/**
 * Handles one press of a send-form button. Answers the page to show (with
 * status 400 when something needs fixing), or on a successful Confirm
 * redirects to the 'Sent!' view (post/redirect/get).
 */
export async function sendAction({
  intent,
  formData,
  request,
  context,
  ticker,
}: {
  intent: SendIntent;
  formData: FormData;
  request: Request;
  context: Readonly<RouterContextProvider>;
  ticker: Ticker;
}) {
  const values = readValues(formData);
  const posted = formData.get("key");
  const keyOk = typeof posted === "string" && SEND_KEY.test(posted);
  let key = keyOk ? posted : newSendKey();

  const reply = (
    step: SendReply["step"],
    errors: SendErrors = {},
    { invalid = [], status = 200 }: { invalid?: (keyof SendValues)[]; status?: number } = {},
  ) => data({ send: { step, values, key, errors, invalid } satisfies SendReply }, { status });

  // The wallet, its price and the display currency's rate: one load per
  // request, which the page's loaders that render this answer share (an
  // answered step costs no second load; only a Confirm's redirect loads anew).
  const { user, view } = await loadWalletView(request, context);
  const path = `/wallet/${ticker.toLowerCase()}`;
  const row = view.rows.find((r) => r.ticker === ticker);
  // Only a wallet with an address can send (spec section 4): otherwise show the page as it is.
  if (!row || row.state !== "issued" || !row.walletId) throw redirect(path);
  const walletId = row.walletId;
  const price = sendPrice(ticker, row.price);
  const multiplier = parseDecimal(view.multiplier) ?? { units: 1n, scale: 0 };
  const noPrice = `No ${ticker} price is available right now, so the amounts cannot be converted.`;

  switch (intent) {
    case "edit":
      return reply("form");

    case "full": {
      const balance = parseDecimal(row.balance) ?? ZERO;
      values.coin = fullAmount(balance);
      const coin = parseAmount(values.coin);
      if (coin && price) values.fiat = coinToFiat(coin, price, multiplier);
      return reply("form");
    }

    case "convert-coin": {
      if (!values.coin) return reply("form", { coin: ["Enter an amount to convert."] }, { status: 400 });
      const coin = parseAmount(values.coin);
      if (!coin) return reply("form", { coin: [AMOUNT_FORMAT] }, { status: 400 });
      if (!price) return reply("form", { form: [noPrice] }, { status: 400 });
      values.fiat = coinToFiat(coin, price, multiplier);
      return reply("form");
    }

    case "convert-fiat": {
      if (!values.fiat) return reply("form", { fiat: ["Enter an amount to convert."] }, { status: 400 });
      const fiat = parseAmount(values.fiat);
      if (!fiat) return reply("form", { fiat: [AMOUNT_FORMAT] }, { status: 400 });
      const coin = price ? fiatToCoin(fiat, price, multiplier) : undefined;
      if (coin === undefined) return reply("form", { form: [noPrice] }, { status: 400 });
      values.coin = coin;
      return reply("form");
    }

    case "review":
    case "confirm": {
      const check = checkSend(values);
      if (!check.ok) return reply("form", check.errors, { invalid: emptyFields(values), status: 400 });
      if (intent === "review") return reply("confirm");
      // A Confirm without its key cannot be told apart from another one: ask again, with a new key.
      if (!keyOk) {
        return reply("form", { form: ["This form has expired. Please press Send again."] }, { status: 400 });
      }
      const amount = amountToSend(check.coin);
      const answer = await backend(context).requestTransaction({
        email: user.email,
        twelveWords: user.words,
        walletId,
        amount,
        amountInUsd: usdValueOf(check.coin, price),
        receiverWalletAddress: check.address,
        idempotencyKey: key,
      });
      if (answer.ok) {
        return redirect(`${path}?sent=${encodeURIComponent(answer.data.transaction.id)}`);
      }
      // A refusal is final: the next try is a new request, with a new key. After a network
      // failure the outcome is unknown: the same key again cannot send twice.
      if (answer.kind === "rejected") key = newSendKey();
      else {
        log.warn("Send failed", { reason: answer.message });
        // The send may have happened: the page shows balances read afresh.
        forgetWalletView(context);
      }
      return reply(
        "form",
        { form: [sendFailureMessage(answer)] },
        {
          status: answer.kind === "rejected" ? 400 : 502,
        },
      );
    }
  }
}
