import { useEffect, useRef, useState } from "react";
import { Form, useNavigation } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { multiply, parseDecimal, ZERO, type Decimal } from "../../common/decimal";
import { formatFiat, formatWalletBalance } from "../lib/format";
import {
  acceptsAmountInput,
  amountToSend,
  checkSend,
  coinToFiat,
  EMPTY_SEND_VALUES,
  emptyFields,
  fiatToCoin,
  FILL_OUT_ALL_FIELDS,
  fullAmount,
  parseAmount,
  sendPrice,
  type SendErrors,
  type SendValues,
} from "../send";
import { ERROR_HIDE_MS } from "./auto-hide";
import { CopyButton } from "./copy-button";
import { SendDialog } from "./send-dialog";
import { SubmitButton } from "./submit-button";
import { useHydrated } from "./hydrated";

type Step = "closed" | "form" | "confirm";
type FieldName = keyof SendValues;

/** The action's answer for a send step (see send.server.ts). */
export interface SendState {
  step: "form" | "confirm";
  values: SendValues;
  key: string;
  errors: SendErrors;
  invalid: FieldName[];
}

const IDS = {
  title: "send-title",
  address: "send-address",
  coin: "send-coin",
  fiat: "send-fiat",
  available: "send-available",
  formError: "send-form-error",
  dialogTitle: "send-warning-title",
  dialogText: "send-warning-text",
} as const;

function hasErrors(errors: SendErrors): boolean {
  return Object.values(errors).some((list) => list && list.length > 0);
}

/**
 * The spec's error flags clear themselves after 5 s (with scripts). Each
 * attempt counts anew, so the same message shows again on the next press.
 */
function useTimedErrors(errors: SendErrors, attempt: number): SendErrors {
  const signature = hasErrors(errors) ? `${attempt}:${JSON.stringify(errors)}` : "";
  const [hidden, setHidden] = useState<string | null>(null);
  useEffect(() => {
    if (!signature) return;
    const timer = setTimeout(() => setHidden(signature), ERROR_HIDE_MS);
    return () => clearTimeout(timer);
  }, [signature]);
  return signature && hidden !== signature ? errors : {};
}

/**
 * The send flow's form (spec section 4): the first press of 'Send {ticker}'
 * reveals it, the next validates and opens the risk warning, Confirm sends.
 *
 * Without scripts every step is a server round trip: 'Send' is a GET to
 * `?send=1`, the other buttons post the form with an intent (convert, full,
 * review, edit, confirm) and the page comes back from the action's answer.
 * With scripts the same markup runs in place: amounts sync as you type,
 * 'Full' fills in at once, review opens a modal, and only Confirm posts.
 */
export function SendPanel({
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
}: {
  ticker: string;
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
  /** `?send` is in the URL (the form was opened without scripts, or 'Send another one'). */
  initiallyOpen: boolean;
  /** The action's answer, when the last submission was a send step. */
  reply: SendState | undefined;
}) {
  const hydrated = useHydrated();
  const navigation = useNavigation();
  const price = sendPrice(ticker, lastPrice);
  const multiplier = parseDecimal(multiplierText) ?? { units: 1n, scale: 0 };
  const available = parseDecimal(balance) ?? ZERO;

  const [step, setStep] = useState<Step>(reply?.step ?? (initiallyOpen ? "form" : "closed"));
  const [values, setValues] = useState<SendValues>(reply?.values ?? EMPTY_SEND_VALUES);
  // The key stays with this form until a send succeeds (the panel is then replaced), whatever
  // the loader issues on revalidation, so a retried Confirm can never send twice.
  const [key, setKey] = useState(reply?.key ?? sendKey);
  const [errors, setErrors] = useState<SendErrors>(reply?.errors ?? {});
  const [invalid, setInvalid] = useState<FieldName[]>(reply?.invalid ?? []);
  const [attempt, setAttempt] = useState(0);

  // A new answer from the server (after Confirm, with scripts) replaces the local state.
  const [seenReply, setSeenReply] = useState(reply);
  if (reply !== seenReply) {
    setSeenReply(reply);
    if (reply) {
      setStep(reply.step);
      setValues(reply.values);
      setKey(reply.key);
      setErrors(reply.errors);
      setInvalid(reply.invalid);
      setAttempt((n) => n + 1);
    }
  }

  const shown = useTimedErrors(errors, attempt);
  const formErrors = shown.form ?? [];
  const fillOut = formErrors.includes(FILL_OUT_ALL_FIELDS);

  const addressRef = useRef<HTMLInputElement>(null);
  const coinRef = useRef<HTMLInputElement>(null);
  const fiatRef = useRef<HTMLInputElement>(null);
  const refs: Record<FieldName, React.RefObject<HTMLInputElement | null>> = {
    address: addressRef,
    coin: coinRef,
    fiat: fiatRef,
  };
  const [focusTarget, setFocusTarget] = useState<FieldName | null>(null);
  useEffect(() => {
    if (!focusTarget) return;
    refs[focusTarget].current?.focus();
    setFocusTarget(null);
    // refs are stable objects; only a new target matters.
    // oxlint-disable-next-line react/exhaustive-deps
  }, [focusTarget]);

  const confirming = navigation.state === "submitting" && navigation.formData?.get("intent") === "confirm";

  function fieldInvalid(name: FieldName): boolean {
    return Boolean(shown[name]?.length) || (fillOut && invalid.includes(name));
  }

  function describedBy(name: FieldName, ...more: string[]): string | undefined {
    const ids = [...more];
    if (shown[name]?.length) ids.push(`${IDS[name]}-error`);
    if (fillOut && invalid.includes(name)) ids.push(IDS.formError);
    return ids.length ? ids.join(" ") : undefined;
  }

  function withCoin(text: string): SendValues {
    const coin = parseAmount(text);
    const fiat = coin && price ? coinToFiat(coin, price, multiplier) : text ? values.fiat : "";
    return { ...values, coin: text, fiat };
  }

  function withFiat(text: string): SendValues {
    const fiat = parseAmount(text);
    const coin = fiat && price ? fiatToCoin(fiat, price, multiplier) : undefined;
    return { ...values, fiat: text, coin: coin ?? (text ? values.coin : "") };
  }

  function clearErrors() {
    setErrors({});
    setInvalid([]);
  }

  function review() {
    setAttempt((n) => n + 1);
    const check = checkSend(values);
    if (!check.ok) {
      setErrors(check.errors);
      const empty = emptyFields(values);
      setInvalid(empty);
      const first = (["address", "coin", "fiat"] as const).find(
        (name) => check.errors[name]?.length || (check.errors.form && empty.includes(name)),
      );
      if (first) setFocusTarget(first);
      return;
    }
    clearErrors();
    setStep("confirm");
  }

  function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    if (!hydrated) return;
    const submitter = (event.nativeEvent as SubmitEvent).submitter;
    const intent = submitter?.getAttribute("name") === "intent" ? submitter.getAttribute("value") : null;
    if (intent === "confirm") {
      // One Confirm at a time (the idempotency key would make a second one harmless anyway).
      if (navigation.state !== "idle") event.preventDefault();
      return;
    }
    event.preventDefault();
    if (intent === "full") {
      setValues(withCoin(fullAmount(available)));
      clearErrors();
    } else if (intent === "convert-coin") {
      setValues(withCoin(values.coin));
    } else if (intent === "convert-fiat") {
      setValues(withFiat(values.fiat));
    } else if (intent === "edit") {
      setStep("form");
    } else {
      review();
    }
  }

  function onAmountChange(name: "coin" | "fiat", raw: string) {
    // Some decimal keypads type a comma; anything else that is not digits, one dot and at
    // most 4 decimals is refused (the input keeps its value).
    const text = raw.replace(",", ".");
    if (!acceptsAmountInput(text)) return;
    setValues(name === "coin" ? withCoin(text) : withFiat(text));
  }

  if (step === "closed") {
    return (
      <div className="actions">
        <Form method="get" preventScrollReset>
          <button
            type="submit"
            name="send"
            value="1"
            className="button button-primary"
            onClick={(event) => {
              if (!hydrated) return;
              event.preventDefault();
              setStep("form");
              setFocusTarget("address");
            }}
          >
            Send {ticker}
          </button>
        </Form>
        <CopyButton text={ownAddress} label="Copy wallet address" toast="Copied" />
      </div>
    );
  }

  const confirmOpen = step === "confirm";
  const sendCoin = parseAmount(values.coin);
  const sendAmount = sendCoin ? amountToSend(sendCoin) : values.coin;
  const sendFiat = sendCoin && price ? fiatValue(sendCoin, price, multiplier, currency) : null;
  // Without scripts, the first field with an error takes the focus when the page comes back.
  const firstInvalid = !hydrated
    ? (["address", "coin", "fiat"] as const).find((name) => fieldInvalid(name))
    : undefined;

  return (
    <Form method="post" className="send-form" noValidate aria-labelledby={IDS.title} onSubmit={onSubmit}>
      <h2 id={IDS.title} className="send-title">
        Send {ticker}
      </h2>
      <AuthenticityTokenInput />
      <input type="hidden" name="key" value={key} />
      {/* Enter in a field reviews the form: the first submit button is the one Enter presses. */}
      <button
        type="submit"
        name="intent"
        value="review"
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
      />
      <div className="send-fields" inert={(confirmOpen && !hydrated) || undefined}>
        <div className="field">
          <label htmlFor={IDS.address}>Receiver address</label>
          <input
            ref={addressRef}
            id={IDS.address}
            name="address"
            className="mono"
            value={values.address}
            onChange={(event) => setValues({ ...values, address: event.target.value })}
            autoComplete="off"
            autoCapitalize="none"
            autoCorrect="off"
            spellCheck={false}
            autoFocus={(initiallyOpen && !reply) || firstInvalid === "address" || undefined}
            aria-invalid={fieldInvalid("address") || undefined}
            aria-describedby={describedBy("address")}
          />
          <ErrorList id={`${IDS.address}-error`} errors={shown.address} />
        </div>

        <div className="field">
          <label htmlFor={IDS.coin}>Amount in {ticker}</label>
          <div className="amount-row">
            <input
              ref={coinRef}
              id={IDS.coin}
              name="coin"
              inputMode="decimal"
              autoComplete="off"
              value={values.coin}
              onChange={(event) => onAmountChange("coin", event.target.value)}
              autoFocus={firstInvalid === "coin" || undefined}
              aria-invalid={fieldInvalid("coin") || undefined}
              aria-describedby={describedBy("coin", IDS.available)}
            />
            <button
              type="submit"
              name="intent"
              value="full"
              className="button button-secondary"
              aria-describedby={IDS.available}
            >
              Full
            </button>
            {hydrated ? null : (
              <button type="submit" name="intent" value="convert-coin" className="button button-secondary">
                Convert
                <span className="visually-hidden">
                  {" "}
                  {ticker} to {currency}
                </span>
              </button>
            )}
          </div>
          <p id={IDS.available} className="muted small field-hint">
            Available: {formatWalletBalance(available)} {ticker}
          </p>
          <ErrorList id={`${IDS.coin}-error`} errors={shown.coin} />
        </div>

        <div className="field">
          <label htmlFor={IDS.fiat}>Amount in {currency}</label>
          <div className="amount-row">
            <input
              ref={fiatRef}
              id={IDS.fiat}
              name="fiat"
              inputMode="decimal"
              autoComplete="off"
              value={values.fiat}
              onChange={(event) => onAmountChange("fiat", event.target.value)}
              autoFocus={firstInvalid === "fiat" || undefined}
              aria-invalid={fieldInvalid("fiat") || undefined}
              aria-describedby={describedBy("fiat")}
            />
            {hydrated ? null : (
              <button type="submit" name="intent" value="convert-fiat" className="button button-secondary">
                Convert
                <span className="visually-hidden">
                  {" "}
                  {currency} to {ticker}
                </span>
              </button>
            )}
          </div>
          {price ? null : (
            <p className="muted small field-hint">
              No {ticker} price is available right now: enter both amounts yourself.
            </p>
          )}
          <ErrorList id={`${IDS.fiat}-error`} errors={shown.fiat} />
        </div>

        <div className="actions">
          <button
            type="submit"
            name="intent"
            value="review"
            className="button button-primary"
            aria-describedby={formErrors.length ? IDS.formError : undefined}
            autoFocus={(!hydrated && !firstInvalid && formErrors.length > 0) || undefined}
          >
            Send {ticker}
          </button>
          <CopyButton text={ownAddress} label="Copy wallet address" toast="Copied" />
        </div>
        <div id={IDS.formError} className="form-errors send-errors" role="alert">
          {formErrors.map((error) => (
            <p key={`${attempt}:${error}`}>{error}</p>
          ))}
        </div>
      </div>

      {confirmOpen ? (
        <SendDialog
          scripted={hydrated}
          labelledBy={IDS.dialogTitle}
          describedBy={IDS.dialogText}
          onClose={() => setStep("form")}
        >
          <h2 id={IDS.dialogTitle}>Check before you send</h2>
          <div id={IDS.dialogText}>
            <p>
              You are sending{" "}
              <strong>
                {sendAmount} {ticker}
              </strong>
              {sendFiat ? ` (about ${sendFiat})` : ""} on the {network} network to:
            </p>
            <p className="mono address-text send-dialog-address">{values.address}</p>
            <p>
              Crypto transfers are irreversible: once the coins have left Coinkeep, nobody — not you, not us —
              can reverse or refund them. Check the address character by character and make sure it is an
              address on the {network} network: coins sent to a wrong address or over another network are
              lost.
            </p>
          </div>
          <div className="actions">
            {/* With scripts showModal() focuses Cancel, the first button; without, autofocus does. */}
            <button
              type="submit"
              name="intent"
              value="edit"
              className="button button-secondary"
              autoFocus={!hydrated || undefined}
            >
              Cancel
            </button>
            <SubmitButton name="intent" value="confirm" pendingLabel="Sending...">
              Confirm
            </SubmitButton>
          </div>
          <p className="visually-hidden" role="status">
            {confirming ? "Sending…" : ""}
          </p>
        </SendDialog>
      ) : null}
    </Form>
  );
}

function fiatValue(coin: Decimal, price: Decimal, multiplier: Decimal, currency: string): string {
  return formatFiat(multiply(multiply(coin, price), multiplier), currency);
}

function ErrorList({ id, errors }: { id: string; errors: string[] | undefined }) {
  return (
    <div id={id} className="field-errors" role="alert">
      {errors?.map((error) => (
        <p key={error}>{error}</p>
      ))}
    </div>
  );
}
