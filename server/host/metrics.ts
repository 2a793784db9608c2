// What operators watch (record 021): Prometheus metrics with prom-client, one
// registry per server process. Not public: served on METRICS_PORT (its own
// listener, on METRICS_HOST) and/or on /metrics of the main port to a bearer of
// METRICS_TOKEN; with neither, /metrics is an unknown path like any other.
// With WORKERS > 1 the primary serves METRICS_PORT and gathers the figures of
// every worker that is serving, over node:cluster's channel, summed with
// prom-client's AggregatorRegistry.aggregate.
import type { Worker } from "node:cluster";
import { timingSafeEqual, createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import client from "prom-client";
import { sql } from "drizzle-orm";
import { COINS, isTicker } from "../../common/coins.ts";
import { log } from "../../common/log.ts";
import type { Database } from "../backend/db/index.ts";
import { outboxCounts } from "../backend/mail/outbox.ts";
import { listCursors } from "../backend/domain/chain-watch.ts";
import type { Config } from "../config.ts";
import { answerProbe } from "./probes.ts";

export interface MetricsSources {
  database: Database;
  /** Event streams open in this process (record 033). */
  openStreams?: () => number;
}

interface HoldRow {
  coin: string;
  n: number | string;
  units: string;
}

export interface Metrics {
  registry: client.Registry;
  /** Counts a finished request: its route (a bounded label), method, status and duration. */
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** Seconds: from a static file to a send's Confirm under load. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10];

/** The routes a label may name; anything else is "other", so labels cannot grow with what visitors ask for. */
const PAGE_ROUTES: ReadonlyArray<[RegExp, string]> = [
  [/^\/$/u, "/"],
  [
    /^\/(login|create-wallet|restore-wallet|how-it-works|cookies|terms-and-conditions|privacy-policy|about-us|contact|fast-login|home|history|notifications|security|support|currency|logout|events)(\.data)?$/u,
    "",
  ],
  [/^\/unread-count(\.data)?$/u, "/unread-count"],
  [/^\/wallet\/[^/]+(\.data)?$/u, "/wallet/:ticker"],
  [/^\/api\/[a-z-]+$/u, ""],
  [/^\/(assets|coins|fonts)\//u, "static"],
  [/^\/(healthz|readyz|metrics)$/u, ""],
];

/** The route label of a path: a page or API call by its pattern, "static", or "other". */
export function routeLabel(pathname: string): string {
  for (const [pattern, label] of PAGE_ROUTES) {
    const match = pattern.exec(pathname);
    if (!match) continue;
    if (label !== "") return label;
    return match[1] !== undefined && !pathname.startsWith("/api/") ? `/${match[1]}` : pathname;
  }
  return "other";
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new client.Registry();
  // Process CPU, memory, file descriptors, GC and the event loop's delay (nodejs_eventloop_lag_*).
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

  const requests = new client.Counter({
    name: "coinkeep_http_requests_total",
    help: "Requests answered, by route (pattern), method and status.",
    labelNames: ["route", "method", "status"],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: "coinkeep_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer's end, by route (pattern) and method.",
    labelNames: ["route", "method"],
    buckets: BUCKETS,
    registers: [registry],
  });
  registry.registerMetric(
    new client.Gauge({
      name: "coinkeep_event_streams_open",
      help: "Live-event streams (GET /events) open (record 033).",
      registers: [],
      collect() {
        this.set(sources.openStreams?.() ?? 0);
      },
    }),
  );
  const pool = sources.database.poolStats;
  if (pool) {
    registry.registerMetric(
      new client.Gauge({
        name: "coinkeep_db_pool_connections",
        help: "Database pool connections: total open, idle, and requests waiting for one.",
        labelNames: ["state"],
        registers: [],
        collect() {
          const stats = pool();
          this.set({ state: "total" }, stats.total);
          this.set({ state: "idle" }, stats.idle);
          this.set({ state: "waiting" }, stats.waiting);
        },
      }),
    );
  }
  const db = sources.database.db;
  // Read from the database at scrape time: the same in every process, so a cluster takes one.
  registry.registerMetric(
    new client.Gauge({
      name: "coinkeep_sends",
      help: "Sends by status (pending, Confirmed, Declined).",
      labelNames: ["status"],
      aggregator: "first",
      registers: [],
      async collect() {
        const rows = rowsOf<{ status: string; n: number | string }>(
          await db.execute(sql`SELECT status, count(*)::int AS n FROM withdrawals GROUP BY status`),
        );
        for (const status of ["pending", "Confirmed", "Declined"]) this.set({ status }, 0);
        for (const row of rows) this.set({ status: row.status }, Number(row.n));
      },
    }),
  );
  // The e-mail outbox (record 049): mails waiting, by whether their last attempt failed.
  registry.registerMetric(
    new client.Gauge({
      name: "coinkeep_mail_outbox",
      help: "E-mails waiting in the outbox: state=queued (all waiting) and state=failing (their last attempt failed).",
      labelNames: ["state"],
      aggregator: "first",
      registers: [],
      async collect() {
        const counts = await outboxCounts(db);
        this.set({ state: "queued" }, counts.queued);
        this.set({ state: "failing" }, counts.failing);
      },
    }),
  );
  // The chain watchers (issue 30, record 053): per network, the head last seen, the cursor, the
  // lag in blocks between them, and whether the last step failed (its words: ops chains).
  registry.registerMetric(
    new client.Gauge({
      name: "coinkeep_chain_blocks",
      help: "Chain watchers by network: figure=head (the chain's head last seen), cursor (the last block read and recorded), lag (head - cursor), failing (1 when the last step failed; ops chains says why).",
      labelNames: ["network", "figure"],
      aggregator: "first",
      registers: [],
      async collect() {
        for (const c of await listCursors(db)) {
          const head = c.head ?? c.blockNumber;
          this.set({ network: c.network, figure: "head" }, head);
          this.set({ network: c.network, figure: "cursor" }, c.blockNumber);
          this.set({ network: c.network, figure: "lag" }, Math.max(head - c.blockNumber, 0));
          this.set({ network: c.network, figure: "failing" }, c.lastError === null ? 0 : 1);
        }
      },
    }),
  );
  // Both hold gauges share one query per scrape: a scrape collects every metric at once, so the
  // second finds the first's read under way. Nothing is kept once it settles (a time-based cache
  // let a scrape right after a send show the send but not its hold).
  let holdsRead: Promise<HoldRow[]> | undefined;
  const holds = (): Promise<HoldRow[]> => {
    holdsRead ??= db
      .execute(
        sql`SELECT w.coin, count(*)::int AS n, sum(x.amount)::text AS units
            FROM withdrawals x JOIN wallets w ON w.id = x.wallet_id
            WHERE x.status = 'pending' GROUP BY w.coin`,
      )
      .then((result) => rowsOf<HoldRow>(result))
      .finally(() => {
        holdsRead = undefined;
      });
    return holdsRead;
  };
  /** A gauge by coin over the held sends: every coin at 0, then `value` of each coin with holds (if any). */
  const holdsGauge = (name: string, help: string, value: (row: HoldRow) => number | undefined) =>
    registry.registerMetric(
      new client.Gauge({
        name,
        help,
        labelNames: ["coin"],
        aggregator: "first",
        registers: [],
        async collect() {
          const rows = await holds();
          for (const ticker of Object.keys(COINS)) this.set({ coin: ticker }, 0);
          for (const row of rows) {
            const v = value(row);
            if (v !== undefined) this.set({ coin: row.coin }, v);
          }
        },
      }),
    );
  holdsGauge(
    "coinkeep_ledger_holds_outstanding",
    "Sends held in the ledger awaiting an operator's decision, by coin.",
    (row) => Number(row.n),
  );
  holdsGauge(
    "coinkeep_ledger_holds_outstanding_coins",
    "The amount those held sends add up to, in whole coins, by coin. For graphs and alerts: a float, not an accounting figure (the ledger keeps exact base units).",
    (row) => (isTicker(row.coin) ? coinsOf(row.units, COINS[row.coin].decimals) : undefined),
  );

  return {
    registry,
    observe(route, method, status, seconds) {
      const m = /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)$/u.test(method) ? method : "other";
      requests.inc({ route, method: m, status: String(status) });
      duration.observe({ route, method: m }, seconds);
    },
  };
}

function rowsOf<T>(result: unknown): T[] {
  // node-postgres answers { rows }, PGlite's drizzle driver the same; guard either way.
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/** Base units as a number of whole coins (for a gauge; precision is not the point). */
function coinsOf(units: string, decimals: number): number {
  const padded = units.padStart(decimals + 1, "0");
  return Number(
    `${padded.slice(0, padded.length - decimals)}.${padded.slice(padded.length - decimals) || "0"}`,
  );
}

/** A constant-time check of `Authorization: Bearer <token>`. */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const given = header.startsWith("Bearer ") ? header.slice(7) : "";
  // Hashing first: equal lengths for timingSafeEqual, whatever was sent.
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(token).digest();
  return given.length > 0 && timingSafeEqual(a, b);
}

/** Answers a scrape with the registry's text (or, in a cluster's primary, every worker's together). */
export async function answerScrape(res: ServerResponse, text: () => Promise<string>, contentType: string) {
  try {
    const body = await text();
    res.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" });
    res.end(body);
  } catch {
    res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
    res.end("metrics unavailable\n");
  }
}

const ASK = "coinkeep:metrics";
const ANSWER = "coinkeep:metrics-answer";
const SERVING = "coinkeep:serving";

type MetricsJson = Awaited<ReturnType<client.Registry["getMetricsAsJSON"]>>;

/**
 * In a worker: answers the primary's requests for this process's figures, and
 * tells the primary once it serves (call after the server listens).
 */
export function answerPrimary(registry: client.Registry) {
  process.on("message", (message: { type?: unknown; id?: unknown }) => {
    if (message?.type !== ASK) return;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id: message.id, metrics }),
      () => process.send?.({ type: ANSWER, id: message.id, error: true }),
    );
  });
  process.send?.({ type: SERVING });
}

/**
 * In the primary: every serving worker's figures together. A worker counts from
 * the moment it says it serves (before that it has answered no request, so
 * leaving it out loses nothing; asking it would wait for a process that is still
 * loading). A serving worker that does not answer within 5 s fails the scrape:
 * a partial sum would look to Prometheus like a counter reset.
 */
export function gatherWorkers(cluster: {
  on(event: "message", listener: (worker: Worker, message: unknown) => void): unknown;
  on(event: "exit", listener: (worker: Worker) => void): unknown;
}): () => Promise<string> {
  const serving = new Map<number, Worker>();
  const waiting = new Map<number, (answer: { metrics?: MetricsJson; error?: boolean }) => void>();
  let next = 0;
  cluster.on("message", (worker, raw) => {
    const message = raw as { type?: unknown; id?: unknown; metrics?: MetricsJson; error?: boolean };
    if (message?.type === SERVING) serving.set(worker.id, worker);
    else if (message?.type === ANSWER && typeof message.id === "number") waiting.get(message.id)?.(message);
  });
  cluster.on("exit", (worker) => serving.delete(worker.id));

  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const asked = [...serving.values()].filter((worker) => worker.isConnected());
      const answers: MetricsJson[] = [];
      let pending = asked.length;
      const finish = (error?: Error) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (error) reject(error);
        else resolve(client.AggregatorRegistry.aggregate(answers).metrics());
      };
      const timer = setTimeout(() => finish(new Error("a worker did not answer")), 5000);
      waiting.set(id, (answer) => {
        if (answer.error || !answer.metrics) return finish(new Error("a worker could not collect"));
        answers.push(answer.metrics);
        if (--pending === 0) finish();
      });
      if (pending === 0) return finish();
      for (const worker of asked) worker.send({ type: ASK, id });
    });
}

/** The metrics' own listener on METRICS_HOST:METRICS_PORT: GET /metrics, nothing else. */
export async function listenMetrics(
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

export { client as promClient };
