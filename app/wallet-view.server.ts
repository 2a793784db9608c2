// What every signed-in page shows around its content: the nine coins with
// balances, prices and values, the total, the display currency, and the
// transactions of a page that lists them. One call to the backend (call 4) and
// two to the prices service (prices, rates).
import { redirect, type RouterContextProvider } from "react-router";
import { COINS, TICKERS, type Ticker } from "../common/coins.ts";
import { USDT_USD_PRICE } from "../common/contract/amounts.ts";
import { NOT_ADDED_YET } from "../common/literals.ts";
import {
  backend,
  prices,
  transactionsBefore,
  type ClientBalancesData,
  type ClientBalancesInput,
} from "./backend.server.ts";
import { add, compare, multiply, parseDecimal, toFixed, ZERO, type Decimal } from "../common/decimal.ts";
import { totalChange24h, type TotalChange } from "./dashboard.server.ts";
import { isCurrency, type Currency } from "./lib/format.ts";
import { log } from "../common/log.ts";
import { destroySession, requireUser, type SignedInUser } from "./session.server.ts";

/** Prices older than this are flagged as stale on the page. */
const STALE_AFTER_MS = 10 * 60_000;

export type WalletState = "none" | "requested" | "issued";

export interface CoinRow {
  ticker: Ticker;
  name: string;
  icon: string;
  state: WalletState;
  walletId: string | null;
  address: string | null;
  /** Exact decimal strings. */
  balance: string;
  /** USD price, or null when no price is known. */
  price: string | null;
  change: string | null;
  /** balance × USD price (exact). */
  valueUsd: string;
}

export interface WalletView {
  email: string;
  currency: Currency;
  /** USD → currency multiplier (exact decimal string). */
  multiplier: string;
  rows: CoinRow[];
  totalUsd: string;
  /** The total's change over 24 h in USD and percent; null when nothing is held (record 023). */
  totalChange: TotalChange | null;
  /** When the prices describe; null when none could be had at all. */
  pricesAsOf: string | null;
  pricesStale: boolean;
  /** Set when the balances could not be fetched (they show as zero then). */
  balancesUnavailable: boolean;
}

function plain(value: Decimal): string {
  return toFixed(value, Math.min(value.scale, 30));
}

type Loaded = {
  user: SignedInUser;
  view: WalletView;
  balances: ClientBalancesData | null;
  /** Each coin's 7-day USD prices where the price service had them (display data, for /home). */
  sparklines: Partial<Record<Ticker, readonly number[]>>;
};

/**
 * The view each request loaded, by request context: the layout's loader, and
 * a send step's action before it, share one load (one call 4, one prices and
 * one rates read) instead of each making their own.
 */
const loadedIn = new WeakMap<Readonly<RouterContextProvider>, Promise<Loaded>>();

/** The signed-in user, their balances (call 4) and today's prices and rates; once per request. */
export function loadWalletView(request: Request, context: Readonly<RouterContextProvider>): Promise<Loaded> {
  let loaded = loadedIn.get(context);
  if (!loaded) {
    loaded = load(request, context);
    loadedIn.set(context, loaded);
    // A failed load (a redirect to sign in, an error) is not kept.
    loaded.catch(() => loadedIn.delete(context));
  }
  return loaded;
}

/** After a change within this request (a send whose outcome is unknown): the next load reads afresh. */
export function forgetWalletView(context: Readonly<RouterContextProvider>): void {
  loadedIn.delete(context);
}

/**
 * Transactions a page shows at once. The 20 newest on a coin's page, as exchanges' asset pages
 * show recent activity ('Older transactions' pages back; /history shows 50 a page across coins).
 * Each row is rendered, sent twice (HTML and hydration data) and hydrated: 20 keeps the page
 * light on a slow phone.
 */
export const WALLET_PAGE_SIZE = 20;
export const HISTORY_PAGE_SIZE = 50;

/**
 * The transactions the page at `url` lists, read in the view's own call 4
 * (record 052: a signed-in page in two statements), one more than a page to
 * tell whether there are older ones; none for the other pages.
 */
export function transactionsOf(url: URL): Omit<ClientBalancesInput, "email" | "twelveWords"> {
  const path = url.pathname.replace(/\.data$/u, "");
  const before = transactionsBefore(url);
  const coin = /^\/wallet\/([a-z]+)$/u.exec(path)?.[1]?.toUpperCase();
  if (coin && (TICKERS as readonly string[]).includes(coin)) {
    return {
      transactionsLimit: WALLET_PAGE_SIZE + 1,
      transactionsCoin: coin as Ticker,
      includeMessages: false,
      ...before,
    };
  }
  if (path === "/history")
    return { transactionsLimit: HISTORY_PAGE_SIZE + 1, includeMessages: false, ...before };
  return { transactionsLimit: 1, includeTransactions: false, includeMessages: false };
}

async function load(request: Request, context: Readonly<RouterContextProvider>): Promise<Loaded> {
  const { session, user } = await requireUser(request, context);
  const [balances, priceList, rates] = await Promise.all([
    // Balances and wallets: what every signed-in page shows around its content, with the
    // transactions of the page, if it lists any (the page takes them from here).
    backend(context).clientBalances({
      email: user.email,
      twelveWords: user.words,
      ...transactionsOf(new URL(request.url)),
    }),
    prices(context).currentPrices(),
    prices(context).currencies(),
  ]);

  // The stored e-mail and words no longer check out (spec section 4): sign out.
  if (!balances.ok && balances.kind === "rejected" && balances.code === "invalid_credentials") {
    throw redirect("/", { headers: { "Set-Cookie": await destroySession(session, context) } });
  }
  if (!balances.ok) log.warn("Error fetching client balances", { reason: balances.message });
  if (!priceList.ok) log.warn("Error fetching crypto prices", { reason: priceList.message });
  if (!rates.ok) log.warn("Error fetching currency rates", { reason: rates.message });

  const stored = session.get("currency");
  const currency: Currency = isCurrency(stored) ? stored : "USD";
  const rate = rates.ok ? parseDecimal(rates.data.rates[currency]?.current_price) : undefined;
  // Without a rate for the chosen currency, figures fall back to USD rather than being wrong.
  const shownCurrency: Currency = rate ? currency : "USD";
  const multiplier = rate ?? { units: 1n, scale: 0 };

  const priceBy = new Map<string, { price: Decimal; change: string | null }>();
  if (priceList.ok) {
    for (const entry of priceList.data.cryptoPrices) {
      const price = parseDecimal(entry.last_price);
      // A price that is not a number is skipped (spec section 8).
      if (!price) {
        log.warn("Skipping a coin price that is not a number", { ticker: entry.ticker });
        continue;
      }
      priceBy.set(entry.ticker.toUpperCase(), { price, change: entry.todays_change_perc ?? null });
    }
  }
  // Spec section 9: the USDT price is fixed at 1, whatever a feed says.
  priceBy.set("USDT", {
    price: parseDecimal(USDT_USD_PRICE) ?? { units: 1n, scale: 0 },
    change: priceBy.get("USDT")?.change ?? "0",
  });

  const data = balances.ok ? balances.data : null;
  const rows: CoinRow[] = TICKERS.map((ticker) => {
    const coin = COINS[ticker];
    const wallet = data?.wallets.find((w) => w.wallet_crypto.toUpperCase() === ticker);
    const balance = (wallet && parseDecimal(data?.balances[wallet.id])) || ZERO;
    const quote = priceBy.get(ticker);
    const valueUsd = quote ? multiply(balance, quote.price) : ZERO;
    const issued = wallet !== undefined && wallet.wallet_address !== NOT_ADDED_YET;
    return {
      ticker,
      name: coin.name,
      icon: coin.icon,
      state: wallet ? (issued ? "issued" : "requested") : "none",
      walletId: wallet?.id ?? null,
      address: issued ? wallet.wallet_address : null,
      balance: plain(balance),
      price: quote ? plain(quote.price) : null,
      change: quote?.change ?? null,
      valueUsd: plain(valueUsd),
    };
  });
  // Sorted by USD value, descending; equal values keep the coin table's order.
  rows.sort((a, b) => compare(parseDecimal(b.valueUsd) ?? ZERO, parseDecimal(a.valueUsd) ?? ZERO));
  const totalUsd = rows.reduce((sum, row) => add(sum, parseDecimal(row.valueUsd) ?? ZERO), ZERO);

  const asOf = priceList.ok ? priceList.data.asOf : null;
  const stale =
    !priceList.ok ||
    priceList.data.source !== "live" ||
    (asOf !== null && Date.now() - new Date(asOf).getTime() > STALE_AFTER_MS);

  return {
    user,
    balances: data,
    sparklines: priceList.ok ? priceList.data.sparklines : {},
    view: {
      email: user.email,
      currency: shownCurrency,
      multiplier: plain(multiplier),
      rows,
      totalUsd: plain(totalUsd),
      // USDT is priced at 1 by rule (spec section 9), then as now: its value did not move.
      totalChange: totalChange24h(rows.map((row) => (row.ticker === "USDT" ? { ...row, change: "0" } : row))),
      pricesAsOf: asOf,
      pricesStale: stale,
      balancesUnavailable: !balances.ok,
    },
  };
}
