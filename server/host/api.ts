// /api in this process: the prices service (unless PRICES_URL points elsewhere) and the
// backend (unless BACKEND_URL does), each built from the configuration; the backend's own
// jobs are started here and stopped with the host (server/backend/jobs.ts, record 045).
import type { RequestListener } from "node:http";
import {
  createRequestListener as createFetchListener,
  type ClientAddress,
} from "@remix-run/node-fetch-server";
import type { PricesServices } from "../../common/contract/prices.ts";
import { fixedUsdPrice } from "../../common/contract/amounts.ts";
import { refusal } from "../../common/contract/refusals.ts";
import { createBackend, type Backend } from "../backend/api/handler.ts";
import { refusalResponse } from "../backend/api/http.ts";
import type { Database } from "../backend/db/index.ts";
import { createFeedRoutes, createMarketData } from "../backend/feeds/routes.ts";
import type { EcbDaily } from "../backend/feeds/fx-rates.ts";
import { recordRateDays } from "../backend/domain/fx-history.ts";
import { maintainDatabase } from "../backend/jobs.ts";
import { DEFAULT_RATE_LIMITS } from "../backend/domain/rate-limits.ts";
import type { Config } from "../config.ts";
import { requestFacts } from "./edge.ts";
import { holdClock } from "./test-clock.ts";

export interface Api {
  /** The backend, when it runs in this process. */
  backend: Backend | undefined;
  /** The prices service's answers, when it runs in this process. */
  prices: PricesServices | undefined;
  /** Answers a request under /api. */
  listener: RequestListener;
  /** Stops the backend's jobs (or this process's vacuuming of its own embedded database). */
  stop(): Promise<void>;
}

/**
 * Builds the prices service and the backend and starts the backend's jobs: issuing's
 * catch-up is done when this resolves, so nothing is served before it.
 */
export async function mountApi(config: Config, database: Database): Promise<Api> {
  // Prices and rates, cached: served by the feed routes and used by the API to price sends.
  const market = createMarketData({
    offline: config.feedsOffline,
    ...(config.coingeckoUrl ? { coingeckoUrl: config.coingeckoUrl } : {}),
    ...(config.ecbUrl ? { ecbUrl: config.ecbUrl } : {}),
    // Each fetched reference day is kept for statements (record 050), where the backend's
    // database is: not in a web tier fronting a remote backend.
    ...(config.backendUrl
      ? {}
      : {
          recordRates: async (daily: EcbDaily) => {
            await recordRateDays(database.db, [{ day: daily.date, rates: daily.rates }], "ECB");
          },
        }),
  });

  const backend = config.backendUrl
    ? undefined
    : createBackend({
        db: database.db,
        platform: config.platform,
        backendSecret: config.backendSecret,
        maxBodyBytes: config.maxBodyBytes,
        rateLimits:
          config.rateLimits === "off"
            ? "off"
            : {
                ...DEFAULT_RATE_LIMITS,
                ipFailures: { ...DEFAULT_RATE_LIMITS.ipFailures, limit: config.ipFailureLimit },
              },
        usdtNetwork: config.usdtNetwork,
        chains: {
          settings: config.chains,
          confirmations: config.confirmations,
          holdLock: (key) => database.holdLock(key),
        },
        custody: { keys: config.accountKeys, poolLowWater: config.poolLowWater },
        holdClock: holdClock(config.testClockFile),
        allowlistHoldHours: config.allowlistHoldHours,
        maintain: database.maintain,
        mail: {
          smtp: config.smtp,
          from: config.mailFrom,
          publicUrl: config.publicUrl ?? `http://${config.host}:${config.port}`,
          product: "Coinkeep",
        },
        // Spec section 9: the USDT price is fixed at 1.
        usdPrice: async (coin) => fixedUsdPrice(coin) ?? (await market.quote(coin)).lastPrice,
      });

  // The backend's own jobs: issuing's catch-up (done before serving), old sender addresses
  // cleared daily, the embedded database vacuumed hourly. A process fronting a remote backend
  // still keeps its own embedded database (web sessions) vacuumed.
  if (backend) await backend.start();
  const upkeep = backend ?? (database.maintain ? maintainDatabase(database.maintain) : undefined);

  // The prices service runs in-process unless PRICES_URL points elsewhere.
  const feeds = config.pricesUrl
    ? undefined
    : createFeedRoutes({ offline: config.feedsOffline, platform: config.platform, market });

  // The public data routes first, then the accounts and wallets API.
  // Both parameters are declared so the listener hands over the connection's
  // address (it passes it only to handlers of two parameters); the API records
  // it as the sender of support messages (call 12).
  // Behind a trusted proxy the connection is the client it names (record 014).
  const answer = async (request: Request, client: ClientAddress) =>
    (feeds ? await feeds(request) : undefined) ??
    (backend
      ? await backend.handler(request, requestFacts()?.sender ?? client)
      : refusalResponse(refusal("not_found")));

  return {
    backend,
    prices: feeds?.services,
    listener: createFetchListener(answer),
    stop: async () => await upkeep?.stop(),
  };
}
