import { useState } from "react";
import { Form, Link, useSearchParams } from "react-router";
import { CoinIcon } from "../components/coin-icon.tsx";
import { Change, fiat } from "../components/money.tsx";
import { useHydrated } from "../components/hydrated.ts";
import { useWalletView } from "../components/use-wallet-view.ts";
import { formatListBalance, parseDecimal } from "../lib/format.ts";
import { TICKERS } from "../../common/coins.ts";
import { SparklineCell } from "../components/sparkline.tsx";
import { sparklineOf, type Sparkline } from "../dashboard.server.ts";
import { loadWalletView, type CoinRow } from "../wallet-view.server.ts";
import type { Route } from "./+types/home";

/** Each coin's 7-day sparkline, drawn here on the server (the layout's load, shared within the request). */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { sparklines } = await loadWalletView(request, context);
  const drawn: Partial<Record<string, Sparkline>> = {};
  for (const ticker of TICKERS) {
    const points = sparklines[ticker];
    const sparkline = points ? sparklineOf(ticker, points) : null;
    if (sparkline) drawn[ticker] = sparkline;
  }
  return { sparklines: drawn };
}

export function meta() {
  return [{ title: "Wallet — Coinkeep" }];
}

function matches(row: CoinRow, query: string): boolean {
  const q = query.trim().toLowerCase();
  return !q || row.name.toLowerCase().includes(q) || row.ticker.toLowerCase().includes(q);
}

export default function Home({ loaderData }: Route.ComponentProps) {
  const view = useWalletView();
  const [params] = useSearchParams();
  const hydrated = useHydrated();
  // Without scripts the GET form filters on the server's render; with them, as you type.
  const [query, setQuery] = useState(params.get("q") ?? "");
  const rows = view.rows.filter((row) => matches(row, query));
  return (
    <section aria-labelledby="wallet-title">
      <div className="page-head">
        <div>
          <h1 id="wallet-title">Wallet</h1>
          <p className="muted">Signed in as {view.email}</p>
        </div>
        <Form
          noValidate
          method="get"
          role="search"
          className="search"
          onSubmit={(e) => hydrated && e.preventDefault()}
        >
          <label htmlFor="coin-search" className="visually-hidden">
            Search coins by name or ticker
          </label>
          <input
            id="coin-search"
            name="q"
            type="search"
            placeholder="Search"
            autoComplete="off"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
          />
          {hydrated ? null : (
            <button type="submit" className="button button-secondary">
              Search
            </button>
          )}
        </Form>
      </div>
      {rows.length === 0 ? (
        <p className="empty-state">No coin matches “{query.trim()}”.</p>
      ) : (
        <table className="coin-table">
          <caption className="visually-hidden">Your coins, by value</caption>
          <thead>
            <tr>
              <th scope="col">Coin</th>
              <th scope="col" className="num">
                Balance
              </th>
              <th scope="col" className="num">
                Value
              </th>
              <th scope="col" className="num hide-small">
                Price
              </th>
              <th scope="col" className="num hide-small">
                24h
              </th>
              <th scope="col" className="hide-small">
                7 days
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.ticker}>
                <th scope="row">
                  <Link to={`/wallet/${row.ticker.toLowerCase()}`} className="coin-link">
                    <CoinIcon src={row.icon} />
                    <span className="coin-name">{row.name}</span>{" "}
                    <span className="coin-ticker">{row.ticker}</span>
                  </Link>
                </th>
                <td className="num">{formatListBalance(parseDecimal(row.balance))}</td>
                <td className="num">{fiat(row.valueUsd, view.currency, view.multiplier)}</td>
                <td className="num hide-small">
                  {row.price ? fiat(row.price, view.currency, view.multiplier) : "—"}
                </td>
                <td className="num hide-small">
                  <Change percent={row.change} />
                </td>
                <td className="hide-small sparkline-cell">
                  <SparklineCell sparkline={loaderData.sparklines[row.ticker]} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
