import { Link } from "react-router";

export function meta() {
  return [
    { title: "Coinkeep — Secure Your Coins, Secure Your Future" },
    {
      name: "description",
      content: "Coinkeep keeps your Bitcoin, Ether and seven more coins safe, in one simple wallet.",
    },
  ];
}

export default function Landing() {
  return (
    <section className="hero" aria-labelledby="hero-title">
      <h1 id="hero-title">Secure Your Coins, Secure Your Future</h1>
      <p className="lead">
        Coinkeep holds your BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT and XRP in one calm, simple wallet. See
        every balance in dollars, euros, pounds or Canadian dollars, send coins when you need to, and restore
        access at any time with your personal 12-word phrase.
      </p>
      <Link to="/login" className="button button-primary button-large">
        Start Now
      </Link>
    </section>
  );
}
