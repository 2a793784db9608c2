// What operators watch (record 021): the health probes and the Prometheus
// metrics, over real hosts on both databases, scraped and parsed as
// Prometheus would; the token and the separate port; a cluster's gathering.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { openTempPostgres, type OpenedDatabase } from "./helpers.ts";
import { raw, rawCall } from "../security/support/http.ts";
import {
  TEST_SECRETS,
  built,
  freePort,
  spawnHost,
  startHost,
  type HostProcess,
  type RunningHost,
} from "../../scripts/host.ts";
import { describeEachHost, processEnv } from "./host-suite.ts";

const TOKEN = "metrics-token-0123456789abcdefghijklmnop";
const adminUrl = process.env.TEST_DATABASE_URL;

/** The samples of a Prometheus text exposition: name{labels} → value. */
function parseScrape(text: string): { types: Map<string, string>; samples: Map<string, number> } {
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/u.exec(line);
    if (type) types.set(type[1] ?? "", type[2] ?? "");
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { types, samples };
}

async function api(port: number, call: string, body: Record<string, unknown>) {
  const answer = await rawCall(port, `/${call}`, body);
  return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> };
}

describe("configuration", () => {
  test("METRICS_TOKEN of 32+ visible characters; METRICS_PORT not PORT; a cluster's token needs the port", () => {
    expect(loadConfig({ ...TEST_SECRETS, METRICS_TOKEN: TOKEN, METRICS_PORT: "9464" })).toMatchObject({
      metricsToken: TOKEN,
      metricsPort: 9464,
      metricsHost: "127.0.0.1",
    });
    expect(loadConfig({ ...TEST_SECRETS }).metricsToken).toBeUndefined();
    expect(() => loadConfig({ ...TEST_SECRETS, METRICS_TOKEN: "short" })).toThrow(
      /METRICS_TOKEN: must be at least 32 characters/u,
    );
    expect(() => loadConfig({ ...TEST_SECRETS, METRICS_TOKEN: `${TOKEN} x` })).toThrow(ConfigError);
    expect(() => loadConfig({ ...TEST_SECRETS, PORT: "3000", METRICS_PORT: "3000" })).toThrow(
      /METRICS_PORT: must differ from PORT/u,
    );
    expect(() =>
      loadConfig({
        ...TEST_SECRETS,
        WORKERS: "2",
        DATABASE_URL: "postgres://x@127.0.0.1/y",
        METRICS_TOKEN: TOKEN,
      }),
    ).toThrow(/METRICS_TOKEN: with WORKERS above 1 set METRICS_PORT too/u);
  });
});

/** The metrics port of the host of the describe running now (set as its host starts). */
let hostMetricsPort: number;

describeEachHost(
  "probes and metrics ($name)",
  async () => {
    hostMetricsPort = await freePort();
    return { RATE_LIMITS: "off", METRICS_TOKEN: TOKEN, METRICS_PORT: String(hostMetricsPort) };
  },
  (each) => {
    const { driver } = each;
    let host: RunningHost;
    let bare: RunningHost;
    beforeAll(async () => {
      host = each.host;
      bare = await startHost({ env: { RATE_LIMITS: "off" } });
    }, 120_000);
    afterAll(async () => {
      await bare?.close();
    });

    test("/healthz and /readyz answer 200, not cached; no session or CSRF needed", async () => {
      for (const [probe, text] of [
        ["/healthz", "ok\n"],
        ["/readyz", "ready\n"],
      ] as const) {
        const answer = await raw(host.port, { path: probe });
        expect([probe, answer.status, answer.text]).toEqual([probe, 200, text]);
        expect(answer.headers["cache-control"]).toBe("no-store");
        expect(answer.headers["set-cookie"]).toBeUndefined();
      }
    });

    test("/metrics on the main port: 401 without the token or with another; the scrape with it", async () => {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: "Bearer wrong-token-wrong-token-wrong-token" },
        { authorization: TOKEN },
      ]) {
        const refused = await raw(host.port, { path: "/metrics", headers });
        expect(refused.status).toBe(401);
        expect(refused.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
        expect(refused.text).not.toContain("coinkeep_");
      }
      await raw(host.port, { path: "/login" });
      const scrape = await raw(host.port, {
        path: "/metrics",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(scrape.status).toBe(200);
      expect(scrape.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/u);
      const { types, samples } = parseScrape(scrape.text);
      expect(types.get("coinkeep_http_requests_total")).toBe("counter");
      expect(types.get("coinkeep_http_request_duration_seconds")).toBe("histogram");
      expect(types.get("coinkeep_event_streams_open")).toBe("gauge");
      expect(types.get("coinkeep_sends")).toBe("gauge");
      expect(types.get("coinkeep_ledger_holds_outstanding")).toBe("gauge");
      expect(types.get("coinkeep_mail_outbox")).toBe("gauge");
      expect(types.get("nodejs_eventloop_lag_p99_seconds")).toBe("gauge");
      expect(
        samples.get('coinkeep_http_requests_total{route="/login",method="GET",status="200"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(
        samples.get('coinkeep_http_request_duration_seconds_count{route="/login",method="GET"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(samples.get("coinkeep_event_streams_open")).toBe(0);
      if (driver === "postgres") {
        expect(types.get("coinkeep_db_pool_connections")).toBe("gauge");
        expect(samples.get('coinkeep_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      }
      // A path a visitor makes up is counted under "other", never under its own label.
      await raw(host.port, { path: "/no-such-page-1234" });
      const again = await raw(host.port, {
        path: "/metrics",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(again.text).not.toContain("no-such-page-1234");
      expect(again.text).toContain('route="other"');
    });

    test("a send made through the API shows as pending, with its hold; the separate port needs no token", async () => {
      const email = `metrics-${Math.random().toString(36).slice(2, 10)}@example.com`;
      const password = `pw-${Math.random().toString(36).slice(2)}`;
      const created = await api(host.port, "aml-authentication", {
        email,
        password,
        passwordConfirmed: password,
      });
      expect(created.status).toBe(200);
      const words = (created.body.twelveWords as string[]).join(" ");
      expect(
        (
          await api(host.port, "request-nonbtc-wallet", {
            email,
            twelveWords: words,
            request_text: "ETH",
          })
        ).status,
      ).toBe(200);
      const requests = JSON.parse(await each.ops("requests", "--json")) as {
        email: string;
        walletId: string;
      }[];
      const walletId = requests.find((r) => r.email === email)?.walletId ?? "";
      // All lower case: a valid address without an EIP-55 checksum.
      await each.ops("issue-address", walletId, `0x${"ab".repeat(20)}`);
      await each.ops("credit", walletId, "2", `0x${"cd".repeat(32)}`);
      const sent = await api(host.port, "request-transaction", {
        email,
        twelveWords: words,
        amount: "0.5",
        receiver_wallet_address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
        wallet_id: walletId,
      });
      expect(sent.status).toBe(200);

      const scrape = await raw(hostMetricsPort, { path: "/metrics" });
      expect(scrape.status).toBe(200);
      const { samples } = parseScrape(scrape.text);
      expect(samples.get('coinkeep_sends{status="pending"}')).toBe(1);
      expect(samples.get('coinkeep_sends{status="Confirmed"}')).toBe(0);
      expect(samples.get('coinkeep_ledger_holds_outstanding{coin="ETH"}')).toBe(1);
      expect(samples.get('coinkeep_ledger_holds_outstanding_coins{coin="ETH"}')).toBe(0.5);
      expect(samples.get('coinkeep_ledger_holds_outstanding{coin="BTC"}')).toBe(0);
      // The holder never verified their address: the send queued no mail (record 049).
      expect(samples.get('coinkeep_mail_outbox{state="queued"}')).toBe(0);
      expect(samples.get('coinkeep_mail_outbox{state="failing"}')).toBe(0);
      expect(
        samples.get(
          'coinkeep_http_requests_total{route="/api/request-transaction",method="POST",status="200"}',
        ),
      ).toBe(1);
      expect((await raw(hostMetricsPort, { path: "/healthz" })).status).toBe(404);
    }, 120_000);

    test("without METRICS_TOKEN or METRICS_PORT nothing is served at /metrics (an unknown path: to /)", async () => {
      const answer = await raw(bare.port, {
        path: "/metrics",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe("/");
      expect(answer.text).not.toContain("coinkeep_");
    });

    test.skipIf(driver !== "postgres")(
      "/readyz: 503 once the database is gone; /healthz still 200",
      async () => {
        const dropper = new pg.Client({ connectionString: adminUrl });
        await dropper.connect();
        try {
          const name = new URL(each.opened?.databaseUrl ?? "").pathname.slice(1);
          await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
        const ready = await raw(host.port, { path: "/readyz" });
        expect(ready.status).toBe(503);
        expect(ready.text).toMatch(/^not ready: /u);
        expect((await raw(host.port, { path: "/healthz" })).status).toBe(200);
      },
    );
  },
);

describe.skipIf(!adminUrl || !built)("a cluster's metrics (WORKERS=2)", () => {
  let opened: OpenedDatabase;
  let host: HostProcess;
  let port: number;
  let metricsPort: number;
  const scrapesWhileStarting: number[] = [];

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    metricsPort = await freePort();
    host = await spawnHost({
      env: { ...processEnv(opened.databaseUrl, 2), METRICS_PORT: String(metricsPort) },
    });
    port = host.port;
    // Scraped from the moment the metrics port opens while the workers load: a worker still
    // loading has served nothing and must not hold the scrape up (it once timed out to 503).
    await host.ready({
      async whileWaiting() {
        try {
          const scrape = await raw(metricsPort, { path: "/metrics" });
          scrapesWhileStarting.push(scrape.status);
        } catch {
          // the primary's metrics port is not open yet
        }
      },
    });
  }, 90_000);
  afterAll(async () => {
    await host?.stop();
    await opened?.dispose();
  });

  test("scrapes while the workers start answer 200", () => {
    expect(scrapesWhileStarting.length).toBeGreaterThan(0);
    expect(scrapesWhileStarting.filter((status) => status !== 200)).toEqual([]);
  });

  test("the primary's scrape adds up both workers' requests; database figures are counted once", async () => {
    // New connections each: the kernel spreads them over the two workers.
    for (let i = 0; i < 40; i++) await raw(port, { path: "/healthz" });
    const scrape = await raw(metricsPort, { path: "/metrics" });
    expect(scrape.status).toBe(200);
    const { samples } = parseScrape(scrape.text);
    expect(samples.get('coinkeep_http_requests_total{route="/healthz",method="GET",status="200"}')).toBe(40);
    expect(samples.get('coinkeep_sends{status="pending"}')).toBe(0);
  });
});
