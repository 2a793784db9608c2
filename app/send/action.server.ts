// The send flow's server side (spec section 4, "Send flow"): every step as a
// round trip for pages without scripts (convert, 'Full', review, back to the
// form), and the one call that moves coins (Confirm → call 6), for both modes.
import { randomBytes } from "node:crypto";
import { parseWithZod } from "@conform-to/zod/v4";
import { data, redirect, type RouterContextProvider } from "react-router";
import type { Ticker } from "../../common/coins.ts";
import { AMOUNT_FORMAT } from "../../common/contract/amounts.ts";
import { log } from "../../common/log.ts";
import { backend, limitedAnswer } from "../backend.server.ts";
import { commitSession, getSession, liveGrant } from "../session.server.ts";
import { CODE_REQUIRED } from "../forms/two-factor.ts";
import { parseDecimal, ZERO } from "../../common/decimal.ts";
import { allowlistRule, loadAllowlist } from "../allowlist.server.ts";
import {
  addressRefusal,
  amountToSend,
  coinToFiat,
  completeAmounts,
  emptyFields,
  fiatToCoin,
  fullAmount,
  parseAmount,
  SEND_KEY,
  sendFailureMessage,
  sendPrice,
  usdtNetworkOf,
  usdValueOf,
  type SendAmounts,
  type SendErrors,
  type SendIntent,
  type SendReply,
  type SendValues,
} from "./rules.ts";
import { sendSchemaFor, sendValuesSchema } from "./schema.ts";
import { forgetWalletView, loadWalletView } from "../wallet-view.server.ts";

export { isSendIntent, type SendIntent } from "./rules.ts";

/** The typed values, bounded and trimmed as the schema reads them, to show again. */
function readValues(formData: FormData): SendValues {
  const text = (name: string) => {
    const value = formData.get(name);
    return typeof value === "string" ? value : undefined;
  };
  return sendValuesSchema.parse({
    address: text("address"),
    coin: text("coin"),
    fiat: text("fiat"),
    tag: text("tag"),
  });
}

/** The posted form with these amounts in place of the posted ones. */
function withAmounts(formData: FormData, amounts: SendAmounts): FormData {
  const completed = new FormData();
  for (const [name, value] of formData) if (name !== "coin" && name !== "fiat") completed.append(name, value);
  completed.set("coin", amounts.coin);
  completed.set("fiat", amounts.fiat);
  return completed;
}

/**
 * A fresh idempotency key for a send form: 32 characters of [A-Za-z0-9_-]
 * (192 random bits). Not a secret: it only tells two submissions of one form apart.
 */
export function newSendKey(): string {
  return randomBytes(24).toString("base64url");
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

  const values = readValues(formData);
  // 'Send' with one amount given (without scripts nothing converts as you type): the other
  // follows from the price shown, as 'Convert' fills it in, and the rules check both; the page
  // shows both, and the warning's Confirm posts them back, checked again (issue 24). Only this
  // press fills in: a Confirm with one amount is refused as before.
  let checked = formData;
  if (intent === "review") {
    const amounts = completeAmounts(values, price, multiplier);
    if (amounts.coin !== values.coin || amounts.fiat !== values.fiat) {
      Object.assign(values, amounts);
      checked = withAmounts(formData, amounts);
    }
  }

  // The server always checks: 'Send' and Confirm against the form's rules (the address by its
  // network's), the other buttons read the values only (see sendSchemaFor).
  // While only saved addresses may receive sends (record 048), 'Send' checks the address against
  // them too, before the warning: the page that answers reads the list anyway (one read, shared).
  // Confirm leaves it to call 6, whose refusal comes back at the address field: a read here would
  // cost every send one more, allowlist or not.
  const allowlist =
    intent === "review" ? allowlistRule(await loadAllowlist(context, user), ticker) : undefined;
  const submission = parseWithZod(checked, {
    schema: sendSchemaFor(intent, { ticker, usdtNetwork: usdtNetworkOf(row.address) }, allowlist),
  });
  const posted = formData.get("key");
  const keyOk = typeof posted === "string" && SEND_KEY.test(posted);
  let key = keyOk ? posted : newSendKey();

  const reply = (
    step: SendReply["step"],
    errors: SendErrors = {},
    {
      invalid = [],
      status = 200,
      filled,
      tag,
      needsCode,
      headers,
    }: {
      invalid?: (keyof SendValues)[];
      status?: number;
      filled?: keyof SendValues;
      tag?: number | null;
      /** Two-factor's step-up (issue 27): the risk warning asks for a code. */
      needsCode?: boolean;
      headers?: HeadersInit;
    } = {},
  ) => {
    const { form: formErrors, ...fieldErrors } = errors;
    const result = submission.reply(
      formErrors || Object.keys(fieldErrors).length ? { formErrors, fieldErrors } : undefined,
    );
    const send: SendReply = {
      step,
      values,
      key,
      result,
      invalid,
      ...(filled ? { filled } : {}),
      ...(tag != null ? { tag } : {}),
      ...(needsCode ? { needsCode } : {}),
    };
    return data({ send }, { status, ...(headers ? { headers } : {}) });
  };

  const noPrice = `No ${ticker} price is available right now, so the amounts cannot be converted.`;

  switch (intent) {
    case "edit":
      return reply("form", {}, { filled: "address" });

    case "full": {
      const balance = parseDecimal(row.balance) ?? ZERO;
      values.coin = fullAmount(balance);
      const coin = parseAmount(values.coin);
      if (coin && price) values.fiat = coinToFiat(coin, price, multiplier);
      return reply("form", {}, { filled: "coin" });
    }

    case "convert-coin": {
      if (!values.coin) return reply("form", { coin: ["Enter an amount to convert."] }, { status: 400 });
      const coin = parseAmount(values.coin);
      if (!coin) return reply("form", { coin: [AMOUNT_FORMAT] }, { status: 400 });
      if (!price) return reply("form", { form: [noPrice] }, { status: 400 });
      values.fiat = coinToFiat(coin, price, multiplier);
      return reply("form", {}, { filled: "fiat" });
    }

    case "convert-fiat": {
      if (!values.fiat) return reply("form", { fiat: ["Enter an amount to convert."] }, { status: 400 });
      const fiat = parseAmount(values.fiat);
      if (!fiat) return reply("form", { fiat: [AMOUNT_FORMAT] }, { status: 400 });
      const coin = price ? fiatToCoin(fiat, price, multiplier) : undefined;
      if (coin === undefined) return reply("form", { form: [noPrice] }, { status: 400 });
      values.coin = coin;
      return reply("form", {}, { filled: "coin" });
    }

    case "review":
    case "confirm": {
      // The schema's errors are in the submission already: the reply carries them.
      if (submission.status !== "success") {
        return reply("form", {}, { invalid: emptyFields(values), status: 400 });
      }
      // Past the schema the amount parses; this only tells the type so.
      const coin = parseAmount(submission.value.coin);
      if (!coin) return reply("form", { coin: [AMOUNT_FORMAT] }, { status: 400 });
      // Where it goes: an XRP X-address is sent as its classic address and the tag it carries.
      const destination =
        "destination" in submission.value
          ? submission.value.destination
          : { address: submission.value.address, tag: null };
      if (intent === "review") return reply("confirm", {}, { tag: destination.tag });
      // A Confirm without its key cannot be told apart from another one: ask again, with a new key.
      if (!keyOk) {
        return reply("form", { form: ["This form has expired. Please press Send again."] }, { status: 400 });
      }
      const amount = amountToSend(coin);
      // Step-up (issue 27, record 048): a code typed in the risk warning buys this session a
      // grant for 5 minutes, which this send and the next ones carry.
      const session = await getSession(request, context);
      let grant = liveGrant(session);
      let headers: HeadersInit | undefined;
      const askCode = (text: string, status = 400) =>
        reply("confirm", { code: [text] }, { status, tag: destination.tag, needsCode: true, headers });
      const typed = formData.get("code");
      const code = typeof typed === "string" ? typed.trim() : "";
      if (code) {
        if (code.length > 64) return askCode("Enter the 6-digit code, or a recovery code like abcde-fghjk.");
        const verified = await backend(context).twoFactorVerify({
          email: user.email,
          twelveWords: user.words,
          twoFactorCode: code,
        });
        if (verified.ok) {
          grant = verified.data.grant;
          session.set("stepUp", { grant, until: Date.parse(verified.data.expires_at) - 5_000 });
          headers = { "Set-Cookie": await commitSession(session, context) };
        } else {
          const limited = limitedAnswer(verified);
          if (limited) {
            return reply(
              "confirm",
              { form: [limited.message] },
              { status: limited.status, tag: destination.tag, needsCode: true },
            );
          }
          if (verified.kind === "network") return askCode("Something went wrong!", 502);
          // Off meanwhile: the send needs no code.
          if (verified.code !== "two_factor_off") return askCode(verified.message);
        }
      }
      const answer = await backend(context).requestTransaction({
        email: user.email,
        twelveWords: user.words,
        walletId,
        amount,
        amountInUsd: usdValueOf(coin, price),
        receiverWalletAddress: destination.address,
        ...(destination.tag === null ? {} : { destinationTag: destination.tag }),
        idempotencyKey: key,
        ...(grant ? { twoFactorGrant: grant } : {}),
      });
      if (answer.ok) {
        return redirect(
          `${path}?sent=${encodeURIComponent(answer.data.transaction.id)}`,
          headers ? { headers } : undefined,
        );
      }
      if (
        answer.kind === "rejected" &&
        answer.code.startsWith("two_factor_") &&
        answer.code !== "two_factor_hold"
      ) {
        return askCode(answer.code === "two_factor_required" ? CODE_REQUIRED : answer.message);
      }
      // A refusal is final: the next try is a new request, with a new key. After a network
      // failure the outcome is unknown: the same key again cannot send twice.
      if (answer.kind === "rejected") key = newSendKey();
      else {
        log.warn("Send failed", { reason: answer.message });
        // The send may have happened: the page shows balances read afresh.
        forgetWalletView(context);
      }
      // Refused by the holder's allowlist (record 048): said at the address, nothing was held.
      const atAddress = addressRefusal(answer);
      if (atAddress) {
        return reply("form", { address: [atAddress] }, { status: 400, ...(headers ? { headers } : {}) });
      }
      return reply(
        "form",
        { form: [sendFailureMessage(answer)] },
        {
          status: answer.kind === "rejected" ? 400 : 502,
          ...(headers ? { headers } : {}),
        },
      );
    }
  }
}
