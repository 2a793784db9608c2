import { Suspense, useEffect, useRef } from "react";
import {
  Link,
  Outlet,
  useSearchParams,
  type LinksFunction,
  type ShouldRevalidateFunctionArgs,
} from "react-router";
import { useLiveUpdates, usePolling, useUnreadCount } from "../components/account-refresh.ts";
import { MENU_ITEMS, NavList, QUICK_LINKS, UnreadBadge } from "../components/account-nav.tsx";
import { CurrencyPicker, Total } from "../components/account-summary.tsx";
import { ExitModal } from "../components/exit-modal.tsx";
import { CloseIcon, Logo, MenuIcon } from "../components/icons.tsx";
import { SupportModal } from "../components/lazy-support-modal.ts";
import { useOpenUrl, withoutModal } from "../components/modal.tsx";
import { useDisclosure } from "../components/use-disclosure.ts";
import { formatDateTime } from "../lib/format.ts";
import { backend } from "../backend.server.ts";
import { services } from "../session.server.ts";
import { loadWalletView } from "../wallet-view.server.ts";
import accountStyles from "../styles/account.css?url";
import type { Route } from "./+types/protected-layout";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: accountStyles }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user, view } = await loadWalletView(request, context);
  const config = services(context).config;
  const unread = await backend(context).newMessagesCount({ email: user.email, twelvewords: user.words });
  return {
    view,
    unread: unread.ok ? unread.data.newMessagesCount : 0,
    buyCryptoUrl: config.buyCryptoUrl,
    idleMs: config.sessionIdleMs ?? 30 * 60_000,
  };
}

// Opening or closing a modal changes only `?modal=`: nothing to reload. The
// same URL is a revalidation (the 60 s refresh, Refresh, after a fetcher's
// post): it reloads balances, prices and rates.
export function shouldRevalidate({
  currentUrl,
  nextUrl,
  formMethod,
  defaultShouldRevalidate,
}: ShouldRevalidateFunctionArgs) {
  if (formMethod) return defaultShouldRevalidate;
  if (currentUrl.href === nextUrl.href) return defaultShouldRevalidate;

  if (currentUrl.pathname === nextUrl.pathname && withoutModal(currentUrl) === withoutModal(nextUrl))
    return false;
  return defaultShouldRevalidate;
}

export default function ProtectedLayout({ loaderData }: Route.ComponentProps) {
  const [params] = useSearchParams();
  const exitUrl = useOpenUrl("exit");
  const supportUrl = useOpenUrl("support");
  const modalUrl = (modal: "support" | "exit") => (modal === "exit" ? exitUrl : supportUrl);
  const { view } = loaderData;
  usePolling(loaderData.idleMs);
  const refreshCount = useRef(() => {});
  const live = useLiveUpdates(() => refreshCount.current());
  const { count: unread, refresh } = useUnreadCount(loaderData, live);
  useEffect(() => {
    refreshCount.current = refresh;
  });
  // Following a link in the burger menu (or opening a modal from it) closes the menu.
  const { ref: burger, close: closeBurger } = useDisclosure();
  // A modal opened from the menu hides the link that opened it: the menu's
  // button stands in as its opener, so focus comes back there when it closes.
  // On a wide screen the menu is the sidebar's column, never opened: there the link stays the opener.
  const closeBurgerForModal = () => {
    if (!burger.current?.open) return;
    closeBurger();
    burger.current.querySelector<HTMLElement>(":scope > summary")?.focus();
  };
  return (
    <div className="app-shell" data-live={live ? "open" : undefined}>
      {/* One shell for every width (issue 24): the stylesheet makes it the sidebar on a wide
          screen, and the header, bottom bar and ☰ menu on a phone. */}
      {/* An open dialog comes first: where a reader without scripts or CSS lands (issue 24).
          It is drawn over the page wherever it sits. */}
      {params.get("modal") === "exit" ? <ExitModal /> : null}
      {params.get("modal") === "support" ? (
        <Suspense fallback={null}>
          <SupportModal email={view.email} />
        </Suspense>
      ) : null}
      <aside className="sidebar" aria-label="Sidebar">
        <Link to="/home" className="logo-link" aria-label="Coinkeep, wallet">
          <Logo />
        </Link>
        <div className="mobile-summary">
          <Total view={view} />
          <CurrencyPicker current={view.currency} id="currency" />
        </div>
        <nav className="bottom-bar" aria-label="Quick links">
          <NavList
            items={QUICK_LINKS}
            unread={unread}
            buyCryptoUrl={loaderData.buyCryptoUrl}
            modalUrl={modalUrl}
          />
        </nav>
        <details className="burger disclosure" ref={burger}>
          <summary aria-label={unread > 0 ? `Menu, ${unread} unread notifications` : "Menu"}>
            <MenuIcon className="icon icon-menu" />
            <CloseIcon className="icon icon-close" />
            <span className="visually-hidden">Menu</span>
            <UnreadBadge count={unread} dot />
          </summary>
          <nav aria-label="Menu">
            <NavList
              items={MENU_ITEMS}
              unread={unread}
              buyCryptoUrl={loaderData.buyCryptoUrl}
              modalUrl={modalUrl}
              onFollow={closeBurger}
              onOpenModal={closeBurgerForModal}
            />
          </nav>
        </details>
      </aside>
      <main id="main" className="app-main">
        {view.balancesUnavailable ? (
          <p className="banner banner-error" role="alert">
            Your balances could not be loaded just now. They will refresh shortly.
          </p>
        ) : null}
        {view.pricesStale ? (
          <p className="banner">
            {view.pricesAsOf
              ? `Prices may be out of date: last updated ${formatDateTime(view.pricesAsOf)}.`
              : "Prices are not available right now."}
          </p>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}
