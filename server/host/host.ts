// The process: reads the configuration, opens the database (applying
// migrations), mounts the backend API under /api and the web tier everywhere
// else, and serves the built assets. Run through `npm start`.
//
// `startHost` is the order of it, one named step a line; each step is a small
// function here or a module of its own (api.ts, web-tier.ts, requests.ts), and
// `close` undoes them. `main` adds the configuration before and the signals after.
import cluster from "node:cluster";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { log } from "../../common/log.ts";
import { openDatabase, type Database } from "../backend/db/index.ts";
import { DataDirLockedError } from "../backend/db/lock.ts";
import { checkSecrets, SecretMismatchError } from "../backend/db/secret-checks.ts";
import { ConfigError, loadConfig, sharedSecrets, type Config } from "../config.ts";
import { runInServer } from "../ops/registry.ts";
import { opsSocketPath } from "../ops/socket.ts";
import { mountApi } from "./api.ts";
import { ownSocketPerWorker, runPrimary, StartError } from "./cluster.ts";
import { answerBenchStats, createBenchStats } from "./bench-stats.ts";
import { createLiveEvents } from "./live-events.ts";
import { answerPrimary, createMetrics, listenMetrics, type Metrics } from "./metrics.ts";
import { serveOpsSocket } from "./ops-socket.ts";
import { handleRequests } from "./requests.ts";
import { mountWebTier, type WebTierSource } from "./web-tier.ts";

export interface RunningHost {
  /** The port it listens on (the one chosen, with PORT=0). */
  port: number;
  /** Stops everything it started, in order, and closes the database; the process can exit then. */
  close(): Promise<void>;
}

export async function startHost(config: Config, source?: WebTierSource): Promise<RunningHost> {
  // The bench's figures (issue 29): nothing unless BENCH_STATS=1.
  const benchStats = config.benchStats
    ? createBenchStats(config.databaseUrl ? "postgres" : "pglite")
    : undefined;
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onWait: benchStats?.wait,
  });
  // Before anything is served or written: this process's secrets are the database's (record 051).
  try {
    await checkSecrets(database.db, sharedSecrets(config));
  } catch (error) {
    await database.close();
    throw error;
  }
  const api = await mountApi(config, database);
  // Live events for signed-in pages (record 033): the database's notifications, when the backend
  // that raises them writes to this database (in-process). With a remote backend pages poll.
  const events = api.backend ? await createLiveEvents(database) : undefined;
  // What operators watch (record 021). In a cluster's worker the primary gathers them.
  const metrics = createMetrics({ database, openStreams: () => events?.open() ?? 0 });
  const web = await mountWebTier(
    config,
    { database, backend: api.backend?.services, prices: api.prices, events },
    source,
  );
  const server = await listen(
    config,
    handleRequests(config, { database, metrics, api: api.listener, web, benchStats }),
    web.source,
  );
  const port = portOf(server, config);
  web.servesOn(port);
  const metricsServer = await serveMetrics(config, metrics);
  if (benchStats) answerBenchStats(benchStats);
  const opsServer = await serveOps(config, database);
  log.info("listening", {
    url: `http://${config.host}:${port}`,
    database: database.driver,
    backend: config.backendUrl ? "remote" : "in-process",
  });

  return {
    port,
    async close() {
      await api.stop();
      await closeServer(opsServer);
      await closeServer(metricsServer);
      // Event streams never end on their own: they are ended first, so the server can close.
      await events?.close();
      // Requests in progress are answered first (the drain); then nothing is left open.
      await closeServer(server);
      server.closeAllConnections();
      await web.close();
      await database.close();
    },
  };
}

/** The HTTP server for `handle`, listening on PORT and HOST. */
async function listen(
  config: Config,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  source: WebTierSource,
): Promise<Server> {
  // Short timeouts, checked every second: a client that stalls its headers or body (slowloris)
  // is cut off within seconds instead of holding a connection for Node's default 5 minutes.
  const server = createServer(
    { requestTimeout: 10_000, headersTimeout: 5_000, connectionsCheckingInterval: 1_000 },
    handle,
  );
  server.maxConnections = 10_000;
  server.keepAliveTimeout = 65_000;
  await source.attach?.(server);
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
  return server;
}

function portOf(server: Server, config: Config): number {
  const address = server.address();
  return typeof address === "object" && address ? address.port : config.port;
}

/**
 * In a cluster's worker, answers the primary's gathering of the figures; with one process,
 * the metrics' own listener (METRICS_PORT) when configured (a cluster's primary serves it).
 */
async function serveMetrics(config: Config, metrics: Metrics): Promise<Server | undefined> {
  if (cluster.isWorker) answerPrimary(metrics.registry);
  return config.metricsPort !== undefined && !cluster.isWorker
    ? await listenMetrics(config, () => metrics.registry.metrics(), metrics.registry.contentType)
    : undefined;
}

/** Operators reach the embedded database through the server (server/host/ops-socket.ts). */
async function serveOps(config: Config, database: Database): Promise<Server | undefined> {
  return database.driver === "pglite"
    ? await serveOpsSocket(opsSocketPath(config.dataDir), (argv) =>
        runInServer(argv, { db: database.db, config, database }),
      )
    : undefined;
}

function closeServer(server: Server | undefined): Promise<void> {
  return new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
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
  const config = configOrExit(options.env);
  let host: RunningHost;
  try {
    if (config.workers > 1 && cluster.isPrimary) {
      await runPrimary(config);
      return;
    }
    host = await startHost(config, await options.web?.(config));
  } catch (error) {
    // Refused before listening (the data folder's lock, record 019; a taken port; a secret that
    // is not the database's, record 051): one clear line.
    if (
      error instanceof DataDirLockedError ||
      error instanceof StartError ||
      error instanceof SecretMismatchError
    ) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  stopOnSignals(host);
}

/** The configuration; a bad one ends the process with the message that names it. */
function configOrExit(env: Record<string, string | undefined> | undefined): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

/** SIGTERM or SIGINT closes the host (once) and ends the process. */
function stopOnSignals(host: RunningHost) {
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
