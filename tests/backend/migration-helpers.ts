// Migration tests: a real database of each kind migrated up to a point, filled
// as the code of that time wrote it, then migrated the rest of the way.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe } from "vitest";
import { migrationsFolder, type AppDb } from "../../server/backend/db/index.ts";
import * as schema from "../../server/backend/db/schema.ts";
import { freshDataDir } from "../../scripts/host.ts";
import { createTempPostgres } from "./helpers.ts";

/** A copy of the migrations folder that stops before `tag`. */
export async function migrationsBefore(tag: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "coinkeep-migrations-"));
  await cp(migrationsFolder, dir, { recursive: true });
  const journalPath = path.join(dir, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: { tag: string }[] };
  const index = journal.entries.findIndex((e) => e.tag === tag);
  if (index < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, index);
  await writeFile(journalPath, JSON.stringify(journal));
  return dir;
}

interface Target {
  name: string;
  open(): Promise<{ db: AppDb; migrate(folder: string): Promise<void>; close(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: "pglite",
    async open() {
      const { dataDir, remove } = await freshDataDir("coinkeep-backfill-");
      await mkdir(dataDir, { recursive: true });
      const client = await PGlite.create(path.join(dataDir, "pglite"));
      const db = drizzlePglite({ client, schema });
      return {
        db,
        migrate: (folder) => migratePglite(db, { migrationsFolder: folder }),
        async close() {
          await client.close();
          await remove();
        },
      };
    },
  },
];
const adminUrl = process.env.TEST_DATABASE_URL;
if (adminUrl) {
  targets.push({
    name: "postgres",
    async open() {
      const { url, drop } = await createTempPostgres(adminUrl);
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      // A client still closing when close() drops the database WITH (FORCE) is told so
      // (57P01): expected at teardown, not a failure (seen on a loaded machine).
      pool.on("error", (error: Error & { code?: string }) => {
        if (error.code !== "57P01") throw error;
      });
      const db = drizzlePg({ client: pool, schema });
      return {
        db,
        migrate: (folder) => migratePg(db, { migrationsFolder: folder }),
        async close() {
          await pool.end();
          await drop();
        },
      };
    },
  });
}

/** A database in the suite, not migrated until it says so. */
export interface Migrating {
  /** The database (after the describe's beforeAll). */
  readonly db: AppDb;
  /** Applies the migrations before the one under test. */
  migrateBefore(): Promise<void>;
  /** Applies the rest: the one under test and any after it. */
  migrateRest(): Promise<void>;
}

/** One describe per database ("$name" in the title), for the migration `tag`. */
export function describeMigration(title: string, tag: string, suite: (migrating: Migrating) => void): void {
  describe.each(targets)(`${title}`, (target) => {
    let opened: Awaited<ReturnType<Target["open"]>> | undefined;
    let before: string | undefined;
    beforeAll(async () => {
      opened = await target.open();
      before = await migrationsBefore(tag);
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
      if (before) await rm(before, { recursive: true, force: true });
    });
    const open = () => {
      if (!opened || !before) throw new Error("the database is not open yet");
      return { opened, before };
    };
    suite({
      get db() {
        return open().opened.db;
      },
      migrateBefore: () => open().opened.migrate(open().before),
      migrateRest: () => open().opened.migrate(migrationsFolder),
    });
  });
}
