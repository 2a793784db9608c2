// The child of tests/backend/chain-watch-host.test.ts's "kill -9 inside a step's transaction":
// opens the database (a PGlite folder or a PostgreSQL URL) and runs the ETH network's chain
// watcher (server/backend/chains/watcher.ts, unaltered) step after step against a real node,
// until it is killed.
//
// To make a kill land inside the transaction that records a batch of blocks (recordBlocks in
// server/backend/domain/chain-watch.ts), the child's database handle can pause one statement of
// it, say so, and wait (30 s, longer than any test waits): the test kills the child while it
// waits, so nothing after that point can have been committed. Where it pauses (CHILD_PAUSE):
//   - "cursor": before the cursor's UPDATE, the transaction's last statement — every deposit
//     of the batch written, none committed;
//   - "deposit:N": before the N-th UPDATE of a deposit's block (each comes right after that
//     deposit is recorded through recordDeposit) — part of the batch written;
//   - "none": no pause.
// CHILD_PAUSE_AFTER (default 0): how many such transactions to let commit before one pauses.
// The line it prints first: "mid <from>-<to> deposits <k>" (the batch's first and last block and
// how many deposits the transaction had recorded when it paused).
//
// Input (environment): CHILD_DB (a folder, or postgres://…), CHILD_RPC, CHILD_TOKEN (the
// token's address), CHILD_CONFIRMATIONS (JSON: { ETH, USDT }), CHILD_BATCH (blocks per step),
// CHILD_PAUSE. Output: "step <outcome> <cursor>" after each step, and the "mid" line.
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import { createChainWatcher } from "../../server/backend/chains/watcher.ts";
import { openDatabase, type AppDb } from "../../server/backend/db/index.ts";
import { chainBlocks, chainCursors, chainDeposits } from "../../server/backend/db/schema.ts";
import { listCursors } from "../../server/backend/domain/chain-watch.ts";

const where = process.env.CHILD_DB ?? "";
const pause = process.env.CHILD_PAUSE ?? "none";
const pauseAtDeposit = pause.startsWith("deposit:") ? Number(pause.slice("deposit:".length)) : undefined;
let letThrough = Number(process.env.CHILD_PAUSE_AFTER ?? "0");
const required = JSON.parse(process.env.CHILD_CONFIRMATIONS ?? "{}") as { ETH: number; USDT: number };
const database = await openDatabase(
  where.startsWith("postgres") ? { databaseUrl: where, dataDir: tmpdir() } : { dataDir: where },
);

/** A transaction's handle that pauses where CHILD_PAUSE says, once it has written the batch's blocks. */
function pausing(tx: AppDb): AppDb {
  let blocks: { from: number; to: number } | undefined;
  let deposits = 0;
  let paused = false;
  const wait = async () => {
    if (!blocks || paused) return;
    paused = true;
    process.stdout.write(`mid ${blocks.from}-${blocks.to} deposits ${deposits}\n`);
    await sleep(30_000);
  };
  return new Proxy(tx, {
    get(target, name, receiver) {
      if (name === "insert") {
        return (table: Parameters<AppDb["insert"]>[0]) => {
          const builder = target.insert(table);
          if (table !== chainBlocks) return builder;
          return new Proxy(builder, {
            get(inner, key, innerReceiver) {
              if (key !== "values") return Reflect.get(inner, key, innerReceiver) as unknown;
              return (rows: { number: number }[]) => {
                const numbers = rows.map((r) => r.number);
                // A batch's transaction: the first CHILD_PAUSE_AFTER of them run through.
                if (letThrough-- > 0) return inner.values(rows as Parameters<typeof inner.values>[0]);
                blocks = { from: Math.min(...numbers), to: Math.max(...numbers) };
                return inner.values(rows as Parameters<typeof inner.values>[0]);
              };
            },
          });
        };
      }
      if (name === "update") {
        return (table: Parameters<AppDb["update"]>[0]) => {
          const builder = target.update(table);
          if (!blocks) return builder;
          if (table === chainDeposits) {
            deposits += 1;
            if (deposits !== pauseAtDeposit) return builder;
          } else if (table !== chainCursors || pause !== "cursor") {
            return builder;
          }
          // set(…) makes the statement (then where(…), then awaited): it runs after the pause.
          return new Proxy(builder, {
            get(inner, key, innerReceiver) {
              if (key !== "set") return Reflect.get(inner, key, innerReceiver) as unknown;
              return (values: Parameters<typeof inner.set>[0]) => pausedBeforeRun(inner.set(values), wait);
            },
          });
        };
      }
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
}

/** A statement (where … then awaited) that runs only after `wait`. */
function pausedBeforeRun<T extends object>(builder: T, wait: () => Promise<void>): T {
  return new Proxy(builder, {
    get(inner, key, receiver) {
      if (key !== "then") return Reflect.get(inner, key, receiver) as unknown;
      const then = Reflect.get(inner, key, receiver) as PromiseLike<unknown>["then"];
      return (resolve: (v: unknown) => unknown, reject: (e: unknown) => unknown) =>
        wait().then(() => then.call(receiver, resolve, reject), reject);
    },
  });
}

const db = new Proxy(database.db, {
  get(target, name, receiver) {
    if (name !== "transaction") return Reflect.get(target, name, receiver) as unknown;
    return (run: (tx: AppDb) => Promise<unknown>) => target.transaction((tx) => run(pausing(tx)));
  },
});

const policyOf = (eth: number, usdt: number) =>
  ({
    confirmations: { BTC: 1, ETH: eth, ADA: 1, BNB: 1, DOGE: 1, SOL: 1, TRX: 1, XRP: 1, USDT: usdt },
    usdtNetwork: "erc20",
  }) as const;

const watcher = createChainWatcher({
  db,
  setting: {
    network: "ETH",
    rpcUrl: process.env.CHILD_RPC ?? "",
    native: "ETH",
    token: { coin: "USDT", address: (process.env.CHILD_TOKEN ?? "") as `0x${string}` },
  },
  policy: policyOf(required.ETH, required.USDT),
  pollMs: 50,
  holdLock: (key) => database.holdLock(key),
  batchBlocks: Number(process.env.CHILD_BATCH ?? "5"),
});

for (;;) {
  const outcome = await watcher.step();
  const [cursor] = await listCursors(database.db);
  process.stdout.write(`step ${outcome} ${cursor?.blockNumber ?? "none"}\n`);
  if (outcome === "caught-up" || outcome === "not-leader" || outcome === "failed") await sleep(50);
}
