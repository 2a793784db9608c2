// A model-based property test of sends through the API (call 6) and the
// operator's decisions: random deposits, sends with and without idempotency
// keys, replays with the same and with a changed body, approvals, declines and
// attempts on someone else's wallet, checked step by step against a plain
// model of what the user must see (the answer, the balance, each send's status).
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, expect, test } from "vitest";
import type { AppDb } from "../../server/backend/db/index.ts";
import {
  creditDeposit,
  postWithdrawal,
  voidWithdrawal,
  walletBalance,
} from "../../server/backend/domain/ledger.ts";
import { randomAddress, fundedWallet, inProcess } from "./helpers.ts";
import { describeEachDatabase, type ApiAnswer, connectApi } from "./api-suite.ts";

/** 0.0001 ETH in wei: every amount here is a whole number of these (4 decimals). */
const TICK = 10n ** 14n;

type Step =
  | { t: "deposit"; ticks: number }
  | { t: "send"; ticks: number; key: number | null; to: number }
  | { t: "replay"; k: number; change: boolean }
  | { t: "approve"; k: number }
  | { t: "decline"; k: number }
  | { t: "foreign"; ticks: number };

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("deposit" as const),
        ticks: fc.integer({ min: 1, max: 50_000 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        t: fc.constant("send" as const),
        ticks: fc.integer({ min: 1, max: 40_000 }),
        key: fc.option(fc.nat(3), { nil: null }),
        to: fc.nat(1),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ t: fc.constant("replay" as const), k: fc.nat(), change: fc.boolean() }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("approve" as const), k: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("decline" as const), k: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({ t: fc.constant("foreign" as const), ticks: fc.integer({ min: 1, max: 10 }) }),
    },
  ),
  { minLength: 8, maxLength: 30, size: "max" },
);

function decimal(ticks: number): string {
  const whole = Math.floor(ticks / 10_000);
  const fraction = String(ticks % 10_000)
    .padStart(4, "0")
    .replace(/0+$/u, "");
  return fraction ? `${whole}.${fraction}` : String(whole);
}

const replayed = (answer: ApiAnswer) => answer.headers.get("idempotent-replayed") === "true";

describeEachDatabase("model of sends on $name", { openTimeout: 60_000 }, (getDatabase) => {
  const api = connectApi(inProcess, getDatabase);
  const { call } = api;
  let db: AppDb;
  beforeAll(() => {
    db = api.db;
  });

  async function user() {
    const { email, twelveWords, userId } = await api.newAccount("model");
    const { walletId } = await fundedWallet(db, userId, "ETH");
    return { email, twelveWords, walletId };
  }

  test("sends, replays, approvals and declines match the model at every step", async () => {
    const destinations = [randomAddress("ETH"), randomAddress("ETH")];
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const me = await user();
        const stranger = await user();
        const runId = randomBytes(6).toString("hex");
        let available = 0n;
        const sends: { id: string; units: bigint; status: "pending" | "Confirmed" | "Declined" }[] = [];
        // key → the request it was first used for (only for sends that went through).
        const keys = new Map<number, { ticks: number; to: number; id: string }>();

        const send = (ticks: number, to: number, key: number | null, walletId = me.walletId) =>
          call("/request-transaction", {
            email: me.email,
            twelveWords: me.twelveWords,
            amount: decimal(ticks),
            amount_in_usd: "1",
            receiver_wallet_address: destinations[to],
            wallet_id: walletId,
            ...(key === null ? {} : { idempotency_key: `model-${runId}-key-${key}` }),
          });

        // Every run starts with money to send; later deposits top it up.
        for (const step of [{ t: "deposit" as const, ticks: 60_000 }, ...plan]) {
          switch (step.t) {
            case "deposit": {
              const credited = await creditDeposit(db, {
                walletId: me.walletId,
                units: BigInt(step.ticks) * TICK,
                externalTxId: `model-${randomBytes(8).toString("hex")}`,
              });
              expect(credited.ok).toBe(true);
              available += BigInt(step.ticks) * TICK;
              break;
            }
            case "send":
            case "replay": {
              let ticks: number, to: number, key: number | null;
              if (step.t === "send") ({ ticks, to, key } = step);
              else {
                const used = [...keys.entries()];
                const entry = used[step.k % Math.max(used.length, 1)];
                if (!entry) break;
                const [k, first] = entry;
                key = k;
                ticks = step.change ? first.ticks + 1 : first.ticks;
                to = first.to;
              }
              const answer = await send(ticks, to, key);
              const first = key === null ? undefined : keys.get(key);
              const units = BigInt(ticks) * TICK;
              if (first) {
                if (first.ticks === ticks && first.to === to) {
                  expect(answer.status).toBe(200);
                  expect(replayed(answer)).toBe(true);
                  expect((answer.body.transaction as { id: string }).id).toBe(first.id);
                } else {
                  expect(answer.status).toBe(409);
                }
              } else if (units <= available) {
                expect(answer.status).toBe(200);
                expect(replayed(answer)).toBe(false);
                const id = (answer.body.transaction as { id: string }).id;
                sends.push({ id, units, status: "pending" });
                available -= units;
                if (key !== null) keys.set(key, { ticks, to, id });
              } else {
                expect(answer.status).toBe(422);
                expect(answer.body.message).toBe("Insufficient balance.");
              }
              break;
            }
            case "approve":
            case "decline": {
              const chosen = sends[step.k % Math.max(sends.length, 1)];
              if (!chosen) break;
              const decided =
                step.t === "approve"
                  ? await postWithdrawal(db, chosen.id)
                  : await voidWithdrawal(db, chosen.id, "Declined by the model.");
              if (chosen.status === "pending") {
                expect(decided.ok).toBe(true);
                chosen.status = step.t === "approve" ? "Confirmed" : "Declined";
                if (step.t === "decline") available += chosen.units;
              } else {
                expect(decided).toEqual({ ok: false, reason: "already-decided", status: chosen.status });
              }
              break;
            }
            case "foreign": {
              const answer = await send(step.ticks, 0, null, stranger.walletId);
              expect(answer.status).toBe(404);
              expect(await walletBalance(db, stranger.walletId)).toBe(0n);
              break;
            }
          }
          // After every step: the balance the user sees, never below zero.
          expect(await walletBalance(db, me.walletId)).toBe(available);
          expect(available >= 0n).toBe(true);
        }

        // The running balance the user saw is the ledger's: credits − debits of the wallet's transfers (record 017).
        const derived = await db.execute<{ total: string }>(sql`
          select (coalesce(sum(case when t.credit_account_id = a.id then t.amount else -t.amount end), 0))::text as total
          from ledger_accounts a join ledger_transfers t on a.id in (t.credit_account_id, t.debit_account_id)
          where a.wallet_id = ${me.walletId}`);
        const totals = Array.isArray(derived) ? derived : (derived as { rows: { total: string }[] }).rows;
        expect(BigInt(totals[0]?.total ?? "-1")).toBe(available);

        // And the list the user sees: every send once, with its status.
        const view = await call("/aml-client-balances", { email: me.email, twelveWords: me.twelveWords });
        const listed = (view.body.transactions as { id: string; status: string; recipient_wallet: string }[])
          .filter((t) => t.recipient_wallet !== "Incoming Transaction")
          .map((t): [string, string] => [t.id, t.status]);
        expect(new Map(listed)).toEqual(new Map(sends.map((s) => [s.id, s.status])));
        expect(listed).toHaveLength(sends.length);
      }),
      { numRuns: 25 },
    );
  }, 240_000);
});
