// The operator CLI as operators run it: a child process `node server/ops/cli.ts …`
// on the embedded database of a temp DATA_DIR (PGlite serves one process at a
// time, so the test opens it only between commands) and, when
// TEST_DATABASE_URL is set, on a throw-away PostgreSQL database.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, type AppDb } from "../../server/db/index.ts";
import { auditLog, ledgerTransfers, wallets } from "../../server/db/schema.ts";
import { createAccount } from "../../server/domain/accounts.ts";
import { deriveServerKeys } from "../../server/domain/crypto.ts";
import { walletBalance } from "../../server/domain/ledger.ts";
import { issueAddress, requestWallet } from "../../server/domain/wallets.ts";
import { BACKEND_SECRET, openTempPostgres, uniqueEmail } from "./helpers.ts";

const CLI = path.resolve(import.meta.dirname, "../../server/ops/cli.ts");
// Each run starts node and opens the database (seconds for PGlite on a busy machine).
const SLOW = { timeout: 240_000 };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        // Only what the CLI should see: no DATABASE_URL, DATA_DIR or OPERATOR from the test's own environment.
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), NODE_ENV: "test", ...env },
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") {
          reject(error);
          return;
        }
        resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr });
      },
    );
  });
}

/** exit 1, nothing on stdout, exactly one line on stderr: "error: …". */
function expectFailure(run: Run, message: RegExp) {
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
  expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
  expect(run.stderr).toMatch(message);
}

interface Seeded {
  email: string;
  words: string[];
  userId: string;
  otherEmail: string;
  btc: { id: string; requestedAt: Date };
  xrp: { id: string; requestedAt: Date };
  eth: string;
}

interface CliTarget {
  name: string;
  env: Record<string, string>;
  /** Opens the database for fn and closes it again (PGlite must be closed while the CLI runs). */
  withDb<T>(fn: (db: AppDb) => Promise<T>): Promise<T>;
  dispose(): Promise<void>;
}

async function pgliteTarget(): Promise<CliTarget> {
  const root = await mkdtemp(path.join(tmpdir(), "coinkeep-ops-"));
  const dataDir = path.join(root, "data");
  return {
    name: "pglite",
    env: { DATA_DIR: dataDir, BACKEND_SECRET },
    async withDb(fn) {
      const database = await openDatabase({ dataDir });
      try {
        return await fn(database.db);
      } finally {
        await database.close();
      }
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

async function postgresTarget(adminUrl: string): Promise<CliTarget> {
  const opened = await openTempPostgres(adminUrl);
  const root = await mkdtemp(path.join(tmpdir(), "coinkeep-ops-"));
  return {
    name: "postgres",
    env: { DATABASE_URL: opened.databaseUrl ?? "", DATA_DIR: path.join(root, "data"), BACKEND_SECRET },
    withDb: (fn) => fn(opened.database.db),
    async dispose() {
      await opened.dispose();
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function seed(db: AppDb): Promise<Seeded> {
  const ctx = { db, keys: deriveServerKeys(BACKEND_SECRET) };
  const email = uniqueEmail("alice");
  const otherEmail = uniqueEmail("bob");
  const alice = await createAccount(ctx, email, "pw");
  const bob = await createAccount(ctx, otherEmail, "pw");
  if (!alice.ok || !bob.ok) throw new Error("accounts");
  const request = async (coin: "BTC" | "XRP" | "ETH") => {
    const r = await requestWallet(db, alice.userId, coin);
    if (!r.ok) throw new Error("request");
    return { id: r.wallet.id, requestedAt: r.wallet.requestedAt };
  };
  const btc = await request("BTC");
  const xrp = await request("XRP");
  const eth = await request("ETH");
  await issueAddress(db, eth.id, "0x8f348F300873Fd5DA36950B2aC75a26584584feE");
  return { email, words: alice.words, userId: alice.userId, otherEmail, btc, xrp, eth: eth.id };
}

async function snapshot(db: AppDb) {
  const [transfers] = await db.select({ n: sql<number>`count(*)::int` }).from(ledgerTransfers);
  const audit = await db.select().from(auditLog).orderBy(auditLog.id);
  const walletRows = await db.select().from(wallets);
  return { transfers: transfers?.n ?? 0, audit, walletRows };
}

describe("usage", () => {
  test("--help and <command> --help print usage; no database is opened", SLOW, async () => {
    // A DATA_DIR that cannot be created proves the database is not touched.
    const env = { DATA_DIR: "/proc/coinkeep-no-such-dir" };
    const help = await runCli(["--help"], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node server\/ops\/cli\.ts <command> \[options\]/);
    for (const command of ["requests", "issue-address", "credit", "users"])
      expect(help.stdout).toContain(command);
    const credit = await runCli(["credit", "--help"], env);
    expect(credit.code).toBe(0);
    expect(credit.stdout).toMatch(/^Usage: node server\/ops\/cli\.ts credit <walletId> <amount> <txid>/);
  });

  test("usage mistakes: exit 1 with one clear line", SLOW, async () => {
    const env = { DATA_DIR: "/proc/coinkeep-no-such-dir" };
    expectFailure(await runCli([], env), /No command given/);
    expectFailure(await runCli(["launch"], env), /Unknown command "launch"/);
    expectFailure(await runCli(["users", "--bogus"], env), /Unknown option '--bogus'/);
    expectFailure(await runCli(["credit", "x", "-1", "tx"], env), /Invalid amount "-1"/);
  });
});

describe("refusals that need no database (any DATA_DIR): exit 1 before opening it", () => {
  test("bad amounts, zero, negative, bad txid, bad --usd, a wallet id that is no uuid", SLOW, async () => {
    const env = { DATA_DIR: "/proc/coinkeep-no-such-dir" };
    const wallet = "00000000-0000-4000-8000-000000000000";
    const tx = "0x" + "ab".repeat(32);
    const cases: [string[], RegExp][] = [
      [
        ["credit", wallet, "abc", tx],
        /^error: Invalid amount "abc": Amount must be a plain decimal number, like 0\.5\.$/m,
      ],
      [["credit", wallet, "0", tx], /^error: Invalid amount "0": Amount must be greater than zero\.$/m],
      [["credit", wallet, "0.000", tx], /Amount must be greater than zero\./],
      [["credit", wallet, "-1", tx], /^error: Invalid amount "-1": amounts are positive, without a sign\.$/m],
      [["credit", wallet, "-0.5", tx], /Invalid amount "-0\.5"/],
      [["credit", wallet, "1e3", tx], /Invalid amount "1e3"/],
      [["credit", wallet, "1 000", tx], /Invalid amount "1 000"/],
      [["credit", wallet, "1", tx, "--usd", "1,5"], /Invalid --usd "1,5"/],
      [["credit", wallet, "1", "has space"], /Invalid txid/],
      [["credit", "not-a-wallet", "1", tx], /No wallet with id not-a-wallet\./],
      [["credit", wallet, "1"], /credit takes 3 arguments, got 2/],
      [
        ["issue-address", "not-a-wallet", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"],
        /No wallet with id not-a-wallet\./,
      ],
      [["issue-address", wallet], /issue-address takes 2 arguments, got 1/],
      [["users", "--usd", "5"], /--usd goes with credit only/],
      [["issue-address", wallet, "x", "--as", " "], /Say who you are with --as/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(args, env)));
    for (const [i, run] of runs.entries()) expectFailure(run, cases[i]?.[1] ?? /never/);
  });
});

const targets: { name: string; open: () => Promise<CliTarget>; full: boolean }[] = [
  // Each PGlite start costs seconds: the embedded run keeps to what needs a database;
  // PostgreSQL adds the longer matrix.
  { name: "pglite", open: pgliteTarget, full: false },
];
if (process.env.TEST_DATABASE_URL) {
  const url = process.env.TEST_DATABASE_URL;
  targets.push({ name: "postgres", open: () => postgresTarget(url), full: true });
}

for (const { name, open, full } of targets) {
  describe(`cli on ${name}`, () => {
    let target: CliTarget;
    let seeded: Seeded;
    /** The database as last seen: refusals must leave it exactly so. */
    let lastState: Awaited<ReturnType<typeof snapshot>>;
    const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { ...target.env, ...env });
    const BTC_ADDRESS = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu";
    const ETH_ADDRESS = "0x8f348F300873Fd5DA36950B2aC75a26584584feE";

    beforeAll(async () => {
      target = await open();
      await target.withDb(async (db) => {
        seeded = await seed(db);
        lastState = await snapshot(db);
      });
    }, 120_000);
    afterAll(async () => {
      await target?.dispose();
    });

    test("requests lists the wallets waiting for an address", SLOW, async () => {
      const json = await cli(["requests", "--json"]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual([
        {
          walletId: seeded.btc.id,
          email: seeded.email,
          coin: "BTC",
          requestedAt: seeded.btc.requestedAt.toISOString(),
        },
        {
          walletId: seeded.xrp.id,
          email: seeded.email,
          coin: "XRP",
          requestedAt: seeded.xrp.requestedAt.toISOString(),
        },
      ]);
      if (!full) return;
      const text = await cli(["requests"]);
      expect(text.code).toBe(0);
      expect(text.stderr).toBe("");
      expect(text.stdout.split("\n")[0]).toMatch(/^REQUESTED AT\s+E-MAIL\s+COIN\s+WALLET ID$/);
      expect(text.stdout).toContain(
        `${seeded.btc.requestedAt.toISOString()}  ${seeded.email}  BTC   ${seeded.btc.id}`,
      );
      expect(text.stdout).toContain(seeded.xrp.id);
      expect(text.stdout).not.toContain(seeded.eth);
      expect(text.stdout).toContain("2 requests waiting.");
    });

    test(
      "refusals that need the database: unknown wallet, bad address, no address; nothing written",
      SLOW,
      async () => {
        const unknown = "00000000-0000-4000-8000-000000000000";
        const tx = "0x" + "ab".repeat(32);
        expectFailure(await cli(["issue-address", unknown, BTC_ADDRESS]), /^error: No wallet with id 0{8}-/);
        // An Ethereum address for a Bitcoin wallet.
        expectFailure(
          await cli(["issue-address", seeded.btc.id, ETH_ADDRESS, "--as", "ops"]),
          /^error: Address refused for BTC: /,
        );
        expectFailure(await cli(["credit", seeded.xrp.id, "1", tx]), /has no address yet; issue one first/);
        if (full) {
          expectFailure(
            await cli(["issue-address", seeded.btc.id, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv"]),
            /^error: Address refused for BTC: /,
          );
          expectFailure(
            await cli(["issue-address", seeded.eth, BTC_ADDRESS]),
            /already has the address 0x8f348F/,
          );
          expectFailure(await cli(["credit", unknown, "1", tx]), /^error: No wallet with id 0{8}-/);
          expectFailure(
            await cli(["credit", seeded.eth, `0.${"1".repeat(19)}`, tx]),
            /At most 18 decimals for ETH/,
          );
        }
        expect(await target.withDb(snapshot)).toEqual(lastState);
      },
    );

    test("issue-address, then credit once per txid: each change with its audit row", SLOW, async () => {
      const issued = await cli(["issue-address", seeded.btc.id, BTC_ADDRESS, "--as", "Ops Olga"]);
      expect(issued).toEqual({
        code: 0,
        stdout: `Issued ${BTC_ADDRESS} to the BTC wallet ${seeded.btc.id} of ${seeded.email}.\n`,
        stderr: "",
      });
      if (full) {
        expectFailure(
          await cli(["issue-address", seeded.btc.id, BTC_ADDRESS]),
          /already has the address bc1q/,
        );
        const pending = await cli(["requests", "--json"]);
        expect(JSON.parse(pending.stdout).map((r: { coin: string }) => r.coin)).toEqual(["XRP"]);
      }

      const tx = "0x" + "cd".repeat(32);
      const first = await cli(["credit", seeded.eth, "1.5", tx, "--usd", "4800.10"], {
        OPERATOR: "night-shift",
      });
      expect(first).toEqual({
        code: 0,
        stdout:
          `Credited 1.5 ETH to wallet ${seeded.eth} (${seeded.email}), transaction ${tx}. ` +
          "Available balance: 1.5 ETH.\n",
        stderr: "",
      });
      const again = await cli(["credit", seeded.eth, "1.5", tx, "--json"]);
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(again.stdout)).toMatchObject({
        status: "already-credited",
        walletId: seeded.eth,
        coin: "ETH",
        amount: "1.5",
        units: "1500000000000000000",
        txid: tx,
        amountUsd: "4800.1",
        balance: "1.5",
      });
      if (full) {
        const text = await cli(["credit", seeded.eth, "1.5", tx]);
        expect(text.code).toBe(0);
        expect(text.stdout).toMatch(
          new RegExp(
            `^Transaction ${tx} was already credited: 1\\.5 ETH to wallet ${seeded.eth} on .*\\. Nothing changed\\.\\n$`,
          ),
        );
        expectFailure(
          await cli(["credit", seeded.eth, "2", tx]),
          /was already credited, differently: 1\.5 ETH to wallet .* Nothing changed\./,
        );
      }

      const state = await target.withDb(async (db) => ({
        ...(await snapshot(db)),
        balance: await walletBalance(db, seeded.eth),
      }));
      expect(state.walletRows.find((w) => w.id === seeded.btc.id)?.address).toBe(BTC_ADDRESS);
      expect(state.balance).toBe(1_500_000_000_000_000_000n);
      expect(state.transfers).toBe(1);
      expect(state.audit).toHaveLength(2);
      expect(state.audit[0]).toMatchObject({
        actor: "Ops Olga",
        action: "wallet.issue-address",
        subject: seeded.btc.id,
        details: {
          userId: seeded.userId,
          coin: "BTC",
          before: { address: null },
          after: { address: BTC_ADDRESS },
        },
      });
      expect(state.audit[0]?.createdAt).toBeInstanceOf(Date);
      expect(state.audit[1]).toMatchObject({
        actor: "night-shift",
        action: "ledger.credit-deposit",
        subject: seeded.eth,
        details: {
          userId: seeded.userId,
          coin: "ETH",
          amount: "1.5",
          units: "1500000000000000000",
          externalTxId: tx,
          amountUsd: "4800.1",
        },
      });
      // No secrets in the audit log: neither the phrase nor any of its words as a value.
      expect(JSON.stringify(state.audit)).not.toContain(seeded.words.join(" "));
      const values = state.audit.flatMap((a) => Object.values(a.details as Record<string, unknown>));
      for (const word of seeded.words) expect(values).not.toContain(word);
    });

    test("users lists every user with wallets, address states and balances", SLOW, async () => {
      const text = await cli(["users"]);
      expect(text.code).toBe(0);
      expect(text.stdout.split("\n")[0]).toMatch(/^E-MAIL\s+COIN\s+STATE\s+ADDRESS\s+BALANCE\s+WALLET ID$/);
      expect(text.stdout).toMatch(
        new RegExp(`${seeded.email}\\s+BTC\\s+issued\\s+${BTC_ADDRESS}\\s+0\\s+${seeded.btc.id}`),
      );
      expect(text.stdout).toMatch(new RegExp(`${seeded.email}\\s+XRP\\s+requested\\s+0\\s+${seeded.xrp.id}`));
      expect(text.stdout).toMatch(
        new RegExp(`${seeded.email}\\s+ETH\\s+issued\\s+${ETH_ADDRESS}\\s+1\\.5\\s+${seeded.eth}`),
      );
      expect(text.stdout).toMatch(new RegExp(`${seeded.otherEmail}\\s+-\\s+no wallets`));
      expect(text.stdout).toContain("2 users, 3 wallets.");
      if (!full) return;

      const json = await cli(["users", "--json"]);
      expect(json.code).toBe(0);
      const people = JSON.parse(json.stdout) as { email: string; wallets: unknown[] }[];
      expect(people.find((p) => p.email === seeded.otherEmail)?.wallets).toEqual([]);
      expect(people.find((p) => p.email === seeded.email)?.wallets).toEqual([
        { id: seeded.btc.id, coin: "BTC", state: "issued", address: BTC_ADDRESS, balance: "0" },
        { id: seeded.xrp.id, coin: "XRP", state: "requested", address: null, balance: "0" },
        { id: seeded.eth, coin: "ETH", state: "issued", address: ETH_ADDRESS, balance: "1.5" },
      ]);
      // Read-only commands write nothing.
      expect((await target.withDb(snapshot)).audit).toHaveLength(2);
    });
  });
}
