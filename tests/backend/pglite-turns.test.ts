// The embedded database and the event loop (record 036): PGlite's queries take
// turns with the loop's I/O, and the process that holds it runs the vacuum
// PGlite's missing autovacuum would.
import { createServer, connect, type AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, type Database } from "../../server/backend/db/index.ts";
import { freshDataDir, type DataDir } from "../../scripts/host.ts";

let database: Database;
let data: DataDir;

beforeAll(async () => {
  data = await freshDataDir("coinkeep-turns-");
  database = await openDatabase({ dataDir: data.dataDir });
}, 120_000);

afterAll(async () => {
  await database?.close();
  await data?.remove();
});

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

describe("PGlite (embedded)", () => {
  test("a connection arriving while 300 queries wait is accepted after a few of them, not after all", async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    let done = 0;
    let doneWhenAccepted = -1;
    server.on("connection", () => {
      if (doneWhenAccepted < 0) doneWhenAccepted = done;
    });
    const queries = Array.from({ length: 300 }, () =>
      database.db.execute(sql`SELECT count(*) FROM pg_class`).then(() => {
        done++;
      }),
    );
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    client.on("error", () => {});
    await Promise.all(queries);
    await new Promise<void>((resolve) =>
      doneWhenAccepted >= 0 ? resolve() : server.once("connection", () => resolve()),
    );
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(done).toBe(300);
    expect(doneWhenAccepted).toBeGreaterThanOrEqual(0);
    expect(doneWhenAccepted).toBeLessThan(30);
  });

  test("transactions still hold the database: a query asked meanwhile sees the whole change or none", async () => {
    await database.db.execute(sql`CREATE TABLE turn_pair (a int NOT NULL, b int NOT NULL)`);
    await database.db.execute(sql`INSERT INTO turn_pair VALUES (0, 0)`);
    const seen: Array<{ a: number; b: number }> = [];
    const writes = Array.from({ length: 20 }, () =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`UPDATE turn_pair SET a = a + 1`);
        await tx.execute(sql`UPDATE turn_pair SET b = b + 1`);
      }),
    );
    const reads = Array.from({ length: 20 }, async () => {
      seen.push(
        rowsOf<{ a: number; b: number }>(await database.db.execute(sql`SELECT a, b FROM turn_pair`))[0]!,
      );
    });
    await Promise.all([...writes, ...reads]);
    expect(seen).toHaveLength(20);
    for (const row of seen) expect(row.a).toBe(row.b);
    const [last] = rowsOf<{ a: number; b: number }>(
      await database.db.execute(sql`SELECT a, b FROM turn_pair`),
    );
    expect(last).toEqual({ a: 20, b: 20 });
  });

  test("maintain() vacuums and analyzes: dead rows are reclaimed and the planner has statistics", async () => {
    await database.db.execute(sql`CREATE TABLE turn_churn (id int PRIMARY KEY, v int NOT NULL)`);
    await database.db.execute(sql`INSERT INTO turn_churn SELECT g, 0 FROM generate_series(1, 2000) g`);
    for (let i = 0; i < 3; i++) await database.db.execute(sql`UPDATE turn_churn SET v = v + 1`);
    const stats = async () => {
      // Statistics reach the views when a transaction ends, at most once a second: flush now.
      await database.db.execute(sql`SELECT pg_stat_force_next_flush()`);
      await database.db.execute(sql`SELECT 1`);
      return rowsOf<{ dead: number; vacuumed: string | null; analyzed: string | null }>(
        await database.db.execute(
          sql`SELECT n_dead_tup::int AS dead, last_vacuum AS vacuumed, last_analyze AS analyzed
              FROM pg_stat_user_tables WHERE relname = 'turn_churn'`,
        ),
      )[0]!;
    };
    const before = await stats();
    expect(before.dead).toBeGreaterThan(0);
    expect(before.vacuumed).toBeNull();
    expect(before.analyzed).toBeNull();
    await database.maintain?.();
    const after = await stats();
    expect(after.dead).toBe(0);
    expect(after.vacuumed).not.toBeNull();
    expect(after.analyzed).not.toBeNull();
  });
});
