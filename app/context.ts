// What the host process hands to every loader and action: the web tier's
// configuration, how to reach the backend, and where sessions are kept.
// The web tier never opens the database itself; the host injects the store.
import { createContext, type RouterContextProvider } from "react-router";
import type { BackendServices } from "../common/contract/client.ts";
import type { ConsoleServices } from "../common/contract/console.ts";
import type { PricesServices } from "../common/contract/prices.ts";

export interface WebConfig {
  platform: string;
  sessionSecret: string;
  cookieSecure: boolean;
  supportEmail: string;
  /** The legal entity named on the legal pages, its registered number and its legal mailbox. */
  companyName: string;
  companyNumber: string;
  legalEmail: string;
  /** Base URL of the backend API, e.g. "http://127.0.0.1:3000/api". */
  backendBaseUrl: string;
  /**
   * BACKEND_TOKEN, with a remote backend (BACKEND_URL) only: sent with every
   * call so the backend believes the visitor's address we forward (record 026).
   */
  backendToken?: string;
  /** Base URL of the prices service's API (GET /crypto-prices/current, /currencies). */
  pricesBaseUrl: string;
  /** This app's own URL, sent to the prices service as App_url. */
  appUrl: string;
  /** The external exchange behind 'Buy Crypto' (USD to BTC). */
  buyCryptoUrl: string;
  /** Other sites whose links into /fast-login may sign a visitor in (record 030). */
  fastLoginOrigins: readonly string[];
  /**
   * The session idle timeout (SESSION_IDLE_MINUTES): after this long without
   * the user touching the page, the signed-in shell stops refreshing its data,
   * so an open tab left alone times out too (record 015). Default 30 minutes.
   */
  sessionIdleMs?: number;
}

/**
 * What a signed-in session's row says about where it is used (issue 27, the
 * sessions list): the browser's User-Agent as it signed in (at most 512
 * characters) and the address it was last seen from. Personal data: it lives
 * and dies with the row.
 */
export interface SessionSeen {
  userAgent?: string | undefined;
  ip?: string | undefined;
}

/** One live session of an owner, as the sessions list shows it (never its data). */
export interface OwnedSession {
  /** The row's key (a hash of the token): compared and used server-side only, never sent to a page. */
  key: string;
  userAgent: string | null;
  lastIp: string | null;
  /** Sign-in (a rotation keeps it). */
  createdAt: Date;
  /** The last activity the idle deadline moved for (about once a minute); the sign-in when none since. */
  lastSeenAt: Date;
}

/**
 * A dumb key-value table for encrypted session blobs (rows of web_sessions).
 * The store enforces the idle and absolute timeouts (record 015): `get` finds
 * only a live row; `insert`, `update` and `touch` set the idle deadline.
 * `owner` is an opaque tag (an HMAC of the e-mail) so a restore can end every
 * session of one account with `removeOwner`, and the sessions page can list
 * and end one holder's sessions (`listOwner`, `removeOwned`).
 */
export interface SessionKV {
  /** `seen`: the browser and address a sign-in's row starts with. */
  insert(key: string, blob: string, owner: string | null, seen?: SessionSeen): Promise<void>;
  /**
   * With `touch`, the read is activity: the idle deadline moves forward (about
   * once a minute at most), and with it the row's last address (`ip`) and time.
   */
  get(key: string, opts?: { touch?: boolean; ip?: string | undefined }): Promise<string | null>;
  update(key: string, blob: string, owner: string | null): Promise<void>;
  /** Moves a live row to a new key (a rotated session id), keeping its created_at; false when none. */
  rekey(oldKey: string, newKey: string, blob: string, owner: string | null): Promise<boolean>;
  /** Activity: moves the idle deadline forward (at most about once a minute). */
  touch(key: string): Promise<void>;
  /** When a live row ends if nothing moves it (ms since the epoch; never a touch); null when it is not live. */
  deadline(key: string): Promise<number | null>;
  remove(key: string): Promise<void>;
  /** Ends every session of `owner` (but the row `except`, when given); how many ended. */
  removeOwner(owner: string, opts?: { except?: string }): Promise<number>;
  /** The owner's live sessions, the most recently used first. */
  listOwner(owner: string): Promise<OwnedSession[]>;
  /** Ends the session `key` only if `owner` owns it; whether a row went. */
  removeOwned(owner: string, key: string): Promise<boolean>;
}

/**
 * What changed for a signed-in user (record 033): their unread count, a
 * balance, a send, a wallet; "resync" when changes may have been missed (the
 * host lost its database connection for a while); "session-ended" when the
 * session the stream was opened on is gone (Exit, a restore, the idle or
 * absolute timeout, a rotation to a new id); "closing" when this process is
 * stopping (the stream ends and the browser reconnects, to another process).
 */
export type LiveEventKind =
  "messages" | "balances" | "sends" | "wallets" | "resync" | "session-ended" | "closing";

export interface LiveEvent {
  kind: LiveEventKind;
  /** Raised for every user at once (a message to everyone): clients spread their reaction. */
  everyone?: boolean;
}

/** The host's hub of live events, fed by the database's notifications (LISTEN/NOTIFY). */
export interface LiveEvents {
  /**
   * Calls `listener` with each event for this user and this session until the
   * returned function is called. `sessionKey` is the session row's key.
   */
  subscribe(who: { userId: string; sessionKey: string }, listener: (event: LiveEvent) => void): () => void;
  /**
   * Calls `listener` with every user's changes to sends and wallets (the staff
   * console's queue counts, issue 26) until the returned function is called.
   */
  watchQueues(listener: (event: LiveEvent) => void): () => void;
  /** Streams open in this process (a metric). */
  open(): number;
}

export interface AppServices {
  config: WebConfig;
  /** The in-process backend's services (called directly); undefined when it is remote (BACKEND_URL). */
  backend: BackendServices | undefined;
  /** The in-process prices service's answers (called directly); undefined when it is remote (PRICES_URL). */
  prices: PricesServices | undefined;
  sessions: SessionKV;
  /**
   * The staff console's back office (issue 26); undefined when the backend is
   * remote: the console is served by the host that owns the database.
   */
  console?: ConsoleServices | undefined;
  /** Live events for signed-in pages; undefined when this host has none (a remote backend). */
  events?: LiveEvents | undefined;
  /**
   * The visitor's IP address for the request behind this context, when the
   * host knows it (the client after the trusted proxies; record 026 says when a forwarded one counts).
   */
  clientAddress?: (context: Readonly<RouterContextProvider>) => string | undefined;
}

export const servicesContext = createContext<AppServices>();

/**
 * This request's Content-Security-Policy nonce (record 014): the host makes a
 * fresh one per request, sends it in the CSP header and sets it here; the
 * server entry hands it to React Router and React for their inline scripts.
 * Never put it in loader data: page scripts must not be able to read it.
 */
export const nonceContext = createContext<string>("");
