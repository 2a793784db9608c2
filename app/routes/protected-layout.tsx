import {
  Form,
  Link,
  NavLink,
  Outlet,
  redirect,
  useSearchParams,
  type ShouldRevalidateFunctionArgs,
} from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { backend } from "../api.server";
import {
  BellIcon,
  BuyIcon,
  ExitIcon,
  HistoryIcon,
  Logo,
  MenuIcon,
  ShieldIcon,
  SupportIcon,
  WalletIcon,
} from "../components/icons";
import { Modal, useCloseUrl, useOpenUrl } from "../components/modal";
import { destroySession, requireUser, services } from "../session.server";
import type { Route } from "./+types/protected-layout";

/** The external exchange for 'Buy Crypto': USD to BTC, in a new tab. */
const BUY_CRYPTO_URL = "https://buy.moonpay.com/?baseCurrencyCode=usd&currencyCode=btc";

export async function loader({ request, context }: Route.LoaderArgs) {
  const { session, user } = await requireUser(request, context);
  // As the spec's client does on start: the stored e-mail and words are checked
  // with the server; a failure of any kind signs the user out.
  const check = await backend(context).checkLoggedIn({ email: user.email, twelveWords: user.words });
  if (!check.ok) {
    throw redirect("/", { headers: { "Set-Cookie": await destroySession(session, context) } });
  }
  return { email: user.email, supportEmail: services(context).config.supportEmail };
}

/** The URL without its `modal` parameter. */
function withoutModal(url: URL): string {
  const params = new URLSearchParams(url.search);
  params.delete("modal");
  return `${url.pathname}?${params.toString()}`;
}

// Opening or closing a modal changes only `?modal=`: nothing to reload.
export function shouldRevalidate({
  currentUrl,
  nextUrl,
  formMethod,
  defaultShouldRevalidate,
}: ShouldRevalidateFunctionArgs) {
  if (formMethod) return defaultShouldRevalidate;

  if (currentUrl.pathname === nextUrl.pathname && withoutModal(currentUrl) === withoutModal(nextUrl))
    return false;
  return defaultShouldRevalidate;
}

function NavItems({ supportEmail, exitUrl }: { supportEmail: string; exitUrl: string }) {
  return (
    <ul className="nav-list">
      <li>
        <NavLink to="/home">
          <WalletIcon /> Wallet
        </NavLink>
      </li>
      <li>
        <a href={BUY_CRYPTO_URL} target="_blank" rel="noopener noreferrer">
          <BuyIcon /> Buy Crypto <span className="visually-hidden">(opens in a new tab)</span>
        </a>
      </li>
      <li>
        <NavLink to="/history">
          <HistoryIcon /> History
        </NavLink>
      </li>
      <li>
        <NavLink to="/notifications">
          <BellIcon /> Notifications
        </NavLink>
      </li>
      <li>
        <NavLink to="/security">
          <ShieldIcon /> Security
        </NavLink>
      </li>
      <li>
        <a href={`mailto:${supportEmail}`}>
          <SupportIcon /> Support
        </a>
      </li>
      <li>
        <Link to={exitUrl} preventScrollReset>
          <ExitIcon /> Exit
        </Link>
      </li>
    </ul>
  );
}

function ExitModal() {
  const closeUrl = useCloseUrl();
  return (
    <Modal labelledBy="exit-title">
      <h2 id="exit-title">Are you sure you want to exit?</h2>
      <div className="actions">
        <Form method="post" action="/logout">
          <AuthenticityTokenInput />
          <button type="submit" className="button button-primary">
            Yes
          </button>
        </Form>
        <Link to={closeUrl} replace preventScrollReset className="button button-secondary" autoFocus>
          No
        </Link>
      </div>
    </Modal>
  );
}

export default function ProtectedLayout({ loaderData }: Route.ComponentProps) {
  const [params] = useSearchParams();
  const exitUrl = useOpenUrl("exit");
  return (
    <div className="app-shell">
      <aside className="sidebar" aria-label="Sidebar">
        <Link to="/home" className="logo-link" aria-label="Coinkeep, wallet">
          <Logo />
        </Link>
        <nav aria-label="Main">
          <NavItems supportEmail={loaderData.supportEmail} exitUrl={exitUrl} />
        </nav>
      </aside>
      <header className="mobile-header">
        <Link to="/home" className="logo-link" aria-label="Coinkeep, wallet">
          <Logo />
        </Link>
        <details className="burger">
          <summary aria-label="Menu">
            <MenuIcon />
          </summary>
          <nav aria-label="Menu">
            <NavItems supportEmail={loaderData.supportEmail} exitUrl={exitUrl} />
          </nav>
        </details>
      </header>
      <main id="main" className="app-main">
        <Outlet />
      </main>
      <nav className="bottom-bar" aria-label="Quick links">
        <Link to="/home" aria-label="Wallet">
          <WalletIcon />
        </Link>
        <a
          href={BUY_CRYPTO_URL}
          target="_blank"
          rel="noopener noreferrer"
          aria-label="Buy Crypto (opens in a new tab)"
        >
          <BuyIcon />
        </a>
        <Link to="/history" aria-label="History">
          <HistoryIcon />
        </Link>
      </nav>
      {params.get("modal") === "exit" ? <ExitModal /> : null}
    </div>
  );
}
