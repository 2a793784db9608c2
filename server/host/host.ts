// The process: reads the configuration, opens the database (applying
// migrations), mounts the backend API under /api and the web tier everywhere
// else, and serves the built assets. Run through `npm start`.
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  createRequestListener as createFetchListener,
  type ClientAddress,
} from "@remix-run/node-fetch-server";
import { createRequestListener } from "@react-router/node";
import { RouterContextProvider, type RouterContext, type ServerBuild } from "react-router";
import type { AppServices } from "../../app/context.ts";
import { createBackend } from "../backend/api/handler.ts";
import { fixedUsdPrice } from "../../common/contract/amounts.ts";
import { refusal } from "../../common/contract/refusals.ts";
import { refusalResponse, senderAddress, webTierCheck } from "../backend/api/http.ts";
import { createFeedRoutes, createMarketData } from "../backend/feeds/routes.ts";
import { runInServer } from "../ops/registry.ts";
import { opsSocketPath } from "../ops/socket.ts";
import { serveOpsSocket } from "./ops-socket.ts";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { openDatabase } from "../backend/db/index.ts";
import { maintainDatabase } from "../backend/jobs.ts";
import { DataDirLockedError } from "../backend/db/lock.ts";
import { currentRequest, log, runWithRequest } from "../../common/log.ts";
import { createStaticHandler } from "./static.ts";
import {
  createProxyTrust,
  inspect,
  isCrossSite,
  ownOrigin,
  refuse,
  requestFacts,
  runWithFacts,
  setSecurityHeaders,
  webBodyRefusal,
} from "./edge.ts";
import { createSessionKV } from "./web-sessions.ts";
import { createLiveEvents } from "./live-events.ts";
import {
  answerPrimary,
  answerScrape,
  bearerMatches,
  createMetrics,
  gatherWorkers,
  promClient,
  routeLabel,
} from "./metrics.ts";
import { answerProbe, readiness } from "./probes.ts";

const root = path.resolve(import.meta.dirname, "../..");

const notFound = () => refusalResponse(refusal("not_found"));

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

/**
 * With WORKERS > 1 on Linux each worker listens on a socket of its own on the
 * shared port (SO_REUSEPORT) and the kernel spreads new connections over the
 * living ones (record 019). Elsewhere the workers share node:cluster's handle.
 */
const ownSocketPerWorker = process.platform === "linux";

/** The caller's request id, only in the form our hosts issue (a UUID), so nothing else reaches the log. */
function forwardedRequestId(req: IncomingMessage): string | undefined {
  const value = req.headers["x-request-id"];
  return typeof value === "string" &&
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u.test(value)
    ? value
    : undefined;
}

export async function startHost(config: Config, source?: WebTierSource) {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const sessions = createSessionKV(database.db, { idleMs: config.sessionIdleMs, maxMs: config.sessionMaxMs });

  // Prices and rates, cached: served by the feed routes and used by the API to price sends.
  const market = createMarketData({
    offline: config.feedsOffline,
    ...(config.coingeckoUrl ? { coingeckoUrl: config.coingeckoUrl } : {}),
    ...(config.ecbUrl ? { ecbUrl: config.ecbUrl } : {}),
  });

  const backend = config.backendUrl
    ? undefined
    : createBackend({
        db: database.db,
        platform: config.platform,
        backendSecret: config.backendSecret,
        maxBodyBytes: config.maxBodyBytes,
        rateLimits: config.rateLimits === "off" ? "off" : undefined,
        usdtNetwork: config.usdtNetwork,
        custody: { keys: config.accountKeys, poolLowWater: config.poolLowWater },
        maintain: database.maintain,
        // Spec section 9: the USDT price is fixed at 1.
        usdPrice: async (coin) => fixedUsdPrice(coin) ?? (await market.quote(coin)).lastPrice,
      });

  // The backend's own jobs: issuing's catch-up (done before serving), old sender addresses
  // cleared daily, the embedded database vacuumed hourly. A process fronting a remote backend
  // still keeps its own embedded database (web sessions) vacuumed.
  if (backend) await backend.start();
  const upkeep = backend ?? (database.maintain ? maintainDatabase(database.maintain) : undefined);

  // Live events for signed-in pages (record 033): the database's notifications, when the backend
  // that raises them writes to this database (in-process). With a remote backend pages poll.
  const events = backend ? await createLiveEvents(database) : undefined;

  // What operators watch (record 021). In a cluster's worker the primary gathers them.
  const metrics = createMetrics({ database, openStreams: () => events?.open() ?? 0 });

  // The prices service runs in-process unless PRICES_URL points elsewhere.
  const feeds = config.pricesUrl
    ? undefined
    : createFeedRoutes({ offline: config.feedsOffline, platform: config.platform, market });
  // /api: the public data routes first, then the accounts and wallets API.
  // Both parameters are declared so the listener hands over the connection's
  // address (it passes it only to handlers of two parameters); the API records
  // it as the sender of support messages (call 12).
  // Behind a trusted proxy the connection is the client it names (record 014).
  const apiAll = async (request: Request, client: ClientAddress) =>
    (feeds ? await feeds(request) : undefined) ??
    (backend ? await backend.handler(request, requestFacts()?.sender ?? client) : notFound());

  const webSource = source ?? (await builtWebTier());

  // The visitor's address for each web request, keyed by the request's own
  // context (so it goes away with it); public forms pass it on to the API.
  const clientAddresses = new WeakMap<Readonly<RouterContextProvider>, string>();
  // Whose X-Forwarded-For / X-Forwarded-Proto is believed (TRUST_PROXY, record 014).
  const proxyTrust = createProxyTrust(config.trustProxy);
  // Which web tiers outside this process forward the visitor's address (WEB_TIER_HOSTS + BACKEND_TOKEN, record 026).
  const webTier = webTierCheck(
    config.backendToken ? { hosts: config.webTierHosts, token: config.backendToken } : undefined,
  );
  const services: AppServices = {
    config: {
      platform: config.platform,
      sessionSecret: config.sessionSecret,
      cookieSecure: config.cookieSecure,
      supportEmail: config.supportEmail,
      companyName: config.companyName,
      companyNumber: config.companyNumber,
      legalEmail: config.legalEmail,
      backendBaseUrl: config.backendUrl ?? `http://${config.host}:${config.port}/api`,
      ...(config.backendUrl && config.backendToken ? { backendToken: config.backendToken } : {}),
      pricesBaseUrl: config.pricesUrl ?? `http://${config.host}:${config.port}/api`,
      appUrl: config.publicUrl ?? `http://${config.host}:${config.port}`,
      buyCryptoUrl: config.buyCryptoUrl,
      fastLoginOrigins: config.fastLoginOrigins,
      sessionIdleMs: config.sessionIdleMs,
    },
    backend: backend?.services,
    prices: feeds?.services,
    sessions,
    events,
    clientAddress: (context) => clientAddresses.get(context),
  };

  const web = createRequestListener({
    build: () => webSource.build(),
    mode: webSource.mode,
    async getLoadContext(request, client) {
      // The context keys must be the very objects the app reads, so the app's server
      // entry exports them. (In dev, an edit of app/context.ts landing between this
      // and the handler's own build() fails that one request; the production build never changes.)
      const { servicesContext, nonceContext } = (await webSource.build()).entry.module as unknown as {
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
  const apiListener = createFetchListener(apiAll);

  function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    const requestId = randomUUID();
    // Only the path is ever logged: /fast-login carries credentials in its query.
    const pathname = (req.url ?? "/").split("?")[0] ?? "/";
    res.setHeader("X-Request-Id", requestId);
    // CSP with this request's nonce, HSTS, nosniff, … on every response (record 014).
    const facts = inspect(req, proxyTrust, webTier);
    setSecurityHeaders(res, facts, config.env === "production");
    if (webSource.devCsp) res.setHeader("Content-Security-Policy", webSource.devCsp(facts.nonce));
    res.on("finish", () => {
      metrics.observe(
        routeLabel(pathname),
        req.method ?? "",
        res.statusCode,
        (performance.now() - started) / 1000,
      );
      log.info("request", {
        requestId,
        method: req.method,
        path: pathname,
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        // A web tier on another host sends its own request's id with each API call (record 015).
        parentRequestId: forwardedRequestId(req),
      });
    });
    // Probes and the token-guarded scrape: before the web tier, no session, no body (record 021).
    if (req.method === "GET" || req.method === "HEAD") {
      if (pathname === "/healthz") return answerProbe(res, 200, "ok");
      if (pathname === "/readyz") {
        return void readiness(database).then((ready) =>
          answerProbe(res, ready.ready ? 200 : 503, ready.ready ? "ready" : `not ready: ${ready.reason}`),
        );
      }
      if (pathname === "/metrics" && config.metricsToken) {
        if (!bearerMatches(req, config.metricsToken)) {
          res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
          return answerProbe(res, 401, "unauthorized");
        }
        return void answerScrape(res, () => metrics.registry.metrics(), metrics.registry.contentType);
      }
    }
    // Everything the request starts (web tier, in-process API) logs with its id.
    runWithRequest({ requestId }, () => {
      const isApi = pathname === "/api" || pathname.startsWith("/api/");
      // Another site's form post or API call never reaches a handler (record 014).
      if (isCrossSite(req, () => ownOrigin(req, facts, config.publicUrl))) return refuse(res, 403, isApi);
      runWithFacts(facts, () => {
        if (isApi) return void apiListener(req, res);
        webSource.assets(req, res, pathname, () => {
          if (pathname === "/favicon.ico") {
            res.statusCode = 404;
            return void res.end();
          }
          // The API bounds its own bodies (413); the web tier's are judged here, unread.
          const tooLarge = webBodyRefusal(req);
          if (tooLarge !== null) return refuse(res, tooLarge, false);
          void web(req, res);
        });
      });
    });
  }

  // Short timeouts, checked every second: a client that stalls its headers or body (slowloris)
  // is cut off within seconds instead of holding a connection for Node's default 5 minutes.
  const server = createServer(
    { requestTimeout: 10_000, headersTimeout: 5_000, connectionsCheckingInterval: 1_000 },
    handle,
  );
  server.maxConnections = 10_000;
  server.keepAliveTimeout = 65_000;
  await webSource.attach?.(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // A worker's own socket (exclusive: not the cluster's shared handle): a connection waits
    // only in the queue of a process that can take it. When that process dies the kernel resets
    // what was queued for it, instead of a connection being left with nobody (record 019).
    const own = cluster.isWorker && ownSocketPerWorker;
    server.listen(
      { port: config.port, host: config.host, ...(own ? { reusePort: true, exclusive: true } : {}) },
      () => resolve(),
    );
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  // With an ephemeral port (PORT=0) the in-process client must learn the real one.
  services.config.backendBaseUrl = config.backendUrl ?? `http://${config.host}:${port}/api`;
  services.config.pricesBaseUrl = config.pricesUrl ?? `http://${config.host}:${port}/api`;
  services.config.appUrl = config.publicUrl ?? `http://${config.host}:${port}`;

  // In a cluster the primary gathers the figures of the workers that serve.
  if (cluster.isWorker) answerPrimary(metrics.registry);
  // The metrics' own listener (METRICS_PORT): here with one process; a cluster's primary serves it.
  const metricsServer =
    config.metricsPort !== undefined && !cluster.isWorker
      ? await listenMetrics(config, () => metrics.registry.metrics(), metrics.registry.contentType)
      : undefined;

  // Operators reach the embedded database through the server (server/host/ops-socket.ts).
  const opsServer =
    database.driver === "pglite"
      ? await serveOpsSocket(opsSocketPath(config.dataDir), (argv) =>
          runInServer(argv, { db: database.db, config }),
        )
      : undefined;

  const purge = setInterval(() => void sessions.purgeExpired().catch(() => {}), 10 * 60_000);
  purge.unref();

  log.info("listening", {
    url: `http://${config.host}:${port}`,
    database: database.driver,
    backend: config.backendUrl ? "remote" : "in-process",
  });

  return {
    port,
    async close() {
      clearInterval(purge);
      await upkeep?.stop();
      await new Promise<void>((resolve) => opsServer?.close(() => resolve()) ?? resolve());
      await new Promise<void>((resolve) => metricsServer?.close(() => resolve()) ?? resolve());
      // Event streams never end on their own: they are ended first, so the server can close.
      await events?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await webSource.close?.();
      await database.close();
    },
  };
}

/**
 * WORKERS > 1 (PostgreSQL only): this process checks that the port is free and
 * keeps it marked as its own, applies the migrations once, then starts that
 * many server processes sharing the port (on Linux each with a socket of its
 * own, record 019), starts another when one dies, and stops them all on
 * SIGTERM or SIGINT. Sessions, rate limits and the ledger live in the
 * database, so any process can answer any request (record 018).
 */
async function runPrimary(config: Config) {
  let port = config.port;
  if (ownSocketPerWorker) {
    // Sockets with SO_REUSEPORT would let a second server of the same user join the port and
    // take a share of its connections; so the port must be free, and it stays ours.
    port = await portIsFree(config.host, config.port);
    await holdPort(port);
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.close();
  let stopping = false;
  const fork = () => cluster.fork({ PORT: String(port) });
  // The workers' metrics, gathered on METRICS_PORT (record 021).
  if (config.metricsPort !== undefined) {
    await listenMetrics(config, gatherWorkers(cluster), promClient.register.contentType);
  }
  for (let i = 0; i < config.workers; i++) fork();
  log.info("workers started", { workers: config.workers });
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) return;
    log.warn("worker exited; starting another", { pid: worker.process.pid, code, signal });
    setTimeout(fork, 1000);
  });
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    const waiting = setInterval(() => {
      if (Object.keys(cluster.workers ?? {}).length > 0) return;
      clearInterval(waiting);
      process.exit(0);
    }, 50);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** The metrics' own listener on METRICS_HOST:METRICS_PORT: GET /metrics, nothing else. */
async function listenMetrics(
  config: Config,
  text: () => Promise<string>,
  contentType: string,
): Promise<Server> {
  const server = createServer((req, res) => {
    const pathname = (req.url ?? "/").split("?")[0];
    if ((req.method === "GET" || req.method === "HEAD") && pathname === "/metrics") {
      return void answerScrape(res, text, contentType);
    }
    answerProbe(res, 404, "not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: config.metricsPort, host: config.metricsHost }, () => resolve());
  });
  log.info("metrics listening", { url: `http://${config.metricsHost}:${config.metricsPort}/metrics` });
  return server;
}

class StartError extends Error {}

/** The port (the one chosen when 0) after checking that nothing listens on it; StartError when something does. */
async function portIsFree(host: string, port: number): Promise<number> {
  const probe = createNetServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ port, host, exclusive: true }, () => resolve());
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new StartError(`Port ${port} on ${host} is already in use.`);
    }
    throw error;
  }
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === "object" && address ? address.port : port;
}

/**
 * Marks the port as this server's for as long as the primary lives: a Linux
 * abstract Unix socket named after it (no file; the kernel frees it when the
 * process dies, however it dies). StartError when another server holds it.
 */
async function holdPort(port: number): Promise<NetServer> {
  const guard = createNetServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      guard.once("error", reject);
      guard.listen(`\0coinkeep-port-${port}`, () => resolve());
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new StartError(`Another Coinkeep server with WORKERS already runs on port ${port}.`);
    }
    throw error;
  }
  guard.unref();
  return guard;
}

/**
 * Runs the server until SIGTERM or SIGINT. `npm run dev` (server/host/dev.ts)
 * passes its own environment defaults and Vite as the web tier's source.
 */
export async function main(
  options: {
    env?: Record<string, string | undefined>;
    web?: (config: Config) => Promise<WebTierSource>;
  } = {},
) {
  let config: Config;
  try {
    config = loadConfig(options.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  let host: Awaited<ReturnType<typeof startHost>>;
  try {
    if (config.workers > 1 && cluster.isPrimary) {
      await runPrimary(config);
      return;
    }
    host = await startHost(config, await options.web?.(config));
  } catch (error) {
    // Refused before listening (the data folder's lock, record 019; a taken port): one clear line.
    if (error instanceof DataDirLockedError || error instanceof StartError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await host.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

if (import.meta.main) await main();
