// Shared setup for the backend tests: real databases (a fresh PGlite, and a
// throw-away PostgreSQL database when TEST_DATABASE_URL is set) and the two
// ways the web tier reaches the API (in-process and over HTTP).
import { createHash, randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { cp, mkdtemp, rename, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58, base58xrp, bech32, createBase58check } from "@scure/base";
import { createRequestListener } from "@remix-run/node-fetch-server";
import { sql } from "drizzle-orm";
import pg from "pg";
import { createHttpClient, createInProcessClient, type BackendClient } from "../../app/backend.server.ts";
import type { BackendServices } from "../../common/contract/client.ts";
import type { Ticker } from "../../common/coins.ts";
import { createBackend, type ApiHandler, type ApiHandlerOptions } from "../../server/backend/api/handler.ts";
import { openDatabase, type AppDb, type Database } from "../../server/backend/db/index.ts";
import { users } from "../../server/backend/db/schema.ts";

export const PLATFORM = "CK";
export const BACKEND_SECRET = "test-backend-secret-0123456789abcdef";
/** The shared token of the test web tier (record 026): the HTTP transport's client sends it. */
export const BACKEND_TOKEN = "test-backend-token-0123456789abcdef";
export const BACKEND_TOKEN_HEADER = "X-Coinkeep-Backend-Token";

export interface OpenedDatabase {
  database: Database;
  /** The throw-away database's URL (PostgreSQL only). */
  databaseUrl?: string;
  /** Closes the database and deletes everything the test created. */
  dispose(): Promise<void>;
}

export interface DatabaseTarget {
  name: string;
  open(): Promise<OpenedDatabase>;
}

// PGlite's initdb costs ~3 s per fresh data folder. An empty, just-initialised
// cluster (no migrations) is kept in the temp folder, keyed by the PGlite build,
// and copied into each fresh test folder; openDatabase then migrates the copy.
function pgliteBuildKey(): string {
  const dist = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  const parts = ["pglite.wasm", "pglite.data", "initdb.wasm"].map((file) => {
    const stat = statSync(path.join(dist, file));
    return `${file}:${stat.size}:${stat.mtimeMs}`;
  });
  return createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 16);
}

let template: Promise<string | undefined> | undefined;

export async function pgliteTemplate(): Promise<string | undefined> {
  template ??= (async () => {
    try {
      const dir = path.join(tmpdir(), `coinkeep-pglite-template-${pgliteBuildKey()}`);
      if (existsSync(path.join(dir, "PG_VERSION"))) return dir;
      const building = `${dir}.building-${randomBytes(4).toString("hex")}`;
      const pglite = await PGlite.create(building);
      await pglite.close();
      try {
        await rename(building, dir);
      } catch {
        // Another run finished first; use its copy.
        await rm(building, { recursive: true, force: true });
      }
      return existsSync(path.join(dir, "PG_VERSION")) ? dir : undefined;
    } catch {
      return undefined;
    }
  })();
  return template;
}

/** A fresh PGlite database in a new temp folder (seeded from the initdb template when possible). */
export async function openTempPglite(opts: { useTemplate?: boolean } = {}): Promise<OpenedDatabase> {
  const root = await mkdtemp(path.join(tmpdir(), "coinkeep-test-"));
  // A nested, not yet existing folder also checks that openDatabase creates parents.
  const dataDir = path.join(root, "data");
  const seed = opts.useTemplate === false ? undefined : await pgliteTemplate();
  if (seed) await cp(seed, path.join(dataDir, "pglite"), { recursive: true });
  const database = await openDatabase({ dataDir });
  return {
    database,
    async dispose() {
      await database.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Creates a uniquely named database on the server behind adminUrl and drops it (WITH (FORCE)) on dispose. */
export async function openTempPostgres(adminUrl: string): Promise<OpenedDatabase> {
  const name = `coinkeep_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = async () => {
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    try {
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await dropper.end();
    }
  };
  let database: Database;
  try {
    database = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    database,
    databaseUrl: url.toString(),
    async dispose() {
      await database.close();
      await drop();
    },
  };
}

export function databaseTargets(): DatabaseTarget[] {
  const targets: DatabaseTarget[] = [{ name: "pglite", open: openTempPglite }];
  const url = process.env.TEST_DATABASE_URL;
  if (url) targets.push({ name: "postgres", open: () => openTempPostgres(url) });
  return targets;
}

/** USD prices the test handlers price sends with (as a feed would answer). */
export const TEST_USD_PRICES: Readonly<Record<Ticker, string>> = {
  BTC: "60000",
  ETH: "3000.5",
  ADA: "0.45",
  BNB: "600",
  DOGE: "0.15",
  SOL: "150.25",
  TRX: "0.12",
  USDT: "1",
  XRP: "0.55",
};

/** The API's HTTP handler, with the services behind it (what the in-process client calls). */
export type TestHandler = ApiHandler & { services: BackendServices };

/**
 * The API as the tests use it. The abuse limits (record 013) are off unless a
 * test asks for them: these tests send the same wrong credentials many times
 * on purpose. tests/backend/rate-limits.test.ts tests the limits themselves.
 * A web tier on loopback with BACKEND_TOKEN is believed (WEB_TIER_HOSTS=loopback,
 * record 026), as the HTTP transport's client is one.
 */
export function createTestHandler(
  db: AppDb,
  opts: {
    maxBodyBytes?: number;
    usdPrice?: (coin: Ticker) => Promise<string | null>;
    rateLimits?: ApiHandlerOptions["rateLimits"];
    /** Default: loopback with BACKEND_TOKEN; undefined: none. */
    webTier?: ApiHandlerOptions["webTier"];
    /** Watch-only issuing (record 039); default none. */
    custody?: ApiHandlerOptions["custody"];
    usdtNetwork?: ApiHandlerOptions["usdtNetwork"];
  } = {},
): TestHandler {
  const backend = createBackend({
    db,
    platform: PLATFORM,
    backendSecret: BACKEND_SECRET,
    usdPrice: (coin) => Promise.resolve(TEST_USD_PRICES[coin]),
    rateLimits: "off",
    webTier: { hosts: [{ kind: "loopback" }], token: BACKEND_TOKEN },
    ...opts,
  });
  return Object.assign(backend.handler, { services: backend.services });
}

export interface Connection {
  client: BackendClient;
  /** A client for the visitor at `clientIp` (the web tier makes one per visitor's request). */
  clientFor(clientIp: string): BackendClient;
  baseUrl: string;
  /** Sends a raw request the same way the client does (the handler, or real HTTP). */
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

export interface Transport {
  name: string;
  connect(handler: TestHandler): Promise<Connection>;
}

export const inProcess: Transport = {
  name: "in-process",
  async connect(handler) {
    const baseUrl = "http://backend.invalid/api";
    return {
      // The web tier's in-process client: the services, called directly. The
      // web tier makes one client per request; here each call is a request.
      client: new Proxy({} as BackendClient, {
        get: (_target, name: keyof BackendClient) => (input: never) =>
          createInProcessClient(handler.services, PLATFORM, undefined)[name](input),
      }),
      clientFor: (clientIp) => createInProcessClient(handler.services, PLATFORM, clientIp),
      baseUrl,
      fetch: handler,
      async close() {},
    };
  },
};

export const overHttp: Transport = {
  name: "http",
  async connect(handler) {
    const server = createServer(createRequestListener(handler));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const baseUrl = `http://127.0.0.1:${port}/api`;
    return {
      client: createHttpClient({ baseUrl, platform: PLATFORM, token: BACKEND_TOKEN }),
      clientFor: (clientIp) =>
        createHttpClient({ baseUrl, platform: PLATFORM, token: BACKEND_TOKEN }, clientIp),
      baseUrl,
      // With the token, as the client sends it.
      fetch: (request) => {
        const headers = new Headers(request.headers);
        headers.set(BACKEND_TOKEN_HEADER, BACKEND_TOKEN);
        return globalThis.fetch(new Request(request, { headers }));
      },
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  },
};

export const transports: Transport[] = [inProcess, overHttp];

let counter = 0;
/** A fresh address per call, so tests sharing a database never collide. */
export function uniqueEmail(label = "user"): string {
  counter += 1;
  return `${label}-${counter}-${randomBytes(4).toString("hex")}@example.com`;
}

export async function countUsers(db: AppDb): Promise<number> {
  const rows = await db.select({ n: sql<number>`count(*)::int` }).from(users);
  return rows[0]?.n ?? 0;
}

/** A raw request to the handler, as a browser or curl would send it. */
export function post(
  pathname: string,
  body: string | ReadableStream<Uint8Array> | null,
  headers: Record<string, string> = { "content-type": "application/json" },
  method = "POST",
): Request {
  const init: RequestInit & { duplex?: "half" } = { method, headers };
  if (body !== null) {
    init.body = body;
    if (typeof body !== "string") init.duplex = "half";
  }
  return new Request(`http://backend.test${pathname}`, init);
}

export function postJson(pathname: string, value: unknown): Request {
  return post(pathname, JSON.stringify(value));
}

export const ROUTES = [
  "/api/aml-authentication",
  "/api/aml-authorization",
  "/api/check-if-logged-in",
  "/api/request-change-password",
  "/api/aml-client-change-password",
  "/api/aml-client-balances",
  "/api/request-nonbtc-wallet",
  "/api/aml-new-messages-count",
  "/api/request-transaction",
  "/api/aml-message-open-status",
  "/api/request-message",
] as const;

/**
 * A fresh valid address of the coin (random key hash, correct checksum), so
 * tests can issue as many wallets as they need: an address belongs to one
 * wallet of its coin. USDT is ERC-20 (the default network).
 */
export function randomAddress(coin: Ticker): string {
  const hash = randomBytes(20);
  switch (coin) {
    case "ETH":
    case "BNB":
    case "USDT":
      return `0x${hash.toString("hex")}`;
    case "BTC":
      return bech32.encode("bc", [0, ...bech32.toWords(hash)]);
    case "DOGE":
      return createBase58check(sha256).encode(Uint8Array.from([0x1e, ...hash]));
    case "TRX":
      return createBase58check(sha256).encode(Uint8Array.from([0x41, ...hash]));
    case "XRP": {
      const payload = Uint8Array.from([0x00, ...hash]);
      const check = sha256(sha256(payload)).subarray(0, 4);
      return base58xrp.encode(Uint8Array.from([...payload, ...check]));
    }
    case "SOL":
      return base58.encode(randomBytes(32));
    case "ADA":
      // A base address on mainnet: header 0x01, then payment and stake key hashes (28 bytes each).
      return bech32.encode("addr", bech32.toWords(Uint8Array.from([0x01, ...randomBytes(56)])), 200);
  }
}
