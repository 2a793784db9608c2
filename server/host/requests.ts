// Every request's way through the process: an id, the security headers (record 014), one
// log line and one metric when it has been answered (records 015, 021); the probes and the
// token-guarded scrape before anything else; then, inside the request's log context and
// its edge facts, the cross-site refusal, the API under /api, the assets, and the web tier.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { log, runWithRequest } from "../../common/log.ts";
import { webTierCheck } from "../backend/api/http.ts";
import type { Database } from "../backend/db/index.ts";
import type { Config } from "../config.ts";
import type { BenchStats } from "./bench-stats.ts";
import {
  createProxyTrust,
  inspect,
  isCrossSite,
  ownOrigin,
  refuse,
  runWithFacts,
  setSecurityHeaders,
  webBodyRefusal,
  type RequestFacts,
} from "./edge.ts";
import { answerScrape, bearerMatches, routeLabel, type Metrics } from "./metrics.ts";
import { answerProbe, readiness } from "./probes.ts";
import type { WebTier } from "./web-tier.ts";

export interface RequestParts {
  /** For the readiness probe. */
  database: Database;
  metrics: Metrics;
  /** Answers under /api. */
  api: RequestListener;
  web: WebTier;
  /** The bench's figures (BENCH_STATS=1 only; issue 29). */
  benchStats?: BenchStats | undefined;
}

/** The process's one request handler. */
export function handleRequests(config: Config, parts: RequestParts) {
  // Whose X-Forwarded-For / X-Forwarded-Proto is believed (TRUST_PROXY, record 014).
  const proxyTrust = createProxyTrust(config.trustProxy);
  // Which web tiers outside this process forward the visitor's address (WEB_TIER_HOSTS + BACKEND_TOKEN, record 026).
  const webTier = webTierCheck(
    config.backendToken ? { hosts: config.webTierHosts, token: config.backendToken } : undefined,
  );
  const { metrics, web, benchStats } = parts;

  return function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    const requestId = randomUUID();
    // Only the path is ever logged: /fast-login carries credentials in its query.
    const pathname = (req.url ?? "/").split("?")[0] ?? "/";
    res.setHeader("X-Request-Id", requestId);
    // CSP with this request's nonce, HSTS, nosniff, … on every response (record 014).
    const facts = inspect(req, proxyTrust, webTier);
    setSecurityHeaders(res, facts, config.env === "production");
    if (web.source.devCsp) res.setHeader("Content-Security-Policy", web.source.devCsp(facts.nonce));
    res.on("finish", () => {
      // An event stream finishes when the page closes it: not a request's time.
      if (benchStats && !String(res.getHeader("Content-Type") ?? "").startsWith("text/event-stream")) {
        benchStats.request(performance.now() - started);
      }
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
    if (answeredForOperators(config, parts, req, res, pathname)) return;
    // Everything the request starts (web tier, in-process API) logs with its id.
    runWithRequest({ requestId }, () => route(config, parts, req, res, pathname, facts));
  };
}

/**
 * Probes and the token-guarded scrape: before the web tier, no session, no body (record 021).
 * True when the request was one of them.
 */
function answeredForOperators(
  config: Config,
  { database, metrics }: RequestParts,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (pathname === "/healthz") {
    answerProbe(res, 200, "ok");
    return true;
  }
  if (pathname === "/readyz") {
    void readiness(database).then((ready) =>
      answerProbe(res, ready.ready ? 200 : 503, ready.ready ? "ready" : `not ready: ${ready.reason}`),
    );
    return true;
  }
  if (pathname === "/metrics" && config.metricsToken) {
    if (!bearerMatches(req, config.metricsToken)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
      answerProbe(res, 401, "unauthorized");
      return true;
    }
    void answerScrape(res, () => metrics.registry.metrics(), metrics.registry.contentType);
    return true;
  }
  return false;
}

/** The cross-site refusal, then the API, the assets or the web tier, with the request's edge facts. */
function route(
  config: Config,
  { api, web }: RequestParts,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  facts: RequestFacts,
) {
  const isApi = pathname === "/api" || pathname.startsWith("/api/");
  // Another site's form post or API call never reaches a handler (record 014).
  if (isCrossSite(req, () => ownOrigin(req, facts, config.publicUrl))) return refuse(res, 403, isApi);
  runWithFacts(facts, () => {
    if (isApi) return api(req, res);
    web.source.assets(req, res, pathname, () => {
      if (pathname === "/favicon.ico") {
        res.statusCode = 404;
        return void res.end();
      }
      // The API bounds its own bodies (413); the web tier's are judged here, unread.
      const tooLarge = webBodyRefusal(req);
      if (tooLarge !== null) return refuse(res, tooLarge, false);
      web.listener(req, res);
    });
  });
}

/** The caller's request id, only in the form our hosts issue (a UUID), so nothing else reaches the log. */
function forwardedRequestId(req: IncomingMessage): string | undefined {
  const value = req.headers["x-request-id"];
  return typeof value === "string" &&
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u.test(value)
    ? value
    : undefined;
}
