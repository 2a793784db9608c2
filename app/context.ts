// What the host process hands to every loader and action: the web tier's
// configuration, how to reach the backend, and where sessions are kept.
// The web tier never opens the database itself; the host injects the store.
import { createContext, type RouterContextProvider } from "react-router";

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
  /** Base URL of the prices service's API (GET /crypto-prices/current, /currencies). */
  pricesBaseUrl: string;
  /** This app's own URL, sent to the prices service as App_url. */
  appUrl: string;
  /** The external exchange behind 'Buy Crypto' (USD to BTC). */
  buyCryptoUrl: string;
}

/** A dumb key-value table for encrypted session blobs (rows of web_sessions). */
export interface SessionKV {
  insert(key: string, blob: string, expiresAt: Date): Promise<void>;
  get(key: string): Promise<string | null>;
  update(key: string, blob: string, expiresAt: Date): Promise<void>;
  remove(key: string): Promise<void>;
}

export interface AppServices {
  config: WebConfig;
  /** In-process backend (the API handler itself); undefined when it is remote. */
  backendFetch: ((request: Request) => Promise<Response>) | undefined;
  /** In-process prices service; undefined when it is remote. */
  pricesFetch: ((request: Request) => Promise<Response>) | undefined;
  sessions: SessionKV;
  /**
   * The visitor's IP address for the request behind this context, when the
   * host knows it (the connection's, or a local proxy's X-Coinkeep-Client-Ip).
   */
  clientAddress?: (context: Readonly<RouterContextProvider>) => string | undefined;
}

export const servicesContext = createContext<AppServices>();
