import { Link, NavLink, Outlet, useLocation, type ShouldRevalidateFunctionArgs } from "react-router";
import {
  ContactPopup,
  contactCloseUrl,
  contactIsOpen,
  contactOpenUrl,
} from "../components/contact-popup.tsx";
import { useHydrated } from "../components/hydrated.ts";
import { Logo } from "../components/icons.tsx";
import { requireAnonymous, services } from "../session.server.ts";
import infoStyles from "../styles/info.css?url";
import type { Route } from "./+types/public-layout";

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: infoStyles }];

export async function loader({ request, context }: Route.LoaderArgs) {
  await requireAnonymous(request, context);
  const config = services(context).config;
  return {
    supportEmail: config.supportEmail,
    companyName: config.companyName,
    companyNumber: config.companyNumber,
    legalEmail: config.legalEmail,
    year: new Date().getFullYear(),
  };
}

// Moving through the contact popup changes only `?modal=` and `?step=`:
// nothing here to reload.
export function shouldRevalidate({
  currentUrl,
  nextUrl,
  formMethod,
  defaultShouldRevalidate,
}: ShouldRevalidateFunctionArgs) {
  if (formMethod) return defaultShouldRevalidate;
  if (currentUrl.pathname === nextUrl.pathname && contactCloseUrl(currentUrl) === contactCloseUrl(nextUrl))
    return false;
  return defaultShouldRevalidate;
}

export default function PublicLayout({ loaderData }: Route.ComponentProps) {
  const location = useLocation();
  const contactOpen = contactIsOpen(location.search);
  const hydrated = useHydrated();
  return (
    <>
      {/* The open popup comes first: where a reader without scripts or CSS lands (issue 24). */}
      {contactOpen ? <ContactPopup supportEmail={loaderData.supportEmail} /> : null}
      {/* Without scripts the open popup is not a modal dialog, so the page behind it is made
          inert here; with scripts showModal() does that (and lets focus go back to 'Contact'). */}
      <div className="public" inert={(contactOpen && !hydrated) || undefined}>
        <header className="public-header">
          <Link to="/" className="logo-link" aria-label="Coinkeep, home">
            <Logo />
          </Link>
          <nav aria-label="Main">
            <ul className="public-nav">
              <li>
                <NavLink to="/" end>
                  Home
                </NavLink>
              </li>
              <li>
                <NavLink to="/about-us">About us</NavLink>
              </li>
              <li>
                <NavLink to="/how-it-works">How it works</NavLink>
              </li>
            </ul>
          </nav>
        </header>
        <main id="main" className="public-main">
          <Outlet />
        </main>
        <footer className="public-footer">
          <nav aria-label="Legal">
            <ul>
              <li>
                <Link to="/privacy-policy">Privacy policy</Link>
              </li>
              <li>
                <Link to="/cookies">Cookies</Link>
              </li>
              <li>
                <Link to="/terms-and-conditions">Terms and conditions</Link>
              </li>
              <li>
                <Link to={contactOpenUrl(location)} preventScrollReset aria-haspopup="dialog">
                  Contact
                </Link>
              </li>
            </ul>
          </nav>
          <p className="muted">
            © {loaderData.year} {loaderData.companyName}
          </p>
        </footer>
      </div>
    </>
  );
}
