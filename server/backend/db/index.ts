// Opens the application database and applies pending migrations.
// Without a DATABASE_URL the data lives in an embedded PGlite under the data
// folder; with one, a node-postgres pool talks to a PostgreSQL server.
// Both drivers share one schema and one set of migrations.
import { memoize } from "../../../common/memo.ts";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
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

/**
 * Makes a value once per database handle and hands out the same one after: a
 * prepared statement (built once, planned once per connection) or a cache.
 */
export function perDatabase<T>(make: (db: AppDb) => T): (db: AppDb) => T {
  return memoize(make);
}

export interface Database {
  db: AppDb;
  driver: "pglite" | "postgres";
  /** Closes PGlite or ends the pool; the process can exit afterwards. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent an embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** The data folder; PGlite keeps its files in `${dataDir}/pglite`. */
  dataDir: string;
}

/** Resolved next to this file, so it works from any working directory. */
export const migrationsFolder = path.join(import.meta.dirname, "migrations");

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle client losing its connection must not crash the process.
    pool.on("error", () => {});
    try {
      const db = drizzlePg({ client: pool, schema });
      await migratePg(db, { migrationsFolder });
      return {
        db,
        driver: "postgres",
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
    client = await PGlite.create(dir);
  } catch (error) {
    await lock.release();
    throw error;
  }
  try {
    const db = drizzlePglite({ client, schema });
    await migratePglite(db, { migrationsFolder });
    let closed = false;
    return {
      db,
      driver: "pglite",
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
