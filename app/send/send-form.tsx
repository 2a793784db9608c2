import { useEffect } from "react";
import { Form, useNavigation } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import type { Ticker } from "../../common/coins.ts";
import { parseDecimal, ZERO } from "../../common/decimal.ts";
import { formatWalletBalance } from "../lib/format.ts";
import {
  fullAmount,
  sendNetwork,
  sendPrice,
  usdtNetworkOf,
  withCoinAmount,
  withFiatAmount,
  type AddressOffer,
  type SendReply,
} from "./rules.ts";
import type { AllowlistRule } from "../../common/allowlist.ts";
import { CopyButton } from "../components/copy-button.tsx";
import { useHydrated } from "../components/hydrated.ts";
import { AddressField } from "./address-field.tsx";
import { AmountFields } from "./amount-fields.tsx";
import { TagField } from "./tag-field.tsx";
import { SendReview } from "./send-review.tsx";
import { FIELDS, IDS, useSendForm } from "./use-send-form.ts";

/**
 * The send flow's form once open (spec section 4): 'Send {ticker}' validates
 * and opens the risk warning, Confirm sends. SendPanel shows the closed state
 * and loads this module when the form opens (record 034).
 *
 * Without scripts every step is a server round trip: 'Send' is a GET to
 * `?send=1`, the other buttons post the form with an intent (convert, full,
 * review, edit, confirm) and the page comes back from the action's answer.
 * With scripts the same markup runs in place: amounts sync as you type,
 * 'Full' fills in at once, review opens a modal, and only Confirm posts.
 */
export function SendForm({
  ticker,
  network,
  ownAddress,
  balance,
  price: lastPrice,
  multiplier: multiplierText,
  currency,
  sendKey,
  initiallyOpen,
  reply,
  offers = [],
  allowlist,
}: {
  ticker: Ticker;
  /** The coin's network (USDT's is told by the wallet's own address). */
  network: string;
  ownAddress: string;
  /** Available balance, exact decimal text. */
  balance: string;
  /** USD price, exact decimal text, or null. */
  price: string | null;
  multiplier: string;
  currency: string;
  /** A fresh idempotency key from the loader. */
  sendKey: string;
  /** Opened by the user just now (the address takes the focus), or by `?send` in the URL. */
  initiallyOpen: boolean;
  /** The action's answer, when the last submission was a send step. */
  reply: SendReply | undefined;
  /** The coin's saved addresses, offered as the address is typed (record 048). */
  offers?: readonly AddressOffer[];
  /** While only saved addresses may receive sends: what the address is checked against. */
  allowlist?: AllowlistRule | undefined;
}) {
  const hydrated = useHydrated();
  const navigation = useNavigation();
  // The 'Sent!' view comes next: its code is fetched while the form is filled in.
  useEffect(() => {
    void import("../components/send-success.tsx");
  }, []);
  const price = sendPrice(ticker, lastPrice);
  const multiplier = parseDecimal(multiplierText) ?? { units: 1n, scale: 0 };
  const available = parseDecimal(balance) ?? ZERO;

  const send = useSendForm({
    addressRule: { ticker, usdtNetwork: usdtNetworkOf(ownAddress) },
    allowlist,
    sendKey,
    initiallyOpen,
    reply,
    fillIn: (intent, values) => ({
      ...values,
      ...(intent === "convert-fiat"
        ? withFiatAmount(values, values.fiat, price, multiplier)
        : withCoinAmount(values, intent === "full" ? fullAmount(available) : values.coin, price, multiplier)),
    }),
  });
  const { values, shown, formErrors } = send;

  const confirmOpen = send.step === "confirm";
  // Without scripts, the first field with an error takes the focus when the page comes back, or
  // else the one 'Full' or 'Convert' filled in: the page lands on the form, not at its top.
  const startField = hydrated
    ? undefined
    : (FIELDS.find((name) => send.fieldInvalid(name)) ?? (formErrors.length ? undefined : reply?.filled));
  const confirming = navigation.state === "submitting" && navigation.formData?.get("intent") === "confirm";

  return (
    <Form
      method="post"
      id={send.form.id}
      className="send-form"
      noValidate
      aria-labelledby={IDS.title}
      onSubmit={send.onSubmit}
    >
      <h2 id={IDS.title} className="send-title">
        Send {ticker}
      </h2>
      <AuthenticityTokenInput />
      <input type="hidden" name="key" value={send.key} />
      {/* Enter in a field reviews the form: the first submit button is the one Enter presses. */}
      <button
        type="submit"
        name="intent"
        value="review"
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
      >
        Review
      </button>
      <div className="send-fields" inert={(confirmOpen && !hydrated) || undefined}>
        <AddressField
          value={values.address}
          onChange={(address) => send.setValues({ ...values, address })}
          aria={send.fieldAria("address")}
          errors={shown.address}
          offers={offers}
          autoFocus={(initiallyOpen && !reply) || startField === "address"}
        />
        {ticker === "XRP" ? (
          <TagField
            value={values.tag}
            onChange={(tag) => send.setValues({ ...values, tag })}
            aria={send.fieldAria("tag", IDS.tagHint)}
            errors={shown.tag}
            autoFocus={startField === "tag"}
          />
        ) : null}
        <AmountFields
          ticker={ticker}
          currency={currency}
          available={formatWalletBalance(available)}
          hasPrice={Boolean(price)}
          scripted={hydrated}
          coin={values.coin}
          fiat={values.fiat}
          onChange={(name, text) =>
            send.setValues({
              ...values,
              ...(name === "coin" ? withCoinAmount : withFiatAmount)(values, text, price, multiplier),
            })
          }
          aria={send.fieldAria}
          errors={(name) => shown[name]}
          autoFocus={startField === "coin" || startField === "fiat" ? startField : undefined}
        />

        <div className="actions">
          <button
            type="submit"
            name="intent"
            value="review"
            className="button button-primary"
            aria-describedby={formErrors.length ? IDS.formError : undefined}
            autoFocus={(!hydrated && !startField && formErrors.length > 0) || undefined}
          >
            Send {ticker}
          </button>{" "}
          <CopyButton text={ownAddress} label="Copy wallet address" toast="Copied" />
        </div>
        <div id={IDS.formError} className="form-errors send-errors" role="alert">
          {formErrors.map((error) => (
            <p key={`${send.attempt}:${error}`}>{error}</p>
          ))}
        </div>
      </div>

      {confirmOpen ? (
        <SendReview
          ticker={ticker}
          network={sendNetwork(ticker, network, ownAddress)}
          currency={currency}
          values={values}
          tag={send.reviewTag}
          price={price}
          multiplier={multiplier}
          scripted={hydrated}
          confirming={confirming}
          needsCode={send.needsCode}
          codeErrors={reply?.step === "confirm" ? reply.result.error?.code : undefined}
          attempt={send.attempt}
          onClose={() => send.setStep("form")}
        />
      ) : null}
    </Form>
  );
}
