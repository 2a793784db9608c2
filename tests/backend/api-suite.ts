// The frame the API tests share: each database target opened around its
// suites, a connection over each transport to a test handler, and calls as a
// client makes them (JSON with the platform field; every answer checked: never
// a 5xx, JSON, not cacheable, each refusal in the contract's shape).
// helpers.ts holds what needs no vitest.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { isRefusalCode } from "../../common/contract/refusals.ts";
import { CLIENT_IP_HEADER } from "../../server/backend/api/http.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import {
  PLATFORM,
  createTestHandler,
  sendCount,
  databaseTargets,
  transports,
  uniqueEmail,
  type Connection,
  type OpenedDatabase,
  type Transport,
} from "./helpers.ts";

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A refusal as the API answers it: the status, and { success: false, code, message }. */
export const refusedAnswer = (status: number, code: string, message: string): Answer => ({
  status,
  body: { success: false, code, message },
});

/**
 * An answer as callApi reads it. The headers and the text as sent ride along
 * unenumerated: an answer still equals the { status, body } a test expects.
 */
export interface ApiAnswer extends Answer {
  readonly headers: Headers;
  readonly text: string;
}

/** What takes a request and answers it: the API handler, or a connection's fetch. */
export type ApiFetch = (request: Request) => Promise<Response>;

export interface CallOptions {
  /** The visitor's address, forwarded as the web tier forwards it; none: a direct caller. */
  ip?: string | null;
  headers?: Record<string, string>;
  /** Where the API is; default: the handler's own /api. */
  baseUrl?: string;
}

/** A refusal exactly as the contract writes it: { success: false, code, message } with a code it has. */
export function expectErrorShape(body: unknown): void {
  expect(typeof body).toBe("object");
  expect(body).not.toBeNull();
  const record = body as Record<string, unknown>;
  expect(record.success).toBe(false);
  expect(isRefusalCode(record.code), `a refusal code the contract has: ${String(record.code)}`).toBe(true);
  expect(typeof record.message).toBe("string");
  expect((record.message as string).length).toBeGreaterThan(0);
}

/**
 * What every answer must be: never a 5xx or a redirect, JSON, and each 4xx in
 * the refusal shape. Returns the parsed body (none for a HEAD answered empty).
 */
export function expectApiAnswer(request: Request, response: Response, text: string): unknown {
  expect(response.status, `5xx for ${request.method} ${request.url}: ${text}`).toBeLessThan(500);
  expect(response.status).toBeGreaterThanOrEqual(200);
  expect(response.status >= 300 && response.status < 400, "no redirects from the API").toBe(false);
  // The statement's answer (record 050) is its CSV; every other answer, and its refusals, JSON.
  if (response.status === 200 && new URL(request.url).pathname === "/api/statement") {
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    return undefined;
  }
  expect(response.headers.get("content-type") ?? "").toMatch(/^application\/json\b/u);
  const body: unknown = request.method === "HEAD" && text === "" ? undefined : JSON.parse(text);
  if (response.status >= 400 && body !== undefined) expectErrorShape(body);
  return body;
}

/**
 * A call as a client makes it (POST, JSON with the platform) and its answer,
 * checked as every answer must be and, as the API writes its calls' answers,
 * exactly UTF-8 JSON and not cacheable.
 */
export async function callApi(
  fetch: ApiFetch,
  path: string,
  body: Record<string, unknown>,
  { ip, headers = {}, baseUrl = "http://backend.test/api" }: CallOptions = {},
): Promise<ApiAnswer> {
  const request = new Request(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(ip ? { [CLIENT_IP_HEADER]: ip } : {}), ...headers },
    body: JSON.stringify({ platform: PLATFORM, ...body }),
  });
  const response = await fetch(request);
  const text = await response.text();
  const json = expectApiAnswer(request, response, text) as Record<string, unknown>;
  expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(response.headers.get("cache-control")).toBe("no-store");
  const answer = { status: response.status, body: json };
  return Object.defineProperties(answer, {
    headers: { value: response.headers, enumerable: false },
    text: { value: text, enumerable: false },
  }) as ApiAnswer;
}

/** An account made through call 1, with the password "pw". */
export interface ApiAccount {
  email: string;
  twelveWords: string;
  userId: string;
}

type DatabaseSuites = (getDatabase: () => OpenedDatabase, name: string) => void;

/** How long opening a database may take (migrations on a loaded machine); default: the hook timeout. */
export interface EachDatabaseOptions {
  openTimeout?: number;
}

/**
 * One describe per database target (PGlite, and PostgreSQL with TEST_DATABASE_URL):
 * the database is opened before its suites and disposed of after them. The title's
 * "$name" stands for the target's name: "database: $name" gives "database: pglite".
 */
export function describeEachDatabase(title: string, suites: DatabaseSuites): void;
export function describeEachDatabase(
  title: string,
  options: EachDatabaseOptions,
  suites: DatabaseSuites,
): void;
export function describeEachDatabase(
  title: string,
  ...args: [DatabaseSuites] | [EachDatabaseOptions, DatabaseSuites]
) {
  const [options, suites] = args.length === 1 ? [{}, args[0]] : args;
  for (const target of databaseTargets()) {
    describe(`${title.replaceAll("$name", target.name)}`, () => {
      let opened: OpenedDatabase | undefined;
      beforeAll(async () => {
        opened = await target.open();
      }, options.openTimeout);
      afterAll(async () => {
        await opened?.dispose();
      });
      suites(() => {
        if (!opened) throw new Error("database not open");
        return opened;
      }, target.name);
    });
  }
}

/**
 * describeEachDatabase, with the suite once per transport ("transport: in-process",
 * "transport: http"), given its connection through connectApi.
 */
export function describeEachDatabaseAndTransport(
  title: string,
  suite: (api: Api) => void,
  options: EachDatabaseOptions = {},
) {
  describeEachDatabase(title, options, (getDatabase) => {
    for (const transport of transports) {
      describe(`transport: ${transport.name}`, () => {
        suite(connectApi(transport, getDatabase));
      });
    }
  });
}

export interface Api {
  /** The suite's database (after its beforeAll). */
  readonly db: AppDb;
  readonly connection: Connection;
  /** callApi over the connection. */
  call(path: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<ApiAnswer>;
  /** A new account through call 1 (password "pw"), its e-mail labelled. */
  newAccount(label: string): Promise<ApiAccount>;
  /** The account's balances and sends, as call 4 answers them (checked to be 200). */
  balances(account: ApiAccount): Promise<ClientBalances>;
  /** A refusal left the wallet as it was: no send, the same balance. */
  expectUntouched(account: ApiAccount, walletId: string, balance: string): Promise<void>;
}

/** Call 4's answer, as far as these tests read it. */
export interface ClientBalances {
  balances: Record<string, string>;
  transactions: Record<string, unknown>[];
}

/** In the enclosing describe: a connection over the transport to a test handler on the database. */
export function connectApi(
  transport: Transport,
  getDatabase: () => OpenedDatabase,
  handlerOptions?: Parameters<typeof createTestHandler>[1],
): Api {
  let db: AppDb | undefined;
  let connection: Connection | undefined;
  beforeAll(async () => {
    db = getDatabase().database.db;
    connection = await transport.connect(createTestHandler(db, handlerOptions));
  });
  afterAll(async () => {
    await connection?.close();
  });
  const api: Api = {
    get db() {
      if (!db) throw new Error("the suite's database is not open yet");
      return db;
    },
    get connection() {
      if (!connection) throw new Error("not connected yet");
      return connection;
    },
    call(path, body, headers) {
      const { fetch, baseUrl } = api.connection;
      return callApi(fetch, path, body, { headers, baseUrl });
    },
    async newAccount(label) {
      const email = uniqueEmail(label);
      const created = await api.call("/aml-authentication", {
        email,
        password: "pw",
        passwordConfirmed: "pw",
      });
      expect(created.status).toBe(200);
      const words = created.body.twelveWords as string[];
      return { email, twelveWords: words.join(" "), userId: created.body.newUserId as string };
    },
    async balances({ email, twelveWords }) {
      const answer = await api.call("/aml-client-balances", { email, twelveWords });
      expect(answer.status).toBe(200);
      return answer.body as unknown as ClientBalances;
    },
    async expectUntouched(account, walletId, balance) {
      expect(await sendCount(api.db, walletId)).toBe(0);
      expect((await api.balances(account)).balances[walletId]).toBe(balance);
    },
  };
  return api;
}
