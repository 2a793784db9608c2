import { coinFor } from "../../common/coins.ts";
import { INCOMING_TRANSACTION } from "../../common/literals.ts";
import type { ClientBalancesData } from "../backend.server.ts";
import { parseDecimal } from "../../common/decimal.ts";
import { formatDate, formatListAmount, shortenAddress } from "../lib/format.ts";
import { fiat } from "./money.tsx";
import { useCopy } from "./copy-button.tsx";
import { useHydrated } from "./hydrated.ts";

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

/**
 * An address in a list: with scripts, shortened, and clicking it copies the
 * whole address with a 'Copied' toast; without them, the whole address as
 * plain text to select.
 */
function CopyableAddress({ address }: { address: string }) {
  const hydrated = useHydrated();
  const { copy } = useCopy(address, "Copied");
  if (!hydrated) return <span className="mono address-full">{address}</span>;
  const short = shortenAddress(address);
  return (
    <button type="button" className="address-copy mono" onClick={copy} aria-label={`Copy ${short}`}>
      {short}
    </button>
  );
}

function AddressLine({ label, address, own }: { label: string; address: string | null; own: boolean }) {
  return (
    <div className="tx-detail">
      <dt>{label}</dt>
      <dd>
        {address ? (
          <>
            <CopyableAddress address={address} />
            {own ? (
              <>
                {" "}
                <span className="muted tx-own">(your wallet)</span>
              </>
            ) : null}
          </>
        ) : (
          <span className="muted">An outside address (not recorded)</span>
        )}
      </dd>
    </div>
  );
}

/** What the two address lines are called: the wallet page keeps the spec's words, /history says from and to. */
const ADDRESS_LABELS = {
  wallet: { from: "Output (from)", to: "Input (to)" },
  history: { from: "From", to: "To" },
} as const;

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
  labels = "wallet",
}: {
  /** The wallet page's labels (spec: Output and Input) or /history's (spec: from and to). */
  labels?: keyof typeof ADDRESS_LABELS;
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
        {/* Spaces between the cells: a grid ignores them, a page without CSS reads them. */}
        <span>Date</span> <span>Action</span> <span className="num">Amount</span> <span>Status</span>
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
                  </span>{" "}
                  <span>
                    <span className="visually-hidden">Action: </span>
                    {incoming ? "Received" : "Sent"}
                  </span>{" "}
                  <span className="num">
                    <span className="visually-hidden">Amount: </span>
                    {incoming ? "+" : "−"}
                    {formatListAmount(amount)} {ticker}
                  </span>{" "}
                  <span>
                    <span className="visually-hidden">Status: </span>
                    <StatusBadge status={tx.status} />
                  </span>
                </summary>
                <dl className="tx-details">
                  {/* A deposit comes from outside (its sender is not recorded) to the wallet; a send goes from it. */}
                  <AddressLine
                    label={ADDRESS_LABELS[labels].from}
                    address={incoming ? null : own}
                    own={!incoming}
                  />
                  <AddressLine
                    label={ADDRESS_LABELS[labels].to}
                    address={incoming ? own : tx.recipient_wallet}
                    own={incoming}
                  />
                  {tx.destination_tag === undefined ? null : (
                    <div className="tx-detail">
                      <dt>Destination tag</dt>
                      <dd className="mono">{tx.destination_tag}</dd>
                    </div>
                  )}
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
