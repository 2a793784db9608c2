import { requireUser } from "../session.server";
import type { Route } from "./+types/home";

export function meta() {
  return [{ title: "Wallet — Coinkeep" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  return { email: user.email };
}

export default function Home({ loaderData }: Route.ComponentProps) {
  return (
    <section aria-labelledby="wallet-title">
      <h1 id="wallet-title">Wallet</h1>
      <p className="muted">Signed in as {loaderData.email}</p>
      <div className="empty-state">
        <p>Your wallets will appear here</p>
        <p className="muted">
          Coin balances, prices and wallet requests are not available yet in this version of Coinkeep.
        </p>
      </div>
    </section>
  );
}
