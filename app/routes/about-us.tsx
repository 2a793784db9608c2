import { Link, useLocation } from "react-router";
import { contactOpenUrl } from "../components/contact-popup.tsx";
import { CompanyFacts, InfoPage, InfoSection, useLegalFacts } from "../components/info-page.tsx";

export function meta() {
  return [
    { title: "About us — Coinkeep" },
    {
      name: "description",
      content:
        "Coinkeep is a custodial cryptocurrency wallet for everyday holders: who runs it, what we do and what we stand for.",
    },
  ];
}

export default function AboutUs() {
  const { companyName } = useLegalFacts();
  const location = useLocation();
  return (
    <InfoPage
      title="About us"
      lead={`Coinkeep is a custodial cryptocurrency wallet for everyday holders, run by ${companyName}. We keep your coins so that you do not have to manage keys, and we try to be plain about how.`}
    >
      <InfoSection id="what-we-do" title="What we do">
        <p>
          Coinkeep holds nine coins — BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT and XRP — in one wallet. You
          see every balance in US dollars, euros, pounds or Canadian dollars, receive coins on addresses we
          issue for you, send coins when you need to, and restore access to your account with your 12-word
          phrase.
        </p>
        <p>
          Behind the screens, people on our staff issue your addresses, credit your deposits once the
          blockchain has confirmed them, and review every send before they sign and broadcast it.{" "}
          <Link to="/how-it-works">How it works</Link> explains each step.
        </p>
      </InfoSection>

      <InfoSection id="what-we-stand-for" title="What we stand for">
        <ul>
          <li>
            <strong>Honesty about custody.</strong> We hold the keys, and we say so. Your balance is our
            promise, kept in a ledger that is never edited after the fact.
          </li>
          <li>
            <strong>Built for everyone.</strong> Coinkeep is made to work on a low-end phone, with JavaScript
            switched off, with the keyboard alone and with a screen reader.
          </li>
          <li>
            <strong>Private by default.</strong> Two necessary cookies, no tracking, no analytics, nothing
            loaded from other companies&apos; servers. See our{" "}
            <Link to="/privacy-policy">privacy policy</Link>.
          </li>
          <li>
            <strong>Safety over speed.</strong> Sends are checked by a person before they leave, because a
            blockchain transfer cannot be undone.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="company" title="The company">
        <p>
          Questions, ideas or a problem? <Link to={contactOpenUrl(location)}>Send us a message</Link> or write
          to one of our mailboxes.
        </p>
        <CompanyFacts />
      </InfoSection>
    </InfoPage>
  );
}
