import { useEffect, useRef } from "react";
import { Link } from "react-router";
import { CopyButton } from "./copy-button.tsx";

/**
 * Step 2 of the send flow: 'Sent!' with the amount and ticker, shown at
 * `?sent={transaction id}` after the Confirm redirect (so a reload shows it
 * again and sends nothing). Its buttons are links: 'Send another one' to a
 * fresh form (a new idempotency key), 'See transaction details' to the list
 * with the newest transaction of the coin expanded.
 */
export function SendSuccess({
  ticker,
  amount,
  address,
  anotherHref,
  detailsHref,
}: {
  ticker: string;
  /** The amount sent, as shown (4 decimals). */
  amount: string;
  /** The receiver's address. */
  address: string;
  anotherHref: string;
  detailsHref: string;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Arriving here after Confirm, keyboard and screen-reader users land on the result.
  useEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <div className="send-success" aria-labelledby="sent-title" role="region">
      <h2 id="sent-title" ref={heading} tabIndex={-1}>
        Sent!
      </h2>
      <p className="send-success-amount">
        {amount} {ticker}
      </p>
      <p className="send-success-to">
        <span className="muted">To </span>
        <span className="mono address-text">{address}</span>
      </p>
      <p className="muted small">It shows as Unconfirmed in your transactions until it has been processed.</p>
      <div className="actions">
        <Link to={anotherHref} className="button button-primary">
          Send another one
        </Link>{" "}
        <Link to={detailsHref} className="button button-secondary">
          See transaction details
        </Link>{" "}
        <CopyButton text={address} label="Copy address" toast="Copied" />
      </div>
    </div>
  );
}
