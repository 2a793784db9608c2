import { Link } from "react-router";
import { CompanyFacts, InfoPage, InfoSection, useLegalFacts } from "../components/info-page.tsx";

export function meta() {
  return [
    { title: "Privacy policy — Coinkeep" },
    {
      name: "description",
      content:
        "What Coinkeep stores about you, why, for how long, who sees it and how to exercise your rights.",
    },
  ];
}

const CONTENTS = [
  ["controller", "Who is responsible"],
  ["what-we-store", "What we store and why"],
  ["legal-bases", "Our legal bases"],
  ["sharing", "Who sees your data"],
  ["retention", "How long we keep it"],
  ["security", "How we protect it"],
  ["rights", "Your rights"],
  ["privacy-other", "Cookies, children and changes"],
  ["privacy-contact", "Contact"],
] as const;

export default function PrivacyPolicy() {
  const { companyName, companyNumber, legalEmail } = useLegalFacts();
  return (
    <InfoPage
      title="Privacy policy"
      lead="We keep as little about you as a custodial wallet can, and we never sell it or use it for advertising. This policy says what we store, why, for how long, and what you can ask of us."
      contents={CONTENTS}
    >
      <InfoSection id="controller" title="Who is responsible">
        <p>
          {companyName} (registered company number {companyNumber}) is responsible for your personal data (the
          &ldquo;controller&rdquo;). Write to <a href={`mailto:${legalEmail}`}>{legalEmail}</a> about anything
          in this policy.
        </p>
      </InfoSection>

      <InfoSection id="what-we-store" title="What we store and why">
        <dl className="info-list">
          <div>
            <dt>Your e-mail address</dt>
            <dd>It identifies your account, and it is how we answer you.</dd>
          </div>
          <div>
            <dt>Your password — as an argon2id hash only</dt>
            <dd>
              To check your password when you sign in. A hash cannot be turned back into the password: we
              never know it.
            </dd>
          </div>
          <div>
            <dt>Your 12-word phrase — encrypted</dt>
            <dd>
              So that you can see it again and restore your account with it. It is encrypted under a key
              derived from your password and a key held by our server, and checked against a keyed
              fingerprint, so a copy of our database does not reveal it.
            </dd>
          </div>
          <div>
            <dt>Your wallets, addresses, balances and transactions</dt>
            <dd>
              To hold coins for you, to carry out your sends, and because anti-money-laundering law requires
              us to keep records of them. This includes the destination addresses you send to.
            </dd>
          </div>
          <div>
            <dt>Messages we send you</dt>
            <dd>Compliance and account messages, and whether you have opened them.</dd>
          </div>
          <div>
            <dt>Support and contact messages</dt>
            <dd>
              What you write to us — your e-mail address, your comment and, in the support form, your name and
              phone number if you give them — together with the IP address the message was sent from. We use
              them to answer you, and the IP address to handle abuse such as spam and fraud.
            </dd>
          </div>
          <div>
            <dt>Your session</dt>
            <dd>
              While you are signed in, a session record on our server, encrypted, that your session cookie
              points to (see the <Link to="/cookies">cookie policy</Link>).
            </dd>
          </div>
          <div>
            <dt>Server logs</dt>
            <dd>
              For each request: the time, the page asked for (without its query string), the result and how
              long it took. They never contain passwords, phrases, form contents or session identifiers. We
              use them to keep the service running and secure.
            </dd>
          </div>
          <div>
            <dt>The record of what our operators did</dt>
            <dd>
              Which operator issued an address, credited a deposit or approved or declined a send, and when —
              so that every change to your balance can be accounted for.
            </dd>
          </div>
        </dl>
        <p>
          We do not use analytics or tracking, and we do not build profiles of you. What you send to a
          blockchain — the destination address and the amount — becomes public on that blockchain, as with any
          cryptocurrency transfer.
        </p>
      </InfoSection>

      <InfoSection id="legal-bases" title="Our legal bases">
        <ul>
          <li>
            <strong>Our contract with you</strong>: your account, your wallets, your transfers and your
            messages to us.
          </li>
          <li>
            <strong>Legal obligations</strong>: anti-money-laundering checks and record keeping.
          </li>
          <li>
            <strong>Our legitimate interests</strong>: keeping the service secure and handling abuse (server
            logs, the IP address of messages, the operators&apos; record).
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="sharing" title="Who sees your data">
        <ul>
          <li>Our operators and support staff, as far as their work needs it.</li>
          <li>Authorities, when the law requires us to report or disclose.</li>
          <li>
            Companies that run our servers for us, only on our instructions and under contract, and never for
            their own purposes.
          </li>
        </ul>
        <p>
          We do not sell your data or share it for advertising. Coin prices and exchange rates are fetched by
          our server; nothing about you is sent to those sources. If you use Buy Crypto, what you give the
          external exchange is covered by its own privacy policy.
        </p>
      </InfoSection>

      <InfoSection id="retention" title="How long we keep it">
        <ul>
          <li>
            <strong>Account, wallet and transaction records</strong>: while your account is open, and
            afterwards for as long as anti-money-laundering law requires — usually five years after our
            relationship ends.
          </li>
          <li>
            <strong>Sessions</strong>: until you choose Exit, and 12 hours at most.
          </li>
          <li>
            <strong>Support and contact messages</strong>: as the history of what you asked us; you may ask us
            to delete them. The IP address sent with a message is cleared after 90 days.
          </li>
          <li>
            <strong>Server logs</strong>: for a short period, to run and secure the service.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="security" title="How we protect it">
        <ul>
          <li>Passwords are hashed with argon2id; your phrase and your session are encrypted.</li>
          <li>Your browser holds only an HttpOnly session cookie, sent over HTTPS only in production.</li>
          <li>
            Every form carries a token against cross-site request forgery, and public forms are checked for
            automated spam.
          </li>
          <li>
            Balance records are append-only: nothing is edited or deleted after the fact, and operators&apos;
            actions are recorded.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="rights" title="Your rights">
        <p>You may ask us:</p>
        <ul>
          <li>for a copy of the personal data we hold about you, in a portable format;</li>
          <li>to correct data that is wrong;</li>
          <li>
            to delete your data, or to restrict how we use it — except what the law requires us to keep;
          </li>
          <li>to stop using your data on the basis of our legitimate interests.</li>
        </ul>
        <p>
          Write to <a href={`mailto:${legalEmail}`}>{legalEmail}</a> from the e-mail address of your account.
          We may need to confirm that the request comes from you, and we answer within one month. You may also
          complain to your data protection authority.
        </p>
      </InfoSection>

      <InfoSection id="privacy-other" title="Cookies, children and changes">
        <ul>
          <li>
            We use two cookies, both strictly necessary; the <Link to="/cookies">cookie policy</Link> lists
            them.
          </li>
          <li>Coinkeep is not for anyone under 18, and we do not knowingly hold data about children.</li>
          <li>
            If this policy changes in a way that matters to you, we will tell you before the change takes
            effect.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="privacy-contact" title="Contact">
        <CompanyFacts />
      </InfoSection>
    </InfoPage>
  );
}
