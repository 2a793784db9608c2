// The public data routes (server/backend/feeds/routes.ts) and the web tier's prices
// client (app/prices.server.ts): exact JSON shapes, header checks, the USDT
// fill-in, 405s, upstreams that are broken or unreachable for real (refused
// port, a server that never answers), and the client in-process and over HTTP.
import { createRequestListener } from "@remix-run/node-fetch-server";
import { describe, expect, test } from "vitest";
import { createPricesClient } from "../../app/prices.server.ts";
import { TICKERS } from "../../common/coins.ts";
import { COINGECKO_URL } from "../../server/backend/feeds/crypto-prices.ts";
import { ECB_DAILY_URL } from "../../server/backend/feeds/fx-rates.ts";
import {
  createFeedRoutes,
  loadPricesSnapshot,
  loadRatesSnapshot,
  type FeedRoutes,
  type FeedRoutesOptions,
} from "../../server/backend/feeds/routes.ts";
import snapshotPrices from "../../server/backend/feeds/snapshot-prices.json" with { type: "json" };
import snapshotRates from "../../server/backend/feeds/snapshot-rates.json" with { type: "json" };
import { serveEach } from "../support/serve.ts";
import { measure } from "../support/measure.ts";
import { fixture } from "../fixtures/feeds.ts";

const PLATFORM = "CK";
const APP_URL = "https://wallet.coinkeep.example";
const BASE = "http://backend.test";

/** The coins' names, in the coin table's order (TICKERS). */
const NAMES = ["Bitcoin", "Ethereum", "Cardano", "BNB", "Dogecoin", "Solana", "TRON", "Tether", "XRP"];

const APP_HEADERS = { App_name: PLATFORM, App_url: APP_URL };

/** The recorded ECB day (2025-06-13) as USD multipliers: the snapshot's rates, and the live fixture's. */
const RECORDED_RATES = {
  USD: { current_price: "1" },
  EUR: { current_price: "0.8686587908" },
  GBP: { current_price: "0.738533704" },
  CAD: { current_price: "1.363273106" },
};

function get(pathname: string, headers: Record<string, string> = {}, method = "GET") {
  return new Request(`${BASE}${pathname}`, { method, headers });
}

async function answer(routes: FeedRoutes, request: Request) {
  const response = await routes(request);
  if (!response) throw new Error(`no answer for ${request.url}`);
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
}

/** A stand-in for the internet: the recorded payloads, or whatever a test says. */
function upstream(overrides: { coingecko?: () => Response; ecb?: () => Response } = {}) {
  const seen: string[] = [];
  const fetch: typeof globalThis.fetch = async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    seen.push(url);
    if (url === COINGECKO_URL) {
      return overrides.coingecko?.() ?? new Response(fixture("coingecko-simple-price.json"), { status: 200 });
    }
    if (url === ECB_DAILY_URL) {
      return overrides.ecb?.() ?? new Response(fixture("ecb-eurofxref-daily.xml"), { status: 200 });
    }
    throw new TypeError("fetch failed");
  };
  return { fetch, seen };
}

function routesWith(opts: Partial<FeedRoutesOptions> = {}): FeedRoutes {
  return createFeedRoutes({ offline: false, platform: PLATFORM, ...opts });
}

async function timed(routes: FeedRoutes, request: Request) {
  const { result, ms, stalled } = await measure(() => answer(routes, request));
  return { ...result, ms, stalled };
}

function inProcess(routes: FeedRoutes, seen?: Request[]) {
  return async (request: Request) => {
    seen?.push(request);
    return (
      (await routes(request)) ??
      Response.json({ success: false, code: "not_found", message: "Not found." }, { status: 404 })
    );
  };
}

function client(
  fetch: (request: Request) => Promise<Response>,
  extra: { appName?: string; timeoutMs?: number } = {},
) {
  return createPricesClient({
    baseUrl: `${BASE}/api/`,
    appName: extra.appName ?? PLATFORM,
    appUrl: APP_URL,
    fetch,
    timeoutMs: extra.timeoutMs,
  });
}

const SNAPSHOT_PRICES = TICKERS.map((ticker, i) => ({
  ticker,
  last_price: snapshotPrices.prices[ticker].lastPrice,
  todays_change_perc: snapshotPrices.prices[ticker].changePct,
  currency: { name: NAMES[i], ticker, short_name: ticker.toLowerCase() },
}));

describe("the shipped snapshots", () => {
  test("hold all nine coins (USDT at 1) and the four rates (USD 1), with ISO dates", () => {
    const prices = loadPricesSnapshot();
    expect(Object.keys(prices.prices).toSorted()).toEqual([...TICKERS].toSorted());
    expect(prices.prices.USDT).toEqual({ lastPrice: "1", changePct: "0" });
    expect(new Date(prices.asOf).toISOString()).toBe(prices.asOf);
    const rates = loadRatesSnapshot();
    expect(Object.keys(rates.rates).toSorted()).toEqual(["CAD", "EUR", "GBP", "USD"]);
    expect(rates.rates.USD).toBe("1");
    expect(new Date(rates.asOf).toISOString()).toBe(rates.asOf);
  });

  test("broken snapshots are refused", () => {
    const { BTC: _dropped, ...eight } = snapshotPrices.prices;
    expect(() => loadPricesSnapshot({ ...snapshotPrices, prices: eight })).toThrow(
      "expected object, received undefined",
    );
    expect(() =>
      loadPricesSnapshot({
        ...snapshotPrices,
        prices: { ...snapshotPrices.prices, BTC: { lastPrice: "0", changePct: "0" } },
      }),
    ).toThrow("must be positive");
    expect(() => loadPricesSnapshot({ ...snapshotPrices, asOf: "yesterday" })).toThrow(
      "Invalid ISO datetime",
    );
    expect(() =>
      loadRatesSnapshot({ ...snapshotRates, rates: { ...snapshotRates.rates, USD: "1.1" } }),
    ).toThrow("USD must be 1");
    expect(() =>
      loadRatesSnapshot({ ...snapshotRates, rates: { ...snapshotRates.rates, EUR: "1e-3" } }),
    ).toThrow("must match pattern");
  });
});

describe("GET /api/currencies", () => {
  test("offline: the snapshot, exactly", async () => {
    const routes = routesWith({ offline: true, fetch: upstream().fetch });
    const { status, headers, body } = await answer(routes, get("/api/currencies"));
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(headers.get("cache-control")).toBe("public, max-age=30");
    expect(body).toEqual({
      rates: RECORDED_RATES,
      asOf: "2025-06-13T00:00:00.000Z",
      source: "snapshot",
    });
  });

  test("offline never calls fetch", async () => {
    const { fetch, seen } = upstream();
    const routes = routesWith({ offline: true, fetch });
    await answer(routes, get("/api/currencies"));
    await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(seen).toEqual([]);
  });

  test("live: the ECB day as USD multipliers, needing no App headers", async () => {
    const { fetch, seen } = upstream({
      ecb: () =>
        new Response(
          fixture("ecb-eurofxref-daily.xml").replace("2025-06-13", "2026-11-20").replace("1.1512", "1.25"),
          {
            status: 200,
          },
        ),
    });
    const routes = routesWith({ fetch });
    const { status, body } = await answer(routes, get("/api/currencies"));
    expect(status).toBe(200);
    expect(body).toEqual({
      rates: {
        USD: { current_price: "1" },
        EUR: { current_price: "0.8" },
        GBP: { current_price: "0.68016" },
        CAD: { current_price: "1.25552" },
      },
      asOf: "2026-11-20T00:00:00.000Z",
      source: "live",
    });
    expect(seen).toEqual([ECB_DAILY_URL]);
  });

  test("an ECB error page or a missing rate: the snapshot", async () => {
    for (const ecb of [
      () => new Response(fixture("ecb-error-page.html"), { status: 503 }),
      () => new Response(fixture("ecb-error-page.html"), { status: 200 }),
      () => new Response(fixture("ecb-eurofxref-daily-missing-gbp.xml"), { status: 200 }),
    ]) {
      const routes = routesWith({ fetch: upstream({ ecb }).fetch });
      const { status, body } = await answer(routes, get("/api/currencies"));
      expect(status).toBe(200);
      expect(body).toMatchObject({ source: "snapshot", asOf: "2025-06-13T00:00:00.000Z" });
    }
  });

  test("the ECB URL is an option", async () => {
    const { fetch, seen } = upstream();
    const routes = routesWith({ fetch, ecbUrl: "http://mirror.test/ecb.xml" });
    expect((await answer(routes, get("/api/currencies"))).body).toMatchObject({ source: "snapshot" });
    expect(seen).toEqual(["http://mirror.test/ecb.xml"]);
  });
});

describe("GET /api/crypto-prices/current", () => {
  test("offline: all nine coins from the snapshot, in the coin table's order", async () => {
    const routes = routesWith({ offline: true });
    const { status, headers, body } = await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(status).toBe(200);
    expect(headers.get("cache-control")).toBe("public, max-age=30");
    expect(headers.get("vary")).toBe("App_name, App_url");
    expect(body).toEqual({
      cryptoPrices: SNAPSHOT_PRICES,
      asOf: "2025-06-13T12:00:00.000Z",
      source: "snapshot",
    });
    expect(SNAPSHOT_PRICES[0]).toEqual({
      ticker: "BTC",
      last_price: "105432",
      todays_change_perc: "-2.46",
      currency: { name: "Bitcoin", ticker: "BTC", short_name: "btc" },
    });
  });

  test("live: the recorded CoinGecko answer", async () => {
    const { fetch, seen } = upstream();
    const routes = routesWith({ fetch, now: () => Date.parse("2026-11-21T10:00:00.000Z") });
    const { body } = await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
    const parsed = body as {
      cryptoPrices: { ticker: string; last_price: string; todays_change_perc: string }[];
    };
    expect(body).toMatchObject({ asOf: "2026-11-21T10:00:00.000Z", source: "live" });
    expect(parsed.cryptoPrices.map((entry) => entry.ticker)).toEqual([...TICKERS]);
    expect(parsed.cryptoPrices[0]).toEqual({
      ticker: "BTC",
      last_price: "105432",
      todays_change_perc: "-2.4601386712089415",
      currency: { name: "Bitcoin", ticker: "BTC", short_name: "btc" },
    });
    expect(parsed.cryptoPrices.find((entry) => entry.ticker === "USDT")).toMatchObject({
      last_price: "1.000198",
      todays_change_perc: "0.017251489073617",
    });
    expect(seen).toEqual([COINGECKO_URL]);
  });

  test("USDT missing upstream: price 1, change 0; another missing coin: from the snapshot", async () => {
    const recorded = JSON.parse(fixture("coingecko-simple-price.json")) as Record<string, unknown>;
    delete recorded.tether;
    delete recorded.ethereum;
    recorded.solana = { usd: "145.87" }; // not a number: skipped, so the snapshot's
    const routes = routesWith({ fetch: upstream({ coingecko: () => Response.json(recorded) }).fetch });
    const { body } = await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
    const entries = (body as { cryptoPrices: { ticker: string }[] }).cryptoPrices;
    expect(entries.map((entry) => entry.ticker)).toEqual([...TICKERS]);
    expect(body).toMatchObject({ source: "live" });
    expect(entries.find((entry) => entry.ticker === "USDT")).toEqual({
      ticker: "USDT",
      last_price: "1",
      todays_change_perc: "0",
      currency: { name: "Tether", ticker: "USDT", short_name: "usdt" },
    });
    expect(entries.find((entry) => entry.ticker === "ETH")).toEqual(SNAPSHOT_PRICES[1]);
    expect(entries.find((entry) => entry.ticker === "SOL")).toEqual(SNAPSHOT_PRICES[5]);
    expect(entries.find((entry) => entry.ticker === "BTC")).toMatchObject({ last_price: "105432" });
  });

  test("a rate-limited or broken CoinGecko: the snapshot", async () => {
    for (const coingecko of [
      () => new Response(fixture("coingecko-rate-limited.json"), { status: 429 }),
      () => new Response(fixture("coingecko-rate-limited.json"), { status: 200 }),
      () => new Response("<html>Bad gateway</html>", { status: 200 }),
      () => new Response("{}", { status: 200 }),
    ]) {
      const routes = routesWith({ fetch: upstream({ coingecko }).fetch });
      const { status, body } = await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
      expect(status).toBe(200);
      expect(body).toEqual({
        cryptoPrices: SNAPSHOT_PRICES,
        asOf: "2025-06-13T12:00:00.000Z",
        source: "snapshot",
      });
    }
  });

  test("App_name and App_url are checked, header names in any case", async () => {
    const routes = routesWith({ offline: true });
    const unknown = { success: false, code: "unknown_application", message: "Unknown application." };
    const cases: [Record<string, string>, number][] = [
      [{}, 401],
      [{ App_url: APP_URL }, 401],
      [{ App_name: "XX", App_url: APP_URL }, 401],
      [{ App_name: "ck", App_url: APP_URL }, 401],
      [{ App_name: PLATFORM }, 401],
      [{ App_name: PLATFORM, App_url: "" }, 401],
      [{ App_name: PLATFORM, App_url: "x".repeat(2049) }, 401],
      [{ "app-name": PLATFORM, "app-url": APP_URL }, 401],
      [{ App_name: PLATFORM, App_url: "x".repeat(2048) }, 200],
      [{ app_name: PLATFORM, app_url: APP_URL }, 200],
      [{ APP_NAME: PLATFORM, APP_URL: "anything" }, 200],
    ];
    for (const [headers, expected] of cases) {
      const { status, headers: out, body } = await answer(routes, get("/api/crypto-prices/current", headers));
      expect({ headers, status }).toEqual({ headers, status: expected });
      if (expected === 401) {
        expect(body).toEqual(unknown);
        expect(out.get("cache-control")).toBe("no-store");
      }
    }
  });
});

describe("routing", () => {
  test("paths it does not own answer undefined", async () => {
    const routes = routesWith({ offline: true });
    for (const pathname of [
      "/api/aml-authentication",
      "/api/currencies/",
      "/api/crypto-prices",
      "/api/crypto-prices/current/x",
      "/currencies",
      "/",
    ]) {
      expect(await routes(get(pathname, APP_HEADERS))).toBeUndefined();
    }
  });

  test("a query string does not matter", async () => {
    const routes = routesWith({ offline: true });
    expect((await answer(routes, get("/api/currencies?x=1"))).status).toBe(200);
  });

  test("any method but GET: 405 with Allow: GET", async () => {
    const routes = routesWith({ offline: true });
    for (const pathname of ["/api/currencies", "/api/crypto-prices/current"]) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]) {
        const response = await routes(get(pathname, APP_HEADERS, method));
        expect(response?.status).toBe(405);
        expect(response?.headers.get("allow")).toBe("GET");
        expect(response?.headers.get("content-type")).toBe("application/json; charset=utf-8");
        if (method !== "HEAD")
          expect(await response?.json()).toEqual({
            success: false,
            code: "method_not_allowed",
            message: "Method not allowed.",
          });
      }
    }
  });

  test("an empty platform is refused", () => {
    expect(() => createFeedRoutes({ offline: true, platform: "" })).toThrow("platform");
  });
});

describe("unreachable upstreams, for real", () => {
  const serveOnce = serveEach();
  let requests = 0;
  let attempts = 0;
  /** The real fetch, counted: what the routes tried, whether or not it reached the server. */
  const countedFetch: typeof fetch = (input, init) => {
    attempts += 1;
    return globalThis.fetch(input, init);
  };

  async function silentServer(): Promise<string> {
    requests = 0;
    attempts = 0;
    const { base } = await serveOnce(() => {
      requests += 1; // never answers
    });
    return `${base}/`;
  }

  test("a refused port (127.0.0.1:9): the snapshots, at once", async () => {
    const routes = routesWith({
      coingeckoUrl: "http://127.0.0.1:9/",
      ecbUrl: "http://127.0.0.1:9/",
      timeoutMs: 1_000,
    });
    const prices = await timed(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(prices.status).toBe(200);
    expect(prices.body).toMatchObject({ source: "snapshot", asOf: "2025-06-13T12:00:00.000Z" });
    expect(prices.ms - prices.stalled).toBeLessThan(1_000 + 200);
    const rates = await timed(routes, get("/api/currencies"));
    expect(rates.body).toMatchObject({ source: "snapshot", asOf: "2025-06-13T00:00:00.000Z" });
    expect(rates.ms - rates.stalled).toBeLessThan(1_000 + 200);
  });

  test("a server that never answers: the snapshot within the timeout, then no more waiting", async () => {
    const url = await silentServer();
    const routes = routesWith({ coingeckoUrl: url, ecbUrl: url, timeoutMs: 500, fetch: countedFetch });
    const first = await timed(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(first.body).toMatchObject({ source: "snapshot" });
    expect(first.ms).toBeGreaterThanOrEqual(490);
    expect(first.ms - first.stalled).toBeLessThan(500 + 200);
    expect(attempts).toBe(1);
    expect(requests).toBeLessThanOrEqual(1); // 0 only if the connection itself took over 500 ms
    const reached = requests;
    // Inside the back-off: straight from the snapshot, the network untouched.
    const again = await timed(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(again.body).toMatchObject({ source: "snapshot" });
    expect(again.ms - again.stalled).toBeLessThan(100);
    expect(attempts).toBe(1);
    expect(requests).toBe(reached);
    const rates = await timed(routes, get("/api/currencies"));
    expect(rates.body).toMatchObject({ source: "snapshot" });
    expect(rates.ms - rates.stalled).toBeLessThan(500 + 200);
  });

  test("the default timeout is 3 s", async () => {
    const url = await silentServer();
    const routes = routesWith({ coingeckoUrl: url });
    const first = await timed(routes, get("/api/crypto-prices/current", APP_HEADERS));
    expect(first.body).toMatchObject({ source: "snapshot" });
    expect(first.ms).toBeGreaterThanOrEqual(2_990);
    expect(first.ms - first.stalled).toBeLessThan(3_000 + 200);
  });

  test("concurrent requests during an outage share one wait", async () => {
    const url = await silentServer();
    const routes = routesWith({ coingeckoUrl: url, timeoutMs: 300, fetch: countedFetch });
    const {
      result: all,
      ms,
      stalled,
    } = await measure(() =>
      Promise.all(
        Array.from({ length: 10 }, () => answer(routes, get("/api/crypto-prices/current", APP_HEADERS))),
      ),
    );
    expect(ms - stalled).toBeLessThan(300 + 200);
    expect(all.every((one) => (one.body as { source: string }).source === "snapshot")).toBe(true);
    expect(attempts).toBe(1);
    expect(requests).toBeLessThanOrEqual(1);
  });
});

describe("the prices client", () => {
  test("currentPrices: the routes' answer, with App_name and App_url sent", async () => {
    const seen: Request[] = [];
    const prices = client(inProcess(routesWith({ offline: true }), seen));
    expect(await prices.currentPrices()).toEqual({
      ok: true,
      data: {
        cryptoPrices: SNAPSHOT_PRICES,
        asOf: "2025-06-13T12:00:00.000Z",
        source: "snapshot",
        sparklines: {},
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe(`${BASE}/api/crypto-prices/current`);
    expect(seen[0]?.method).toBe("GET");
    expect(seen[0]?.headers.get("app_name")).toBe(PLATFORM);
    expect(seen[0]?.headers.get("app_url")).toBe(APP_URL);
  });

  test("currencies: the routes' answer", async () => {
    const prices = client(inProcess(routesWith({ fetch: upstream().fetch })));
    expect(await prices.currencies()).toEqual({
      ok: true,
      data: {
        rates: RECORDED_RATES,
        asOf: "2025-06-13T00:00:00.000Z",
        source: "live",
      },
    });
  });

  test("a wrong App_name: the service's 401 message", async () => {
    const prices = client(inProcess(routesWith({ offline: true })), { appName: "XX" });
    expect(await prices.currentPrices()).toEqual({ ok: false, message: "Unknown application.", status: 401 });
  });

  test("an unknown path (another service): a failure, never a throw", async () => {
    const prices = createPricesClient({
      baseUrl: `${BASE}/elsewhere`,
      appName: PLATFORM,
      appUrl: APP_URL,
      fetch: inProcess(routesWith({ offline: true })),
    });
    expect(await prices.currencies()).toEqual({ ok: false, message: "Not found.", status: 404 });
  });

  test("fills in USDT and drops entries that do not check out", async () => {
    const body = {
      cryptoPrices: [
        { ...SNAPSHOT_PRICES[0], last_price: "NaN" },
        SNAPSHOT_PRICES[1],
        { ...SNAPSHOT_PRICES[2], last_price: 0.64 },
        { ticker: "SHIB", last_price: "0.00001", todays_change_perc: "0", currency: {} },
      ],
      asOf: "2025-06-13T12:00:00.000Z",
      source: "live",
    };
    const prices = client(async () => Response.json(body));
    expect(await prices.currentPrices()).toEqual({
      ok: true,
      data: {
        cryptoPrices: [
          SNAPSHOT_PRICES[1],
          {
            ticker: "USDT",
            last_price: "1",
            todays_change_perc: "0",
            currency: { name: "Tether", ticker: "USDT", short_name: "usdt" },
          },
        ],
        asOf: "2025-06-13T12:00:00.000Z",
        source: "live",
        sparklines: {},
      },
    });
  });

  test("a sparkline_7d (record 023) comes back apart; a bad one is dropped and its price kept", async () => {
    const body = {
      cryptoPrices: [
        { ...SNAPSHOT_PRICES[0], sparkline_7d: [1, 2.5, 3] },
        { ...SNAPSHOT_PRICES[1], sparkline_7d: ["1", 2] },
        { ...SNAPSHOT_PRICES[2], sparkline_7d: [1] },
        { ...SNAPSHOT_PRICES[3], sparkline_7d: null, extra: { anything: true } },
      ],
      asOf: "2025-06-13T12:00:00.000Z",
      source: "live",
    };
    const result = await client(async () => Response.json(body)).currentPrices();
    if (!result.ok) throw new Error(result.message);
    expect(result.data.cryptoPrices.map((entry) => entry.ticker)).toEqual([
      "BTC",
      "ETH",
      "ADA",
      "BNB",
      "USDT",
    ]);
    expect(result.data.cryptoPrices[0]).toEqual(SNAPSHOT_PRICES[0]);
    expect(result.data.sparklines).toEqual({ BTC: [1, 2.5, 3] });
  });

  test("from CoinGecko's markets answer: the spec's fields as before, plus each coin's sparkline_7d", async () => {
    const routes = routesWith({
      fetch: upstream({ coingecko: () => new Response(fixture("coingecko-markets.json")) }).fetch,
    });
    const { body } = await answer(routes, get("/api/crypto-prices/current", APP_HEADERS));
    const entries = (body as { cryptoPrices: Record<string, unknown>[] }).cryptoPrices;
    expect(entries[0]).toEqual({
      ticker: "BTC",
      last_price: "105432",
      todays_change_perc: "-2.46014",
      currency: { name: "Bitcoin", ticker: "BTC", short_name: "btc" },
      sparkline_7d: [108101.5, 107002.25, 109950, 106300.75, 105432],
    });
    // No sparkline in the answer (TRX) or a null one (USDT): no field.
    expect(entries.filter((entry) => !("sparkline_7d" in entry)).map((entry) => entry.ticker)).toEqual([
      "TRX",
      "USDT",
    ]);
    const prices = await client(inProcess(routes)).currentPrices();
    if (!prices.ok) throw new Error(prices.message);
    expect(Object.keys(prices.data.sparklines)).toEqual(["BTC", "ETH", "ADA", "BNB", "DOGE", "SOL", "XRP"]);
    expect(prices.data.sparklines.ADA).toEqual([0.701, 0.688, 0.641782]);
  });

  test("unexpected bodies, 5xx and non-JSON answers are failures", async () => {
    const cases: [Response, string][] = [
      [
        Response.json({ rates: { USD: { current_price: 1 } } }),
        "The price service answered with an unexpected body.",
      ],
      [
        Response.json(
          { success: false, code: "internal", message: "Internal server error." },
          { status: 500 },
        ),
        "The price service failed (status 500).",
      ],
      [
        new Response("<html>502</html>", { status: 502 }),
        "The price service answered with a non-JSON body (status 502).",
      ],
      [Response.json({ error: "nope" }, { status: 403 }), "The price service answered status 403."],
    ];
    for (const [response, message] of cases) {
      const result = await client(async () => response.clone()).currencies();
      expect(result).toMatchObject({ ok: false, message });
    }
    expect(await client(async () => Response.json({ cryptoPrices: "x" })).currentPrices()).toMatchObject({
      ok: false,
      message: "The price service answered with an unexpected body.",
    });
  });

  test("a service that never answers: a failure after the timeout", async () => {
    const prices = client(() => new Promise<Response>(() => {}), { timeoutMs: 200 });
    const { result, ms, stalled } = await measure(() => prices.currentPrices());
    expect(result).toEqual({ ok: false, message: "The price service did not answer in time." });
    expect(ms).toBeGreaterThanOrEqual(190);
    expect(ms - stalled).toBeLessThan(200 + 200);
  });

  test("a refused port: a failure, never a throw", async () => {
    const prices = createPricesClient({
      baseUrl: "http://127.0.0.1:9/api",
      appName: PLATFORM,
      appUrl: APP_URL,
    });
    expect(await prices.currencies()).toEqual({
      ok: false,
      message: "The price service could not be reached (TypeError).",
    });
  });

  describe("over HTTP", () => {
    const serveOnce = serveEach();

    test("the App_ headers survive a real HTTP hop", async () => {
      const routes = routesWith({ offline: true });
      const { port } = await serveOnce(createRequestListener(inProcess(routes)));
      const prices = createPricesClient({
        baseUrl: `http://127.0.0.1:${port}/api`,
        appName: PLATFORM,
        appUrl: APP_URL,
      });
      const current = await prices.currentPrices();
      expect(current.ok && current.data.cryptoPrices).toEqual(SNAPSHOT_PRICES);
      expect((await prices.currencies()).ok).toBe(true);
      const stranger = createPricesClient({
        baseUrl: `http://127.0.0.1:${port}/api`,
        appName: "XX",
        appUrl: APP_URL,
      });
      expect(await stranger.currentPrices()).toEqual({
        ok: false,
        message: "Unknown application.",
        status: 401,
      });
    });
  });
});
