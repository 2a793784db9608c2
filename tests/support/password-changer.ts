// The child of tests/backend/password-crash.test.ts: opens the database (a
// PGlite folder or a PostgreSQL URL) and changes the passwords of the accounts
// it is given back and forth, A → B → A …, as fast as it can, every account at
// once, through the domain's updatePassword, until it is killed (kill -9).
//
// To make the kill land inside a change's transaction rather than only around
// it, the child's database handle lets each transaction say so: after the
// change's UPDATE and before its audit row (the last statement before the
// commit), it prints "mid <user id>" and waits 20 to 50 ms. The domain
// code runs unaltered; only the pause is added.
//
// Input (environment): CRASH_DB (a folder, or postgres://…), CRASH_SECRET (the
// backend secret), CRASH_ACCOUNTS (JSON: [{ userId, a, b }]). Output: "ready",
// then "mid <id>" and "changed <id> <a|b>" lines.
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import { openDatabase, type AppDb } from "../../server/backend/db/index.ts";
import { updatePassword } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";

interface Account {
  userId: string;
  a: string;
  b: string;
}

const where = process.env.CRASH_DB ?? "";
const accounts = JSON.parse(process.env.CRASH_ACCOUNTS ?? "[]") as Account[];
const keys = deriveServerKeys(process.env.CRASH_SECRET ?? "");
const database = await openDatabase(
  where.startsWith("postgres") ? { databaseUrl: where, dataDir: tmpdir() } : { dataDir: where },
);

/** A transaction's handle whose INSERTs (the change's audit row) pause first, and say so. */
function pausing(tx: AppDb, userId: string): AppDb {
  return new Proxy(tx, {
    get(target, name, receiver) {
      if (name !== "insert") return Reflect.get(target, name, receiver) as unknown;
      return (table: Parameters<AppDb["insert"]>[0]) => {
        const builder = target.insert(table);
        return new Proxy(builder, {
          get(inner, key, innerReceiver) {
            if (key !== "values") return Reflect.get(inner, key, innerReceiver) as unknown;
            // The audit row's INSERT, between the change's UPDATE and its commit: say so, wait, then run it.
            return async (...values: Parameters<typeof builder.values>) => {
              process.stdout.write(`mid ${userId}\n`);
              await sleep(20 + Math.random() * 30);
              return builder.values(...values);
            };
          },
        });
      };
    },
  });
}

/** The database for one account's changes: its transactions pause before their last statement. */
function announcing(db: AppDb, userId: string): AppDb {
  return new Proxy(db, {
    get(target, name, receiver) {
      if (name !== "transaction") return Reflect.get(target, name, receiver) as unknown;
      return (run: (tx: AppDb) => Promise<unknown>) => target.transaction((tx) => run(pausing(tx, userId)));
    },
  });
}

process.stdout.write("ready\n");
await Promise.all(
  accounts.map(async ({ userId, a, b }) => {
    const ctx = { db: announcing(database.db, userId), keys };
    // Whichever password is in force now (an earlier kill may have left either): a refusal swaps.
    let from = a;
    let to = b;
    for (;;) {
      const result = await updatePassword(ctx, userId, from, to, { ip: null });
      if (result.ok) process.stdout.write(`changed ${userId} ${to === a ? "a" : "b"}\n`);
      [from, to] = [to, from];
    }
  }),
);
