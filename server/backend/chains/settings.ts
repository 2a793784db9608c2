// What a deployment tells the chain watchers (issue 30, record 053): one EVM network per
// CHAIN_RPC_<NETWORK>, the coins read on it, and how often. Parsed in server/config.ts.
import type { Ticker } from "../../../common/coins.ts";

export type EvmNetwork = "ETH" | "BNB";
export const EVM_NETWORKS: readonly EvmNetwork[] = ["ETH", "BNB"];

export interface ChainNetworkSetting {
  network: EvmNetwork;
  /** JSON-RPC over http(s) or ws(s). May hold a provider's key in its path: never logged whole. */
  rpcUrl: string;
  /** The network's own coin, found in blocks' transactions. */
  native: Ticker;
  /** An ERC-20 token read from its Transfer logs (USDT on Ethereum when USDT_NETWORK=erc20). */
  token?: { coin: Ticker; address: `0x${string}` } | undefined;
}

export interface ChainSettings {
  networks: ChainNetworkSetting[];
  /** How long a caught-up watcher waits before asking for the head again. */
  pollMs: number;
  /** The sentence the start log gives for each EVM coin that is not watched, and why. */
  unwatched: string[];
}

/** The network an EVM coin's deposits arrive on (USDT: Ethereum's, when USDT_NETWORK=erc20). */
export function networkOfCoin(coin: Ticker, usdtNetwork: "erc20" | "trc20"): EvmNetwork | undefined {
  if (coin === "ETH" || coin === "BNB") return coin;
  if (coin === "USDT" && usdtNetwork === "erc20") return "ETH";
  return undefined;
}

/** Where an RPC URL may be shown (logs, ops chains): its scheme and host, never its path or credentials. */
export function rpcOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "(unparsable URL)";
  }
}
