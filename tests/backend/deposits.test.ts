// Deposits keyed on the chain (issue 16 item 4, record 040) over each real
// database: an output is credited once whatever the wallet argument says, a
// foreign address is refused, a pending output is listed as 'pending' (not in
// the balance) and credited exactly once when confirmed, also under
// concurrency; pauses refuse; the operator commands (deposit, deposits import,
// deposits, credit) say what happened and write nothing when they refuse.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Ticker } from "../../common/coins.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { auditLog, chainDeposits, ledgerTransfers, pauses } from "../../server/backend/db/schema.ts";
import { recordDeposit, type DepositPolicy } from "../../server/backend/domain/deposits.ts";
import { walletBalance } from "../../server/backend/domain/ledger.ts";
import { clientBalances } from "../../server/backend/domain/wallets.ts";
import { ConfigError, loadConfig, type Config } from "../../server/config.ts";
import { runInServer } from "../../server/ops/registry.ts";
import { BACKEND_SECRET, randomAddress, insertUser, fundedWallet } from "./helpers.ts";
import { describeEachDatabase } from "./api-suite.ts";

const BTC = 10n ** 8n;
const txid = () => randomBytes(32).toString("hex");

const newUser = (db: AppDb) => insertUser(db, "deposits");

/** A wallet with a real (random, canonical) address of its coin. */
async function issued(db: AppDb, userId: string, coin: Ticker) {
  const { walletId, address } = await fundedWallet(db, userId, coin);
  return { id: walletId, address, userId };
}

/** Rows that any write of a deposit adds to. */
async function counts(db: AppDb) {
  const n = async (table: typeof chainDeposits | typeof ledgerTransfers | typeof auditLog) =>
    (await db.select({ n: sql<number>`count(*)::int` }).from(table))[0]?.n ?? 0;
  const confirmations = await db
    .select({ c: sql<string>`coalesce(sum(${chainDeposits.confirmations}), 0)::text` })
    .from(chainDeposits);
  return {
    deposits: await n(chainDeposits),
    transfers: await n(ledgerTransfers),
    audit: await n(auditLog),
    confirmations: confirmations[0]?.c,
  };
}

describeEachDatabase(
  "deposits keyed on the chain on $name",
  { openTimeout: 120_000 },
  (getDatabase, name) => {
    let db: AppDb;
    let config: Config;
    let policy: DepositPolicy;
    let dir: string;
    const ops = (...argv: string[]) => runInServer([...argv, "--as", "tester"], { db, config });

    beforeAll(async () => {
      db = getDatabase().database.db;
      config = loadConfig({ BACKEND_SECRET, SESSION_SECRET: BACKEND_SECRET, DATA_DIR: tmpdir() });
      policy = { confirmations: config.confirmations, usdtNetwork: config.usdtNetwork };
      dir = await mkdtemp(path.join(tmpdir(), "coinkeep-deposits-"));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    test("the default policy: BTC needs 3 confirmations", () => {
      expect(policy.confirmations.BTC).toBe(3);
    });

    test("a deposit credited twice by id is credited once, whatever wallet or address the repeat names", async () => {
      const user = await newUser(db);
      const btc = await issued(db, user, "BTC");
      const other = await issued(db, await newUser(db), "BTC");
      const id = txid();
      const first = await ops("deposit", "BTC", id, "1", btc.address, "0.5", "--confirmations", "3");
      expect(first).toMatchObject({ code: 0, stderr: "" });
      expect(first.stdout).toBe(
        `Credited 0.5 BTC to wallet ${btc.id}, BTC output ${id}:1 (3 of 3 confirmations). Available balance: 0.5 BTC.\n`,
      );
      const before = await counts(db);

      // The same output again: already credited, nothing written.
      const again = await ops("deposit", "BTC", id, "1", btc.address, "0.5", "--confirmations", "9");
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/^Already credited: 0\.5 BTC to wallet .+ Nothing changed\.\n$/u);
      // Naming another of our wallets' addresses: refused, naming what differs.
      const elsewhere = await ops("deposit", "BTC", id, "1", other.address, "0.5", "--confirmations", "3");
      expect(elsewhere).toEqual({
        code: 1,
        stdout: "",
        stderr: `error: Refused: BTC output ${id}:1 is already recorded with address ${btc.address}, not ${other.address}. Nothing written.\n`,
      });
      const more = await ops("deposit", "BTC", id, "1", btc.address, "0.6", "--confirmations", "3");
      expect(more.stderr).toBe(
        `error: Refused: BTC output ${id}:1 is already recorded with amount 0.5 BTC, not 0.6 BTC. Nothing written.\n`,
      );
      // The operator's credit naming another wallet: refused; naming this one: already credited.
      const vouchOther = await ops("credit", other.id, "0.5", id, "--output", "1");
      expect(vouchOther.code).toBe(1);
      expect(vouchOther.stderr).toMatch(
        new RegExp(
          `^error: Output ${id}:1 was already credited, differently: 0\\.5 BTC to wallet ${btc.id} on `,
        ),
      );
      const vouchSame = await ops("credit", btc.id, "0.5", id, "--output", "1");
      expect(vouchSame.code).toBe(0);
      expect(vouchSame.stdout).toMatch(
        new RegExp(`^Output ${id}:1 was already credited: .*Nothing changed\\.\\n$`),
      );
      // The domain says the same.
      const direct = await recordDeposit(
        db,
        { coin: "BTC", txid: id, outputIndex: 1, address: btc.address, units: BTC / 2n, confirmations: 5 },
        policy,
      );
      expect(direct).toMatchObject({ ok: true, outcome: "already-credited" });

      expect(await counts(db)).toEqual(before);
      expect(await walletBalance(db, btc.id)).toBe(BTC / 2n);
      expect(await walletBalance(db, other.id)).toBe(0n);
    });

    test("a deposit to an address that is not ours is refused, nothing written", async () => {
      const before = await counts(db);
      const foreign = randomAddress("BTC");
      const run = await ops("deposit", "BTC", txid(), "0", foreign, "1", "--confirmations", "6");
      expect(run).toEqual({
        code: 1,
        stdout: "",
        stderr: `error: Refused: ${foreign} is not our address (no BTC wallet has it). Nothing written.\n`,
      });
      // An address of ours, but for another coin, is no BTC address of ours either.
      const eth = await issued(db, await newUser(db), "ETH");
      const wrongCoin = await recordDeposit(
        db,
        { coin: "DOGE", txid: txid(), outputIndex: 0, address: eth.address, units: 1n, confirmations: 99 },
        policy,
      );
      expect(wrongCoin).toMatchObject({ ok: false, reason: "invalid-address" });
      // The same address written another way (all lower case) is ours: compared in canonical form.
      const lower = await recordDeposit(
        db,
        {
          coin: "ETH",
          txid: `0x${txid()}`,
          outputIndex: 0,
          address: eth.address.toLowerCase(),
          units: 5n,
          confirmations: 0,
        },
        policy,
      );
      expect(lower).toMatchObject({ ok: true, outcome: "pending", deposit: { walletId: eth.id } });
      await db.delete(chainDeposits).where(eq(chainDeposits.walletId, eth.id));
      expect(await counts(db)).toEqual(before);
    });

    test("pending below the policy: listed in call 4 as pending, not in the balance; confirmed once, same id", async () => {
      const user = await newUser(db);
      const btc = await issued(db, user, "BTC");
      const id = txid();
      const seen = await ops(
        "deposit",
        "BTC",
        id,
        "0",
        btc.address,
        "0.25",
        "--confirmations",
        "1",
        "--usd",
        "25000",
      );
      expect(seen.stdout).toBe(
        `Pending: 0.25 BTC to wallet ${btc.id}, BTC output ${id}:0, 1 of 3 confirmations; credited once it has 3.\n`,
      );
      const [row] = await db.select().from(chainDeposits).where(eq(chainDeposits.txid, id));
      expect(row).toMatchObject({ status: "pending", confirmations: 1, transferId: null });
      const pending = await clientBalances(db, user);
      expect(pending.balances[btc.id]).toBe("0");
      expect(pending.transactions).toEqual([
        expect.objectContaining({
          id: row?.id,
          wallet_id: btc.id,
          recipient_wallet: "Incoming Transaction",
          amount_in_crypto: "0.25",
          amount_in_dollar: "25000",
          transaction_id: id,
          transaction_crypto: "BTC",
          status: "pending",
        }),
      ]);
      // The wallet page's list (one coin) too.
      const onlyBtc = await clientBalances(db, user, { transactionsCoin: "BTC" });
      expect(onlyBtc.transactions.map((t) => [t.id, t.status])).toEqual([[row?.id, "pending"]]);

      // The same count again: unchanged, nothing written.
      const before = await counts(db);
      const same = await ops("deposit", "BTC", id, "0", btc.address, "0.25", "--confirmations", "1");
      expect(same.stdout).toMatch(/^Pending, unchanged: .*1 of 3 confirmations\. Nothing changed\.\n$/u);
      expect(await counts(db)).toEqual(before);
      // More, not enough: recorded (one audit row), still pending.
      const two = await ops("deposit", "BTC", id, "0", btc.address, "0.25", "--confirmations", "2");
      expect(two.stdout).toMatch(/2 of 3 confirmations; credited once it has 3\.\n$/u);
      expect((await counts(db)).audit).toBe(before.audit + 1);
      expect(await walletBalance(db, btc.id)).toBe(0n);

      const confirmed = await ops("deposit", "BTC", id, "0", btc.address, "0.25", "--confirmations", "4");
      expect(confirmed.stdout).toMatch(
        /^Credited 0\.25 BTC .*\(4 of 3 confirmations\)\. Available balance: 0\.25 BTC\.\n$/u,
      );
      const again = await ops("deposit", "BTC", id, "0", btc.address, "0.25", "--confirmations", "5");
      expect(again.stdout).toMatch(/^Already credited/u);
      expect(await walletBalance(db, btc.id)).toBe(BTC / 4n);
      const [credited] = await db.select().from(chainDeposits).where(eq(chainDeposits.txid, id));
      expect(credited).toMatchObject({
        id: row?.id,
        status: "credited",
        transferId: row?.id,
        confirmations: 4,
      });
      const transfers = await db.select().from(ledgerTransfers).where(eq(ledgerTransfers.externalTxId, id));
      expect(transfers.map((t) => [t.id, t.amount, t.amountUsd])).toEqual([[row?.id, BTC / 4n, "25000"]]);
      const after = await clientBalances(db, user);
      expect(after.balances[btc.id]).toBe("0.25");
      expect(after.transactions.map((t) => [t.id, t.status, t.transaction_id])).toEqual([
        [row?.id, "Confirmed", id],
      ]);
      // The audit log tells the story.
      const actions = await db
        .select({ action: auditLog.action })
        .from(auditLog)
        .where(eq(auditLog.subject, btc.id))
        .orderBy(auditLog.id);
      expect(actions.map((a) => a.action)).toEqual([
        "deposit.pending",
        "deposit.confirmations",
        "deposit.credit",
      ]);
    });

    test("credit vouches for a pending output: credited now under its id; another amount is refused", async () => {
      const btc = await issued(db, await newUser(db), "BTC");
      const id = txid();
      await ops("deposit", "BTC", id, "2", btc.address, "0.3", "--confirmations", "1");
      const [row] = await db.select().from(chainDeposits).where(eq(chainDeposits.txid, id));
      const before = await counts(db);
      const other = await ops("credit", btc.id, "0.31", id, "--output", "2");
      expect(other.stderr).toMatch(
        new RegExp(
          `^error: Output ${id}:2 is recorded as pending, differently: 0\\.3 BTC to wallet ${btc.id} on `,
        ),
      );
      expect(await counts(db)).toEqual(before);
      const vouched = await ops("credit", btc.id, "0.3", id, "--output", "2", "--json");
      expect(JSON.parse(vouched.stdout)).toMatchObject({
        status: "credited",
        transferId: row?.id,
        output: 2,
      });
      expect(await walletBalance(db, btc.id)).toBe((3n * BTC) / 10n);
      const [after] = await db.select().from(chainDeposits).where(eq(chainDeposits.txid, id));
      expect(after).toMatchObject({ id: row?.id, status: "credited", transferId: row?.id, confirmations: 1 });
    });

    test("two outputs of one transaction to two of our wallets: both credited", async () => {
      const a = await issued(db, await newUser(db), "BTC");
      const b = await issued(db, await newUser(db), "BTC");
      const id = txid();
      const one = await ops("deposit", "BTC", id, "0", a.address, "1", "--confirmations", "3");
      const two = await ops("deposit", "BTC", id, "1", b.address, "2", "--confirmations", "3");
      expect([one.code, two.code]).toEqual([0, 0]);
      expect(await walletBalance(db, a.id)).toBe(BTC);
      expect(await walletBalance(db, b.id)).toBe(2n * BTC);
    });

    test("concurrent reports of one output credit it once", async () => {
      const btc = await issued(db, await newUser(db), "BTC");
      const input = (confirmations: number, id: string) => ({
        coin: "BTC" as const,
        txid: id,
        outputIndex: 0,
        address: btc.address,
        units: BTC,
        confirmations,
      });
      // First sight, all at once.
      const id = txid();
      const racing = await Promise.all(
        Array.from({ length: 8 }, () => recordDeposit(db, input(6, id), policy)),
      );
      expect(racing.filter((r) => r.ok && r.outcome === "credited")).toHaveLength(1);
      expect(racing.filter((r) => r.ok && r.outcome === "already-credited")).toHaveLength(7);
      // A pending one confirmed by several reports at once.
      const later = txid();
      expect(await recordDeposit(db, input(0, later), policy)).toMatchObject({
        ok: true,
        outcome: "pending",
      });
      const confirming = await Promise.all(
        Array.from({ length: 8 }, (_, i) => recordDeposit(db, input(3 + i, later), policy)),
      );
      expect(confirming.filter((r) => r.ok && r.outcome === "credited")).toHaveLength(1);
      expect(await walletBalance(db, btc.id)).toBe(2n * BTC);
      const rows = await db.select().from(chainDeposits).where(eq(chainDeposits.walletId, btc.id));
      expect(rows.map((r) => r.status)).toEqual(["credited", "credited"]);
    });

    test("paused deposits are refused, naming the pause's reason; nothing written", async () => {
      const user = await newUser(db);
      const btc = await issued(db, user, "BTC");
      const doge = await issued(db, user, "DOGE");
      const pending = txid();
      await ops("deposit", "BTC", pending, "0", btc.address, "1", "--confirmations", "1");
      const [coinPause] = await db
        .insert(pauses)
        .values({ what: "deposits", coin: "BTC", reason: "node resyncing", actor: "tester" })
        .returning();
      const before = await counts(db);
      const refusals = [
        await ops("deposit", "BTC", txid(), "0", btc.address, "1", "--confirmations", "6"),
        await ops("deposit", "BTC", pending, "0", btc.address, "1", "--confirmations", "6"),
        await ops("credit", btc.id, "1", txid()),
      ];
      for (const run of refusals) {
        expect(run).toEqual({
          code: 1,
          stdout: "",
          stderr: "error: Deposits are paused for BTC: node resyncing. Nothing written.\n",
        });
      }
      // Other coins go on; the user's own pause stops every coin of theirs.
      expect(
        (await ops("deposit", "DOGE", txid(), "0", doge.address, "1", "--confirmations", "40")).code,
      ).toBe(0);
      await db
        .insert(pauses)
        .values({ what: "deposits", userId: user, reason: "account under review", actor: "tester" });
      const userPaused = await ops(
        "deposit",
        "DOGE",
        txid(),
        "0",
        doge.address,
        "1",
        "--confirmations",
        "40",
      );
      expect(userPaused.stderr).toBe(
        "error: Deposits are paused for this user: account under review. Nothing written.\n",
      );
      const after = await counts(db);
      expect(after.deposits).toBe(before.deposits + 1);
      expect(after.transfers).toBe(before.transfers + 1);
      expect(await walletBalance(db, btc.id)).toBe(0n);
      // Resumed: the pending one is credited by the next report.
      await db.delete(pauses).where(eq(pauses.userId, user));
      await db.delete(pauses).where(eq(pauses.id, coinPause?.id ?? ""));
      const resumed = await ops("deposit", "BTC", pending, "0", btc.address, "1", "--confirmations", "6");
      expect(resumed.stdout).toMatch(/^Credited 1 BTC/u);
    });

    test("deposits import: a file with bad lines is refused with every line number, nothing written", async () => {
      const user = await newUser(db);
      const btc = await issued(db, user, "BTC");
      const eth = await issued(db, user, "ETH");
      const credited = txid();
      await ops("deposit", "BTC", credited, "0", btc.address, "0.1", "--confirmations", "3");
      const good = [
        `BTC,${txid()},0,${btc.address},0.5,3`,
        `btc,${txid()},2,${btc.address},0.00000001,0`,
        `ETH,0x${txid()},7,${eth.address},1.5,12`,
        `BTC,${credited},0,${btc.address},0.1,4`,
      ];
      const header = "coin,txid,output,address,amount,confirmations";
      const bad = path.join(dir, `bad-${name}.csv`);
      const foreign = randomAddress("BTC");
      const dup = txid();
      await writeFile(
        bad,
        [
          header,
          ...good,
          `BTC,${txid()},0,${foreign},1,3`,
          `BTC,${txid()},0,${btc.address},0.123456789,3`,
          `XYZ,${txid()},0,${btc.address},1,3`,
          `BTC,${dup},0,${btc.address},1,3`,
          `BTC,${dup},0,${btc.address},1,3`,
          `BTC,${txid()},-1,${btc.address},1,3`,
          `BTC,${txid()},0,${btc.address},1`,
        ].join("\n") + "\n",
      );
      const before = await counts(db);
      const refused = await ops("deposits", "import", bad);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^error: .*bad-\w+\.csv refused, nothing written: 6 bad lines: line 6: /u,
      );
      expect(refused.stderr).toContain(
        `line 6: ${foreign} is not our address (no BTC wallet has it); line 7: `,
      );
      expect(refused.stderr).toContain('line 7: amount "0.123456789" has more than 8 decimals (BTC)');
      expect(refused.stderr).toContain('line 8: unknown coin "XYZ"');
      expect(refused.stderr).toContain(`line 10: the same output as line 9 (BTC output ${dup}:0)`);
      expect(refused.stderr).toContain("line 11: output must be a whole number from 0 to 2147483647");
      expect(refused.stderr).toContain("line 12: 5 fields, expected 6");
      expect(await counts(db)).toEqual(before);

      // Lines that pass alone but not against the database: the foreign address, a conflicting re-report.
      const second = path.join(dir, `second-${name}.csv`);
      await writeFile(
        second,
        [
          header,
          ...good.slice(0, 3),
          `BTC,${txid()},0,${foreign},1,3`,
          `BTC,${credited},0,${btc.address},0.2,4`,
        ].join("\r\n"),
      );
      const refusedAgain = await ops("deposits", "import", second);
      expect(refusedAgain.code).toBe(1);
      expect(refusedAgain.stderr).toContain(
        `refused, nothing written: 2 bad lines: line 5: ${foreign} is not our address (no BTC wallet has it); ` +
          `line 6: BTC output ${credited}:0 is already recorded with amount 0.1 BTC, not 0.2 BTC.\n`,
      );
      expect(await counts(db)).toEqual(before);

      // The good lines alone: applied at once, with a summary and one audit row.
      const fine = path.join(dir, `fine-${name}.csv`);
      await writeFile(fine, [header, ...good].join("\n"));
      const imported = await ops("deposits", "import", fine);
      expect(imported).toEqual({
        code: 0,
        stderr: "",
        stdout: `Imported ${fine}: 4 outputs: 2 credited, 1 pending, 1 unchanged.\n`,
      });
      const after = await counts(db);
      expect(after.deposits).toBe(before.deposits + 3);
      expect(after.transfers).toBe(before.transfers + 2);
      expect(after.audit).toBe(before.audit + 1);
      expect(await walletBalance(db, btc.id)).toBe(BTC / 10n + BTC / 2n);
      expect(await walletBalance(db, eth.id)).toBe(15n * 10n ** 17n);
      // Imported again: nothing new.
      const twice = await ops("deposits", "import", fine);
      expect(twice.stdout).toBe(`Imported ${fine}: 4 outputs: 0 credited, 0 pending, 4 unchanged.\n`);

      const listed = await ops("deposits", "--pending", "--json");
      const rows = JSON.parse(listed.stdout) as { status: string; confirmations: number; required: number }[];
      expect(rows.every((r) => r.status === "pending")).toBe(true);
      expect(rows).toContainEqual(
        expect.objectContaining({ coin: "BTC", output: 2, confirmations: 0, required: 3 }),
      );
      const text = await ops("deposits");
      expect(text.stdout).toMatch(/pending 0 of 3/u);
      expect(text.stdout).toMatch(/\d+ deposits\.\n$/u);
    });

    test("deposit checks its arguments before anything is read", async () => {
      const cases: [string[], string][] = [
        [["deposit", "BTC", "has space", "0", "x"], "error: deposit takes 5 arguments, got 4. Usage: "],
        [
          ["deposit", "BTC", "has space", "0", "x", "1"],
          "error: Refused: txid must be 1 to 256 characters without spaces. Nothing written.\n",
        ],
        [
          ["deposit", "BTC", txid(), "x", "a", "1"],
          "error: Refused: output must be a whole number from 0 to 2147483647. Nothing written.\n",
        ],
        [
          ["deposit", "BTC", txid(), "0", "a", "1", "--confirmations", "many"],
          "error: Refused: confirmations must be a whole number from 0 to 2147483647. Nothing written.\n",
        ],
        [
          ["deposit", "NOPE", txid(), "0", "a", "1"],
          'error: Refused: unknown coin "NOPE". Nothing written.\n',
        ],
        [
          ["deposit", "BTC", txid(), "0", "a", "-1"],
          'error: Invalid value "-1": amounts and indexes are written without a sign.\n',
        ],
        [["deposits", "--confirmations", "3"], "error: --confirmations goes with deposit only.\n"],
      ];
      for (const [argv, message] of cases) {
        const run = await ops(...argv);
        expect(run.code).toBe(1);
        expect(run.stderr.startsWith(message)).toBe(true);
      }
      const output = await ops(
        "credit",
        "00000000-0000-4000-8000-000000000000",
        "1",
        txid(),
        "--output",
        "x",
      );
      expect(output.stderr).toBe('error: Invalid --output "x": a whole number from 0 to 2147483647.\n');
    });
  },
);

describe("the confirmations policy in configuration", () => {
  const base = { BACKEND_SECRET, SESSION_SECRET: BACKEND_SECRET, DATA_DIR: tmpdir() };
  test("defaults per coin; USDT follows its network; each variable overrides its coin", () => {
    expect(loadConfig(base).confirmations).toEqual({
      BTC: 3,
      ETH: 12,
      ADA: 15,
      BNB: 15,
      DOGE: 40,
      SOL: 32,
      TRX: 19,
      USDT: 12,
      XRP: 1,
    });
    expect(loadConfig({ ...base, USDT_NETWORK: "trc20" }).confirmations.USDT).toBe(19);
    expect(loadConfig({ ...base, USDT_NETWORK: "trc20", CONFIRMATIONS_TRX: "25" }).confirmations.USDT).toBe(
      25,
    );
    expect(loadConfig({ ...base, CONFIRMATIONS_ETH: "64" }).confirmations).toMatchObject({
      ETH: 64,
      USDT: 64,
    });
    expect(loadConfig({ ...base, CONFIRMATIONS_USDT: "20" }).confirmations.USDT).toBe(20);
    expect(loadConfig({ ...base, CONFIRMATIONS_BTC: "0" }).confirmations.BTC).toBe(0);
  });
  test("a bad value is refused naming its variable", () => {
    for (const value of ["-1", "1.5", "three", "1000001"]) {
      expect(() => loadConfig({ ...base, CONFIRMATIONS_DOGE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, CONFIRMATIONS_DOGE: value })).toThrow(
        /CONFIRMATIONS_DOGE: must be a whole number from 0 to 1000000/u,
      );
    }
  });
});
