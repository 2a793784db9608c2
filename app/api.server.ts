// The one way the web tier reaches the backend: the typed client, in-process
// when the backend runs here, over HTTP when BACKEND_URL points elsewhere.
import type { RouterContextProvider } from "react-router";
import { memoize } from "../common/memo.ts";
import {
  createHttpClient,
  createInProcessClient,
  type BackendClient,
  type BackendFailure,
} from "./backend.server.ts";
import type { AppServices } from "./context.ts";
import { createInProcessPricesClient, createPricesClient, type PricesClient } from "./prices.server.ts";
import { services } from "./session.server.ts";

/**
 * The backend client for the request behind `context`, made once per request:
 * every call carries the visitor's address (record 013 counts the abuse limits
 * by it), so no call site can forget to pass it, and in-process the request's
 * credentials are checked once however many calls it makes.
 */
export const backend: (context: Readonly<RouterContextProvider>) => BackendClient = memoize((context) => {
  const s = services(context);
  const clientIp = s.clientAddress?.(context);
  if (s.backend) return createInProcessClient(s.backend, s.config.platform, clientIp);
  return createHttpClient(
    {
      baseUrl: s.config.backendBaseUrl,
      platform: s.config.platform,
      ...(s.config.backendToken ? { token: s.config.backendToken } : {}),
    },
    clientIp,
  );
});

/** The Retry-After an action set, for a route's `headers` (so the page carries it too). */
export function retryAfterOf(actionHeaders: Headers): Record<string, string> {
  const value = actionHeaders.get("Retry-After");
  return value === null ? {} : { "Retry-After": value };
}

/** What a page says when the backend refused for too many attempts (429) or a locked account (423). */
export interface LimitedAnswer {
  message: string;
  status: 429 | 423;
  headers: Record<string, string>;
}

/** "30 seconds", "1 minute", "15 minutes", "2 hours": a wait in words, rounded up. */
const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

export function waitInWords(seconds: number): string {
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), "second");
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), "minute");
  return plural(Math.ceil(seconds / 3600), "hour");
}

/** The page's message for a limited call (record 013), or null when the failure is another one. */
export function limitedAnswer(failure: BackendFailure): LimitedAnswer | null {
  if (failure.kind !== "rejected") return null;
  if (failure.code === "account_locked") {
    return {
      message:
        "Too many failed attempts. This account is locked: restore your wallet with your 12-word phrase to unlock it.",
      status: 423,
      headers: {},
    };
  }
  if (failure.code !== "too_many_attempts") return null;
  const seconds = failure.retryAfter ?? 60;
  return {
    message: `Too many attempts. Please wait ${waitInWords(seconds)} and try again.`,
    status: 429,
    headers: { "Retry-After": String(seconds) },
  };
}

/** The `before` paging parameter of a URL, when it is a date call 4 accepts. */
export function transactionsBefore(url: URL): { transactionsBefore: string } | Record<string, never> {
  const before = url.searchParams.get("before");
  return before && !Number.isNaN(Date.parse(before)) ? { transactionsBefore: before } : {};
}

/** The second client: the prices service (crypto prices and currency rates), one per host. */
const pricesOf = memoize((s: AppServices) =>
  s.prices
    ? createInProcessPricesClient(s.prices)
    : createPricesClient({
        baseUrl: s.config.pricesBaseUrl,
        appName: s.config.platform,
        appUrl: s.config.appUrl,
      }),
);

export function prices(context: Readonly<RouterContextProvider>): PricesClient {
  return pricesOf(services(context));
}
