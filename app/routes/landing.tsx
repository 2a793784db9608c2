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

// The landing page is static (no loader, no query): what a careful holder
// looks for before trusting us with money, in the same words as /how-it-works,
// which has the detail. The product picture is drawn in HTML with example
// figures and says so.

// Spelled out here rather than imported from common/coins: that module lives in the signed-in
// pages' shared file, which the landing page would then download whole.
const COIN_NAMES = [
  ["BTC", "Bitcoin"],
  ["ETH", "Ethereum"],
  ["ADA", "Cardano"],
  ["BNB", "BNB"],
  ["DOGE", "Dogecoin"],
  ["SOL", "Solana"],
  ["TRX", "TRON"],
  ["USDT", "Tether"],
  ["XRP", "XRP"],
] as const;

const PREVIEW_ROWS = [
  { ticker: "btc", name: "Bitcoin", amount: "0.0525 BTC", value: "$5,535.18" },
  { ticker: "eth", name: "Ethereum", amount: "1.2 ETH", value: "$3,038.21" },
  { ticker: "usdt", name: "Tether", amount: "250 USDT", value: "$250.00" },
] as const;

function ProductPreview() {
  return (
    <figure className="preview" aria-labelledby="preview-caption">
      <div className="preview-window" aria-hidden="true">
        <div className="preview-total">
          <span>Total balance</span> <strong>$8,823.39</strong>
        </div>
        <ul className="preview-rows">
          {PREVIEW_ROWS.map((row) => (
            <li key={row.ticker}>
              <img src={`/coins/${row.ticker}.svg`} width={28} height={28} alt="" />
              <span className="preview-name">{row.name}</span>{" "}
              <span className="preview-amount">{row.amount}</span>{" "}
              <span className="preview-value">{row.value}</span>
            </li>
          ))}
        </ul>
        <div className="preview-actions">
          <span>Send</span> <span>Copy wallet address</span>
        </div>
      </div>
      <figcaption id="preview-caption">
        Your wallet at a glance: every coin, its value in your currency, and the total. (Example figures.)
      </figcaption>
    </figure>
  );
}

const STEPS = [
  {
    title: "Request a wallet",
    text: "Choose a coin and request a wallet: we issue a deposit address for it, shown with its network and a QR code.",
  },
  {
    title: "Deposit",
    text: "Coins sent to your address are credited to your balance once they are confirmed on the network.",
  },
  {
    title: "Send, with a second pair of eyes",
    text: "You ask us to send; our operators check every request before it is signed and broadcast, and you see its status until it is done.",
  },
] as const;

const SAFEGUARDS = [
  {
    title: "Keys off the website",
    text: "The private keys that control our wallets are kept apart from this website. The web application holds addresses, balances and requests — never a private key.",
  },
  {
    title: "Your 12-word phrase",
    text: "Created for you when you open a wallet. With it and your e-mail you can always regain access and set a new password.",
  },
  {
    title: "Encrypted at rest",
    text: "Your phrase is stored encrypted (AES-256-GCM) under a key derived from your password and a key held by our server; your password is kept only as an argon2id hash.",
  },
  {
    title: "Sessions that end",
    text: "A session ends after a period without activity and when you exit, and a restore signs you out in every other browser.",
  },
  {
    title: "A check before every send",
    text: "Addresses are checked for the coin's format and checksum, and you confirm the amount, network and address before anything leaves.",
  },
  {
    title: "A ledger that adds up",
    text: "Every balance is the sum of double-entry records; a send holds its coins until an operator approves or declines it.",
  },
] as const;

export default function Landing() {
  return (
    <div className="landing">
      <section className="hero" aria-labelledby="hero-title">
        <h1 id="hero-title">Secure Your Coins, Secure Your Future</h1>
        <p className="lead">
          Coinkeep holds your BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT and XRP in one calm, simple wallet. See
          every balance in dollars, euros, pounds or Canadian dollars, send coins when you need to, and
          restore access at any time with your personal 12-word phrase.
        </p>
        <div className="hero-actions">
          <Link to="/login" className="button button-primary button-large">
            Start Now
          </Link>{" "}
          <Link to="/how-it-works" className="button button-secondary button-large">
            How custody works
          </Link>
        </div>
      </section>

      <ProductPreview />

      <section className="landing-section" aria-labelledby="coins-title">
        <h2 id="coins-title">Nine coins, one wallet</h2>
        <ul className="coin-grid">
          {COIN_NAMES.map(([ticker, name]) => (
            <li key={ticker}>
              <img src={`/coins/${ticker.toLowerCase()}.svg`} width={32} height={32} alt="" />
              <span>
                <strong>{name}</strong>
                {name === ticker ? null : (
                  <>
                    {" "}
                    <span className="coin-grid-ticker">{ticker}</span>
                  </>
                )}
              </span>
            </li>
          ))}
        </ul>
      </section>

      <section className="landing-section" aria-labelledby="custody-title">
        <h2 id="custody-title">How custody works here</h2>
        <p className="section-lead">
          Coinkeep is a custodial wallet: we hold the coins and their keys, you hold an account with us — like
          a bank account for coins.
        </p>
        <ol className="steps">
          {STEPS.map((step) => (
            <li key={step.title}>
              <h3>{step.title}</h3>
              <p>{step.text}</p>
            </li>
          ))}
        </ol>
      </section>

      <section className="landing-section" aria-labelledby="security-title">
        <h2 id="security-title">How we keep it safe</h2>
        <ul className="safeguards">
          {SAFEGUARDS.map((point) => (
            <li key={point.title}>
              <h3>{point.title}</h3>
              <p>{point.text}</p>
            </li>
          ))}
        </ul>
        <p>
          <Link to="/how-it-works">Read how Coinkeep works, step by step</Link>
        </p>
      </section>

      <section className="landing-cta" aria-labelledby="cta-title">
        <h2 id="cta-title">Ready when you are</h2>
        <p>Opening a wallet takes a minute: an e-mail, a password and your 12 words.</p>
        <Link to="/create-wallet" className="button button-primary button-large">
          Create a wallet
        </Link>
      </section>
    </div>
  );
}
