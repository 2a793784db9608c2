import { multiply, type Decimal } from "../../common/decimal.ts";
import { formatFiat } from "../lib/format.ts";
import { amountToSend, parseAmount, type SendValues } from "./rules.ts";
import { SubmitButton } from "../components/submit-button.tsx";
import { SendDialog } from "./send-dialog.tsx";
import { IDS } from "./use-send-form.ts";

/**
 * The risk warning (spec section 4): what is about to leave, where to, and
 * that it cannot come back. Cancel goes back to the form with the values;
 * Confirm posts the form, the one step that always reaches the server.
 */
export function SendReview({
  ticker,
  network,
  currency,
  values,
  tag,
  price,
  multiplier,
  scripted,
  confirming,
  needsCode = false,
  codeErrors,
  attempt = 0,
  onClose,
}: {
  ticker: string;
  network: string;
  currency: string;
  values: SendValues;
  /** XRP's destination tag (typed, or carried by an X-address), or null. */
  tag: number | null;
  price: Decimal | undefined;
  multiplier: Decimal;
  scripted: boolean;
  /** A Confirm is on its way (announced to screen readers). */
  confirming: boolean;
  /** Two-factor's step-up (issue 27): a code is asked before Confirm. */
  needsCode?: boolean;
  codeErrors?: string[] | null | undefined;
  /** Each press anew: the code's errors show again. */
  attempt?: number;
  onClose: () => void;
}) {
  const codeInvalid = Boolean(codeErrors?.length);
  const coin = parseAmount(values.coin);
  const amount = coin ? amountToSend(coin) : values.coin;
  const value = coin && price ? formatFiat(multiply(multiply(coin, price), multiplier), currency) : null;

  return (
    <SendDialog
      scripted={scripted}
      labelledBy={IDS.dialogTitle}
      describedBy={IDS.dialogText}
      onClose={onClose}
    >
      <h2 id={IDS.dialogTitle}>Check before you send</h2>
      <div id={IDS.dialogText}>
        <p>
          You are sending{" "}
          <strong>
            {amount} {ticker}
          </strong>
          {value ? ` (about ${value})` : ""} on the {network} network to:
        </p>
        <p className="mono address-text send-dialog-address">{values.address}</p>
        {tag === null ? null : (
          <p className="send-dialog-tag">
            Destination tag: <strong className="mono">{tag}</strong>
          </p>
        )}
        <p>
          Crypto transfers are irreversible: once the coins have left Coinkeep, nobody — not you, not us — can
          reverse or refund them. Check the address character by character and make sure it is an address on
          the {network} network: coins sent to a wrong address or over another network are lost.
          {ticker === "XRP"
            ? tag === null
              ? " No destination tag is set: if the receiver is an exchange, it usually needs one."
              : " Check the destination tag too: without the right one, an exchange cannot credit the coins."
            : ""}
        </p>
      </div>
      {needsCode ? (
        <div className="field">
          <label htmlFor={IDS.code}>Authentication code</label>
          <p id={IDS.codeHint} className="field-hint">
            Two-factor authentication is on: enter the 6-digit code from your authenticator app, or a recovery
            code.
          </p>
          <input
            id={IDS.code}
            name="code"
            type="text"
            autoComplete="one-time-code"
            autoCapitalize="none"
            spellCheck={false}
            key={attempt}
            autoFocus
            aria-invalid={codeInvalid || undefined}
            aria-describedby={codeInvalid ? `${IDS.codeHint} ${IDS.code}-error` : IDS.codeHint}
          />
          <div id={`${IDS.code}-error`} className="field-errors" role="alert">
            {codeErrors?.map((error) => (
              <p key={`${attempt}:${error}`}>{error}</p>
            ))}
          </div>
        </div>
      ) : null}
      <div className="actions">
        {/* With scripts showModal() focuses Cancel, the first button; without, autofocus does. */}
        <button
          type="submit"
          name="intent"
          value="edit"
          className="button button-secondary"
          autoFocus={(!scripted && !needsCode) || undefined}
        >
          Cancel
        </button>{" "}
        <SubmitButton name="intent" value="confirm" pendingLabel="Sending...">
          Confirm
        </SubmitButton>
      </div>
      <p className="visually-hidden" role="status">
        {confirming ? "Sending…" : ""}
      </p>
    </SendDialog>
  );
}
