import { Link } from "react-router";
import { CompanyFacts, InfoPage, InfoSection, useLegalFacts } from "../components/info-page.tsx";

export function meta() {
  return [
    { title: "Terms and conditions — Coinkeep" },
    {
      name: "description",
      content:
        "The terms of Coinkeep's custodial wallet service: who may use it, your account and phrase, receiving and sending coins, anti-money-laundering checks, fees, suspension and liability.",
    },
  ];
}

const CONTENTS = [
  ["agreement", "These terms"],
  ["service", "The service"],
  ["eligibility", "Who may use Coinkeep"],
  ["account", "Your account and 12-word phrase"],
  ["receiving", "Receiving coins"],
  ["sending", "Sending coins"],
  ["aml", "Anti-money-laundering rules and proof of ownership"],
  ["fees", "Fees"],
  ["prices", "Prices and other services"],
  ["suspension", "Suspension and closing your account"],
  ["liability", "Our liability"],
  ["changes", "Changes to these terms"],
  ["terms-contact", "Contact"],
] as const;

export default function TermsAndConditions() {
  const { companyName, companyNumber } = useLegalFacts();
  return (
    <InfoPage
      title="Terms and conditions"
      lead={`These terms are the agreement between you and ${companyName} (registered company number ${companyNumber}) for the use of Coinkeep. Please read them before you create a wallet: by creating one you accept them.`}
      contents={CONTENTS}
    >
      <InfoSection id="agreement" title="1. These terms">
        <p>
          &ldquo;We&rdquo;, &ldquo;us&rdquo; and &ldquo;Coinkeep&rdquo; mean {companyName}. &ldquo;You&rdquo;
          means the person who holds the account. Our <Link to="/privacy-policy">privacy policy</Link> and{" "}
          <Link to="/cookies">cookie policy</Link> explain how we handle your data; they are not part of this
          agreement but apply alongside it.
        </p>
      </InfoSection>

      <InfoSection id="service" title="2. The service">
        <ul>
          <li>
            Coinkeep is a <strong>custodial</strong> wallet: we hold the coins credited to your account, in
            wallets whose private keys we keep. <Link to="/how-it-works">How it works</Link> describes this in
            detail.
          </li>
          <li>
            Your balance is our record of the coins we hold for you. Supported coins are BTC, ETH, ADA, BNB,
            DOGE, SOL, TRX, USDT and XRP.
          </li>
          <li>
            Coinkeep is not a bank. Balances earn no interest and are not covered by a deposit protection
            scheme.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="eligibility" title="3. Who may use Coinkeep">
        <ul>
          <li>
            You must be at least <strong>18 years old</strong> and able to enter into a binding contract.
          </li>
          <li>You use the account for yourself, not on behalf of someone else.</li>
          <li>
            You may not use Coinkeep if the law where you live forbids it, or if you are subject to sanctions.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="account" title="4. Your account and 12-word phrase">
        <ul>
          <li>
            Your account is your e-mail address, your password and a 12-word phrase we show you once when you
            create it. The phrase is the recovery key of your account: with your e-mail address, it lets you
            set a new password.
          </li>
          <li>
            Keep your password and phrase secret and somewhere safe. Anyone who has them can use your account.
            We will never ask you for either.
          </li>
          <li>
            You are responsible for what is done with your account using your password or phrase. If you think
            someone else knows them, contact support at once.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="receiving" title="5. Receiving coins">
        <ul>
          <li>
            You may request a wallet for each supported coin. An operator then issues its address; until then
            the wallet shows as requested.
          </li>
          <li>
            Send only that coin, on the network named for it, to its address. Coins sent on another network,
            or another coin, may be lost, and we may be unable to recover them.
          </li>
          <li>
            A deposit is credited to your balance after it has been confirmed on the blockchain and checked by
            an operator.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="sending" title="6. Sending coins">
        <ul>
          <li>
            <strong>You are responsible for the destination address.</strong> We check that an address has the
            right format for the coin, not who owns it. Check it carefully before you confirm.
          </li>
          <li>
            <strong>Transfers are irreversible.</strong> Once a transaction has been broadcast to the network,
            neither we nor anyone else can cancel or reverse it.
          </li>
          <li>
            A send is a request. The amount is held from your available balance at once; an operator then
            reviews the request and, if it is approved, signs and broadcasts the transaction. Sends are not
            instant.
          </li>
          <li>
            We may delay or decline a send — for example when the checks in section 7 are not complete, when
            we suspect fraud, or when the law requires it. A declined send returns the full amount held to
            your balance.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="aml" title="7. Anti-money-laundering rules and proof of ownership">
        <ul>
          <li>
            <strong>Anti-money-laundering rules apply</strong> to Coinkeep and to every transfer in and out of
            it.
          </li>
          <li>
            We may ask you to verify your identity, to explain the source of your funds, or to explain a
            transfer.
          </li>
          <li>
            <strong>Proof of wallet ownership may be required</strong>: we may ask you to show that you
            control a wallet you send coins to or receive them from — for example by signing a message with it
            or by making a small transfer from it.
          </li>
          <li>
            Until we have what we asked for, we may hold a deposit or a send. Where the law requires, we
            report transactions to the authorities, and we may be forbidden from telling you that we did.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="fees" title="8. Fees">
        <p>
          The Coinkeep app charges no fees: holding, receiving and sending coins cost you nothing on top of
          the amount you send. If a fee is ever introduced, it will be shown to you before you confirm a
          transfer, and we will tell you at least 30 days in advance, as section 12 describes.
        </p>
      </InfoSection>

      <InfoSection id="prices" title="9. Prices and other services">
        <ul>
          <li>
            Prices and values in US dollars, euros, pounds and Canadian dollars are shown for information
            only. They come from public sources, may be delayed, and are not an offer to buy or sell.
          </li>
          <li>
            Buy Crypto opens an external exchange run by another company, under its own terms. We are not a
            party to what you agree with it.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="suspension" title="10. Suspension and closing your account">
        <ul>
          <li>
            We may suspend or restrict your account, or a transfer, if you break these terms, if we must by
            law, if the checks in section 7 require it, or to protect you or us from fraud or a security
            threat. Unless the law forbids it, we will tell you why.
          </li>
          <li>
            You may close your account at any time by contacting support. We then send your remaining coins to
            an address you own, after the checks in section 7.
          </li>
          <li>
            We may close the service or your account with at least 30 days&apos; notice, and will return your
            coins in the same way.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="liability" title="11. Our liability">
        <ul>
          <li>
            We keep the coins we hold for you with reasonable care and skill, and are responsible for losses
            caused by our failure to do so.
          </li>
          <li>
            We are not responsible for losses caused by an address you entered, coins sent on the wrong
            network, your sharing of your password or phrase, or events outside our control, such as a failure
            or change of a blockchain network.
          </li>
          <li>Nothing in these terms limits a liability that the law does not allow us to limit.</li>
        </ul>
      </InfoSection>

      <InfoSection id="changes" title="12. Changes to these terms">
        <p>
          We may change these terms. We will tell you about a change that affects you at least 30 days before
          it takes effect, unless the law requires it sooner. If you do not accept a change, you may close
          your account before it takes effect, free of charge.
        </p>
      </InfoSection>

      <InfoSection id="terms-contact" title="13. Contact">
        <p>For support, write to the support mailbox; for legal notices, to the legal mailbox.</p>
        <CompanyFacts />
      </InfoSection>
    </InfoPage>
  );
}
