// The frame the API tests share: each database target opened around its
// suites, a connection over each transport to a test handler, and calls as a
// client makes them (JSON with the platform field; every answer checked to be
// JSON and not cacheable). helpers.ts holds what needs no vitest.
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { AppDb } from "../../server/backend/db/index.ts";
import {
  PLATFORM,
  createTestHandler,
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

/** describeEachDatabase, with the suite run once per transport (in-process and over HTTP). */
export function describeEachDatabaseAndTransport(
  title: string,
  suite: (transport: Transport, getDatabase: () => OpenedDatabase) => void,
  options: EachDatabaseOptions = {},
) {
  describeEachDatabase(title, options, (getDatabase) => {
    for (const transport of transports) suite(transport, getDatabase);
  });
}

export interface Api {
  /** The suite's database (after its beforeAll). */
  readonly db: AppDb;
  readonly connection: Connection;
  /** Posts the body (with the platform) and checks the answer is JSON and not cacheable. */
  respond(path: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<Response>;
  call(path: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<Answer>;
  /** A new account through call 1 (password "pw"), its e-mail labelled. */
  newAccount(label: string): Promise<ApiAccount>;
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
    async respond(path, body, headers = {}) {
      const { fetch, baseUrl } = api.connection;
      const response = await fetch(
        new Request(`${baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ platform: PLATFORM, ...body }),
        }),
      );
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-store");
      return response;
    },
    async call(path, body, headers) {
      const response = await api.respond(path, body, headers);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
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
  };
  return api;
}
