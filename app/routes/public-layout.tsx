import { Link, NavLink, Outlet } from "react-router";
import { Logo } from "../components/icons";
import { requireAnonymous, services } from "../session.server";
import type { Route } from "./+types/public-layout";

export async function loader({ request, context }: Route.LoaderArgs) {
  await requireAnonymous(request, context);
  return { supportEmail: services(context).config.supportEmail, year: new Date().getFullYear() };
}

export default function PublicLayout({ loaderData }: Route.ComponentProps) {
  return (
    <div className="public">
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
              <a href={`mailto:${loaderData.supportEmail}`}>Contact</a>
            </li>
          </ul>
        </nav>
        <p className="muted">© {loaderData.year} Coinkeep</p>
      </footer>
    </div>
  );
}
