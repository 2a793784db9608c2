// Section 3, the money path (PostgreSQL only): sends per second through
// POST /api/request-transaction (call 6: check the phrase, price the send,
// hold the amount in the ledger, record the idempotency key), with `clients`
// clients sending back to back, then pgbench's TPC-B-like transactions on
// the same PostgreSQL server with the same number of clients for as long (the
// ratio is the figure); then the ledger invariants are checked.
// Adapted from scripts/bench-sends.ts (removed with issue 25; its last version is at 950b96b).
import { randomBytes } from "node:crypto";
import pg from "pg";
import { log, percentile, round, run } from "./lib.ts";
import type { Sender } from "./seed.ts";

export interface SendSettings {
  clients: number;
  seconds: number;
  pgbenchScale: number;
}

export interface Invariants {
  ok: boolean;
  checks: Record<string, number | string | boolean>;
}

export interface SendReport {
  settings: SendSettings;
  sends: {
    ok: number;
    statuses: Record<string, number>;
    perSecond: number;
    latencyMs: { p50: number; p95: number; p99: number; max: number };
  };
  pgbench: { tps: number; latencyAverageMs: number };
  ratio: number;
  invariants: Invariants;
}

/** Call 6's body for one of the bench's sends: 0.0001 ETH from the sender's wallet, under `key`. */
export function sendBody(sender: Sender, key: string) {
  return {
    email: sender.email,
    twelveWords: sender.words.join(" "),
    amount: "0.0001",
    amount_in_usd: "0",
    receiver_wallet_address: sender.destination,
    wallet_id: sender.walletId,
    idempotency_key: key,
  };
}

async function sendLoad(base: string, senders: readonly Sender[], settings: SendSettings) {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  const stopAt = performance.now() + settings.seconds * 1000;
  async function client(offset: number) {
    for (let i = offset; performance.now() < stopAt; i += settings.clients) {
      const sender = senders[i % senders.length];
      if (!sender) return;
      const started = performance.now();
      let status: string;
      try {
        const answer = await fetch(`${base}/api/request-transaction`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            platform: "CK",
            ...sendBody(sender, randomBytes(16).toString("hex")),
          }),
        });
        await answer.arrayBuffer();
        status = String(answer.status);
      } catch (error) {
        status = error instanceof Error ? error.name : "error";
      }
      latencies.push(performance.now() - started);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === "200") ok++;
    }
  }
  const started = performance.now();
  await Promise.all(Array.from({ length: settings.clients }, (_, i) => client(i)));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ok,
    statuses,
    perSecond: round(ok / seconds),
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? Number.NaN),
    },
  };
}

/** Counts rows that break a rule; every check must come out 0 (or true). */
export async function checkInvariants(
  databaseUrl: string,
  senders: readonly Sender[],
  sendsBefore: number,
  answered200: number,
): Promise<Invariants> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const count = async (statement: string, values: unknown[] = []) =>
      Number((await client.query<{ n: string }>(statement, values)).rows[0]?.n ?? Number.NaN);
    // Each account's balance from the transfers: credits − debits.
    const balances = `
      select a.id, a.coin, a.kind, a.wallet_id,
             coalesce((select sum(amount) from ledger_transfers t where t.credit_account_id = a.id), 0)
           - coalesce((select sum(amount) from ledger_transfers t where t.debit_account_id = a.id), 0) as balance
      from ledger_accounts a`;
    const checks: Record<string, number | string | boolean> = {};
    checks.negativeWalletBalances = await count(
      `select count(*) as n from (${balances}) b where b.kind = 'wallet' and b.balance < 0`,
    );
    // Double entry: per coin, every account's balance sums to zero (debits = credits).
    checks.coinsWhereDebitsDifferFromCredits = await count(
      `select count(*) as n from (select coin from (${balances}) b group by coin having sum(balance) <> 0) x`,
    );
    checks.transfersAcrossCoins = await count(`
      select count(*) as n from ledger_transfers t
      join ledger_accounts d on d.id = t.debit_account_id
      join ledger_accounts c on c.id = t.credit_account_id
      where d.coin <> t.coin or c.coin <> t.coin`);
    const hasRunningBalance =
      (await count(`select count(*) as n from information_schema.columns
                    where table_name = 'ledger_accounts' and column_name = 'balance'`)) > 0;
    if (hasRunningBalance) {
      checks.runningBalancesOff = await count(`
        select count(*) as n from (${balances}) b join ledger_accounts a on a.id = b.id
        where a.kind = 'wallet' and a.balance <> b.balance`);
    }
    // Every send holds exactly its amount, from its own wallet's account, into withdrawals_pending.
    checks.holdsNotMatchingTheirSend = await count(`
      select count(*) as n from withdrawals w
      left join ledger_transfers h on h.id = w.hold_transfer_id
      left join ledger_accounts wa on wa.wallet_id = w.wallet_id
      left join ledger_accounts pa on pa.id = h.credit_account_id
      where h.id is null or h.kind <> 'withdrawal_hold' or h.amount <> w.amount
         or h.debit_account_id <> wa.id or pa.kind <> 'withdrawals_pending'`);
    // A pending send has no resolution; a Confirmed one exactly one post, a Declined one one void.
    checks.resolutionsNotMatchingStatus = await count(`
      select count(*) as n from withdrawals w
      left join ledger_transfers r on r.pending_id = w.hold_transfer_id
      where (w.status = 'pending' and r.id is not null)
         or (w.status = 'Confirmed' and (r.id is null or r.kind <> 'withdrawal_post' or r.amount <> w.amount))
         or (w.status = 'Declined' and (r.id is null or r.kind <> 'withdrawal_void' or r.amount <> w.amount))`);
    // withdrawals_pending holds exactly the pending sends, per coin.
    checks.coinsWherePendingDiffersFromPendingSends = await count(`
      select count(*) as n from (${balances}) b
      where b.kind = 'withdrawals_pending' and b.balance <> coalesce((
        select sum(w.amount) from withdrawals w join wallets wl on wl.id = w.wallet_id
        where w.status = 'pending' and wl.coin = b.coin), 0)`);
    const walletIds = senders.map((s) => s.walletId);
    const sendsAfter = await count(
      `select count(*) as n from withdrawals where wallet_id = any($1::uuid[])`,
      [walletIds],
    );
    checks.sendsAnswered200 = answered200;
    checks.sendsRecorded = sendsAfter - sendsBefore;
    checks.idempotencyKeys = await count(
      `select count(*) as n from send_requests s join withdrawals w on w.id = s.withdrawal_id
       where w.wallet_id = any($1::uuid[])`,
      [walletIds],
    );
    const ok =
      Object.entries(checks).every(
        ([name, value]) => name.startsWith("sends") || name === "idempotencyKeys" || value === 0,
      ) &&
      checks.sendsRecorded === answered200 &&
      checks.idempotencyKeys === sendsAfter;
    return { ok, checks };
  } finally {
    await client.end();
  }
}

export async function runSends(
  base: string,
  appDatabaseUrl: string,
  pgbenchDatabaseUrl: string,
  senders: readonly Sender[],
  settings: SendSettings,
): Promise<SendReport> {
  const before = new pg.Client({ connectionString: appDatabaseUrl });
  await before.connect();
  const sendsBefore = Number(
    (
      await before.query<{ n: string }>(
        `select count(*) as n from withdrawals where wallet_id = any($1::uuid[])`,
        [senders.map((s) => s.walletId)],
      )
    ).rows[0]?.n,
  );
  await before.end();

  const sends = await sendLoad(base, senders, settings);
  log(
    `sends: ${sends.perSecond}/s (${sends.ok} ok of ${Object.values(sends.statuses).reduce((a, b) => a + b, 0)}), ` +
      `p50 ${sends.latencyMs.p50} ms, p99 ${sends.latencyMs.p99} ms`,
  );
  const invariants = await checkInvariants(appDatabaseUrl, senders, sendsBefore, sends.ok);
  log(`sends: ledger invariants ${invariants.ok ? "hold" : "BROKEN"} ${JSON.stringify(invariants.checks)}`);

  await run("pgbench", ["-i", "-s", String(settings.pgbenchScale), "-q", pgbenchDatabaseUrl]);
  const bench = await run("pgbench", [
    "-c",
    String(settings.clients),
    "-j",
    "2",
    "-T",
    String(settings.seconds),
    "-n",
    pgbenchDatabaseUrl,
  ]);
  const tps = Number(/tps = ([\d.]+)/u.exec(bench.stdout)?.[1] ?? Number.NaN);
  const latencyAverageMs = Number(/latency average = ([\d.]+) ms/u.exec(bench.stdout)?.[1] ?? Number.NaN);
  log(`sends: pgbench TPC-B-like ${round(tps)} tps (latency average ${latencyAverageMs} ms)`);
  return {
    settings,
    sends,
    pgbench: { tps: round(tps), latencyAverageMs },
    ratio: round(sends.perSecond / tps, 4),
    invariants,
  };
}
