// The web tier inside the process (record 031): where its server build comes from (the
// production build, or Vite's in `npm run dev`), the services every loader and action gets
// through the load context (app/context.ts: the web tier's configuration, the backend
// client's in-process transport, the prices service, web sessions, live events, the
// visitor's address), and React Router's request listener over them.
import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequestListener } from "@react-router/node";
import { RouterContextProvider, type RouterContext, type ServerBuild } from "react-router";
import type { AppServices, LiveEvents, WebConfig } from "../../app/context.ts";
import type { BackendServices } from "../../common/contract/client.ts";
import type { PricesServices } from "../../common/contract/prices.ts";
import { currentRequest } from "../../common/log.ts";
import { senderAddress } from "../backend/api/http.ts";
import type { Database } from "../backend/db/index.ts";
import type { Config } from "../config.ts";
import { requestFacts } from "./edge.ts";
import { createStaticHandler } from "./static.ts";
import { createSessionKV } from "./web-sessions.ts";
import { consoleServices } from "../ops/console.ts";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * Where the web tier comes from: the production build (`builtWebTier`, what
 * `npm start` serves) or, for `npm run dev`, Vite's current build of app/
 * (server/host/dev.ts). Everything else about a request (edge checks, security
 * headers, the API, the load context) is the same for both.
 */
export interface WebTierSource {
  mode: "production" | "development";
  /** The server build to answer a page request with (dev: reloaded after each edit). */
  build(): ServerBuild | Promise<ServerBuild>;
  /** Answers requests for assets (connect-style); calls `next` for everything else. */
  assets(req: IncomingMessage, res: ServerResponse, pathname: string, next: () => void): void;
  /** Called once the HTTP server exists, before it listens (dev: Vite's HMR socket shares the port). */
  attach?(server: Server): Promise<void>;
  /** The CSP a development source needs instead of the production one; never set by the production build. */
  devCsp?(nonce: string): string;
  close?(): Promise<void>;
}

/** The production web tier: build/server/index.js, and build/client's files served from memory. */
export async function builtWebTier(): Promise<WebTierSource> {
  const build = (await import(pathToFileURL(path.join(root, "build/server/index.js")).href)) as ServerBuild;
  const serveStatic = createStaticHandler(path.join(root, "build/client"));
  return {
    mode: "production",
    build: () => build,
    assets: (req, res, pathname, next) => void (serveStatic(req, res, pathname) || next()),
  };
}

/** What the web tier is handed from the rest of the process. */
export interface WebTierParts {
  /** The database its sessions live in. */
  database: Database;
  /** The backend's services, when the backend runs in this process (else the client speaks HTTP). */
  backend: BackendServices | undefined;
  /** The prices service's, when it runs in this process. */
  prices: PricesServices | undefined;
  /** Live events, when this process's database carries the backend's notifications. */
  events: LiveEvents | undefined;
}

export interface WebTier {
  source: WebTierSource;
  /** Answers a page request (the requests that are neither the API nor an asset). */
  listener: RequestListener;
  /** Points the in-process clients at the port the server got (PORT=0: any free one). */
  servesOn(port: number): void;
  /** Stops purging sessions and closes the source (dev: Vite). */
  close(): Promise<void>;
}

export async function mountWebTier(
  config: Config,
  parts: WebTierParts,
  source?: WebTierSource,
): Promise<WebTier> {
  const webSource = source ?? (await builtWebTier());
  const sessions = createSessionKV(parts.database.db, {
    idleMs: config.sessionIdleMs,
    maxMs: config.sessionMaxMs,
  });
  // The visitor's address for each web request, keyed by the request's own
  // context (so it goes away with it); public forms pass it on to the API.
  const clientAddresses = new WeakMap<Readonly<RouterContextProvider>, string>();
  const services: AppServices = {
    config: webConfig(config, config.port),
    backend: parts.backend,
    prices: parts.prices,
    sessions,
    console: parts.backend ? consoleServices({ db: parts.database.db, config }) : undefined,
    events: parts.events,
    clientAddress: (context) => clientAddresses.get(context),
  };

  // React Router derives its route tables from a build each time it is handed a function
  // (flattening and ranking every route, per request): the production build never changes, so
  // it is handed the build itself and derives them once. Dev's build changes with each edit.
  const fixedBuild = webSource.mode === "production" ? await webSource.build() : undefined;
  const listener = createRequestListener({
    build: fixedBuild ?? (() => webSource.build()),
    mode: webSource.mode,
    async getLoadContext(request, client) {
      // The context keys must be the very objects the app reads, so the app's server
      // entry exports them. (In dev, an edit of app/context.ts landing between this
      // and the handler's own build() fails that one request; the production build never changes.)
      const { servicesContext, nonceContext } = (fixedBuild ?? (await webSource.build())).entry
        .module as unknown as {
        servicesContext: RouterContext<AppServices>;
        nonceContext: RouterContext<string>;
      };
      const context = new RouterContextProvider();
      context.set(servicesContext, services);
      const facts = requestFacts();
      // The nonce of this response's CSP header, for the inline scripts (record 014).
      if (facts) context.set(nonceContext, facts.nonce);
      // As the API decides it (records 011, 014): the client after the trusted
      // proxies, or the X-Coinkeep-Client-Ip of a configured web tier (record 026).
      const address = senderAddress(request, facts?.sender ?? client);
      if (address !== null) {
        clientAddresses.set(context, address);
        // The backend client forwards it with every call (audit log, record 015).
        const current = currentRequest();
        if (current) current.clientIp = address;
      }
      return context;
    },
  });

  // Expired sessions are dropped every 10 minutes.
  const purge = setInterval(() => void sessions.purgeExpired().catch(() => {}), 10 * 60_000);
  purge.unref();

  return {
    source: webSource,
    listener,
    servesOn(port) {
      // With an ephemeral port (PORT=0) the in-process client must learn the real one.
      Object.assign(services.config, ownUrls(config, port));
    },
    async close() {
      clearInterval(purge);
      await webSource.close?.();
    },
  };
}

/** The web tier's share of the configuration (AppServices.config). */
function webConfig(config: Config, port: number): WebConfig {
  return {
    platform: config.platform,
    sessionSecret: config.sessionSecret,
    cookieSecure: config.cookieSecure,
    supportEmail: config.supportEmail,
    companyName: config.companyName,
    companyNumber: config.companyNumber,
    legalEmail: config.legalEmail,
    ...ownUrls(config, port),
    ...(config.backendUrl && config.backendToken ? { backendToken: config.backendToken } : {}),
    buyCryptoUrl: config.buyCryptoUrl,
    fastLoginOrigins: config.fastLoginOrigins,
    sessionIdleMs: config.sessionIdleMs,
  };
}

/** The backend's, the prices service's and the app's URLs: configured, or this process's own. */
function ownUrls(config: Config, port: number) {
  return {
    backendBaseUrl: config.backendUrl ?? `http://${config.host}:${port}/api`,
    pricesBaseUrl: config.pricesUrl ?? `http://${config.host}:${port}/api`,
    appUrl: config.publicUrl ?? `http://${config.host}:${port}`,
  };
}
