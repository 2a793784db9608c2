import { Suspense, useEffect } from "react";
import { Form, Link, redirect, useRevalidator } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { coinFor } from "../../common/coins.ts";
import { sendsPausedMessage } from "../../common/contract/refusals.ts";
import { INCOMING_TRANSACTION, NOT_ADDED_YET } from "../../common/literals.ts";
import { backend } from "../backend.server.ts";
import { qrSvg } from "../lib/qr.server.ts";
import { loadWalletView, WALLET_PAGE_SIZE } from "../wallet-view.server.ts";
import { addressOffers, allowlistRule, loadAllowlist } from "../allowlist.server.ts";
import { CoinIcon } from "../components/coin-icon.tsx";
import { CopyButton } from "../components/copy-button.tsx";
import { CloseIcon, RefreshIcon } from "../components/icons.tsx";
import { fiat } from "../components/money.tsx";
import { SendPanel } from "../send/send-panel.tsx";
import { lazyComponent } from "../components/lazy-component.ts";
import { SubmitButton } from "../components/submit-button.tsx";
import { TransactionList } from "../components/transactions.tsx";
import { useHydrated } from "../components/hydrated.ts";
import { useWalletView } from "../components/use-wallet-view.ts";
import { readForm } from "../forms.server.ts";
import { formatWalletBalance, parseDecimal } from "../lib/format.ts";
import { receiveNetwork } from "../send/rules.ts";
import { isSendIntent, newSendKey, sendAction } from "../send/action.server.ts";
import { commitSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/wallet";

// The 20 newest on the coin's page (WALLET_PAGE_SIZE, where the view's load reads them).
const PAGE_SIZE = WALLET_PAGE_SIZE;

// 'Sent!' is shown only after a send: its code loads then (the send form starts fetching it as
// it opens), and the server renders it in place (record 034).
const { Component: SendSuccess } = lazyComponent(() =>
  import("../components/send-success.tsx").then((m) => m.SendSuccess),
);

export function meta({ params }: Route.MetaArgs) {
  return [{ title: `${(params.ticker ?? "").toUpperCase()} wallet — Coinkeep` }];
}

export async function loader({ request, params, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const coin = coinFor(params.ticker);
  // A ticker we do not support goes to /home; the path is always lower-case.
  if (!coin) throw redirect("/home");
  if (params.ticker !== coin.ticker.toLowerCase()) throw redirect(`/wallet/${coin.ticker.toLowerCase()}`);

  const url = new URL(request.url);
  // The deposit address as a QR code, drawn here (the layout's view load is shared, not repeated):
  // that load read this coin's transactions too (transactionsOf), one more than a page to know
  // whether there are older ones.
  const { view, balances } = await loadWalletView(request, context);
  const own = view.rows.find((r) => r.ticker === coin.ticker);
  const receive =
    own?.state === "issued" && own.address
      ? { qr: qrSvg(own.address), network: receiveNetwork(coin.ticker, coin.network, own.address) }
      : null;
  // The coin's saved addresses (record 048), for the send form.
  const allowlist = receive && !url.searchParams.has("sent") ? await loadAllowlist(context, user) : null;
  const all = balances
    ? balances.transactions.filter((tx) => tx.transaction_crypto.toUpperCase() === coin.ticker)
    : [];
  const page = all.slice(0, PAGE_SIZE);
  // Sends paused for this coin or this user (record 041): said on the send form before anyone types.
  const paused = balances?.wallets.find((w) => w.wallet_crypto === coin.ticker)?.sends_paused;
  // After a send: `?sent={id}` shows 'Sent!' for that send, looked up in the user's own list.
  const sentId = url.searchParams.get("sent");
  const sent = sentId
    ? all.find((tx) => tx.id === sentId && tx.recipient_wallet !== INCOMING_TRANSACTION)
    : undefined;
  return {
    ticker: coin.ticker,
    network: coin.network,
    receive,
    transactions: page,
    olderThan: all.length > PAGE_SIZE ? (page.at(-1)?.date ?? null) : null,
    expand: url.searchParams.get("tx"),
    // A fresh idempotency key for a send form opened on this page.
    sendKey: newSendKey(),
    sendOpen: url.searchParams.has("send"),
    sendsPaused: paused ? sendsPausedMessage(paused, coin.ticker) : null,
    sendOffers: addressOffers(allowlist, coin.ticker),
    sendAllowlist: allowlistRule(allowlist, coin.ticker) ?? null,
    sent: sent
      ? {
          id: sent.id,
          amount: formatWalletBalance(parseDecimal(sent.amount_in_crypto)),
          address: sent.recipient_wallet,
          newestId: all[0]?.id ?? sent.id,
        }
      : null,
  };
}

export async function action({ request, params, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const coin = coinFor(params.ticker);
  if (!coin) throw redirect("/home");
  const intent = formData.get("intent");
  if (isSendIntent(intent)) return sendAction({ intent, formData, request, context, ticker: coin.ticker });
  if (intent === "request") {
    const answer = await backend(context).requestWallet({
      email: user.email,
      twelveWords: user.words,
      requestText: coin.ticker,
    });
    let notice = answer.ok
      ? answer.data.message
      : `The ${coin.ticker} wallet could not be requested: ${answer.message}`;
    // A coin that issues at request time (record 039) has its address already: say it is ready,
    // not "requested" (call 5's text is the same either way).
    if (answer.ok) {
      const now = await backend(context).clientBalances({
        email: user.email,
        twelveWords: user.words,
        transactionsLimit: 1,
        includeTransactions: false,
        includeMessages: false,
      });
      const wallet = now.ok ? now.data.wallets.find((w) => w.wallet_crypto === coin.ticker) : undefined;
      if (wallet && wallet.wallet_address !== NOT_ADDED_YET) {
        notice = `Your ${coin.ticker} wallet is ready: its address is below.`;
      }
    }
    session.flash("notice", notice);
  }
  return redirect(`/wallet/${coin.ticker.toLowerCase()}`, {
    headers: { "Set-Cookie": await commitSession(session, context) },
  });
}

/** After 'See transaction details' (or any `?tx=` link): the expanded row in view, and focused. */
function useRevealRow(id: string | null) {
  useEffect(() => {
    if (!id) return;
    const row = document.getElementById(`tx-${id}`);
    if (!row) return;
    const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    row.scrollIntoView({ block: "start", behavior: reduce ? "auto" : "smooth" });
    row.querySelector("summary")?.focus({ preventScroll: true });
  }, [id]);
}

export default function Wallet({ loaderData, actionData }: Route.ComponentProps) {
  const view = useWalletView();
  const revalidator = useRevalidator();
  const hydrated = useHydrated();
  // Refresh (and the 60 s refresh) spins the icon while the page's data reloads.
  const refreshing = revalidator.state === "loading";
  useRevealRow(loaderData.expand);
  const row = view.rows.find((r) => r.ticker === loaderData.ticker);
  if (!row) return null;
  const balance = parseDecimal(row.balance);
  const path = `/wallet/${row.ticker.toLowerCase()}`;
  const { sent, receive } = loaderData;
  const reply = actionData && "send" in actionData ? actionData.send : undefined;
  return (
    <section aria-labelledby="coin-title" className="wallet-page">
      <div className="wallet-head">
        <CoinIcon src={row.icon} size={48} />
        <div>
          <h1 id="coin-title">
            {row.name} <span className="coin-ticker">{row.ticker}</span>
          </h1>
        </div>
        <div className="wallet-head-actions">
          <Link
            to={path}
            className="icon-button"
            aria-busy={refreshing || undefined}
            onClick={(event) => {
              if (!hydrated) return;
              event.preventDefault();
              void revalidator.revalidate();
            }}
          >
            <RefreshIcon />
            <span className="visually-hidden">Refresh</span>
          </Link>
          <Link to="/home" className="icon-button">
            <CloseIcon />
            <span className="visually-hidden">Close</span>
          </Link>
        </div>
      </div>

      <div className="card wallet-card">
        <p className="wallet-balance">
          <span className="visually-hidden">Balance: </span>
          {formatWalletBalance(balance)} {row.ticker}
        </p>
        <p className="wallet-value">{fiat(row.valueUsd, view.currency, view.multiplier)}</p>
        {row.state === "issued" && row.address ? (
          <div className="wallet-address">
            <span className="muted">Wallet address</span>{" "}
            <span className="address-line">
              <span className="mono address-text">{row.address}</span>
              <CopyButton
                text={row.address}
                label={`Copy the ${row.ticker} address`}
                toast="Copied"
                compact
              />
            </span>
          </div>
        ) : null}
        {row.state === "issued" && receive ? (
          <div className="receive">
            <svg
              viewBox={`0 0 ${receive.qr.size} ${receive.qr.size}`}
              role="img"
              aria-label={`QR code of your ${row.ticker} address`}
            >
              <path d={receive.qr.path} />
            </svg>
            <div>
              <p className="receive-network">
                <span className="muted">Network</span> <strong>{receive.network}</strong>
              </p>
              <p className="small muted">
                Send only {row.ticker} on the {receive.network} network to this address. Coins sent on another
                network can be lost for good.
              </p>
            </div>
          </div>
        ) : null}
        {row.state === "issued" && row.address ? (
          sent ? (
            <Suspense fallback={null}>
              <SendSuccess
                ticker={row.ticker}
                amount={sent.amount}
                address={sent.address}
                anotherHref={`${path}?send=1`}
                detailsHref={`${path}?tx=${encodeURIComponent(sent.newestId)}#tx-${sent.newestId}`}
              />
            </Suspense>
          ) : (
            <>
              {loaderData.sendsPaused ? (
                <p className="banner" role="status">
                  {loaderData.sendsPaused}
                </p>
              ) : null}
              <SendPanel
                ticker={row.ticker}
                network={loaderData.network}
                ownAddress={row.address}
                balance={row.balance}
                price={row.price}
                multiplier={view.multiplier}
                currency={view.currency}
                sendKey={loaderData.sendKey}
                initiallyOpen={loaderData.sendOpen}
                reply={reply}
                offers={loaderData.sendOffers}
                allowlist={loaderData.sendAllowlist ?? undefined}
              />
            </>
          )
        ) : (
          <div className="actions">
            {row.state === "requested" ? (
              <button type="button" className="button button-secondary" disabled>
                Wallet Requested
              </button>
            ) : (
              <Form noValidate method="post">
                <AuthenticityTokenInput />
                <SubmitButton name="intent" value="request">
                  Request {row.ticker} Wallet
                </SubmitButton>
              </Form>
            )}
          </div>
        )}
        {row.state === "requested" ? (
          <p className="muted small">
            We are preparing your {row.ticker} address. It will appear here once issued.
          </p>
        ) : null}
      </div>

      <h2>Transactions</h2>
      <TransactionList
        transactions={loaderData.transactions}
        walletAddresses={row.walletId ? { [row.walletId]: row.address } : {}}
        currency={view.currency}
        multiplier={view.multiplier}
        expandId={loaderData.expand}
      />
      {loaderData.olderThan ? (
        <p>
          <Link to={`${path}?before=${encodeURIComponent(loaderData.olderThan)}`}>Older transactions</Link>
        </p>
      ) : null}
    </section>
  );
}
