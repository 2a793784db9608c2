// The process configuration: read once from the environment, validated with zod.
// Nothing else in the code base reads process.env.
//
// It stands beside the three that read it, not inside any of them: the host (server/host/)
// serves with it, the operator commands (server/ops/) open the database and issue addresses
// with it, and the host builds the backend from it. The backend itself takes its settings as
// options and never reads this file; the settings' parsers it owns (account keys) are used here.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { z } from "zod";
import { validateAddress } from "../common/addresses.ts";
import { TICKERS, type Ticker } from "../common/coins.ts";
import type { ChainNetworkSetting, ChainSettings } from "./backend/chains/settings.ts";
import type { AddressEntry } from "./backend/api/http.ts";
import { parseSmtpUrl, type SmtpSettings } from "./backend/mail/smtp-url.ts";
import {
  accountKeyFingerprint,
  deriveAddress,
  KEYED_COINS,
  parseAccountKey,
  type ConfiguredKeys,
  type KeyedCoin,
  type Scheme,
} from "./backend/custody/derive.ts";
import { normaliseUsd } from "./backend/domain/amounts.ts";

const booleanFlag = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

const secret = z.string().min(32, "must be at least 32 characters");

/**
 * A comma-list setting read by its own parser, which answers the entries or a
 * message naming the first bad one; the message becomes the setting's error.
 */
function listSetting<T>(fallback: string, parse: (value: string) => T[] | string) {
  return z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const parsed = parse(value);
      if (typeof parsed === "string") {
        ctx.addIssue({ code: "custom", message: parsed });
        return z.NEVER;
      }
      return parsed;
    });
}

/** FAST_LOGIN_ORIGINS: a comma list of http(s) origins (empty: none), or a message naming a bad one. */
function parseOrigins(value: string): string[] | string {
  const origins: string[] = [];
  for (const item of value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)) {
    let url: URL | null = null;
    try {
      url = new URL(item);
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/u.test(url.protocol) || url.origin !== item.replace(/\/+$/u, "")) {
      return `"${item}" is not an origin like https://partner.example`;
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * Parses TRUST_PROXY: "off" (or empty), "loopback", or a comma list of
 * "loopback", IP addresses and CIDR blocks. Returns the entries (none = off)
 * or a message naming the first bad one.
 */
export function parseTrustProxy(value: string): AddressEntry[] | string {
  return parseAddressList(value, "off");
}

/**
 * Parses WEB_TIER_HOSTS (record 026): "none" (or empty), or a comma list of
 * "loopback", IP addresses and CIDR blocks, as TRUST_PROXY.
 */
export function parseWebTierHosts(value: string): AddressEntry[] | string {
  return parseAddressList(value, "none");
}

function parseAddressList(value: string, none: "off" | "none"): AddressEntry[] | string {
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length === 0 || (items.length === 1 && items[0]?.toLowerCase() === none)) return [];
  const entries: AddressEntry[] = [];
  for (const item of items) {
    if (item.toLowerCase() === "loopback") {
      entries.push({ kind: "loopback" });
      continue;
    }
    const [address = "", prefixText, ...rest] = item.split("/");
    const family = isIP(address);
    if (rest.length > 0 || (family !== 4 && family !== 6)) {
      return `"${item}" is not "${none}", "loopback", an IP address or a CIDR block`;
    }
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!/^\d{1,3}$/u.test(prefixText ?? String(max)) || prefix > max) {
      return `"${item}" has a prefix length outside 0-${max}`;
    }
    entries.push({ kind: "subnet", network: address, prefix, family });
  }
  return entries;
}

/** COMPANY_NUMBER's default: obviously not a real registration, to be replaced in production. */
/**
 * Confirmations a deposit needs before it is credited (record 040), per coin;
 * CONFIRMATIONS_<TICKER> overrides. USDT has none of its own: it follows the
 * chain of USDT_NETWORK (Ethereum's or TRON's) unless CONFIRMATIONS_USDT is set.
 */
export const DEFAULT_CONFIRMATIONS: Readonly<Record<Exclude<Ticker, "USDT">, number>> = {
  BTC: 3,
  ETH: 12,
  ADA: 15,
  BNB: 15,
  DOGE: 40,
  SOL: 32,
  TRX: 19,
  XRP: 1,
};

/** A JSON-RPC endpoint: http(s) or ws(s). The message never repeats the value (it may hold a key). */
const rpcUrlSetting = z
  .string()
  .optional()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    let protocol: string | undefined;
    try {
      protocol = new URL(value).protocol;
    } catch {
      protocol = undefined;
    }
    if (!protocol || !["http:", "https:", "ws:", "wss:"].includes(protocol)) {
      ctx.addIssue({
        code: "custom",
        message: "must be the http(s):// or ws(s):// URL of the network's JSON-RPC endpoint",
      });
    }
  });

/** The most confirmations a policy may ask for (a deposit reports at most 2^31 - 1). */
export const MAX_CONFIRMATIONS = 1_000_000;

const confirmationsSetting = z
  .string()
  .regex(/^\d{1,7}$/u, `must be a whole number from 0 to ${MAX_CONFIRMATIONS} (0: credit on first sight)`)
  .transform(Number)
  .refine((n) => n <= MAX_CONFIRMATIONS, `must be a whole number from 0 to ${MAX_CONFIRMATIONS}`)
  .optional();

export const PLACEHOLDER_COMPANY_NUMBER = "00000000";

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: "must be a postgres:// or postgresql:// URL" })
    .optional(),
  BACKEND_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL ending in /api" })
    .optional(),
  PLATFORM_CODE: z
    .string()
    .regex(/^[A-Z0-9]{1,16}$/, "must be 1-16 upper-case letters or digits")
    .default("CK"),
  SESSION_SECRET: secret.optional(),
  BACKEND_SECRET: secret.optional(),
  COOKIE_SECURE: booleanFlag.optional(),
  SUPPORT_EMAIL: z.email().default("support@coinkeep.example"),
  // The legal pages cite these. The company number's default is a placeholder
  // that must be replaced in production.
  COMPANY_NAME: z.string().trim().min(1).max(120).default("Coinkeep Ltd"),
  COMPANY_NUMBER: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 -]{0,31}$/, "must be 1-32 letters, digits, spaces or hyphens")
    .default(PLACEHOLDER_COMPANY_NUMBER),
  LEGAL_EMAIL: z.email().default("legal@coinkeep.example"),
  PRICES_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL ending in /api" })
    .optional(),
  FEEDS_OFFLINE: booleanFlag.default(false),
  COINGECKO_URL: z.url({ protocol: /^https?$/ }).optional(),
  ECB_URL: z.url({ protocol: /^https?$/ }).optional(),
  BUY_CRYPTO_URL: z
    .url({ protocol: /^https$/, error: "must be an https:// URL" })
    .default("https://buy.moonpay.com/?baseCurrencyCode=usd&currencyCode=btc"),
  USDT_NETWORK: z.enum(["erc20", "trc20"]).default("erc20"),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // E-mail (issue 28, record 049): the SMTP server mails go through; unset: e-mail is off and
  // mails wait in the outbox. MAIL_FROM: their From header.
  SMTP_URL: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const parsed = parseSmtpUrl(value);
      if (typeof parsed === "string") {
        ctx.addIssue({ code: "custom", message: parsed });
        return z.NEVER;
      }
      return parsed;
    }),
  MAIL_FROM: z
    .string()
    .trim()
    .max(320)
    .default("Coinkeep <no-reply@coinkeep.example>")
    .refine(
      (value) =>
        /^(?:[^<>\r\n"]{1,100} )?<[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+>$|^[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+$/u.test(
          value,
        ),
      'must be an address like no-reply@example.com or "Coinkeep <no-reply@example.com>"',
    ),
  // Other sites whose pages may send visitors into /fast-login (issue 12, record 030):
  // a comma list of http(s) origins; none by default.
  FAST_LOGIN_ORIGINS: listSetting("", parseOrigins),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(1_048_576).default(16_384),
  // Which peers' X-Forwarded-For / X-Forwarded-Proto are believed (record 014):
  // "off", "loopback", or a comma list of "loopback", IP addresses and CIDR blocks.
  TRUST_PROXY: listSetting("off", parseTrustProxy),
  // Which web tiers outside this process may forward the visitor's address in
  // X-Coinkeep-Client-Ip (record 026): "none", or a comma list of "loopback",
  // IP addresses and CIDR blocks. Each must also send BACKEND_TOKEN.
  WEB_TIER_HOSTS: listSetting("none", parseWebTierHosts),
  // The secret a web tier (BACKEND_URL) sends with every call and a backend
  // (WEB_TIER_HOSTS) requires before it believes a forwarded address. It
  // travels in a header: visible ASCII only.
  BACKEND_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]*$/u, "must be visible ASCII characters (no spaces)")
    .min(32, "must be at least 32 characters")
    .optional(),
  // The abuse limits of record 013; "off" is for tests and benchmarks and refused in production.
  RATE_LIMITS: z.enum(["default", "off"]).default("default"),
  // Failed password, phrase and code checks one address may make in 15 minutes (record 013's
  // ipFailures): more for many holders behind one address (a shared NAT, the e2e suite).
  RATE_LIMIT_IP_FAILURES: z.coerce.number().int().min(10).max(100_000).default(100),
  // Sessions end after this long without a request the user made (record 015)…
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  // …and this long after sign-in, whatever happens.
  SESSION_MAX_HOURS: z.coerce.number().int().min(1).max(720).default(12),
  // Server processes sharing the port (node:cluster), e.g. one per core; PostgreSQL only (record 018).
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  // The bench's figures (issue 29, server/host/bench-stats.ts): off by default. Even when on they
  // go only over the IPC channel of the process that started the server, never to a port.
  BENCH_STATS: booleanFlag.default(false),
  // Prometheus metrics (record 021): a listener of their own on METRICS_HOST:METRICS_PORT…
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  // …and/or GET /metrics on the main port for a bearer of this token. Neither: no metrics served.
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]*$/u, "must be visible ASCII characters (no spaces)")
    .min(32, "must be at least 32 characters")
    .optional(),
  // Deposits' confirmations policy (record 040): one per coin.
  ...(Object.fromEntries(TICKERS.map((t) => [`CONFIRMATIONS_${t}`, confirmationsSetting])) as Record<
    `CONFIRMATIONS_${Ticker}`,
    typeof confirmationsSetting
  >),
  // Chain watchers (issue 30, record 053): an EVM network's JSON-RPC endpoint, the USDT token
  // read on Ethereum, and how often a caught-up watcher asks for the head.
  CHAIN_RPC_ETH: rpcUrlSetting,
  CHAIN_RPC_BNB: rpcUrlSetting,
  CHAIN_TOKEN_USDT: z.string().optional(),
  CHAIN_POLL_MS: z.coerce.number().int().min(100).max(600_000).default(2_000),
  // Watch-only issuing (record 039): each coin's account-level extended PUBLIC key; read below.
  ...Object.fromEntries(KEYED_COINS.map((coin) => [`ACCOUNT_KEY_${coin}`, z.string().optional()])),
  POOL_LOW_WATER: z.coerce.number().int().min(0).max(1_000_000).default(20),
  // Holder security (issue 27, record 048): how long a new saved address, or the allowlist's
  // turn-off, waits before it takes effect.
  ALLOWLIST_HOLD_HOURS: z.coerce.number().int().min(0).max(720).default(24),
  // Tests only: a file holding a number of milliseconds added to the clock of the holds
  // (allowlist, two-factor removal). Refused in production.
  TEST_CLOCK_FILE: z.string().optional(),
  // The four-eyes threshold (record 047): a send worth this many USD or more needs two approvers,
  // unless its coin has a threshold of its own (ops threshold set). A plain decimal.
  FOUR_EYES_USD: z
    .string()
    .default("10000")
    .transform((value, ctx) => {
      const usd = normaliseUsd(value);
      if (usd === undefined) {
        ctx.addIssue({
          code: "custom",
          message: "must be a plain decimal number of USD, like 10000 or 2500.50",
        });
        return z.NEVER;
      }
      return usd;
    }),
});

/**
 * The ACCOUNT_KEY_<COIN> settings, each parsed for its coin (USDT for USDT_NETWORK). The
 * message names the variable and says what is wrong; it never repeats the value, which
 * might be a private key pasted by mistake.
 */
function accountKeys(
  env: Record<string, string | undefined>,
  usdtNetwork: "erc20" | "trc20",
): Config["accountKeys"] {
  if (env.ACCOUNT_KEY_SOL !== undefined) {
    throw new ConfigError(
      "Invalid configuration:\n  ACCOUNT_KEY_SOL: Solana has no public key derivation; SOL deposit addresses come from the address pool (ops pool add SOL <file>), so remove this setting",
    );
  }
  const keys: Config["accountKeys"] = {};
  for (const coin of KEYED_COINS) {
    const name = `ACCOUNT_KEY_${coin}`;
    const text = env[name];
    if (text === undefined) continue;
    try {
      const key = parseAccountKey(coin, text, { usdtNetwork });
      keys[coin] = { key, fingerprint: accountKeyFingerprint(key) };
    } catch (error) {
      const why = error instanceof Error ? error.message : "not an account key";
      const forUsdt = coin === "USDT" ? ` (USDT_NETWORK=${usdtNetwork})` : "";
      throw new ConfigError(`Invalid configuration:\n  ${name}${forUsdt}: ${why}`);
    }
  }
  const shared = sharedAccounts(keys, usdtNetwork);
  if (shared.length > 0) throw new ConfigError(`Invalid configuration:\n${shared.join("\n")}`);
  return keys;
}

const refuse = (name: string, why: string) => new ConfigError(`Invalid configuration:\n  ${name}: ${why}`);

/**
 * CHAIN_RPC_ETH / CHAIN_RPC_BNB / CHAIN_TOKEN_USDT (record 053). A token address that is not
 * one, or one set where nothing reads it, stops the start naming the variable.
 */
function chainSettings(e: {
  CHAIN_RPC_ETH?: string | undefined;
  CHAIN_RPC_BNB?: string | undefined;
  CHAIN_TOKEN_USDT?: string | undefined;
  CHAIN_POLL_MS: number;
  USDT_NETWORK: "erc20" | "trc20";
}): ChainSettings {
  let token: ChainNetworkSetting["token"];
  if (e.CHAIN_TOKEN_USDT !== undefined) {
    if (e.USDT_NETWORK !== "erc20") {
      throw refuse(
        "CHAIN_TOKEN_USDT",
        "USDT_NETWORK is trc20 (TRON), whose deposits no watcher reads; remove this setting",
      );
    }
    if (e.CHAIN_RPC_ETH === undefined) {
      throw refuse(
        "CHAIN_TOKEN_USDT",
        "has no effect without CHAIN_RPC_ETH (the network the token is read on)",
      );
    }
    const checked = validateAddress("ETH", e.CHAIN_TOKEN_USDT.trim());
    if (!checked.ok)
      throw refuse("CHAIN_TOKEN_USDT", `must be the token contract's 0x address. ${checked.reason}`);
    token = { coin: "USDT", address: checked.address as `0x${string}` };
  }
  const networks: ChainNetworkSetting[] = [];
  const unwatched: string[] = [];
  if (e.CHAIN_RPC_ETH !== undefined) {
    networks.push({ network: "ETH", rpcUrl: e.CHAIN_RPC_ETH, native: "ETH", token });
    if (!token && e.USDT_NETWORK === "erc20") {
      unwatched.push("USDT deposits are not watched (CHAIN_TOKEN_USDT is not set)");
    }
  } else {
    unwatched.push("ETH deposits are not watched (CHAIN_RPC_ETH is not set)");
    if (e.USDT_NETWORK === "erc20")
      unwatched.push("USDT deposits are not watched (CHAIN_RPC_ETH is not set)");
  }
  if (e.CHAIN_RPC_BNB !== undefined)
    networks.push({ network: "BNB", rpcUrl: e.CHAIN_RPC_BNB, native: "BNB" });
  else unwatched.push("BNB deposits are not watched (CHAIN_RPC_BNB is not set)");
  return { networks, pollMs: e.CHAIN_POLL_MS, unwatched };
}

/** Where a coin's own account goes when two coins were given one (record 054's example). */
const SEPARATE_ACCOUNT: Partial<Record<Scheme, string>> = {
  "bip44-evm": "m/44'/60'/1' for BNB and m/44'/60'/2' for USDT",
  "bip44-tron": "m/44'/195'/1' for USDT",
};

/**
 * One address, one holder (record 054): each coin draws its indexes from a counter of its own,
 * so two coins configured with the same account key whose addresses are written alike (ETH,
 * BNB and USDT on ERC-20; TRX and USDT on TRC-20) would issue the same address to two holders.
 * Such a pair is refused, one line each, naming both variables. The same key for coins whose
 * addresses differ (an xpub given to BTC and DOGE: bc1q… and D…) issues no address twice.
 */
function sharedAccounts(keys: ConfiguredKeys, usdtNetwork: "erc20" | "trc20"): string[] {
  // USDT last, so it is named after the native coin it shares a chain with.
  const order: KeyedCoin[] = [...KEYED_COINS.filter((c) => c !== "USDT"), "USDT"];
  const index0 = (coin: KeyedCoin): string | undefined => {
    const configured = keys[coin];
    return configured && deriveAddress(coin, configured.key, 0, { usdtNetwork });
  };
  const variable = (coin: KeyedCoin) =>
    `ACCOUNT_KEY_${coin}${coin === "USDT" ? ` (USDT_NETWORK=${usdtNetwork})` : ""}`;
  const lines: string[] = [];
  for (const [i, coin] of order.entries()) {
    const mine = keys[coin];
    if (!mine) continue;
    const first = order
      .slice(0, i)
      .find((other) => keys[other]?.fingerprint === mine.fingerprint && index0(other) === index0(coin));
    if (first === undefined) continue;
    const example = SEPARATE_ACCOUNT[mine.key.scheme] ?? "the next account number, …/1'";
    lines.push(
      `  ${variable(first)} and ${variable(coin)}: the same account key (fingerprint ${mine.fingerprint}) would give ${first} and ${coin} the same addresses, each from its own index counter, so one address would be two holders' wallets; configure a separate account for one of them (e.g. ${example}) and never repeat the key value`,
    );
  }
  return lines;
}

export interface Config {
  /**
   * The watch-only account keys (ACCOUNT_KEY_<COIN>, record 039): a coin with one issues each
   * requested wallet the next address below it. USDT's follows USDT_NETWORK.
   */
  accountKeys: ConfiguredKeys;
  /** Fewer free pool addresses than this is "low": warned of on each take and shown by ops pool. */
  poolLowWater: number;
  /**
   * FOUR_EYES_USD (record 047): the USD value from which a send needs two approvers, for a coin
   * without a threshold of its own; a normalised plain decimal.
   */
  fourEyesUsd: string;
  /** ALLOWLIST_HOLD_HOURS (record 048): a new saved address, or the allowlist's turn-off, waits this long. */
  allowlistHoldHours: number;
  /** TEST_CLOCK_FILE: tests move the holds' clock with it (never in production). */
  testClockFile: string | undefined;
  /** Prometheus metrics (record 021): their own listener, and/or /metrics on the main port for this bearer token. */
  metricsPort?: number | undefined;
  metricsHost: string;
  metricsToken?: string | undefined;
  env: "development" | "production" | "test";
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  backendUrl: string | undefined;
  platform: string;
  sessionSecret: string;
  backendSecret: string;
  /** Where a generated secret is kept (DATA_DIR/…-secret); undefined when the variable is set. */
  secretFiles: { SESSION_SECRET?: string | undefined; BACKEND_SECRET?: string | undefined };
  cookieSecure: boolean;
  supportEmail: string;
  /** The legal entity the legal pages name, its registered number and its legal mailbox. */
  companyName: string;
  companyNumber: string;
  legalEmail: string;
  maxBodyBytes: number;
  /** The proxies whose forwarded headers are believed (TRUST_PROXY); empty: none. */
  trustProxy: AddressEntry[];
  /** The web tiers outside this process whose forwarded visitor address is believed (WEB_TIER_HOSTS); empty: none. */
  webTierHosts: AddressEntry[];
  /**
   * BACKEND_TOKEN: sent by this web tier to its remote backend (BACKEND_URL),
   * and required by this backend from the web tiers of WEB_TIER_HOSTS (record 026).
   */
  backendToken: string | undefined;
  /** The API's abuse limits (record 013): "default", or "off" (never in production). */
  rateLimits: "default" | "off";
  /** RATE_LIMIT_IP_FAILURES: failed checks one address may make in 15 minutes. */
  ipFailureLimit: number;
  /** A remote prices service (…/api); unset: served in-process. */
  pricesUrl: string | undefined;
  /** Never call the public price and rate sources; serve the shipped snapshots. */
  feedsOffline: boolean;
  coingeckoUrl: string | undefined;
  ecbUrl: string | undefined;
  buyCryptoUrl: string;
  usdtNetwork: "erc20" | "trc20";
  /** The app's public URL (sent to the prices service as App_url, and every mail's links); default http://HOST:PORT. */
  publicUrl: string | undefined;
  /** The chain watchers (issue 30, record 053): the EVM networks read, and what is not watched. */
  chains: ChainSettings;
  /** SMTP_URL, parsed (record 049); undefined: e-mail is off, mails wait in the outbox. */
  smtp: SmtpSettings | undefined;
  /** MAIL_FROM: the From header of every mail. */
  mailFrom: string;
  /** Origins of other sites whose links into /fast-login sign in (FAST_LOGIN_ORIGINS); empty: none. */
  fastLoginOrigins: string[];
  /** A session's idle timeout and absolute lifetime, in milliseconds (never more idle than lifetime). */
  sessionIdleMs: number;
  sessionMaxMs: number;
  /** Server processes sharing the port (node:cluster); more than 1 needs DATABASE_URL. */
  workers: number;
  /** BENCH_STATS: keep the bench's per-process figures and answer them over IPC (off by default). */
  benchStats: boolean;
  /** Confirmations a deposit needs before it is credited, per coin (CONFIRMATIONS_<TICKER>, record 040). */
  confirmations: Readonly<Record<Ticker, number>>;
}

export class ConfigError extends Error {}

// A secret that is not configured is generated once and kept in the data folder,
// so sessions and stored phrases survive restarts of a local install.
function keptSecret(dataDir: string, file: string): string {
  const where = path.join(dataDir, file);
  try {
    const kept = readFileSync(where, "utf8").trim();
    if (kept.length >= 32) return kept;
    throw new ConfigError(`Invalid configuration:\n  ${where}: must hold at least 32 characters`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const fresh = randomBytes(32).toString("base64url");
  try {
    writeFileSync(where, `${fresh}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return keptSecret(dataDir, file);
    throw error;
  }
  return fresh;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, as shells and .env files often leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.RATE_LIMITS === "off" && e.NODE_ENV === "production") {
    throw new ConfigError("Invalid configuration:\n  RATE_LIMITS: must not be off in production");
  }
  if (e.TEST_CLOCK_FILE !== undefined && e.NODE_ENV === "production") {
    throw new ConfigError(
      "Invalid configuration:\n  TEST_CLOCK_FILE: is for tests and must not be set in production",
    );
  }
  if (e.WORKERS > 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  WORKERS: more than 1 needs DATABASE_URL (the embedded database serves one process)",
    );
  }
  if (e.WEB_TIER_HOSTS.length > 0 && !e.BACKEND_TOKEN) {
    throw new ConfigError(
      "Invalid configuration:\n  WEB_TIER_HOSTS: needs BACKEND_TOKEN (an address alone does not prove a web tier; record 026)",
    );
  }
  if (e.WEB_TIER_HOSTS.length > 0 && e.BACKEND_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  WEB_TIER_HOSTS: has no effect with BACKEND_URL (this process then serves no API); set it on the backend",
    );
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      "Invalid configuration:\n  METRICS_PORT: must differ from PORT (the metrics have a listener of their own)",
    );
  }
  if (e.WORKERS > 1 && e.METRICS_TOKEN && e.METRICS_PORT === undefined) {
    throw new ConfigError(
      "Invalid configuration:\n  METRICS_TOKEN: with WORKERS above 1 set METRICS_PORT too (each request reaches one worker; the metrics port gathers them all)",
    );
  }
  const dataDir = path.resolve(e.DATA_DIR);
  const backendSecret = e.BACKEND_SECRET ?? keptSecret(dataDir, "backend-secret");
  if (e.BACKEND_TOKEN !== undefined && e.BACKEND_TOKEN === backendSecret) {
    throw new ConfigError(
      "Invalid configuration:\n  BACKEND_TOKEN: must not be BACKEND_SECRET (the token travels to the web tier; the secret stays here)",
    );
  }
  const keys = accountKeys(present, e.USDT_NETWORK);
  const chains = chainSettings(e);
  return {
    chains,
    accountKeys: keys,
    poolLowWater: e.POOL_LOW_WATER,
    fourEyesUsd: e.FOUR_EYES_USD,
    allowlistHoldHours: e.ALLOWLIST_HOLD_HOURS,
    testClockFile: e.TEST_CLOCK_FILE,
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    backendUrl: e.BACKEND_URL?.replace(/\/+$/, ""),
    platform: e.PLATFORM_CODE,
    sessionSecret: e.SESSION_SECRET ?? keptSecret(dataDir, "session-secret"),
    backendSecret,
    secretFiles: {
      SESSION_SECRET: e.SESSION_SECRET === undefined ? path.join(dataDir, "session-secret") : undefined,
      BACKEND_SECRET: e.BACKEND_SECRET === undefined ? path.join(dataDir, "backend-secret") : undefined,
    },
    cookieSecure: e.COOKIE_SECURE ?? e.NODE_ENV === "production",
    supportEmail: e.SUPPORT_EMAIL,
    companyName: e.COMPANY_NAME,
    companyNumber: e.COMPANY_NUMBER,
    legalEmail: e.LEGAL_EMAIL,
    maxBodyBytes: e.MAX_BODY_BYTES,
    trustProxy: e.TRUST_PROXY,
    webTierHosts: e.WEB_TIER_HOSTS,
    backendToken: e.BACKEND_TOKEN,
    rateLimits: e.RATE_LIMITS,
    ipFailureLimit: e.RATE_LIMIT_IP_FAILURES,
    pricesUrl: e.PRICES_URL?.replace(/\/+$/, ""),
    feedsOffline: e.FEEDS_OFFLINE,
    coingeckoUrl: e.COINGECKO_URL,
    ecbUrl: e.ECB_URL,
    buyCryptoUrl: e.BUY_CRYPTO_URL,
    usdtNetwork: e.USDT_NETWORK,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
    smtp: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    fastLoginOrigins: e.FAST_LOGIN_ORIGINS,
    sessionIdleMs: Math.min(e.SESSION_IDLE_MINUTES * 60_000, e.SESSION_MAX_HOURS * 3_600_000),
    sessionMaxMs: e.SESSION_MAX_HOURS * 3_600_000,
    workers: e.WORKERS,
    benchStats: e.BENCH_STATS,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    metricsToken: e.METRICS_TOKEN,
    confirmations: {
      BTC: e.CONFIRMATIONS_BTC ?? DEFAULT_CONFIRMATIONS.BTC,
      ETH: e.CONFIRMATIONS_ETH ?? DEFAULT_CONFIRMATIONS.ETH,
      ADA: e.CONFIRMATIONS_ADA ?? DEFAULT_CONFIRMATIONS.ADA,
      BNB: e.CONFIRMATIONS_BNB ?? DEFAULT_CONFIRMATIONS.BNB,
      DOGE: e.CONFIRMATIONS_DOGE ?? DEFAULT_CONFIRMATIONS.DOGE,
      SOL: e.CONFIRMATIONS_SOL ?? DEFAULT_CONFIRMATIONS.SOL,
      TRX: e.CONFIRMATIONS_TRX ?? DEFAULT_CONFIRMATIONS.TRX,
      XRP: e.CONFIRMATIONS_XRP ?? DEFAULT_CONFIRMATIONS.XRP,
      USDT:
        e.CONFIRMATIONS_USDT ??
        (e.USDT_NETWORK === "trc20"
          ? (e.CONFIRMATIONS_TRX ?? DEFAULT_CONFIRMATIONS.TRX)
          : (e.CONFIRMATIONS_ETH ?? DEFAULT_CONFIRMATIONS.ETH)),
    },
  };
}

/**
 * The secrets this process must share with every other on its database (record 051): the
 * web tier's SESSION_SECRET always (its sessions live in this database), BACKEND_SECRET when
 * the backend runs here (a web tier with BACKEND_URL derives nothing from it).
 */
export function sharedSecrets(
  config: Config,
): { name: "BACKEND_SECRET" | "SESSION_SECRET"; value: string; keptIn: string | undefined }[] {
  return [
    ...(config.backendUrl
      ? []
      : [
          {
            name: "BACKEND_SECRET" as const,
            value: config.backendSecret,
            keptIn: config.secretFiles.BACKEND_SECRET,
          },
        ]),
    {
      name: "SESSION_SECRET" as const,
      value: config.sessionSecret,
      keptIn: config.secretFiles.SESSION_SECRET,
    },
  ];
}
