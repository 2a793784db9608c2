// More than one server process (WORKERS > 1, PostgreSQL only; records 018, 019): the
// primary checks that the port is free and keeps it marked as its own, applies the
// migrations once, and starts, replaces and stops the workers, each of which runs the host
// (host.ts). Nothing here serves a request.
import cluster from "node:cluster";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import { log } from "../../common/log.ts";
import { openDatabase } from "../backend/db/index.ts";
import { checkSecrets } from "../backend/db/secret-checks.ts";
import { sharedSecrets, type Config } from "../config.ts";
import { relayBenchStats } from "./bench-stats.ts";
import { gatherWorkers, listenMetrics, promClient } from "./metrics.ts";

/**
 * With WORKERS > 1 on Linux each worker listens on a socket of its own on the
 * shared port (SO_REUSEPORT) and the kernel spreads new connections over the
 * living ones (record 019). Elsewhere the workers share node:cluster's handle.
 */
export const ownSocketPerWorker = process.platform === "linux";

/**
 * WORKERS > 1 (PostgreSQL only): this process checks that the port is free and
 * keeps it marked as its own, applies the migrations once, then starts that
 * many server processes sharing the port (on Linux each with a socket of its
 * own, record 019), starts another when one dies, and stops them all on
 * SIGTERM or SIGINT. Sessions, rate limits and the ledger live in the
 * database, so any process can answer any request (record 018).
 */
export async function runPrimary(config: Config) {
  let port = config.port;
  if (ownSocketPerWorker) {
    // Sockets with SO_REUSEPORT would let a second server of the same user join the port and
    // take a share of its connections; so the port must be free, and it stays ours.
    port = await portIsFree(config.host, config.port);
    await holdPort(port);
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // Refused here, once, rather than by each worker, which would be started again and again (record 051).
  try {
    await checkSecrets(database.db, sharedSecrets(config));
  } finally {
    await database.close();
  }
  let stopping = false;
  const fork = () => cluster.fork({ PORT: String(port) });
  // The workers' metrics, gathered on METRICS_PORT (record 021).
  if (config.metricsPort !== undefined) {
    await listenMetrics(config, gatherWorkers(cluster), promClient.register.contentType);
  }
  // The bench's figures of every worker (BENCH_STATS=1 only; server/host/bench-stats.ts).
  if (config.benchStats) relayBenchStats();
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

export class StartError extends Error {}

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
