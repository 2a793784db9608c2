import { Suspense, useEffect, useRef, useState } from "react";
import {
  Form,
  Link,
  NavLink,
  Outlet,
  useFetcher,
  useFetchers,
  useLocation,
  useNavigation,
  useRevalidator,
  useSearchParams,
  type LinksFunction,
  type ShouldRevalidateFunctionArgs,
} from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import {
  BellIcon,
  BuyIcon,
  CloseIcon,
  ExitIcon,
  HistoryIcon,
  Logo,
  MenuIcon,
  ShieldIcon,
  SupportIcon,
  WalletIcon,
} from "../components/icons";
import { lazyComponent } from "../components/lazy-component";
import { Modal, useCloseUrl, useOpenUrl } from "../components/modal";
import { OPEN_MESSAGE_INTENT } from "../components/notification-list";
import { useDisclosure } from "../components/use-disclosure";
import { useLiveEvents } from "../components/use-live-events";
import { multiply, ZERO } from "../../common/decimal";
import {
  CURRENCIES,
  currencySymbol,
  formatChange,
  formatDateTime,
  formatFiatChange,
  formatTotal,
  parseDecimal,
} from "../lib/format";
import { backend } from "../api.server";
import { services } from "../session.server";
import { loadWalletView, type WalletView } from "../wallet-view.server";

// The support modal's code is loaded when it opens, or is about to (the pointer
// or the focus on 'Support'), not with every signed-in page; the server renders
// it in place for `?modal=support` (record 034).
const { Component: SupportModal, preload: prepareSupportModal } = lazyComponent(() =>
  import("../components/support-modal").then((module) => module.SupportModal),
);
import accountStyles from "../styles/account.css?url";
import type { Route } from "./+types/protected-layout";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: accountStyles }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user, view } = await loadWalletView(request, context);
  const config = services(context).config;
  const unread = await backend(context).newMessagesCount({ email: user.email, twelveWords: user.words });
  return {
    view,
    unread: unread.ok ? unread.data.newMessagesCount : 0,
    buyCryptoUrl: config.buyCryptoUrl,
    idleMs: config.sessionIdleMs ?? 30 * 60_000,
  };
}

/** The URL without its `modal` parameter. */
function withoutModal(url: URL): string {
  const params = new URLSearchParams(url.search);
  params.delete("modal");
  return `${url.pathname}?${params.toString()}`;
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

/**
 * The signed-in navigation, rendered once (issue 24): on a wide screen the
 * sidebar shows both lists as one column; on a phone the first is the bottom
 * bar (the spec's icons to /home, the exchange and /history) and the second is
 * the ☰ menu (the spec's Support, Notifications, Security and Exit). A page
 * without CSS lists each link once.
 */
function QuickLinks({ buyCryptoUrl }: { buyCryptoUrl: string }) {
  return (
    <ul className="nav-list">
      <li>
        <NavLink to="/home">
          <WalletIcon /> Wallet
        </NavLink>
      </li>
      <li>
        <a href={buyCryptoUrl} target="_blank" rel="noopener noreferrer">
          <BuyIcon /> Buy Crypto <span className="visually-hidden">(opens in a new tab)</span>
        </a>
      </li>
      <li>
        <NavLink to="/history">
          <HistoryIcon /> History
        </NavLink>
      </li>
    </ul>
  );
}

function MenuItems({
  supportUrl,
  exitUrl,
  unread,
  onFollow,
  onOpenModal,
}: {
  supportUrl: string;
  exitUrl: string;
  unread: number;
  /** Called when one of the links is followed (the ☰ menu closes). */
  onFollow: () => void;
  /** Called when Support or Exit is followed. */
  onOpenModal: () => void;
}) {
  return (
    <ul className="nav-list">
      <li>
        <NavLink to="/notifications" onClick={onFollow}>
          <BellIcon /> Notifications
          {unread > 0 ? (
            <>
              {" "}
              <span className="badge">
                {unread}
                <span className="visually-hidden"> unread</span>
              </span>
            </>
          ) : null}
        </NavLink>
      </li>
      <li>
        <NavLink to="/security" onClick={onFollow}>
          <ShieldIcon /> Security
        </NavLink>
      </li>
      <li>
        <Link
          to={supportUrl}
          preventScrollReset
          onClick={onOpenModal}
          onPointerEnter={prepareSupportModal}
          onFocus={prepareSupportModal}
        >
          <SupportIcon /> Support
        </Link>
      </li>
      <li>
        <Link to={exitUrl} preventScrollReset onClick={onOpenModal}>
          <ExitIcon /> Exit
        </Link>
      </li>
    </ul>
  );
}

function ExitModal() {
  const closeUrl = useCloseUrl();
  return (
    // 'No' first (scripts or not): Enter on a freshly opened Exit must not sign out.
    <Modal labelledBy="exit-title" initialFocus=".exit-no">
      <h2 id="exit-title">Are you sure you want to exit?</h2>
      <div className="actions">
        <Form noValidate method="post" action="/logout">
          <AuthenticityTokenInput />
          <button type="submit" className="button button-primary">
            Yes
          </button>
        </Form>{" "}
        <Link to={closeUrl} replace preventScrollReset className="button button-secondary exit-no" autoFocus>
          No
        </Link>
      </div>
    </Modal>
  );
}

/** What counts as the user touching the page (not merely having it open). */
const INTERACTIONS = ["pointerdown", "keydown", "wheel", "touchstart", "scroll", "input"] as const;

/**
 * Balances, prices and rates refresh every 60 s while the page is visible
 * (scripts on) and the user has touched the page within the session's idle
 * timeout. A refresh is a page-data request, which the server counts as
 * activity; a tab left alone therefore stops asking, its session runs out
 * (record 015), and the next unread-count poll (a background request) takes
 * it to the sign-in page.
 */
function usePolling(idleMs: number, ms = 60_000) {
  const revalidator = useRevalidator();
  const lastTouched = useRef(0);
  useEffect(() => {
    lastTouched.current = Date.now();
    const touched = () => {
      lastTouched.current = Date.now();
    };
    for (const type of INTERACTIONS) window.addEventListener(type, touched, { passive: true, capture: true });
    return () => {
      for (const type of INTERACTIONS) window.removeEventListener(type, touched, { capture: true });
    };
  }, []);
  useEffect(() => {
    const timer = setInterval(() => {
      const recent = Date.now() - lastTouched.current < idleMs;
      if (recent && document.visibilityState === "visible" && revalidator.state === "idle")
        void revalidator.revalidate();
    }, ms);
    return () => clearInterval(timer);
  }, [revalidator, ms, idleMs]);
}

/**
 * The unread count. While the live-event stream is open (record 033) it is
 * fetched when the stream says it changed; otherwise it is polled every 10 s
 * while the page is visible (scripts on), as the spec says. Whichever answered
 * last wins: this loader (revalidated after opening a message) or the fetch.
 * A message being opened already counts as read.
 */
function useUnreadCount(loaderData: { unread: number }, live: boolean, ms = 10_000) {
  const fetcher = useFetcher<{ count: number | null }>({ key: "unread-count" });
  const { load } = fetcher;
  useEffect(() => {
    if (live) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void load("/unread-count");
    }, ms);
    return () => clearInterval(timer);
  }, [load, ms, live]);
  // Every revalidation brings a new loader object, every poll a new data object:
  // the one that changed most recently holds the count.
  const polled = fetcher.data;
  const [latest, setLatest] = useState({ loaderData, polled, count: loaderData.unread });
  if (latest.loaderData !== loaderData) {
    setLatest({ loaderData, polled, count: loaderData.unread });
  } else if (latest.polled !== polled) {
    setLatest({ loaderData, polled, count: typeof polled?.count === "number" ? polled.count : latest.count });
  }
  const opening = useFetchers().filter(
    (f) => f.state !== "idle" && f.formData?.get("intent") === OPEN_MESSAGE_INTENT,
  ).length;
  return { count: Math.max(0, latest.count - opening), refresh: () => void load("/unread-count") };
}

/** A change raised for every user at once is taken up within this long, spread at random. */
const EVERYONE_SPREAD_MS = 3_000;

/**
 * What the page does when the live-event stream says something changed: the
 * unread count is fetched again (and the list, on the notifications page); a
 * balance, a send or a wallet reloads the page's data (balances, transactions,
 * wallet states); a session that ended reloads too, which takes the visitor to
 * the landing page. Reloads asked for together run once.
 */
function useLiveUpdates(refreshCount: () => void): boolean {
  const revalidator = useRevalidator();
  const navigation = useNavigation();
  const { pathname } = useLocation();
  const pending = useRef<{ reload?: ReturnType<typeof setTimeout>; count?: ReturnType<typeof setTimeout> }>(
    {},
  );
  // A change that arrives while the page is submitting or loading (most often
  // the change its own form just made) waits for that to finish: a refresh in
  // the middle would cancel the loads the submission started, whose answers
  // carry its result (the "Wallet requested." toast was lost that way).
  const busy = navigation.state !== "idle" || revalidator.state !== "idle";
  const busyRef = useRef(busy);
  const deferredRef = useRef(false);
  useEffect(() => {
    busyRef.current = busy;
    if (busy || !deferredRef.current) return;
    deferredRef.current = false;
    void revalidator.revalidate();
  }, [busy, revalidator]);
  useEffect(() => {
    const timers = pending.current;
    return () => {
      clearTimeout(timers.reload);
      clearTimeout(timers.count);
    };
  }, []);
  return useLiveEvents((change, everyone) => {
    const timers = pending.current;
    const delay = everyone ? Math.random() * EVERYONE_SPREAD_MS : 50;
    const reload = () => {
      if (timers.reload) return;
      timers.reload = setTimeout(() => {
        timers.reload = undefined;
        if (busyRef.current) deferredRef.current = true;
        else void revalidator.revalidate();
      }, delay);
    };
    if (change === "messages" || change === "resync") {
      if (!timers.count) {
        timers.count = setTimeout(() => {
          timers.count = undefined;
          refreshCount();
        }, delay);
      }
      if (change === "resync" || pathname === "/notifications") reload();
    } else {
      reload();
    }
  });
}

/**
 * The total, once. The markup holds the figure as the spec shows it on a wide
 * screen; where the phone's figure differs (always rounded, spec section 9) it
 * rides along in `data-phone` and the stylesheet shows it in its place on a
 * narrow screen, so a page without CSS reads one total.
 */
function Total({ view }: { view: WalletView }) {
  const usd = parseDecimal(view.totalUsd);
  const rate = parseDecimal(view.multiplier);
  const value = usd && rate ? multiply(usd, rate) : ZERO;
  const wide = formatTotal(value, view.currency);
  const phone = formatTotal(value, view.currency, { mobile: true });
  return (
    <div className="total">
      <span className="total-label">Total balance</span>{" "}
      <span className="total-value" data-phone={phone === wide ? undefined : phone}>
        <span className="total-figure">{wide}</span>
      </span>{" "}
      <TotalChange view={view} />
    </div>
  );
}

/** The total's 24 h change, in the display currency: "▲ +$12.34 (+1.23%) in 24 h" (the sign is the cue, not the colour). */
function TotalChange({ view }: { view: WalletView }) {
  const usd = parseDecimal(view.totalChange?.usd);
  const rate = parseDecimal(view.multiplier);
  if (!view.totalChange || !usd || !rate) return null;
  const amount = formatFiatChange(multiply(usd, rate), view.currency);
  const tone = amount.startsWith("+") ? "up" : amount.startsWith("-") ? "down" : "flat";
  return (
    <span className={`total-change change-${tone}`}>
      {tone === "flat" ? null : <span aria-hidden="true">{tone === "up" ? "▲ " : "▼ "}</span>}
      {amount} ({formatChange(parseDecimal(view.totalChange.percent))}) in 24 h
    </span>
  );
}

/** Toggles open and closed; choosing a currency posts it (works without scripts). */
export function CurrencyPicker({ current, id }: { current: string; id: string }) {
  const location = useLocation();
  const { ref, close } = useDisclosure();
  return (
    <details className="currency-picker disclosure" ref={ref}>
      <summary aria-label={`Currency: ${current}. Change currency`}>
        {current} {currencySymbol(current)}
      </summary>{" "}
      <Form
        noValidate
        method="post"
        action="/currency"
        className="currency-options"
        aria-labelledby={`${id}-label`}
        onSubmit={close}
      >
        <span id={`${id}-label`} className="visually-hidden">
          Choose a currency
        </span>{" "}
        <AuthenticityTokenInput />
        <input type="hidden" name="redirectTo" value={`${location.pathname}${location.search}`} />
        {CURRENCIES.map((code) => (
          <button
            key={code}
            type="submit"
            name="currency"
            value={code}
            aria-pressed={code === current}
            className="currency-option"
          >
            {code} {currencySymbol(code)}
          </button>
        ))}
      </Form>
    </details>
  );
}

export default function ProtectedLayout({ loaderData }: Route.ComponentProps) {
  const [params] = useSearchParams();
  const exitUrl = useOpenUrl("exit");
  const supportUrl = useOpenUrl("support");
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
          <QuickLinks buyCryptoUrl={loaderData.buyCryptoUrl} />
        </nav>
        <details className="burger disclosure" ref={burger}>
          <summary aria-label={unread > 0 ? `Menu, ${unread} unread notifications` : "Menu"}>
            <MenuIcon className="icon icon-menu" />
            <CloseIcon className="icon icon-close" />
            <span className="visually-hidden">Menu</span>
            {unread > 0 ? (
              <>
                {" "}
                <span className="badge badge-dot" aria-hidden="true">
                  {unread}
                  <span className="visually-hidden"> unread</span>
                </span>
              </>
            ) : null}
          </summary>
          <nav aria-label="Menu">
            <MenuItems
              supportUrl={supportUrl}
              exitUrl={exitUrl}
              unread={unread}
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
