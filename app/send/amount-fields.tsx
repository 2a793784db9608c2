import { acceptsAmountInput } from "./rules.ts";
import { FieldErrors } from "../components/field.tsx";
import { IDS, type FieldAria } from "./use-send-form.ts";

type Amount = "coin" | "fiat";

/**
 * The amount pair: in the coin (with 'Full' and the available balance) and in
 * the display currency. With scripts each converts into the other as you
 * type; without, a 'Convert' button beside each asks the server to.
 */
export function AmountFields({
  ticker,
  currency,
  available,
  hasPrice,
  scripted,
  coin,
  fiat,
  onChange,
  aria,
  errors,
  autoFocus,
}: {
  ticker: string;
  currency: string;
  /** The available balance, as shown. */
  available: string;
  hasPrice: boolean;
  scripted: boolean;
  coin: string;
  fiat: string;
  /** A new value for one amount, already past the typing filter. */
  onChange: (name: Amount, text: string) => void;
  aria: (name: Amount, ...more: string[]) => FieldAria;
  errors: (name: Amount) => string[] | undefined;
  /** The amount that takes the focus when the page comes back (without scripts). */
  autoFocus: Amount | undefined;
}) {
  function input(name: Amount, value: string, ...describedBy: string[]) {
    return (
      <input
        id={IDS[name]}
        name={name}
        inputMode="decimal"
        autoComplete="off"
        value={value}
        onChange={(event) => {
          // Some decimal keypads type a comma; anything else that is not digits, one dot and
          // at most 4 decimals is refused (the input keeps its value).
          const text = event.target.value.replace(",", ".");
          if (acceptsAmountInput(text)) onChange(name, text);
        }}
        autoFocus={autoFocus === name || undefined}
        {...aria(name, ...describedBy)}
      />
    );
  }

  return (
    <>
      <div className="field">
        <label htmlFor={IDS.coin}>Amount in {ticker}</label>
        <div className="amount-row">
          {input("coin", coin, IDS.available)}
          <button
            type="submit"
            name="intent"
            value="full"
            className="button button-secondary"
            aria-describedby={IDS.available}
          >
            Full
          </button>
          {scripted ? null : <ConvertButton intent="convert-coin" from={ticker} to={currency} />}
        </div>
        <p id={IDS.available} className="muted small field-hint">
          Available: {available} {ticker}
        </p>
        <FieldErrors id={`${IDS.coin}-error`} errors={errors("coin")} />
      </div>

      <div className="field">
        <label htmlFor={IDS.fiat}>Amount in {currency}</label>
        <div className="amount-row">
          {input("fiat", fiat)}
          {scripted ? null : <ConvertButton intent="convert-fiat" from={currency} to={ticker} />}
        </div>
        {hasPrice ? null : (
          <p className="muted small field-hint">
            No {ticker} price is available right now: enter both amounts yourself.
          </p>
        )}
        <FieldErrors id={`${IDS.fiat}-error`} errors={errors("fiat")} />
      </div>
    </>
  );
}

/** Without scripts: a round trip that fills in the other amount. */
function ConvertButton({ intent, from, to }: { intent: string; from: string; to: string }) {
  return (
    <button type="submit" name="intent" value={intent} className="button button-secondary">
      Convert
      <span className="visually-hidden">
        {" "}
        {from} to {to}
      </span>
    </button>
  );
}
