import { Link } from "react-router";
import { backend, transactionsBefore } from "../backend.server.ts";
import { TransactionList } from "../components/transactions.tsx";
import { useWalletView } from "../components/use-wallet-view.ts";
import { requireUser } from "../session.server.ts";
import type { Route } from "./+types/history";

const PAGE_SIZE = 50;

export function meta() {
  return [{ title: "History — Coinkeep" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const url = new URL(request.url);
  const answer = await backend(context).clientBalances({
    email: user.email,
    twelveWords: user.words,
    // One more than a page tells whether there is an older page.
    transactionsLimit: PAGE_SIZE + 1,
    includeMessages: false,
    ...transactionsBefore(url),
  });
  const all = answer.ok ? answer.data.transactions : [];
  const page = all.slice(0, PAGE_SIZE);
  return {
    transactions: page,
    olderThan: all.length > PAGE_SIZE ? (page.at(-1)?.date ?? null) : null,
    paged: Boolean(url.searchParams.get("before")),
    unavailable: !answer.ok,
  };
}

export default function History({ loaderData }: Route.ComponentProps) {
  const view = useWalletView();
  const addresses = Object.fromEntries(
    view.rows.filter((r) => r.walletId).map((r) => [r.walletId!, r.address]),
  );
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <TransactionList
        labels="history"
        transactions={loaderData.transactions}
        walletAddresses={addresses}
        currency={view.currency}
        multiplier={view.multiplier}
      />
      <nav aria-label="Pages" className="pager">
        {loaderData.paged ? <Link to="/history">Newest transactions</Link> : null}
        {loaderData.olderThan ? (
          <Link to={`/history?before=${encodeURIComponent(loaderData.olderThan)}`}>Older transactions</Link>
        ) : null}
      </nav>
    </section>
  );
}
