// The signed-in shell's total and currency picker, drawn once (issue 24).
import { Form, useLocation } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { multiply, ZERO } from "../../common/decimal.ts";
import {
  CURRENCIES,
  currencySymbol,
  formatChange,
  formatFiatChange,
  formatTotal,
  parseDecimal,
} from "../lib/format.ts";
import type { WalletView } from "../wallet-view.server.ts";
import { useDisclosure } from "./use-disclosure.ts";

/**
 * The total, once. The markup holds the figure as the spec shows it on a wide
 * screen; where the phone's figure differs (always rounded, spec section 9) it
 * rides along in `data-phone` and the stylesheet shows it in its place on a
 * narrow screen, so a page without CSS reads one total.
 */
export function Total({ view }: { view: WalletView }) {
  const usd = parseDecimal(view.totalUsd);
  const rate = parseDecimal(view.multiplier);
  const value = usd && rate ? multiply(usd, rate) : ZERO;
  const wide = formatTotal(value, view.currency);
  const phone = formatTotal(value, view.currency, { mobile: true });
  return (
    <div className="total">
      <span className="total-label">Total balance</span>{" "}
      <span className="total-value" data-phone={phone === wide ? undefined : phone}>
        <span className="total-figure">{wide}</span>
      </span>{" "}
      <TotalChange view={view} />
    </div>
  );
}

/** The total's 24 h change, in the display currency: "▲ +$12.34 (+1.23%) in 24 h" (the sign is the cue, not the colour). */
function TotalChange({ view }: { view: WalletView }) {
  const usd = parseDecimal(view.totalChange?.usd);
  const rate = parseDecimal(view.multiplier);
  if (!view.totalChange || !usd || !rate) return null;
  const amount = formatFiatChange(multiply(usd, rate), view.currency);
  const tone = amount.startsWith("+") ? "up" : amount.startsWith("-") ? "down" : "flat";
  return (
    <span className={`total-change change-${tone}`}>
      {tone === "flat" ? null : <span aria-hidden="true">{tone === "up" ? "▲ " : "▼ "}</span>}
      {amount} ({formatChange(parseDecimal(view.totalChange.percent))}) in 24 h
    </span>
  );
}

/** Toggles open and closed; choosing a currency posts it (works without scripts). */
export function CurrencyPicker({ current, id }: { current: string; id: string }) {
  const location = useLocation();
  const { ref, close } = useDisclosure();
  return (
    <details className="currency-picker disclosure" ref={ref}>
      <summary aria-label={`Currency: ${current}. Change currency`}>
        {current} {currencySymbol(current)}
      </summary>{" "}
      <Form
        noValidate
        method="post"
        action="/currency"
        className="currency-options"
        aria-labelledby={`${id}-label`}
        onSubmit={close}
      >
        <span id={`${id}-label`} className="visually-hidden">
          Choose a currency
        </span>{" "}
        <AuthenticityTokenInput />
        <input type="hidden" name="redirectTo" value={`${location.pathname}${location.search}`} />
        {CURRENCIES.map((code) => (
          <button
            key={code}
            type="submit"
            name="currency"
            value={code}
            aria-pressed={code === current}
            className="currency-option"
          >
            {code} {currencySymbol(code)}
          </button>
        ))}
      </Form>
    </details>
  );
}
