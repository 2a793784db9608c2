// Migration tests: a real database of each kind migrated up to a point, filled
// as the code of that time wrote it, then migrated the rest of the way.
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { migrationsFolder, type AppDb } from "../../server/backend/db/index.ts";
import * as schema from "../../server/backend/db/schema.ts";
import { pgliteTemplate } from "./helpers.ts";

export { migrationsFolder };

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

export interface Target {
  name: string;
  open(): Promise<{ db: AppDb; migrate(folder: string): Promise<void>; close(): Promise<void> }>;
}

export const targets: Target[] = [
  {
    name: "pglite",
    async open() {
      const root = await mkdtemp(path.join(tmpdir(), "coinkeep-backfill-"));
      const seed = await pgliteTemplate();
      if (seed) await cp(seed, path.join(root, "pglite"), { recursive: true });
      const client = await PGlite.create(path.join(root, "pglite"));
      const db = drizzlePglite({ client, schema });
      return {
        db,
        migrate: (folder) => migratePglite(db, { migrationsFolder: folder }),
        async close() {
          await client.close();
          await rm(root, { recursive: true, force: true });
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
      const name = `coinkeep_test_${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${name}"`);
      await admin.end();
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
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
          const dropper = new pg.Client({ connectionString: adminUrl });
          await dropper.connect();
          await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
          await dropper.end();
        },
      };
    },
  });
}
