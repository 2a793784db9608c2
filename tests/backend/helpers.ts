// Shared setup for the backend tests: real databases (a fresh PGlite, and a
// throw-away PostgreSQL database when TEST_DATABASE_URL is set) and the two
// ways the web tier reaches the API (in-process and over HTTP).
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58, base58xrp, bech32, createBase58check } from "@scure/base";
import { createRequestListener } from "@remix-run/node-fetch-server";
import { count, eq, sql } from "drizzle-orm";
import pg from "pg";
import { createHttpClient, createInProcessClient, type BackendClient } from "../../app/backend.server.ts";
import type { BackendServices } from "../../common/contract/client.ts";
import { validateAddress } from "../../common/addresses.ts";
import type { Ticker } from "../../common/coins.ts";
import { createBackend, type ApiHandler, type ApiHandlerOptions } from "../../server/backend/api/handler.ts";
import { openDatabase, type AppDb, type Database } from "../../server/backend/db/index.ts";
import { users, withdrawals } from "../../server/backend/db/schema.ts";
import { parseAmount } from "../../server/backend/domain/amounts.ts";
import { creditDeposit } from "../../server/backend/domain/ledger.ts";
import { issueAddress, requestWallet } from "../../server/backend/domain/wallets.ts";
import { freshDataDir } from "../../scripts/host.ts";
import { serve } from "../support/serve.ts";

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

/** A fresh PGlite database in a new temp folder (seeded from the initdb template unless told not to). */
export async function openTempPglite(opts: { useTemplate?: boolean } = {}): Promise<OpenedDatabase> {
  // A nested, not yet existing folder also checks that openDatabase creates parents.
  const { dataDir, remove } = await freshDataDir("coinkeep-test-", opts.useTemplate !== false);
  const database = await openDatabase({ dataDir });
  return {
    database,
    async dispose() {
      await database.close();
      await remove();
    },
  };
}

/** A uniquely named, empty database on the server behind adminUrl; drop() drops it WITH (FORCE). */
export async function createTempPostgres(
  adminUrl: string,
  prefix = "coinkeep_test_",
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}${randomBytes(6).toString("hex")}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A throw-away database (createTempPostgres), migrated; dropped on dispose. */
export async function openTempPostgres(adminUrl: string): Promise<OpenedDatabase> {
  const { url, drop } = await createTempPostgres(adminUrl);
  let database: Database;
  try {
    database = await openDatabase({ databaseUrl: url, dataDir: tmpdir() });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    database,
    databaseUrl: url,
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
    /** The clock of the limits, codes and grants (record 048); default the system clock. */
    now?: ApiHandlerOptions["now"];
    /** The holds' clock (allowlist, two-factor removal); default the system clock. */
    holdClock?: ApiHandlerOptions["holdClock"];
    allowlistHoldHours?: ApiHandlerOptions["allowlistHoldHours"];
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
    const served = await serve(createRequestListener(handler));
    const baseUrl = `${served.base}/api`;
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
      close: served.close,
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

/** A user row without the (slow) password hashing: for tests of what never signs in. */
export async function insertUser(db: AppDb, label = "user"): Promise<string> {
  const [row] = await db
    .insert(users)
    .values({
      email: uniqueEmail(label),
      passwordHash: "not-a-hash",
      phraseHmac: "0".repeat(64),
      phraseCiphertext: "none",
      phraseKdfSalt: "none",
    })
    .returning({ id: users.id });
  if (!row) throw new Error("no user");
  return row.id;
}

/**
 * A wallet of the coin requested for the user and given an address (a fresh
 * valid one unless named, stored in its canonical form as the operator command
 * stores it) and, when asked, a deposit: decimal text of the coin, or units.
 */
export async function fundedWallet(
  db: AppDb,
  userId: string,
  coin: Ticker,
  { address = randomAddress(coin), deposit }: { address?: string; deposit?: string | bigint } = {},
): Promise<{ walletId: string; address: string }> {
  const requested = await requestWallet(db, userId, coin);
  if (!requested.ok) throw new Error("wallet request failed");
  const checked = validateAddress(coin, address);
  if (!checked.ok) throw new Error(checked.reason);
  const issued = await issueAddress(db, requested.wallet.id, checked.address);
  if (!issued.ok) throw new Error(`issue failed: ${issued.reason}`);
  if (deposit !== undefined) {
    const amount =
      typeof deposit === "bigint" ? { ok: true as const, units: deposit } : parseAmount(coin, deposit);
    if (!amount.ok) throw new Error(amount.reason);
    const credited = await creditDeposit(db, {
      walletId: requested.wallet.id,
      units: amount.units,
      externalTxId: `tx-${randomBytes(8).toString("hex")}`,
    });
    if (!credited.ok) throw new Error("credit failed");
  }
  return { walletId: requested.wallet.id, address: checked.address };
}

/** A new account made through the connection's client (call 1), with a wallet as fundedWallet makes it. */
export async function clientHolder(
  connection: Connection,
  db: AppDb,
  { label, coin, deposit }: { label: string; coin: Ticker; deposit?: string },
) {
  const email = uniqueEmail(label);
  const created = await connection.client.createAccount({
    email,
    password: "pw-1234",
    passwordConfirmed: "pw-1234",
  });
  if (!created.ok) throw new Error("account");
  const { newUserId: userId, twelveWords } = created.data;
  const { walletId } = await fundedWallet(db, userId, coin, { deposit });
  return { email, userId, twelveWords, walletId };
}

/** How many sends the wallet has made (any status). */
export async function sendCount(db: AppDb, walletId: string): Promise<number> {
  const rows = await db.select({ n: count() }).from(withdrawals).where(eq(withdrawals.walletId, walletId));
  return rows[0]?.n ?? 0;
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
  // Issue 27 (record 048): change password while signed in.
  "/api/change-password",
  // Issue 28 (record 049): e-mail.
  "/api/email",
  "/api/email/verify",
  "/api/email/confirm",
  "/api/sign-in-seen",
  "/api/sessions-ended",
  // Issue 28 (record 050): a statement; its 200 is text/csv, its refusals JSON.
  "/api/statement",
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

/**
 * The places where `text` holds two words of the phrase side by side, as text ("a b") or as a
 * list ('a","b'): a leaked phrase shows there. One word alone is no test: phrase words are
 * everyday English ("receive" is in "received undefined", "code" in a refusal), so a check of a
 * single word fails now and then on an answer that holds nothing.
 */
export function phrasePairsIn(text: string, twelveWords: string): string[] {
  const words = twelveWords.split(" ");
  const pairs = words.slice(1).flatMap((word, i) => [`${words[i]} ${word}`, `${words[i]}","${word}`]);
  return pairs.filter((pair) => text.includes(pair));
}
