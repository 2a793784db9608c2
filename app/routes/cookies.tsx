import { Link } from "react-router";
import { CompanyFacts, InfoPage, InfoSection } from "../components/info-page.tsx";

export function meta() {
  return [
    { title: "Cookie policy — Coinkeep" },
    {
      name: "description",
      content:
        "Coinkeep uses two cookies, both needed to keep you signed in and your forms safe. No tracking, no analytics, no third-party cookies.",
    },
  ];
}

export default function Cookies() {
  return (
    <InfoPage
      title="Cookie policy"
      lead="Coinkeep uses two cookies, and only two: one keeps you signed in, the other protects the forms you send. There are no tracking, analytics, advertising or third-party cookies."
    >
      <InfoSection id="our-cookies" title="The two cookies we use">
        <div className="cookie-card">
          <h3>Session cookie</h3>
          <dl>
            <div>
              <dt>Name</dt>
              <dd>
                <code>__Host-ck_session</code> (<code>ck_session</code> on an installation served without
                HTTPS)
              </dd>
            </div>
            <div>
              <dt>What it does</dt>
              <dd>
                Keeps you signed in, and remembers where you are in the create-wallet and restore-wallet
                steps. It holds only a random, signed identifier. What it points to — your session — is kept
                on our server, encrypted, never in your browser.
              </dd>
            </div>
            <div>
              <dt>How it is protected</dt>
              <dd>
                HttpOnly (scripts on the page cannot read it), SameSite=Lax (other sites cannot make your
                browser send it with their forms) and, in production, Secure (sent over HTTPS only).
              </dd>
            </div>
            <div>
              <dt>When it is set</dt>
              <dd>When you sign in or start creating or restoring a wallet.</dd>
            </div>
            <div>
              <dt>How long it lasts</dt>
              <dd>
                Until you close your browser. The session behind it ends when you choose Exit, and after 12
                hours at most.
              </dd>
            </div>
          </dl>
        </div>
        <div className="cookie-card">
          <h3>Form protection (CSRF) cookie</h3>
          <dl>
            <div>
              <dt>Name</dt>
              <dd>
                <code>__Host-ck_csrf</code> (<code>ck_csrf</code> on an installation served without HTTPS)
              </dd>
            </div>
            <div>
              <dt>What it does</dt>
              <dd>
                Holds a signed random token that every form on Coinkeep also carries. A form whose token does
                not match is refused, so another website cannot send a form in your name (cross-site request
                forgery).
              </dd>
            </div>
            <div>
              <dt>How it is protected</dt>
              <dd>HttpOnly, SameSite=Lax and, in production, Secure.</dd>
            </div>
            <div>
              <dt>When it is set</dt>
              <dd>On your first visit to a page of Coinkeep.</dd>
            </div>
            <div>
              <dt>How long it lasts</dt>
              <dd>Until you close your browser.</dd>
            </div>
          </dl>
        </div>
      </InfoSection>

      <InfoSection id="not-used" title="What we do not use">
        <ul>
          <li>No analytics, statistics or tracking cookies, and no tracking pixels.</li>
          <li>No advertising cookies and no cookies from other companies.</li>
          <li>No local storage or other browser storage for your account details.</li>
          <li>
            Nothing on our pages is loaded from other hosts: the coin icons, styles and scripts are all served
            by Coinkeep. Coin prices and exchange rates are fetched by our server, not by your browser.
          </li>
        </ul>
      </InfoSection>

      <InfoSection id="consent" title="Why there is no cookie banner">
        <p>
          Both cookies are strictly necessary for a service you ask for — signing in and sending forms safely
          — so the law does not require us to ask for your consent, and we set no other cookies to ask about.
        </p>
        <p>
          You can block or delete cookies in your browser&apos;s settings at any time. Without these two,
          Coinkeep cannot keep you signed in or accept your forms.
        </p>
      </InfoSection>

      <InfoSection id="other-sites" title="Other websites">
        <p>
          Buy Crypto opens an external exchange in a new tab. That site is not run by us and uses cookies of
          its own, under its own policy.
        </p>
      </InfoSection>

      <InfoSection id="cookie-contact" title="Questions">
        <p>
          If this policy changes, we will update this page before the change takes effect. For questions about
          cookies or your data, see the <Link to="/privacy-policy">privacy policy</Link> or write to us:
        </p>
        <CompanyFacts />
      </InfoSection>
    </InfoPage>
  );
}
