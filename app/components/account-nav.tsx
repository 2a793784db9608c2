// The signed-in navigation, described once as data and drawn once (issue 24): on a wide
// screen the sidebar shows both lists as one column; on a phone the first is the bottom bar
// (the spec's icons to /home, the exchange and /history) and the second is the ☰ menu (the
// spec's Support, Notifications, Security and Exit). A page without CSS lists each link once.
import { Link, NavLink } from "react-router";
import { BellIcon, BuyIcon, ExitIcon, HistoryIcon, ShieldIcon, SupportIcon, WalletIcon } from "./icons.tsx";
import { prepareSupportModal } from "./lazy-support-modal.ts";

type Icon = (props: { className?: string }) => React.JSX.Element;

/** One item: a page of ours, the exchange (a new tab), or a modal opened in place. */
type NavItem =
  | { kind: "page"; to: string; label: string; Icon: Icon; unread?: boolean }
  | { kind: "exchange"; label: string; Icon: Icon }
  | { kind: "modal"; modal: "support" | "exit"; label: string; Icon: Icon };

/** The spec's bottom bar, and the top of the sidebar. */
export const QUICK_LINKS: readonly NavItem[] = [
  { kind: "page", to: "/home", label: "Wallet", Icon: WalletIcon },
  { kind: "exchange", label: "Buy Crypto", Icon: BuyIcon },
  { kind: "page", to: "/history", label: "History", Icon: HistoryIcon },
];

/** The spec's mobile menu, and the rest of the sidebar. */
export const MENU_ITEMS: readonly NavItem[] = [
  { kind: "page", to: "/notifications", label: "Notifications", Icon: BellIcon, unread: true },
  { kind: "page", to: "/security", label: "Security", Icon: ShieldIcon },
  { kind: "modal", modal: "support", label: "Support", Icon: SupportIcon },
  { kind: "modal", modal: "exit", label: "Exit", Icon: ExitIcon },
];

/** The unread count on Notifications (a badge) and on the ☰ button (a dot the button's name already says). */
export function UnreadBadge({ count, dot = false }: { count: number; dot?: boolean }) {
  if (count <= 0) return null;
  return (
    <>
      {" "}
      <span className={dot ? "badge badge-dot" : "badge"} aria-hidden={dot || undefined}>
        {count}
        <span className="visually-hidden"> unread</span>
      </span>
    </>
  );
}

export function NavList({
  items,
  unread,
  buyCryptoUrl,
  modalUrl,
  onFollow,
  onOpenModal,
}: {
  items: readonly NavItem[];
  unread: number;
  buyCryptoUrl: string;
  /** The current page with `?modal=` set. */
  modalUrl: (modal: "support" | "exit") => string;
  /** Called when one of the links is followed (the ☰ menu closes). */
  onFollow?: () => void;
  /** Called when Support or Exit is followed. */
  onOpenModal?: () => void;
}) {
  return (
    <ul className="nav-list">
      {items.map((item) => (
        <li key={item.label}>
          {item.kind === "page" ? (
            <NavLink to={item.to} onClick={onFollow}>
              <item.Icon />
              {` ${item.label}`}
              {item.unread ? <UnreadBadge count={unread} /> : null}
            </NavLink>
          ) : item.kind === "exchange" ? (
            <a href={buyCryptoUrl} target="_blank" rel="noopener noreferrer">
              <item.Icon />
              {` ${item.label} `}
              <span className="visually-hidden">(opens in a new tab)</span>
            </a>
          ) : (
            <Link
              to={modalUrl(item.modal)}
              preventScrollReset
              onClick={onOpenModal}
              {...(item.modal === "support"
                ? { onPointerEnter: prepareSupportModal, onFocus: prepareSupportModal }
                : {})}
            >
              <item.Icon />
              {` ${item.label}`}
            </Link>
          )}
        </li>
      ))}
    </ul>
  );
}
