// Kill switches and reconciliation (issue 16, record 041), on each database:
// the operator commands as the ops socket runs them (runInServer: the same
// parsing, checks and output as the command line), what they write (the pause,
// its audit row with who and why; nothing at all on a refusal), sends refused
// with the distinct code over both transports while paused, and the
// reconciliation figures, exact, with a planted shortfall pausing the coin.
import { count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, test } from "vitest";
import type { Ticker } from "../../common/coins.ts";
import { loadConfig } from "../../server/config.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import {
  auditLog,
  custodyHoldings,
  ledgerTransfers,
  pauses,
  withdrawals,
} from "../../server/backend/db/schema.ts";
import { parseAmount } from "../../server/backend/domain/amounts.ts";
import { activePause, pause, resume } from "../../server/backend/domain/controls.ts";
import {
  creditDeposit,
  holdWithdrawal,
  postWithdrawal,
  voidWithdrawal,
  walletBalance,
} from "../../server/backend/domain/ledger.ts";
import { runInServer } from "../../server/ops/registry.ts";
import { BACKEND_SECRET, randomAddress, transports, type Connection, clientHolder } from "./helpers.ts";
import { describeEachDatabase, connectApi } from "./api-suite.ts";

const COIN_PAUSED = "Sends of ETH are paused for now. Your funds are safe; please try again later.";
const USER_PAUSED =
  "Sends from your account are paused for now. Your funds are safe; please contact support.";

/** DOGE's row of `reconcile --json`. */
function dogeRow(json: unknown) {
  return (json as { coin: string }[]).find((r) => r.coin === "DOGE");
}

function units(coin: Ticker, text: string): bigint {
  const parsed = parseAmount(coin, text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.units;
}

describeEachDatabase("kill switches and reconciliation ($name)", { openTimeout: 120_000 }, (getDatabase) => {
  let db: AppDb;
  const config = loadConfig({
    NODE_ENV: "test",
    BACKEND_SECRET,
    SESSION_SECRET: "test-session-secret-0123456789abcdef",
  });
  /** An operator command, as the ops socket runs it. */
  const ops = (...argv: string[]) => runInServer(argv, { db, config });

  beforeAll(() => {
    db = getDatabase().database.db;
  });

  /** Rows that a refusal must leave as they were. */
  async function written() {
    const [a] = await db.select({ n: count() }).from(auditLog);
    const [p] = await db.select({ n: count() }).from(pauses);
    const [w] = await db.select({ n: count() }).from(withdrawals);
    const [t] = await db.select({ n: count() }).from(ledgerTransfers);
    const [h] = await db.select({ n: count() }).from(custodyHoldings);
    return { audit: a?.n, pauses: p?.n, withdrawals: w?.n, transfers: t?.n, holdings: h?.n };
  }

  async function lastAudit() {
    const rows = await db.select().from(auditLog).orderBy(auditLog.id);
    return rows.at(-1);
  }

  /** A new user (through call 1) with a wallet of the coin, an address and, when given, a deposit. */
  const holder = (connection: Connection, coin: Ticker, deposit?: string) =>
    clientHolder(connection, db, { label: "controls", coin, deposit });

  describe("pause, resume, pauses (operator commands)", () => {
    const api = connectApi(transports[0]!, getDatabase);

    test("a coin's pause: written with its audit row; twice refused, nothing written; resumed once", async () => {
      const paused = await ops(
        "pause",
        "sends",
        "--coin",
        "btc",
        "--reason",
        "node upgrade",
        "--as",
        "ops-ann",
      );
      expect(paused).toEqual({
        code: 0,
        stdout:
          "Paused sends of BTC (every user). Reason: node upgrade\n" +
          "Lift with: resume sends --coin BTC --reason <text>\n",
        stderr: "",
      });
      const row = await activePause(db, "sends", { coin: "BTC" });
      expect(row).toMatchObject({ what: "sends", coin: "BTC", userId: null, reason: "node upgrade" });
      expect(row).toMatchObject({ actor: "ops-ann", automatic: false });
      expect(await lastAudit()).toMatchObject({
        actor: "ops-ann",
        action: "pause",
        subject: "BTC",
        details: { pauseId: row?.id, what: "sends", coin: "BTC", reason: "node upgrade", automatic: false },
      });

      const before = await written();
      const again = await ops("pause", "sends", "--coin", "BTC", "--reason", "again", "--as", "ops-bob");
      expect(again.code).toBe(1);
      expect(again.stderr).toBe(
        `error: Sends of BTC (every user) are already paused (since ${row?.createdAt.toISOString()}, by ops-ann); nothing changed.\n`,
      );
      expect(await written()).toEqual(before);

      const list = await ops("pauses", "--json");
      expect(JSON.parse(list.stdout)).toEqual([
        {
          id: row?.id,
          what: "sends",
          coin: "BTC",
          userId: null,
          email: null,
          since: row?.createdAt.toISOString(),
          actor: "ops-ann",
          automatic: false,
          reason: "node upgrade",
        },
      ]);
      const text = await ops("pauses");
      expect(text.stdout).toMatch(/^WHAT {3}SCOPE {5}SINCE {21}BY {7}AUTOMATIC {2}REASON\n/);
      expect(text.stdout).toContain(
        `sends  coin BTC  ${row?.createdAt.toISOString()}  ops-ann  no         node upgrade`,
      );
      expect(text.stdout).toMatch(/1 pause in force\.\n$/);

      const resumed = await ops(
        "resume",
        "sends",
        "--coin",
        "BTC",
        "--reason",
        "upgrade done",
        "--as",
        "ops-bob",
      );
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe(
        "Resumed sends of BTC (every user). Reason: upgrade done\n" +
          `The pause lifted was set on ${row?.createdAt.toISOString()} by ops-ann: node upgrade\n`,
      );
      expect(await activePause(db, "sends", { coin: "BTC" })).toBeUndefined();
      expect(await lastAudit()).toMatchObject({
        actor: "ops-bob",
        action: "resume",
        subject: "BTC",
        details: {
          what: "sends",
          coin: "BTC",
          reason: "upgrade done",
          lifted: { reason: "node upgrade", actor: "ops-ann", automatic: false },
        },
      });

      const after = await written();
      const twice = await ops("resume", "sends", "--coin", "BTC", "--reason", "again", "--as", "ops-bob");
      expect(twice).toEqual({
        code: 1,
        stdout: "",
        stderr: "error: Sends of BTC (every user) are not paused; nothing changed.\n",
      });
      expect(await written()).toEqual(after);
      expect((await ops("pauses")).stdout).toBe("Nothing is paused.\n");
    });

    test("a user's pause, by e-mail or by user id; each switch on its own", async () => {
      const who = await holder(api.connection, "ETH");
      const byEmail = await ops(
        "pause",
        "deposits",
        "--user",
        who.email,
        "--reason",
        "KYC review",
        "--as",
        "op",
      );
      expect(byEmail.stdout).toBe(
        `Paused deposits for ${who.email} (every coin). Reason: KYC review\n` +
          `Lift with: resume deposits --user ${who.email} --reason <text>\n`,
      );
      expect(await lastAudit()).toMatchObject({
        actor: "op",
        action: "pause",
        subject: who.userId,
        details: { what: "deposits", userId: who.userId, reason: "KYC review" },
      });
      // Another switch of the same user is its own.
      const byId = await ops(
        "pause",
        "issuing",
        "--user",
        who.userId,
        "--reason",
        "KYC review",
        "--as",
        "op",
      );
      expect(byId.code).toBe(0);
      const twice = await ops("pause", "deposits", "--user", who.userId, "--reason", "x", "--as", "op");
      expect(twice.stderr).toMatch(
        /^error: Deposits for .* \(every coin\) are already paused \(since .*, by op\); nothing changed\.\n$/,
      );
      const listed = JSON.parse((await ops("pauses", "--json")).stdout) as { what: string; email: string }[];
      expect(listed.map((p) => [p.what, p.email])).toEqual([
        ["issuing", who.email],
        ["deposits", who.email],
      ]);
      expect(await activePause(db, "deposits", { coin: "BTC", userId: who.userId })).toMatchObject({
        userId: who.userId,
      });
      expect(
        (await ops("resume", "deposits", "--user", who.email, "--reason", "ok", "--as", "op")).code,
      ).toBe(0);
      expect(
        (await ops("resume", "issuing", "--user", who.userId, "--reason", "ok", "--as", "op")).code,
      ).toBe(0);
      expect(await activePause(db, "deposits", { coin: "BTC", userId: who.userId })).toBeUndefined();
    });

    test("two operators pausing at once: one pause and one audit row, the other told it is paused", async () => {
      const before = await written();
      const both = await Promise.all(
        ["op-1", "op-2"].map((actor) =>
          pause(db, { what: "issuing", scope: { coin: "XRP" }, reason: `by ${actor}`, actor }),
        ),
      );
      expect(both.map((r) => r.ok).toSorted()).toEqual([false, true]);
      const winner = both.find((r) => r.ok)?.pause;
      expect(both.find((r) => !r.ok)).toEqual({ ok: false, reason: "already-paused", pause: winner });
      const after = await written();
      expect(after).toEqual({ ...before, audit: (before.audit ?? 0) + 1, pauses: (before.pauses ?? 0) + 1 });
      await resume(db, { what: "issuing", scope: { coin: "XRP" }, reason: "done", actor: "op-1" });
    });

    test("mistakes are refused before anything is written", async () => {
      const before = await written();
      const cases: [string[], string][] = [
        [
          ["pause", "sends", "--reason", "x"],
          "pause needs exactly one of --coin <TICKER> (every user) or --user <e-mail or user id>.",
        ],
        [
          ["pause", "sends", "--coin", "BTC", "--user", "a@b.c", "--reason", "x"],
          "pause needs exactly one of --coin <TICKER> (every user) or --user <e-mail or user id>.",
        ],
        [
          ["pause", "withdrawals", "--coin", "BTC", "--reason", "x"],
          'pause what? One of sends, deposits, issuing; got "withdrawals".',
        ],
        [
          ["pause", "sends", "--coin", "FOO", "--reason", "x"],
          'Unknown coin "FOO". Coins: BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT, XRP.',
        ],
        [
          ["pause", "sends", "--coin", "BTC"],
          "pause needs --reason <text>: why (1 to 1000 characters, kept in the audit log).",
        ],
        [
          ["resume", "sends", "--coin", "BTC", "--reason", "  "],
          "--reason is empty: say why (1 to 1000 characters).",
        ],
        [
          ["pause", "sends", "--coin", "BTC", "--reason", "x".repeat(1001)],
          "--reason is too long: 1001 characters, at most 1000.",
        ],
        [
          ["pause", "sends", "--user", "nobody@example.com", "--reason", "x"],
          "No user with the e-mail nobody@example.com.",
        ],
        [
          ["pause", "sends", "--user", "00000000-0000-4000-8000-000000000000", "--reason", "x"],
          "No user with id 00000000-0000-4000-8000-000000000000.",
        ],
        [["pauses", "--coin", "BTC"], "--coin goes with pause, requests and resume only."],
        [
          ["holdings", "set", "BTC", "1"],
          "holdings set needs --source <text>: where the figure comes from (1 to 500 characters).",
        ],
        [
          ["holdings", "put", "BTC", "1", "--source", "x"],
          'holdings takes "set"; got "put". See holdings --help.',
        ],
        [
          ["holdings", "set", "BTC", "0.123456789", "--source", "x"],
          "Invalid amount: At most 8 decimals for BTC.",
        ],
        [
          ["holdings", "set", "BTC", "1,5", "--source", "x"],
          "Invalid amount: Amount must be a plain decimal number, like 0.5.",
        ],
        [
          ["holdings", "set", "BTC", "1", "--source", "x".repeat(501)],
          "--source must be 1 to 500 characters; got 501.",
        ],
      ];
      for (const [argv, message] of cases) {
        expect(await ops(...argv, "--as", "op")).toEqual({
          code: 1,
          stdout: "",
          stderr: `error: ${message}\n`,
        });
      }
      expect(await written()).toEqual(before);
    });
  });

  for (const transport of transports) {
    describe(`sends while paused, over ${transport.name}`, () => {
      const api = connectApi(transport, getDatabase);

      const sendFrom = (who: Awaited<ReturnType<typeof holder>>, amount: string) =>
        api.connection.client.requestTransaction({
          email: who.email,
          twelveWords: who.twelveWords,
          walletId: who.walletId,
          amount,
          amountInUsd: "0",
          receiverWalletAddress: randomAddress("ETH"),
        });
      const walletEntry = async (who: Awaited<ReturnType<typeof holder>>) => {
        const answer = await api.connection.client.clientBalances({
          email: who.email,
          twelveWords: who.twelveWords,
        });
        if (!answer.ok) throw new Error("balances");
        return answer.data.wallets.find((w) => w.id === who.walletId);
      };

      test("per coin: refused with sends_paused (423), nothing written; allowed after resume", async () => {
        const who = await holder(api.connection, "ETH", "1.5");
        expect(await walletEntry(who)).not.toHaveProperty("sends_paused");
        const on = await pause(db, {
          what: "sends",
          scope: { coin: "ETH" },
          reason: "incident 7",
          actor: "op",
        });
        expect(on.ok).toBe(true);
        expect(await walletEntry(who)).toMatchObject({ sends_paused: "coin" });

        const before = await written();
        const refused = await sendFrom(who, "0.5");
        expect(refused).toEqual({
          ok: false,
          kind: "rejected",
          code: "sends_paused",
          status: 423,
          message: COIN_PAUSED,
        });
        expect(await written()).toEqual(before);
        expect(await walletBalance(db, who.walletId)).toBe(units("ETH", "1.5"));

        const off = await resume(db, { what: "sends", scope: { coin: "ETH" }, reason: "fixed", actor: "op" });
        expect(off.ok).toBe(true);
        expect(await walletEntry(who)).not.toHaveProperty("sends_paused");
        const sent = await sendFrom(who, "0.5");
        expect(sent.ok).toBe(true);
        expect(await walletBalance(db, who.walletId)).toBe(units("ETH", "1"));
      });

      test("per user: that user's sends refused (their message), another user's go through", async () => {
        const who = await holder(api.connection, "ETH", "1");
        const other = await holder(api.connection, "ETH", "1");
        await pause(db, { what: "sends", scope: { userId: who.userId }, reason: "fraud check", actor: "op" });
        expect(await walletEntry(who)).toMatchObject({ sends_paused: "user" });
        expect(await walletEntry(other)).not.toHaveProperty("sends_paused");

        const before = await written();
        expect(await sendFrom(who, "0.1")).toEqual({
          ok: false,
          kind: "rejected",
          code: "sends_paused",
          status: 423,
          message: USER_PAUSED,
        });
        expect(await written()).toEqual(before);
        expect((await sendFrom(other, "0.1")).ok).toBe(true);

        // A coin's pause and a user's: the coin's is the one named.
        await pause(db, { what: "sends", scope: { coin: "ETH" }, reason: "both", actor: "op" });
        expect(await sendFrom(who, "0.1")).toMatchObject({ code: "sends_paused", message: COIN_PAUSED });
        await resume(db, { what: "sends", scope: { coin: "ETH" }, reason: "done", actor: "op" });
        // Pausing deposits or issuing does not stop sends.
        await resume(db, { what: "sends", scope: { userId: who.userId }, reason: "cleared", actor: "op" });
        await pause(db, {
          what: "deposits",
          scope: { userId: who.userId },
          reason: "deposits only",
          actor: "op",
        });
        expect((await sendFrom(who, "0.1")).ok).toBe(true);
        await resume(db, { what: "deposits", scope: { userId: who.userId }, reason: "done", actor: "op" });
      });
    });
  }

  describe("reconciliation", () => {
    const api = connectApi(transports[0]!, getDatabase);

    test("figures exact after deposits, a pending send and decided sends; a shortfall pauses the coin", async () => {
      const a = await holder(api.connection, "DOGE", "10");
      const b = await holder(api.connection, "DOGE", "2.5");
      const dest = randomAddress("DOGE");
      const hold = async (walletId: string, amount: string) => {
        const r = await holdWithdrawal(db, {
          walletId,
          units: units("DOGE", amount),
          destination: dest,
          amountUsd: null,
        });
        if (!r.ok) throw new Error(r.reason);
        return r.withdrawalId;
      };
      await hold(a.walletId, "1"); // stays pending
      expect((await postWithdrawal(db, await hold(a.walletId, "2"))).ok).toBe(true); // left for good
      expect((await voidWithdrawal(db, await hold(b.walletId, "0.5"), "no")).ok).toBe(true); // came back
      // Owed: (10 − 1 − 2) + 2.5 = 9.5; held for the pending send: 1.

      const first = dogeRow(JSON.parse((await ops("reconcile", "--json", "--as", "op")).stdout));
      expect(first).toEqual({
        coin: "DOGE",
        owed: "9.5",
        heldForSends: "1",
        pendingSends: "1",
        holdings: null,
        difference: null,
        shortfall: false,
        sendsPaused: null,
        pausedNow: false,
        wouldPause: false,
      });

      const set = await ops(
        "holdings",
        "set",
        "DOGE",
        "10.5",
        "--source",
        "dogecoind getbalance",
        "--as",
        "op-c",
      );
      expect(set.code).toBe(0);
      const [recorded] = await db.select().from(custodyHoldings).where(eq(custodyHoldings.coin, "DOGE"));
      const at = recorded?.createdAt.toISOString();
      expect(set.stdout).toBe(
        "Recorded holdings of DOGE.\n\n" +
          "COIN  OWED TO HOLDERS  HELD FOR SENDS  HOLDINGS  DIFFERENCE  SENDS\n" +
          "----  ---------------  --------------  --------  ----------  -----\n" +
          "DOGE              9.5               1      10.5           0  open\n\n" +
          "Holdings as recorded (the newest per coin):\n" +
          `  DOGE: 10.5 on ${at} by op-c, source: dogecoind getbalance\n`,
      );
      expect(await lastAudit()).toMatchObject({
        actor: "op-c",
        action: "holdings.set",
        subject: "DOGE",
        details: { coin: "DOGE", amount: "10.5", source: "dogecoind getbalance", before: null },
      });
      expect(await activePause(db, "sends", { coin: "DOGE" })).toBeUndefined();

      // The planted shortfall: one satoshi less than owed + held.
      const short = await ops(
        "holdings",
        "set",
        "DOGE",
        "10.49999999",
        "--source",
        "statement 2",
        "--as",
        "op-c",
      );
      expect(short.code).toBe(0);
      expect(short.stdout).toContain(
        "DOGE              9.5               1  10.49999999  -0.00000001  paused (automatic)\n",
      );
      expect(short.stdout).toContain(
        "SHORTFALL DOGE: holdings are 0.00000001 DOGE below what is owed plus held for sends. " +
          "Sends of DOGE are now paused (automatic). An automatic pause stays until an operator resumes it: " +
          "resume sends --coin DOGE --reason <text>",
      );
      const auto = await activePause(db, "sends", { coin: "DOGE" });
      const why =
        "Reconciliation shortfall: holdings 10.49999999 DOGE are below owed 9.5 DOGE + held for pending sends 1 DOGE " +
        "(difference -0.00000001 DOGE).";
      expect(auto).toMatchObject({
        actor: "reconcile",
        automatic: true,
        reason: `${why} Found by holdings set (run by op-c).`,
      });
      const audits = await db.select().from(auditLog).orderBy(auditLog.id);
      expect(audits.slice(-2)).toMatchObject([
        {
          actor: "op-c",
          action: "holdings.set",
          details: { amount: "10.49999999", before: { amount: "10.5" } },
        },
        { actor: "reconcile", action: "pause", subject: "DOGE", details: { what: "sends", automatic: true } },
      ]);

      // Sends of the coin are refused now, with the coin's message.
      const refused = await api.connection.client.requestTransaction({
        email: a.email,
        twelveWords: a.twelveWords,
        walletId: a.walletId,
        amount: "1",
        amountInUsd: "0",
        receiverWalletAddress: dest,
      });
      expect(refused).toMatchObject({
        code: "sends_paused",
        message: "Sends of DOGE are paused for now. Your funds are safe; please try again later.",
      });

      // reconcile again: still short, the pause stays (nothing new written).
      const before = await written();
      const again = dogeRow(JSON.parse((await ops("reconcile", "--json", "--as", "op")).stdout));
      expect(again).toMatchObject({ difference: "-0.00000001", shortfall: true, pausedNow: false });
      expect(again).toMatchObject({ sendsPaused: { actor: "reconcile", automatic: true } });
      expect(await written()).toEqual(before);
      const text = (await ops("reconcile", "--as", "op")).stdout;
      expect(text).toContain(
        `Sends of DOGE stay paused (since ${auto?.createdAt.toISOString()}, by reconcile).`,
      );
      expect((await ops("pauses")).stdout).toContain("Automatic pauses stay until an operator resumes them");

      // Holdings made good do not lift it: an operator does.
      await ops("holdings", "set", "DOGE", "10.5", "--source", "statement 3", "--as", "op-c");
      expect(await activePause(db, "sends", { coin: "DOGE" })).toMatchObject({ automatic: true });
      const resumed = await ops("resume", "sends", "--coin", "DOGE", "--reason", "topped up", "--as", "op-c");
      expect(resumed.stdout).toContain(`by reconcile (automatic): ${why}`);
      expect(await activePause(db, "sends", { coin: "DOGE" })).toBeUndefined();
    });

    test("reconcile finds a shortfall a deposit made, and pauses the coin with its audit row", async () => {
      const who = await holder(api.connection, "SOL", "3");
      expect((await ops("holdings", "set", "SOL", "3", "--source", "validator", "--as", "op")).code).toBe(0);
      // A deposit credited with nothing arriving at the provider: owed grows past holdings.
      await creditDeposit(db, {
        walletId: who.walletId,
        units: units("SOL", "0.25"),
        externalTxId: "planted-1",
      });
      // The dry run sees the shortfall and writes nothing: no pause row, no audit row.
      const before = await written();
      const dry = await ops("reconcile", "--dry-run", "--json", "--as", "op-d");
      expect(dry.code).toBe(0);
      expect((JSON.parse(dry.stdout) as { coin: string }[]).find((r) => r.coin === "SOL")).toMatchObject({
        owed: "3.25",
        difference: "-0.25",
        shortfall: true,
        sendsPaused: null,
        pausedNow: false,
        wouldPause: true,
      });
      expect(await written()).toEqual(before);
      expect(await activePause(db, "sends", { coin: "SOL" })).toBeUndefined();
      const dryText = (await ops("reconcile", "--dry-run", "--as", "op-d")).stdout;
      expect(dryText).toMatch(/^Dry run: nothing was written\./u);
      expect(dryText).toContain("Sends of SOL would be paused (automatic) by reconcile without --dry-run.");
      expect(await written()).toEqual(before);

      const run = await ops("reconcile", "--json", "--as", "op-d");
      const sol = (JSON.parse(run.stdout) as { coin: string }[]).find((r) => r.coin === "SOL");
      expect(sol).toMatchObject({
        owed: "3.25",
        heldForSends: "0",
        holdings: { amount: "3", source: "validator", actor: "op" },
        difference: "-0.25",
        shortfall: true,
        pausedNow: true,
        sendsPaused: { actor: "reconcile", automatic: true },
      });
      expect(await lastAudit()).toMatchObject({
        actor: "reconcile",
        action: "pause",
        subject: "SOL",
        details: {
          what: "sends",
          coin: "SOL",
          automatic: true,
          reason:
            "Reconciliation shortfall: holdings 3 SOL are below owed 3.25 SOL + held for pending sends 0 SOL " +
            "(difference -0.25 SOL). Found by reconcile (run by op-d).",
        },
      });
      expect(await walletBalance(db, who.walletId)).toBe(units("SOL", "3.25"));
      // Once paused, a dry run says the pause is in force and would set nothing new.
      const after = await written();
      const dryAgain = (
        JSON.parse((await ops("reconcile", "--dry-run", "--json", "--as", "op-d")).stdout) as {
          coin: string;
        }[]
      ).find((r) => r.coin === "SOL");
      expect(dryAgain).toMatchObject({ shortfall: true, pausedNow: false, wouldPause: false });
      expect(dryAgain).toMatchObject({ sendsPaused: { actor: "reconcile", automatic: true } });
      expect(await written()).toEqual(after);
      await resume(db, { what: "sends", scope: { coin: "SOL" }, reason: "done", actor: "op" });
    });

    test("the pending account's balance equals the sum of the pending sends, every coin", async () => {
      const rows = JSON.parse((await ops("reconcile", "--json", "--as", "op")).stdout) as {
        heldForSends: string;
        pendingSends: string;
      }[];
      expect(rows.length).toBe(9);
      for (const r of rows) expect(r.heldForSends).toBe(r.pendingSends);
    });
  });
});
