// The nine supported coins: the one table every part of Coinkeep reads
// (backend and web tier alike). Facts from shared/COINS.md.
// Dependency-free on purpose, so both tiers may import it.

export const TICKERS = ["BTC", "ETH", "ADA", "BNB", "DOGE", "SOL", "TRX", "USDT", "XRP"] as const;
export type Ticker = (typeof TICKERS)[number];

export interface Coin {
  ticker: Ticker;
  name: string;
  /** Decimals of the base unit (satoshi, wei, lovelace, …): amounts are integers of it. */
  decimals: number;
  /** The network deposits and sends use. */
  network: string;
  /** The icon under public/. */
  icon: string;
}

export const COINS: Readonly<Record<Ticker, Coin>> = {
  BTC: { ticker: "BTC", name: "Bitcoin", decimals: 8, network: "Bitcoin", icon: "/coins/btc.svg" },
  ETH: { ticker: "ETH", name: "Ethereum", decimals: 18, network: "Ethereum", icon: "/coins/eth.svg" },
  ADA: { ticker: "ADA", name: "Cardano", decimals: 6, network: "Cardano", icon: "/coins/ada.svg" },
  BNB: { ticker: "BNB", name: "BNB", decimals: 18, network: "BNB Smart Chain", icon: "/coins/bnb.svg" },
  DOGE: { ticker: "DOGE", name: "Dogecoin", decimals: 8, network: "Dogecoin", icon: "/coins/doge.svg" },
  SOL: { ticker: "SOL", name: "Solana", decimals: 9, network: "Solana", icon: "/coins/sol.svg" },
  TRX: { ticker: "TRX", name: "TRON", decimals: 6, network: "TRON", icon: "/coins/trx.svg" },
  USDT: {
    ticker: "USDT",
    name: "Tether",
    decimals: 6,
    network: "Ethereum (ERC-20)",
    icon: "/coins/usdt.svg",
  },
  XRP: { ticker: "XRP", name: "XRP", decimals: 6, network: "XRP Ledger", icon: "/coins/xrp.svg" },
};

export function isTicker(value: string): value is Ticker {
  return (TICKERS as readonly string[]).includes(value);
}

/** The coin for a ticker in any case ("btc", "BTC"), or undefined. */
export function coinFor(ticker: string): Coin | undefined {
  const upper = ticker.toUpperCase();
  return isTicker(upper) ? COINS[upper] : undefined;
}
