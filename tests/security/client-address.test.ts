// Who may tell the backend the visitor's address (issue 12, record 026).
// X-Coinkeep-Client-Ip is our web tier's: believed from the in-process web
// tier, and from a configured web-tier host (WEB_TIER_HOSTS) that also sends
// the shared BACKEND_TOKEN. Any other process on the machine, loopback or not,
// is counted and recorded by its own address, however it sets the header.
// Real hosts (server/host/host.ts over the production build) over real sockets,
// on each database; every source address is a loopback alias (127.x.y.z).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { createTempPostgres } from "../backend/helpers.ts";
import { createAccount, raw, sendContact, recordedIps, rawCall } from "./support/http.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

const TOKEN = `test-backend-token-${randomBytes(16).toString("hex")}`;
const WEB_TIER = "127.0.0.5";
const HEADER = "x-coinkeep-client-ip";
const TOKEN_HEADER = "x-coinkeep-backend-token";

if (!built) console.warn("client-address.test.ts skipped: no production build (npx react-router build)");

interface Target {
  name: string;
  /** Extra environment for a host on this database, and how to read what it stored. */
  open(): Promise<{ env: Record<string, string>; dispose(): Promise<void> }>;
}

const targets: Target[] = [{ name: "pglite", open: async () => ({ env: {}, dispose: async () => {} }) }];
const adminUrl = process.env.TEST_DATABASE_URL;
if (adminUrl) {
  targets.push({
    name: "postgres",
    async open() {
      // An empty database: the host migrates it and uses it.
      const { url, drop } = await createTempPostgres(adminUrl);
      return { env: { DATABASE_URL: url }, dispose: drop };
    },
  });
}

/** The sender IP a host recorded for a support or contact message from `email`. */
async function recordedIp(host: RunningHost, env: Record<string, string>, email: string) {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ ip: string | null }>(
        "SELECT host(ip) AS ip FROM support_messages WHERE email = $1",
        [email],
      );
      return rows.map((row) => row.ip);
    } finally {
      await client.end();
    }
  }
  return recordedIps(host.dataDir, email);
}

const unique = (tag: string) => `${tag}-${randomBytes(5).toString("hex")}@example.com`;

/** A contact message (call 12) from `from`, with the given headers; returns the sender address recorded. */
async function contactFrom(
  host: RunningHost,
  env: Record<string, string>,
  from: string,
  headers: Record<string, string>,
) {
  const email = unique("sender");
  await sendContact(host.port, email, { from, headers });
  const [ip] = await recordedIp(host, env, email);
  return ip;
}

/** A sign-in (call 2) from `from`; returns the status. */
async function signInFrom(host: RunningHost, from: string, email: string, password: string, headers = {}) {
  const answer = await rawCall(host.port, "/aml-authorization", { email, password }, { headers, from });
  return answer.status;
}

describe.skipIf(!built).each(targets)("the visitor's address on $name", (target) => {
  let env: Record<string, string>;
  let disposeDb: () => Promise<void>;
  let plain: RunningHost;
  let withWebTier: RunningHost;
  let webTierEnv: Record<string, string>;
  let disposeWebTierDb: () => Promise<void>;

  beforeAll(async () => {
    const [a, b] = await Promise.all([target.open(), target.open()]);
    env = a.env;
    disposeDb = a.dispose;
    webTierEnv = b.env;
    disposeWebTierDb = b.dispose;
    plain = await startHost({ env });
    withWebTier = await startHost({ env: { ...webTierEnv, WEB_TIER_HOSTS: WEB_TIER, BACKEND_TOKEN: TOKEN } });
  }, 180_000);
  afterAll(async () => {
    await Promise.all([plain?.close(), withWebTier?.close()]);
    await Promise.all([disposeDb?.(), disposeWebTierDb?.()]);
  });

  describe("no web tier configured (the default)", () => {
    test("a loopback process spraying wrong passwords with rotating forged addresses hits its own limit", async () => {
      const user = await createAccount(plain.port, "spray");
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        statuses.push(
          await signInFrom(plain, "127.0.0.7", user.email, "wrong", { [HEADER]: `192.0.2.${i + 1}` }),
        );
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      // Another address is not held back by it.
      expect(await signInFrom(plain, "127.0.0.17", user.email, user.password)).toBe(200);
    });

    test("even with the token header (no web tier is configured), the forged address is not recorded", async () => {
      expect(await contactFrom(plain, env, "127.0.0.7", { [HEADER]: "198.51.100.1" })).toBe("127.0.0.7");
      expect(
        await contactFrom(plain, env, "127.0.0.7", { [HEADER]: "198.51.100.1", [TOKEN_HEADER]: TOKEN }),
      ).toBe("127.0.0.7");
    });

    test("through the web tier (fast login): a forged header on a page request does not move the count", async () => {
      const user = await createAccount(plain.port, "fast");
      const from = "127.0.0.8";
      for (let i = 0; i < 5; i++) {
        const query = new URLSearchParams({ email: user.email, password: `wrong-${i}` });
        const page = await raw(plain.port, {
          path: `/fast-login?${query}`,
          localAddress: from,
          headers: { [HEADER]: `192.0.2.${50 + i}` },
        });
        expect(page.status).toBe(302);
      }
      // The five failures were this address's: it now waits, even with the right password.
      expect(await signInFrom(plain, from, user.email, user.password)).toBe(429);
    });
  });

  describe("WEB_TIER_HOSTS names the web tier's address, BACKEND_TOKEN its secret", () => {
    test("the web tier with its token is believed: each visitor is counted by their own address", async () => {
      const user = await createAccount(withWebTier.port, "tier");
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        statuses.push(
          await signInFrom(withWebTier, WEB_TIER, user.email, "wrong", {
            [HEADER]: `198.51.100.${10 + i}`,
            [TOKEN_HEADER]: TOKEN,
          }),
        );
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 401]);
      expect(
        await contactFrom(withWebTier, webTierEnv, WEB_TIER, {
          [HEADER]: "198.51.100.2",
          [TOKEN_HEADER]: TOKEN,
        }),
      ).toBe("198.51.100.2");
    });

    test("the web tier's address without the token, or with a wrong one, is not believed", async () => {
      expect(await contactFrom(withWebTier, webTierEnv, WEB_TIER, { [HEADER]: "198.51.100.3" })).toBe(
        WEB_TIER,
      );
      expect(
        await contactFrom(withWebTier, webTierEnv, WEB_TIER, {
          [HEADER]: "198.51.100.3",
          [TOKEN_HEADER]: `${TOKEN}x`,
        }),
      ).toBe(WEB_TIER);
      const user = await createAccount(withWebTier.port, "tokenless");
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        statuses.push(
          await signInFrom(withWebTier, WEB_TIER, user.email, "wrong", { [HEADER]: `192.0.2.${i}` }),
        );
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    });

    test("the right token from another address is not believed", async () => {
      expect(
        await contactFrom(withWebTier, webTierEnv, "127.0.0.6", {
          [HEADER]: "198.51.100.4",
          [TOKEN_HEADER]: TOKEN,
        }),
      ).toBe("127.0.0.6");
    });
  });
});

/** `times` wrong passwords through a web tier's fast login, from `from`. */
async function failFastLogin(host: RunningHost, from: string, email: string, times: number) {
  for (let i = 0; i < times; i++) {
    const query = new URLSearchParams({ email, password: `wrong-${i}` });
    const page = await raw(host.port, { path: `/fast-login?${query}`, localAddress: from });
    expect(page.status).toBe(302);
  }
}

describe.skipIf(!built)(
  "a web tier in its own process (BACKEND_URL), as scripts/e2e-server.mjs runs it",
  () => {
    let backend: RunningHost;
    let web: RunningHost;
    let tokenless: RunningHost;

    beforeAll(async () => {
      backend = await startHost({ env: { WEB_TIER_HOSTS: "loopback", BACKEND_TOKEN: TOKEN } });
      const api = `http://127.0.0.1:${backend.port}/api`;
      [web, tokenless] = await Promise.all([
        startHost({ env: { BACKEND_URL: api, BACKEND_TOKEN: TOKEN } }),
        startHost({ env: { BACKEND_URL: api } }),
      ]);
    }, 180_000);
    afterAll(async () => {
      await Promise.all([web?.close(), tokenless?.close()]);
      await backend?.close();
    });

    test("the web tier forwards each visitor's address with its token; the backend counts them apart", async () => {
      const user = await createAccount(backend.port, "remote");
      await failFastLogin(web, "127.0.0.21", user.email, 5);
      // Counted for the visitor 127.0.0.21, not for the web tier's own address.
      expect(await signInFrom(backend, "127.0.0.21", user.email, user.password)).toBe(429);
      expect(await signInFrom(backend, "127.0.0.22", user.email, user.password)).toBe(200);
    });

    test("a web tier without the token is not believed: its visitors are counted as the web tier", async () => {
      const user = await createAccount(backend.port, "remote-tokenless");
      await failFastLogin(tokenless, "127.0.0.23", user.email, 5);
      // The failures were counted for the web tier's connection (127.0.0.1), not for the visitor.
      expect(await signInFrom(backend, "127.0.0.23", user.email, user.password)).toBe(200);
    });
  },
);
