import { coinFor } from "../../common/coins";
import { INCOMING_TRANSACTION } from "../../common/literals";
import type { ClientBalancesData } from "../backend.server";
import { parseDecimal } from "../../common/decimal";
import { formatDate, formatListAmount, shortenAddress } from "../lib/format";
import { fiat } from "./money";
import { CopyButton } from "./copy-button";

/** A transaction as call 4 answers it. */
export type TransactionItem = ClientBalancesData["transactions"][number];

const STATUS: Record<string, { label: string; tone: string }> = {
  pending: { label: "Unconfirmed", tone: "pending" },
  Confirmed: { label: "Confirmed", tone: "confirmed" },
  Declined: { label: "Declined", tone: "declined" },
};

/** pending → Unconfirmed (orange), Confirmed (green), Declined (red), anything else as is. */
export function StatusBadge({ status }: { status: string }) {
  const known = STATUS[status];
  return <span className={`status status-${known?.tone ?? "other"}`}>{known?.label ?? status}</span>;
}

function AddressLine({ label, address }: { label: string; address: string | null }) {
  return (
    <div className="tx-detail">
      <dt>{label}</dt>
      <dd>
        {address ? (
          <>
            <span className="mono" title={address}>
              {shortenAddress(address)}
            </span>
            <CopyButton text={address} label={`Copy ${label.toLowerCase()} address`} toast="Copied" compact />
          </>
        ) : (
          <span className="muted">Not recorded</span>
        )}
      </dd>
    </div>
  );
}

/**
 * The transaction list (per coin and in /history): Date, Action, Amount,
 * Status; a row expands (a native disclosure, no scripts needed) to show the
 * addresses, the coin amount and the fiat amount.
 */
export function TransactionList({
  transactions,
  walletAddresses,
  currency,
  multiplier,
  expandId,
}: {
  transactions: TransactionItem[];
  /** wallet id → the wallet's own address (the other side of each transfer). */
  walletAddresses: Record<string, string | null>;
  currency: string;
  multiplier: string;
  expandId?: string | null;
}) {
  if (transactions.length === 0) {
    return <p className="empty-state">Your transactions will appear here</p>;
  }
  return (
    <div className="tx-list">
      <div className="tx-row tx-head" aria-hidden="true">
        <span>Date</span>
        <span>Action</span>
        <span className="num">Amount</span>
        <span>Status</span>
      </div>
      <ul>
        {transactions.map((tx) => {
          const incoming = tx.recipient_wallet === INCOMING_TRANSACTION;
          const coin = coinFor(tx.transaction_crypto);
          const ticker = coin?.ticker ?? tx.transaction_crypto.toUpperCase();
          const own = walletAddresses[tx.wallet_id] ?? null;
          const amount = parseDecimal(tx.amount_in_crypto);
          return (
            <li key={tx.id} id={`tx-${tx.id}`}>
              <details open={expandId === tx.id || undefined}>
                <summary className="tx-row">
                  <span>
                    <span className="visually-hidden">Date: </span>
                    {formatDate(tx.date)}
                  </span>
                  <span>
                    <span className="visually-hidden">Action: </span>
                    {incoming ? "Received" : "Sent"}
                  </span>
                  <span className="num">
                    <span className="visually-hidden">Amount: </span>
                    {incoming ? "+" : "−"}
                    {formatListAmount(amount)} {ticker}
                  </span>
                  <span>
                    <span className="visually-hidden">Status: </span>
                    <StatusBadge status={tx.status} />
                  </span>
                </summary>
                <dl className="tx-details">
                  <AddressLine label="Output" address={incoming ? null : own} />
                  <AddressLine label="Input" address={incoming ? own : tx.recipient_wallet} />
                  <div className="tx-detail">
                    <dt>Amount</dt>
                    <dd>
                      {tx.amount_in_crypto} {ticker}
                    </dd>
                  </div>
                  <div className="tx-detail">
                    <dt>Value</dt>
                    <dd>{tx.amount_in_dollar ? fiat(tx.amount_in_dollar, currency, multiplier) : "—"}</dd>
                  </div>
                  <div className="tx-detail">
                    <dt>{incoming ? "Transaction" : "Reference"}</dt>
                    <dd className="mono">{shortenAddress(tx.transaction_id)}</dd>
                  </div>
                </dl>
              </details>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
