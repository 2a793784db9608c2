// The one way the web tier reaches the backend: the typed client, in-process
// when the backend runs here, over HTTP when BACKEND_URL points elsewhere.
import type { RouterContextProvider } from "react-router";
import { createBackendClient } from "./backend.server";
import type { AppServices } from "./context";
import { createPricesClient } from "./prices.server";
import { services } from "./session.server";

type Client = ReturnType<typeof createBackendClient>;
const clients = new WeakMap<AppServices, Client>();

export function backend(context: Readonly<RouterContextProvider>): Client {
  const s = services(context);
  let client = clients.get(s);
  if (!client) {
    client = createBackendClient({
      baseUrl: s.config.backendBaseUrl,
      platform: s.config.platform,
      ...(s.backendFetch ? { fetch: s.backendFetch } : {}),
    });
    clients.set(s, client);
  }
  return client;
}

/** The `before` paging parameter of a URL, when it is a date call 4 accepts. */
export function transactionsBefore(url: URL): { transactionsBefore: string } | Record<string, never> {
  const before = url.searchParams.get("before");
  return before && !Number.isNaN(Date.parse(before)) ? { transactionsBefore: before } : {};
}

type PricesClient = ReturnType<typeof createPricesClient>;
const pricesClients = new WeakMap<AppServices, PricesClient>();

/** The second client: the prices service (crypto prices and currency rates). */
export function prices(context: Readonly<RouterContextProvider>): PricesClient {
  const s = services(context);
  let client = pricesClients.get(s);
  if (!client) {
    client = createPricesClient({
      baseUrl: s.config.pricesBaseUrl,
      appName: s.config.platform,
      appUrl: s.config.appUrl,
      ...(s.pricesFetch ? { fetch: s.pricesFetch } : {}),
    });
    pricesClients.set(s, client);
  }
  return client;
}
