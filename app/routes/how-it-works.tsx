import { Link } from "react-router";
import { InfoPage, InfoSection, useLegalFacts } from "../components/info-page.tsx";

export function meta() {
  return [
    { title: "How it works — Coinkeep" },
    {
      name: "description",
      content:
        "How Coinkeep keeps your coins: who holds the keys, how deposits are credited, how sends are signed and broadcast, and what your 12-word phrase is for.",
    },
  ];
}

const CONTENTS = [
  ["custody", "Custodial, in plain words"],
  ["key-storage", "Key storage"],
  ["your-phrase", "Your 12-word phrase"],
  ["receiving", "Receiving coins"],
  ["signing", "Sending: signing and broadcasting"],
  ["ledger", "Your balance and the ledger"],
  ["prices", "Prices and currencies"],
  ["never", "What we will never do"],
] as const;

export default function HowItWorks() {
  const { companyName } = useLegalFacts();
  return (
    <InfoPage
      title="How Coinkeep works"
      lead="Coinkeep is a custodial wallet: we hold your coins and the keys that control them, and you hold an account with us. This page explains, step by step, what happens behind the screens you use."
      contents={CONTENTS}
    >
      <InfoSection id="custody" title="Custodial, in plain words">
        <p>
          With a self-custody wallet you keep the private keys yourself, and nobody can help you if you lose
          them. Coinkeep works the other way round, more like a bank account for coins:
        </p>
        <ul>
          <li>
            {companyName} holds the coins in wallets whose private keys it keeps. The addresses you receive
            coins on belong to those wallets.
          </li>
          <li>Your balance is our record of how much of each coin we hold for you.</li>
          <li>
            When you send coins, you ask us to send them for you. Our operators — people on our staff — check
            the request, then sign and broadcast the transaction.
          </li>
        </ul>
        <p>
          This means you have no keys to manage and can regain access with your 12-word phrase, but it also
          means you trust us to keep the keys safe and to carry out your requests. We explain below how we do
          that.
        </p>
      </InfoSection>

      <InfoSection id="key-storage" title="Key storage">
        <p>
          The private keys that control our wallets are kept by {companyName}, apart from this website. The
          web application and its database hold addresses, balances and requests, never a private key: the
          website itself has nothing that could sign a transaction.
        </p>
        <p>
          Your browser holds no keys either: it keeps only a session cookie, a random identifier that lets our
          server recognise you while you are signed in (see the <Link to="/cookies">cookie policy</Link>
          ).
        </p>
      </InfoSection>

      <InfoSection id="your-phrase" title="Your 12-word phrase">
        <p>
          When you create a wallet we show you 12 words, once. They look like the recovery phrase of a
          self-custody wallet, but they are something else:{" "}
          <strong>the recovery key of your Coinkeep account</strong>, not a key on any blockchain. Importing
          them into another wallet app will not show your coins, because the coins are in wallets whose keys
          we keep.
        </p>
        <p>
          With your e-mail address and these words you can restore access to your account and choose a new
          password. Anyone who has them can do the same, so keep them offline and never share them — not even
          with someone who says they work for Coinkeep.
        </p>
        <p>
          We keep your phrase encrypted, under a key derived from your password and a key held by our server,
          so a copy of our database does not reveal it. To check the phrase when you use it we keep a keyed
          fingerprint of it, not the words themselves. You can see the words again on the Security page after
          entering your password.
        </p>
      </InfoSection>

      <InfoSection id="receiving" title="Receiving coins">
        <ol>
          <li>
            On a coin&apos;s page choose, for example, <strong>Request BTC Wallet</strong>. The page then
            shows &lsquo;Wallet Requested&rsquo;.
          </li>
          <li>
            An operator issues an address for that coin. Before it is stored it is checked for the coin&apos;s
            format and checksum, and it belongs to your wallet alone.
          </li>
          <li>
            Send that coin — and only that coin — to the address, on the network named on the coin&apos;s
            page. Coins sent on another network, or another coin, may be lost.
          </li>
          <li>
            Once the transfer is confirmed on the blockchain, an operator credits it to your balance. It
            appears in your history as an incoming transaction, Confirmed. Each blockchain transaction is
            credited once, however often it is reported.
          </li>
        </ol>
      </InfoSection>

      <InfoSection id="signing" title="Sending: signing and broadcasting">
        <ol>
          <li>
            You enter the destination address and the amount (up to 4 decimals). We check that the address has
            the right format and checksum for the coin and that your available balance covers the amount. We
            can check the format of an address, not who owns it.
          </li>
          <li>
            If the checks pass, your request is recorded and the amount is held at once: your available
            balance drops, and the send is listed as Unconfirmed. Submitting the same form twice creates one
            request, not two.
          </li>
          <li>
            An operator reviews the request, including the checks that anti-money-laundering rules require. We
            may ask you for proof that you own the destination wallet.
          </li>
          <li>
            If the request is approved, the operator signs the transaction with our keys and broadcasts it to
            the coin&apos;s network. The send is then shown as Confirmed. If it is declined, the whole amount
            held returns to your balance and the send is shown as Declined.
          </li>
        </ol>
        <p>
          <strong>A transaction that has been broadcast cannot be reversed, by us or by anyone else.</strong>{" "}
          Check the address carefully before you confirm.
        </p>
      </InfoSection>

      <InfoSection id="ledger" title="Your balance and the ledger">
        <p>
          Balances are kept in a double-entry ledger: every change is a transfer between two accounts,
          recorded in one step, so what leaves one account always arrives in another. Entries are never edited
          or deleted; a correction is a new entry. Amounts are stored as whole numbers of each coin&apos;s
          smallest unit, so nothing is lost to rounding.
        </p>
      </InfoSection>

      <InfoSection id="prices" title="Prices and currencies">
        <p>
          The value of your coins in US dollars, euros, pounds or Canadian dollars is for information only.
          Coin prices come from CoinGecko and exchange rates from the European Central Bank; our server
          fetches them, not your browser, and refreshes them every minute. When they cannot be refreshed, the
          page says how old they are.
        </p>
      </InfoSection>

      <InfoSection id="never" title="What we will never do">
        <ul>
          <li>Ask you for your 12-word phrase or your password, by e-mail, chat or phone.</li>
          <li>Move coins out of your balance without a request from you or a legal obligation to do so.</li>
          <li>Track you across the web or sell your data.</li>
        </ul>
        <p>
          Questions? Read our <Link to="/terms-and-conditions">terms and conditions</Link> and{" "}
          <Link to="/privacy-policy">privacy policy</Link>, or contact us.
        </p>
      </InfoSection>
    </InfoPage>
  );
}
