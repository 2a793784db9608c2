// Opens the application database and applies pending migrations.
// Without a DATABASE_URL the data lives in an embedded PGlite under the data
// folder; with one, a node-postgres pool talks to a PostgreSQL server.
// Both drivers share one schema and one set of migrations.
import { memoize } from "../../../common/memo.ts";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite, type QueryOptions, type Transaction } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import pg from "pg";
import * as schema from "./schema.ts";
import { lockDataDir } from "./lock.ts";

/** A drizzle database over either driver; domain code only ever sees this. */
export type AppDb = PgDatabase<PgQueryResultHKT, typeof schema>;

/** The rows of a raw statement (`db.execute`), on either driver (both answer { rows }). */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

/**
 * Makes a value once per database handle and hands out the same one after: a
 * prepared statement (built once, planned once per connection) or a cache.
 */
export function perDatabase<T>(make: (db: AppDb) => T): (db: AppDb) => T {
  return memoize(make);
}

/** A notification handler: `payload` on `channel`. */
export type NotificationHandler = (channel: string, payload: string) => void;

export interface Listening {
  /** Stops listening (the dedicated connection, with PostgreSQL, is closed). */
  close(): Promise<void>;
}

export interface Database {
  db: AppDb;
  driver: "pglite" | "postgres";
  /**
   * Listens on the channels (LISTEN): `onNotify` is called with each
   * notification committed by any process on this database. With PostgreSQL
   * a dedicated connection listens and comes back after losing its server;
   * `onGap` is called once it is back, since what was raised meanwhile is lost.
   */
  listen(channels: readonly string[], onNotify: NotificationHandler, onGap?: () => void): Promise<Listening>;
  /**
   * A session-level advisory lock held on a connection of its own (the chain watchers'
   * leadership, record 053), or null when another process holds it. Released when that
   * connection ends, so a process killed with -9 gives it up. PGlite: one process opens the
   * database (record 019), so it is always this one's.
   */
  holdLock(key: bigint): Promise<HeldLock | null>;
  /** PostgreSQL: the pool's connections now (a metric); PGlite has one connection and no pool. */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /**
   * PGlite only: VACUUM (ANALYZE) of the whole database. PGlite runs PostgreSQL
   * without its autovacuum worker, so dead rows (every session touch, rate-limit
   * hit and balance change leaves one) are never reclaimed and the planner has
   * no statistics unless the process that holds the database runs this (the
   * backend's jobs do, a second after start and hourly: server/backend/jobs.ts,
   * record 036). PostgreSQL's own autovacuum does this there.
   */
  maintain?: () => Promise<void>;
  /**
   * PGlite only (backups, issue 32, record 055): in one turn of the database, `read` runs its
   * statements in a read-only transaction and PGlite's own tarball of the data folder is taken
   * (uncompressed: ~0.3 s for the demo's 41 MiB; compressing it here took 0.5 s more), with no
   * other query in between — so what `read` saw is what the tarball holds. Serving waits for
   * that turn, as for any long transaction.
   */
  snapshot?: <T>(read: (query: RawQuery) => Promise<T>) => Promise<{ read: T; tarball: Uint8Array }>;
  /** Closes PGlite or ends the pool; the process can exit afterwards. */
  close(): Promise<void>;
}

/** A raw statement's rows (Database.snapshot). */
export type RawQuery = (text: string) => Promise<Record<string, unknown>[]>;

/** A lock of Database.holdLock: `lost` once its connection is gone (then the lock is too). */
export interface HeldLock {
  lost(): boolean;
  release(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent an embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** The data folder; PGlite keeps its files in `${dataDir}/pglite`. */
  dataDir: string;
  /**
   * The bench's figures only (BENCH_STATS, issue 29): told how long each query waited for the
   * database — a pool connection (PostgreSQL) or its turn in the one queue (PGlite) — and how
   * many were waiting before it. Absent (the default) nothing is timed.
   */
  onWait?: ((wait: DatabaseWait) => void) | undefined;
}

/** One wait for the database (OpenDatabaseOptions.onWait). */
export interface DatabaseWait {
  ms: number;
  /** It had to queue: no idle connection and no room for another (PostgreSQL), or the queue was busy (PGlite). */
  queued: boolean;
  /** Waiting before it (PostgreSQL: the pool's waiting count; PGlite: jobs queued or running). */
  ahead: number;
}

/** Connections of one process's PostgreSQL pool. */
const POOL_MAX = 10;

/** Resolved next to this file, so it works from any working directory. */
export const migrationsFolder = path.join(import.meta.dirname, "migrations");

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: POOL_MAX });
    // An idle client losing its connection must not crash the process.
    pool.on("error", () => {});
    if (opts.onWait) timeConnections(pool, POOL_MAX, opts.onWait);
    try {
      const db = drizzlePg({ client: pool, schema });
      await migrateAlone(pool, () => migratePg(db, { migrationsFolder }));
      const url = opts.databaseUrl;
      return {
        db,
        driver: "postgres",
        listen: (channels, onNotify, onGap) => listenPostgres(url, channels, onNotify, onGap),
        holdLock: (key) => holdPostgresLock(url, key),
        poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
        close: () => pool.end(),
      };
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }

  // One process at a time (record 019): the lock is taken before anything in the folder is opened,
  // and a second opener is refused (DataDirLockedError) without having touched the database.
  const lock = await lockDataDir(opts.dataDir);
  const dir = path.resolve(opts.dataDir, "pglite");
  let client: PGlite;
  try {
    // PGlite creates only the last folder of the path itself.
    await mkdir(path.dirname(dir), { recursive: true });
    client = await PGlite.create(dir, { parsers: RAW_PARSERS });
  } catch (error) {
    await lock.release();
    throw error;
  }
  oneQueryPerTurn(client, opts.onWait);
  try {
    const db = drizzlePglite({ client, schema });
    await migratePglite(db, { migrationsFolder });
    let closed = false;
    return {
      db,
      driver: "pglite",
      async listen(channels, onNotify) {
        // One PGlite serves every query of this process: its notifications are this process's own.
        const stops = await Promise.all(
          channels.map((channel) => client.listen(channel, (payload) => onNotify(channel, payload))),
        );
        return {
          async close() {
            if (closed) return;
            await Promise.all(stops.map((stop) => stop()));
          },
        };
      },
      holdLock: () => Promise.resolve({ lost: () => closed, release: () => Promise.resolve() }),
      async maintain() {
        if (closed) return;
        await client.exec("VACUUM (ANALYZE)");
      },
      snapshot: (read) =>
        // client.transaction is the queued one (oneQueryPerTurn): nothing else runs until it ends.
        client.transaction(async (tx) => {
          await tx.query("SET TRANSACTION READ ONLY");
          const seen = await read(async (text) => (await tx.query<Record<string, unknown>>(text)).rows);
          // The tarball is a crash image of the folder at this moment: PGlite never syncs, but every
          // commit's WAL is in the files it reads, and a start on it replays that WAL (record 055).
          const blob = await client.dumpDataDir("none");
          return { read: seen, tarball: new Uint8Array(await blob.arrayBuffer()) };
        }),
      async close() {
        if (closed) return;
        closed = true;
        try {
          await client.close();
        } finally {
          await lock.release();
        }
      },
    };
  } catch (error) {
    await client.close().catch(() => {});
    await lock.release();
    throw error;
  }
}

/** Database.holdLock on PostgreSQL: a client outside the pool, so the lock takes no pool slot. */
async function holdPostgresLock(url: string, key: bigint): Promise<HeldLock | null> {
  const client = new pg.Client({ connectionString: url });
  let lost = false;
  client.on("error", () => {
    lost = true;
  });
  client.on("end", () => {
    lost = true;
  });
  try {
    await client.connect();
    const result = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS held", [
      key.toString(),
    ]);
    if (result.rows[0]?.held === true) {
      return {
        lost: () => lost,
        async release() {
          lost = true;
          await client.end().catch(() => {});
        },
      };
    }
  } catch {
    // Unreachable now: not the leader; the caller asks again later.
  }
  await client.end().catch(() => {});
  return null;
}

/** The advisory lock key of the migrations (any fixed number; "CKMIGRAT" in ASCII). */
const MIGRATION_LOCK = 0x434b4d4947524154n;

/**
 * Runs the migrations while holding a session-level advisory lock on a connection of its own:
 * hosts (or a cluster's primaries) starting at once on one PostgreSQL would otherwise each
 * apply the same migration, and all but one fail at start ("relation … already exists",
 * record 051). The second waits, then finds nothing left to apply.
 */
async function migrateAlone(pool: pg.Pool, migrate: () => Promise<void>): Promise<void> {
  const holder = await pool.connect();
  try {
    await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK.toString()]);
    try {
      await migrate();
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]);
    }
  } finally {
    holder.release();
  }
}

/**
 * The bench's figures (BENCH_STATS): times every checkout of a pool connection — drizzle's
 * queries (pool.query) and transactions (pool.connect) both come through `connect` — from
 * the ask to the connection in hand.
 */
function timeConnections(pool: pg.Pool, max: number, onWait: (wait: DatabaseWait) => void) {
  const connect = pool.connect.bind(pool) as (
    callback?: (error: Error | undefined, client?: pg.PoolClient, release?: () => void) => void,
  ) => Promise<pg.PoolClient> | undefined;
  const timed = (
    callback?: (error: Error | undefined, client?: pg.PoolClient, release?: () => void) => void,
  ) => {
    const asked = performance.now();
    const ahead = pool.waitingCount;
    const queued = pool.idleCount === 0 && pool.totalCount >= max;
    const done = () => onWait({ ms: performance.now() - asked, queued, ahead });
    if (callback) {
      return connect((error, client, release) => {
        done();
        callback(error, client, release);
      });
    }
    return connect()?.finally(done);
  };
  (pool as { connect: unknown }).connect = timed;
}

/**
 * PGlite runs a query synchronously inside the process and answers through
 * promises alone, and Node accepts one new connection per turn of its event
 * loop. Left alone, the queries of 50 requests all ran in one turn (each
 * continuation starting the next query), a turn grew to 100 ms and more, and
 * a new connection waited seconds in the kernel's accept queue (record 036).
 * So the queries take turns: one query (or one whole transaction) per turn of
 * the loop, in the order asked, with the loop's I/O (accepting, reading
 * requests, writing pages) between two of them. PGlite serialises queries
 * anyway; this only decides where the loop gets a word in.
 * Queries inside a transaction run within its turn (it holds the database).
 * Every query, inside a transaction or not, also sheds drizzle's redundant
 * parsers on the way (withoutDefaultParsers, below).
 */
function oneQueryPerTurn(client: PGlite, onWait?: (wait: DatabaseWait) => void) {
  const query = client.query.bind(client);
  const transaction = client.transaction.bind(client);
  const queue: Array<() => Promise<void>> = [];
  let running = false;
  const next = () => {
    const job = queue.shift();
    if (!job) {
      running = false;
      return;
    }
    // Started in the loop's check phase, so the next job waits for the next turn.
    void job().finally(() => setImmediate(next));
  };
  const take = <T>(run: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      if (onWait) {
        const asked = performance.now();
        const ahead = queue.length + (running ? 1 : 0);
        queue.push(() => {
          onWait({ ms: performance.now() - asked, queued: ahead > 0, ahead });
          return run().then(resolve, reject);
        });
      } else queue.push(() => run().then(resolve, reject));
      if (!running) {
        running = true;
        setImmediate(next);
      }
    });
  client.query = <T>(text: string, params?: unknown[], options?: QueryOptions) =>
    take(() => query<T>(text, params, withoutDefaultParsers(options)));
  client.transaction = <T>(callback: (tx: Transaction) => Promise<T>) =>
    take(() =>
      transaction<T>((tx) => {
        const inner = tx.query.bind(tx);
        tx.query = <R>(text: string, params?: unknown[], options?: QueryOptions) =>
          inner<R>(text, params, withoutDefaultParsers(options));
        return callback(tx);
      }),
    );
}

/**
 * drizzle's PGlite driver passes, with every query, parsers that leave dates,
 * timestamps, intervals and a few array types as text (drizzle maps them
 * itself). PGlite then copies its whole table of parsers into a new object per
 * query to merge them in: 11.8 % of the server's CPU on a signed-in data
 * request (profile in BENCHMARKS.md, record 036). So the client is created with
 * those same parsers as its own, and a query's parsers are dropped when they
 * are exactly these (each a function that returns its text unchanged, checked
 * once per options object).
 */
const RAW_TYPES = [1082, 1114, 1115, 1182, 1184, 1185, 1186, 1187, 1231];
const RAW_PARSERS = Object.fromEntries(RAW_TYPES.map((oid) => [oid, (value: string) => value]));
const PROBE = "2001-02-03 04:05:06";
const withoutParsers = new WeakMap<QueryOptions, QueryOptions>();

function withoutDefaultParsers(options: QueryOptions | undefined): QueryOptions | undefined {
  const parsers = options?.parsers;
  if (!options || !parsers) return options;
  let lean = withoutParsers.get(options);
  if (!lean) {
    const same = Object.entries(parsers).every(
      ([oid, parse]) => RAW_TYPES.includes(Number(oid)) && parse(PROBE, Number(oid)) === PROBE,
    );
    lean = same ? { ...options, parsers: undefined } : options;
    withoutParsers.set(options, lean);
  }
  return lean;
}

/** Channel names are ours (lower-case words); anything else is refused rather than quoted. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/u;

/**
 * LISTEN on a dedicated PostgreSQL connection (a pooled one would hand the
 * LISTEN to whichever query came next). When the connection is lost it is
 * opened again after a growing pause (0.5 s up to 10 s), and `onGap` says that
 * notifications may have been missed in between.
 */
async function listenPostgres(
  url: string,
  channels: readonly string[],
  onNotify: NotificationHandler,
  onGap?: () => void,
): Promise<Listening> {
  for (const channel of channels) if (!CHANNEL.test(channel)) throw new Error(`bad channel name: ${channel}`);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let pause = 500;

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: url });
    next.on("notification", (message) => {
      if (message.payload !== undefined) onNotify(message.channel, message.payload);
    });
    next.on("error", () => {});
    next.on("end", () => {
      if (client === next) client = undefined;
      if (!stopped) again();
    });
    await next.connect();
    for (const channel of channels) await next.query(`LISTEN ${channel}`);
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    pause = 500;
  }

  function again() {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        () => onGap?.(),
        () => {
          pause = Math.min(pause * 2, 10_000);
          again();
        },
      );
    }, pause);
    retry.unref();
  }

  await connect();
  return {
    async close() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
