// Live events (record 033): a signed-in page's event stream (GET /events) over
// real hosts, on both databases, with the change made the way it is made in
// production (the API, an operator's command in its own process), and with
// two server processes on one PostgreSQL.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openTempPostgres, type OpenedDatabase } from "./helpers.ts";
import { cookiesOf, raw, fastLoginPath, createAccount, rawCall } from "../security/support/http.ts";
import { inputValue } from "../../scripts/html-forms.ts";
import { built, spawnHost, type HostProcess, type RunningHost } from "../../scripts/host.ts";
import { describeEachHost, processEnv } from "./host-suite.ts";
import { openEventStream, type OpenEventStream } from "../support/event-stream.ts";

const METRICS_TOKEN = "live-events-metrics-token-0123456789";

/** The open-streams gauge of the host's own metrics (record 021). */
async function openStreamsGauge(port: number): Promise<number> {
  const scrape = await raw(port, { path: "/metrics", headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = scrape.text.split("\n").find((l) => l.startsWith("coinkeep_event_streams_open "));
  return Number(line?.split(" ")[1]);
}

/** An open event stream: what has arrived so far, and a way to wait for more. */
interface Stream extends OpenEventStream {
  contentType: string | undefined;
}

async function openStream(port: number, cookie: string): Promise<Stream> {
  const stream = await openEventStream(port, cookie);
  return { ...stream, contentType: stream.headers["content-type"] };
}

/** Signs the account in through /fast-login; returns the session cookie. */
async function signIn(port: number, account: { email: string; password: string }) {
  const answer = await raw(port, {
    path: fastLoginPath(account),
  });
  expect(answer.headers.location).toBe("/home");
  return cookiesOf(answer);
}

/** Requests a wallet through the API (call 5): a change the stream reports as "wallets". */
async function requestWallet(port: number, account: { email: string; words: string }, ticker: string) {
  const answer = await rawCall(port, "/request-nonbtc-wallet", {
    email: account.email,
    twelveWords: account.words,
    request_text: ticker,
  });
  expect(answer.status).toBe(200);
}

describeEachHost(
  "the event stream ($name)",
  () => ({ RATE_LIMITS: "off", METRICS_TOKEN }),
  (each) => {
    let host: RunningHost;
    beforeAll(() => {
      host = each.host;
    });

    test("nobody signed in: 204 (EventSource stops and the page polls); a page visit goes to /", async () => {
      const anonymous = await raw(host.port, { path: "/events", headers: { accept: "text/event-stream" } });
      expect(anonymous.status).toBe(204);
      expect(anonymous.text).toBe("");
      const browsing = await raw(host.port, { path: "/events", headers: { accept: "text/html" } });
      expect(browsing.status).toBe(302);
      expect(browsing.headers.location).toBe("/");
    });

    test("a wallet request through the API and an operator's message each reach the user's open stream, and only theirs", async () => {
      const account = await createAccount(host.port, "live");
      const other = await createAccount(host.port, "other");
      const stream = await openStream(host.port, await signIn(host.port, account));
      const otherStream = await openStream(host.port, await signIn(host.port, other));
      try {
        expect(stream.status).toBe(200);
        expect(stream.contentType).toBe("text/event-stream");
        await stream.next("ready");
        await otherStream.next("ready");

        await requestWallet(host.port, account, "SOL");
        expect(await stream.next("wallets")).toEqual({ event: "wallets", data: "you" });

        await each.ops("message", "--to", account.email, "Please confirm the source of your funds.");
        expect(await stream.next("messages")).toEqual({ event: "messages", data: "you" });

        // A message to everyone reaches both, marked as such (clients spread their reaction).
        const before = otherStream.events.length;
        await each.ops("message", "--all", "Maintenance on Sunday.");
        expect(
          await stream.next("messages", stream.events.findIndex((e) => e.event === "messages") + 1),
        ).toEqual({
          event: "messages",
          data: "everyone",
        });
        expect(await otherStream.next("messages", before)).toEqual({ event: "messages", data: "everyone" });
        // The other user heard nothing of the first user's own changes.
        expect(otherStream.events.map((e) => e.event).filter((e) => e !== "ping")).toEqual([
          "ready",
          "messages",
        ]);
      } finally {
        stream.close();
        otherStream.close();
      }
    }, 60_000);

    test("a stream whose browser goes away is let go: the open-streams gauge falls back", async () => {
      const account = await createAccount(host.port, "gone");
      const cookie = await signIn(host.port, account);
      const before = await openStreamsGauge(host.port);
      const streams = [await openStream(host.port, cookie), await openStream(host.port, cookie)];
      for (const stream of streams) await stream.next("ready");
      expect(await openStreamsGauge(host.port)).toBe(before + 2);
      for (const stream of streams) stream.close();
      for (let i = 0; i < 50 && (await openStreamsGauge(host.port)) !== before; i++) await sleep(100);
      expect(await openStreamsGauge(host.port)).toBe(before);
    }, 60_000);

    test("Exit ends the stream ('session-ended'); reconnecting with the old cookie gets 204", async () => {
      const account = await createAccount(host.port, "exit");
      const cookie = await signIn(host.port, account);
      const stream = await openStream(host.port, cookie);
      await stream.next("ready");
      const home = await raw(host.port, { path: "/home", headers: { cookie } });
      const withCsrf = [cookie, cookiesOf(home)].filter(Boolean).join("; ");
      const exit = await raw(host.port, {
        method: "POST",
        path: "/logout",
        headers: {
          cookie: withCsrf,
          "content-type": "application/x-www-form-urlencoded",
          origin: `http://127.0.0.1:${host.port}`,
        },
        body: new URLSearchParams({ csrf: inputValue(home.text, "csrf") }).toString(),
      });
      expect(exit.status).toBe(302);
      await stream.next("session-ended");
      await stream.ended;
      const again = await raw(host.port, {
        path: "/events",
        headers: { accept: "text/event-stream", cookie },
      });
      expect(again.status).toBe(204);
    }, 60_000);
  },
);

const adminUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!adminUrl || !built)("two server processes on one PostgreSQL", () => {
  let opened: OpenedDatabase;
  const hosts: HostProcess[] = [];

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    const env = processEnv(opened.databaseUrl);
    hosts.push(await spawnHost({ env }), await spawnHost({ env }));
    await Promise.all(hosts.map((host) => host.ready()));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.stop()));
    await opened?.dispose();
  });

  test("a change made through one process reaches a stream open on the other", async () => {
    const [a = 0, b = 0] = hosts.map((host) => host.port);
    const account = await createAccount(a, "two");
    const stream = await openStream(b, await signIn(b, account));
    try {
      expect(stream.status).toBe(200);
      await stream.next("ready");
      await requestWallet(a, account, "DOGE");
      expect(await stream.next("wallets")).toEqual({ event: "wallets", data: "you" });
    } finally {
      stream.close();
    }
  }, 60_000);
});
