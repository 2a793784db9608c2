// The operator CLI as operators run it: a child process `node server/ops/cli.ts …`
// on the embedded database of a temp DATA_DIR (PGlite serves one process at a
// time, so the test opens it only between commands) and, when
// TEST_DATABASE_URL is set, on a throw-away PostgreSQL database.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig } from "../../server/config.ts";
import { openDatabase, type AppDb } from "../../server/backend/db/index.ts";
import {
  auditLog,
  ledgerTransfers,
  messages,
  sendApprovals,
  wallets,
  withdrawals,
} from "../../server/backend/db/schema.ts";
import { createAccount } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import {
  creditDeposit,
  holdWithdrawal,
  voidWithdrawal,
  walletBalance,
} from "../../server/backend/domain/ledger.ts";
import { storeSupportMessage } from "../../server/backend/domain/messages.ts";
import {
  createRateLimiter,
  DEFAULT_RATE_LIMITS,
  isLimited,
} from "../../server/backend/domain/rate-limits.ts";
import {
  findSend,
  issueAddress,
  requestWallet,
  unreadMessagesCount,
} from "../../server/backend/domain/wallets.ts";
import { runInServer } from "../../server/ops/registry.ts";
import { serveOpsSocket } from "../../server/host/ops-socket.ts";
import { opsSocketPath } from "../../server/ops/socket.ts";
import { BACKEND_SECRET, openTempPostgres, uniqueEmail } from "./helpers.ts";

const UUID_SOURCE = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`);
const CLI = path.resolve(import.meta.dirname, "../../server/ops/cli.ts");
// Each run starts node and opens the database (seconds for PGlite on a busy machine).
const SLOW = { timeout: 240_000 };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string>, cwd?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd,
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
  /**
   * Embedded database only: runs fn while a server holds the database and serves the ops socket,
   * as `npm start` does; the CLI then hands its commands to that server. ran: the commands it ran.
   */
  withServer?<T>(fn: () => Promise<T>): Promise<{ result: T; ran: string[][] }>;
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
    async withServer(fn) {
      const database = await openDatabase({ dataDir });
      const config = loadConfig({
        NODE_ENV: "test",
        DATA_DIR: dataDir,
        BACKEND_SECRET,
        SESSION_SECRET: "test-session-secret-0123456789abcdef",
      });
      const ran: string[][] = [];
      const server = await serveOpsSocket(opsSocketPath(dataDir), (argv) => {
        ran.push(argv);
        return runInServer(argv, { db: database.db, config });
      });
      try {
        return { result: await fn(), ran };
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
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

const ETH = 10n ** 18n;
const SEND_DESTINATIONS = {
  a: "0xde0B295669a9FD93d5F28D9Ec85E40f4cb697BAe",
  b: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
  c: "0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B",
  d: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
};

interface SeededSends {
  email: string;
  userId: string;
  eth: string;
  btc: string;
  /** Four pending sends, requested in this order: 0.5 ETH, 0.00012345 BTC, 0.25 ETH, 0.001 BTC. */
  sends: { a: string; b: string; c: string; d: string };
  requestedAt: Record<string, Date>;
}

/** Carol gets 2 ETH and 0.1 BTC, then asks to send four amounts (held at once, as the API does). */
async function seedSends(db: AppDb): Promise<SeededSends> {
  const email = uniqueEmail("carol");
  const carol = await createAccount({ db, keys: deriveServerKeys(BACKEND_SECRET) }, email, "pw");
  if (!carol.ok) throw new Error("account");
  const wallet = async (coin: "ETH" | "BTC", address: string, units: bigint, txid: string) => {
    const r = await requestWallet(db, carol.userId, coin);
    if (!r.ok) throw new Error("request");
    await issueAddress(db, r.wallet.id, address);
    await creditDeposit(db, { walletId: r.wallet.id, units, externalTxId: txid });
    return r.wallet.id;
  };
  const eth = await wallet(
    "ETH",
    "0x52908400098527886E0F7030069857D2E4169EE7",
    2n * ETH,
    "0x" + "11".repeat(32),
  );
  const btc = await wallet("BTC", "bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l", 10_000_000n, "22".repeat(32));
  const hold = async (walletId: string, units: bigint, destination: string, amountUsd: string | null) => {
    const held = await holdWithdrawal(db, { walletId, units, destination, amountUsd });
    if (!held.ok) throw new Error(`hold: ${held.reason}`);
    // Distinct request times, so that "oldest first" has one answer.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return held.withdrawalId;
  };
  const sends = {
    a: await hold(eth, ETH / 2n, SEND_DESTINATIONS.a, "1500.25"),
    b: await hold(btc, 12_345n, SEND_DESTINATIONS.b, null),
    c: await hold(eth, ETH / 4n, SEND_DESTINATIONS.c, "750.5"),
    d: await hold(btc, 100_000n, SEND_DESTINATIONS.d, "97.3"),
  };
  const rows = await db.select({ id: withdrawals.id, createdAt: withdrawals.createdAt }).from(withdrawals);
  const requestedAt = Object.fromEntries(rows.map((r) => [r.id, r.createdAt]));
  return { email, userId: carol.userId, eth, btc, sends, requestedAt };
}

function auditOf(db: AppDb, subject: string) {
  return db.select().from(auditLog).where(eq(auditLog.subject, subject)).orderBy(auditLog.id);
}

const escapeRe = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Where amount ends in a line of a table (followed by the two spaces between columns). */
const amountEnd = (line: string, amount: string) => line.indexOf(`${amount}  `) + amount.length;

async function snapshot(db: AppDb) {
  const [transfers] = await db.select({ n: sql<number>`count(*)::int` }).from(ledgerTransfers);
  const audit = await db.select().from(auditLog).orderBy(auditLog.id);
  const walletRows = await db.select().from(wallets);
  const sends = await db.select().from(withdrawals).orderBy(withdrawals.id);
  const approvals = await db.select().from(sendApprovals).orderBy(sendApprovals.withdrawalId);
  // When each send was decided (ISO), for the answers that say so.
  const decidedAt = new Map(sends.map((w) => [w.id, w.decidedAt?.toISOString()]));
  return { transfers: transfers?.n ?? 0, audit, walletRows, sends, approvals, decidedAt };
}

describe("usage", () => {
  test("--help and <command> --help print usage; no database is opened", SLOW, async () => {
    // A DATA_DIR that cannot be created proves the database is not touched.
    const env = { DATA_DIR: "/proc/coinkeep-no-such-dir" };
    const help = await runCli(["--help"], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node server\/ops\/cli\.ts <command> \[options\]/);
    for (const command of ["requests", "issue-address", "credit", "users", "sends", "approve", "decline"])
      expect(help.stdout).toContain(command);
    expect(help.stdout).toContain("  decline <sendId> --reason <text>    decline a send");
    const credit = await runCli(["credit", "--help"], env);
    expect(credit.code).toBe(0);
    expect(credit.stdout).toMatch(/^Usage: node server\/ops\/cli\.ts credit <walletId> <amount> <txid>/);
    const decline = await runCli(["decline", "--help"], env);
    expect(decline.code).toBe(0);
    expect(decline.stdout).toMatch(
      /^Usage: node server\/ops\/cli\.ts decline <sendId> --reason <text> \[--as <name>\] \[--json\]\n/,
    );
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
      [["users", "--usd", "5"], /^error: --usd goes with credit and deposit only\.$/m],
      [["users", "--output", "1"], /^error: --output goes with credit only\.$/m],
      [["issue-address", wallet, "x", "--as", " "], /Say who you are with --as/],
      [["approve", "not-a-send"], /^error: No send with id not-a-send\.$/m],
      [["decline", "12345", "--reason", "x"], /^error: No send with id 12345\.$/m],
      [["approve"], /approve takes 1 argument, got 0\. Usage: node server\/ops\/cli\.ts approve <sendId>/],
      [["approve", wallet, wallet], /approve takes 1 argument, got 2/],
      [
        ["decline", wallet],
        /^error: decline needs --reason <text>: why the send is declined \(1 to 1000 characters\)\.$/m,
      ],
      [["decline", wallet, "--reason", ""], /^error: --reason is empty: say why the send is declined/m],
      [["decline", wallet, "--reason", " \t "], /^error: --reason is empty/m],
      [
        ["decline", wallet, "--reason", "x".repeat(1001)],
        /^error: --reason is too long: 1001 characters, at most 1000\.$/m,
      ],
      [["decline", wallet, "--reason"], /Option '--reason <value>' argument missing/],
      [
        ["approve", wallet, "--reason", "x"],
        /^error: --reason goes with decline, issuing, pause, resume, staff end-sessions, staff remove, staff roles, staff unlock and threshold set only\.$/m,
      ],
      [
        ["sends", "--reason", "x"],
        /--reason goes with decline, issuing, pause, resume, staff end-sessions, staff remove, staff roles, staff unlock and threshold set only/,
      ],
      [["sends", "--source", "x"], /^error: --source goes with holdings only\.$/m],
      [["sends", "extra"], /sends takes 0 arguments, got 1/],
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
      // --coin: that coin's only (any case); an unknown coin is refused.
      const xrp = await cli(["requests", "--coin", "xrp", "--json"]);
      expect(xrp.code).toBe(0);
      expect((JSON.parse(xrp.stdout) as { walletId: string }[]).map((r) => r.walletId)).toEqual([
        seeded.xrp.id,
      ]);
      expect(JSON.parse((await cli(["requests", "--coin", "ETH", "--json"])).stdout)).toEqual([]);
      expectFailure(await cli(["requests", "--coin", "XYZ"]), /^error: Unknown coin "XYZ"\./);
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

    test("sends with none waiting", SLOW, async () => {
      expect(await cli(["sends"])).toEqual({
        code: 0,
        stdout: "No sends are waiting for a decision.\n",
        stderr: "",
      });
      if (full) expect(JSON.parse((await cli(["sends", "--json"])).stdout)).toEqual([]);
    });

    describe("sends: list, approve, decline", () => {
      let carol: SeededSends;
      const balances = () =>
        target.withDb(async (db) => ({
          eth: await walletBalance(db, carol.eth),
          btc: await walletBalance(db, carol.btc),
        }));

      beforeAll(async () => {
        carol = await target.withDb(seedSends);
      }, 120_000);

      test("sends lists the pending sends oldest first, in a table and as JSON", SLOW, async () => {
        const { a, b, c, d } = carol.sends;
        const text = await cli(["sends"]);
        expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: "" });
        const lines = text.stdout.split("\n");
        expect(lines[0]).toMatch(
          /^REQUESTED AT\s+AGE\s+E-MAIL\s+COIN\s+AMOUNT\s+USD\s+ADDRESS\s+TAG\s+APPROVALS\s+SEND ID$/,
        );
        // The USD value when requested ("-": unknown), and approvals so far of those needed: an
        // unknown value needs two (record 047), the others are below the default 10000 USD.
        const expected: [string, string, string, string, string, string][] = [
          [a, "ETH", "0.5", "1500.25", SEND_DESTINATIONS.a, "0 of 1"],
          [b, "BTC", "0.00012345", "-", SEND_DESTINATIONS.b, "0 of 2"],
          [c, "ETH", "0.25", "750.5", SEND_DESTINATIONS.c, "0 of 1"],
          [d, "BTC", "0.001", "97.3", SEND_DESTINATIONS.d, "0 of 1"],
        ];
        for (const [i, [id, coin, amount, usd, address, approvals]] of expected.entries()) {
          const iso = carol.requestedAt[id]?.toISOString() ?? "missing";
          expect(lines[i + 2]).toMatch(
            new RegExp(
              `^${escapeRe(iso)}  \\d+ (s|min)\\s+${escapeRe(carol.email)}  ${coin}\\s+` +
                `${escapeRe(amount)}\\s+${escapeRe(usd)}  ${escapeRe(address)}\\s+-  ${approvals}\\s+${id}$`,
            ),
          );
        }
        // Amounts are right-aligned under AMOUNT.
        const column = amountEnd(lines[0] ?? "", "AMOUNT");
        for (const [i, [, , amount]] of expected.entries())
          expect(amountEnd(lines[i + 2] ?? "", amount)).toBe(column);
        expect(lines.slice(6)).toEqual([
          "",
          "4 sends waiting. Answer with: approve <sendId> | decline <sendId> --reason <text>",
          "",
        ]);

        const json = await cli(["sends", "--json"]);
        expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
        const listed = JSON.parse(json.stdout) as { ageSeconds: number }[];
        const row = (
          sendId: string,
          walletId: string,
          coin: string,
          amount: string,
          amountUsd: string | null,
        ) => ({
          sendId,
          walletId,
          userId: carol.userId,
          email: carol.email,
          coin,
          amount,
          amountUsd,
          address: expected.find(([id]) => id === sendId)?.[4],
          destinationTag: null,
          requestedAt: carol.requestedAt[sendId]?.toISOString(),
          ageSeconds: expect.any(Number),
          threshold: { usd: "10000", source: "default" },
          needed: amountUsd === null ? 2 : 1,
          approvals: [],
          accountCreatedAt: expect.any(String),
          // The account's other sends, newest first (at most 3), and its deposits.
          recentSends: expect.any(Array),
          recentDeposits: [
            { id: expect.any(String), coin: "BTC", amount: "0.1", amountUsd: null, at: expect.any(String) },
            { id: expect.any(String), coin: "ETH", amount: "2", amountUsd: null, at: expect.any(String) },
          ],
        });
        expect(listed).toEqual([
          row(a, carol.eth, "ETH", "0.5", "1500.25"),
          row(b, carol.btc, "BTC", "0.00012345", null),
          row(c, carol.eth, "ETH", "0.25", "750.5"),
          row(d, carol.btc, "BTC", "0.001", "97.3"),
        ]);
        // Each send's history leaves itself out, and every other pending send of the account is there.
        for (const [i, send] of (
          listed as unknown as { sendId: string; recentSends: { sendId: string }[] }[]
        ).entries())
          expect(send.recentSends.map((s) => s.sendId)).toEqual(
            [d, c, b, a].filter((id) => id !== expected[i]?.[0]).slice(0, 3),
          );
        for (const { ageSeconds } of listed) {
          expect(Number.isInteger(ageSeconds)).toBe(true);
          expect(ageSeconds).toBeGreaterThanOrEqual(0);
          expect(ageSeconds).toBeLessThan(600);
        }
        expect(await balances()).toEqual({ eth: (5n * ETH) / 4n, btc: 9_887_655n });
      });

      test(
        "approve: the send is Confirmed, the balance stays as after the hold, one audit row",
        SLOW,
        async () => {
          const { a } = carol.sends;
          expect(await cli(["approve", a, "--as", "Ops Olga"])).toEqual({
            code: 0,
            stdout: `Approved the send ${a}: 0.5 ETH to ${SEND_DESTINATIONS.a} for ${carol.email}. Status: Confirmed.\n`,
            stderr: "",
          });
          const state = await target.withDb(async (db) => ({
            send: await findSend(db, a),
            audit: await auditOf(db, a),
            eth: await walletBalance(db, carol.eth),
          }));
          expect(state.send).toMatchObject({ status: "Confirmed", declineReason: null });
          expect(state.send?.decidedAt).toBeInstanceOf(Date);
          expect(state.eth).toBe((5n * ETH) / 4n);
          expect(state.audit).toHaveLength(1);
          expect(state.audit[0]).toMatchObject({
            actor: "Ops Olga",
            action: "send.approve",
            subject: a,
            details: {
              userId: carol.userId,
              walletId: carol.eth,
              coin: "ETH",
              amount: "0.5",
              units: "500000000000000000",
              address: SEND_DESTINATIONS.a,
              before: { status: "pending" },
              after: { status: "Confirmed" },
              transferId: expect.any(String),
            },
          });
          if (!full) return;
          const left = JSON.parse((await cli(["sends", "--json"])).stdout) as { sendId: string }[];
          expect(left.map((s) => s.sendId)).toEqual([carol.sends.b, carol.sends.c, carol.sends.d]);
          const json = await cli(["approve", carol.sends.d, "--json"], { OPERATOR: "night-shift" });
          expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
          const decided = await target.withDb((db) => findSend(db, carol.sends.d));
          expect(JSON.parse(json.stdout)).toEqual({
            sendId: carol.sends.d,
            status: "Confirmed",
            email: carol.email,
            coin: "BTC",
            amount: "0.001",
            amountUsd: "97.3",
            address: SEND_DESTINATIONS.d,
            destinationTag: null,
            threshold: { usd: "10000", source: "default" },
            approvals: [{ approver: "night-shift", at: expect.any(String) }],
            needed: 1,
            decidedAt: decided?.decidedAt?.toISOString(),
            decidedBy: "night-shift",
          });
          expect(decided?.status).toBe("Confirmed");
        },
      );

      test(
        "decline: the send is Declined, its amount back in the wallet exactly, the reason kept",
        SLOW,
        async () => {
          const { b } = carol.sends;
          const before = await balances();
          const run = await cli([
            "decline",
            b,
            "--reason",
            "  Destination is on a sanctions list.  ",
            "--as",
            "ops2",
          ]);
          expect(run).toEqual({
            code: 0,
            stdout:
              `Declined the send ${b}: 0.00012345 BTC returned to ${carol.email}'s BTC wallet ` +
              "(available balance now 0.099 BTC). Reason: Destination is on a sanctions list.\n",
            stderr: "",
          });
          const state = await target.withDb(async (db) => ({
            send: await findSend(db, b),
            audit: await auditOf(db, b),
          }));
          expect(state.send).toMatchObject({
            status: "Declined",
            declineReason: "Destination is on a sanctions list.",
          });
          expect(await balances()).toEqual({ eth: before.eth, btc: before.btc + 12_345n });
          expect(state.audit).toHaveLength(1);
          expect(state.audit[0]).toMatchObject({
            actor: "ops2",
            action: "send.decline",
            subject: b,
            details: {
              userId: carol.userId,
              walletId: carol.btc,
              coin: "BTC",
              amount: "0.00012345",
              units: "12345",
              address: SEND_DESTINATIONS.b,
              reason: "Destination is on a sanctions list.",
              before: { status: "pending" },
              after: { status: "Declined" },
              transferId: expect.any(String),
            },
          });
        },
      );

      test("a decided send or an unknown id: exit 1, one line, nothing written", SLOW, async () => {
        const { a, b } = carol.sends;
        const before = await target.withDb(snapshot);
        const at = (id: string) => escapeRe(before.decidedAt.get(id) ?? "missing");
        // Who decided it and when: Ops Olga approved a, ops2 declined b (above).
        expectFailure(
          await cli(["approve", b]),
          new RegExp(
            `^error: The send ${b} was already Declined by ops2 at ${at(b)}; nothing changed\\.$`,
            "m",
          ),
        );
        expectFailure(
          await cli(["decline", a, "--reason", "Too late."]),
          new RegExp(
            `^error: The send ${a} was already Confirmed by Ops Olga at ${at(a)}; nothing changed\\.$`,
            "m",
          ),
        );
        const unknown = "00000000-0000-4000-8000-000000000000";
        expectFailure(
          await cli(["approve", unknown]),
          /^error: No send with id 0{8}-0{4}-4000-8000-0{12}\.$/m,
        );
        if (full) {
          expectFailure(
            await cli(["approve", a, "--json"]),
            /already Confirmed by Ops Olga at [^;]+; nothing changed/,
          );
          expectFailure(
            await cli(["decline", b, "--reason", "again"]),
            /already Declined by ops2 at [^;]+; nothing changed/,
          );
          expectFailure(await cli(["decline", unknown, "--reason", "x"]), /^error: No send with id 0{8}-/m);
        }
        expect(await target.withDb(snapshot)).toEqual(before);
      });

      test("approve and decline of one send at once: exactly one outcome, one audit row", SLOW, async () => {
        const { c } = carol.sends;
        const before = await balances();
        // With the embedded database both go through the running server's socket (one after the
        // other there); with PostgreSQL two processes race for the send's row lock.
        const race = () =>
          Promise.all([
            cli(["approve", c], { OPERATOR: "ops-a" }),
            cli(["decline", c, "--reason", "Asked twice by mistake.", "--as", "ops-b"]),
          ]);
        let approve: Run, decline: Run;
        if (target.withServer) {
          const served = await target.withServer(race);
          [approve, decline] = served.result;
          // Both were carried out by the server, not by CLI processes opening its data folder.
          expect(
            served.ran.map((argv) => argv.find((a) => a === "approve" || a === "decline")).toSorted(),
          ).toEqual(["approve", "decline"]);
        } else {
          [approve, decline] = await race();
        }
        expect([approve.code, decline.code].toSorted()).toEqual([0, 1]);
        const won = approve.code === 0 ? "Confirmed" : "Declined";
        if (won === "Confirmed") {
          expect(approve.stdout).toBe(
            `Approved the send ${c}: 0.25 ETH to ${SEND_DESTINATIONS.c} for ${carol.email}. Status: Confirmed.\n`,
          );
        } else {
          expect(decline.stdout).toBe(
            `Declined the send ${c}: 0.25 ETH returned to ${carol.email}'s ETH wallet ` +
              "(available balance now 1.5 ETH). Reason: Asked twice by mistake.\n",
          );
        }
        const decidedAt =
          (await target.withDb((db) => findSend(db, c)))?.decidedAt?.toISOString() ?? "missing";
        expectFailure(
          won === "Confirmed" ? decline : approve,
          new RegExp(
            `^error: The send ${c} was already ${won} by ${won === "Confirmed" ? "ops-a" : "ops-b"} ` +
              `at ${escapeRe(decidedAt)}; nothing changed\\.$`,
            "m",
          ),
        );
        const state = await target.withDb(async (db) => ({
          send: await findSend(db, c),
          audit: await auditOf(db, c),
          resolutions: await db
            .select({ n: sql<number>`count(*)::int` })
            .from(ledgerTransfers)
            .where(
              sql`${ledgerTransfers.pendingId} = (select hold_transfer_id from withdrawals where id = ${c})`,
            ),
        }));
        expect(state.send?.status).toBe(won);
        expect(state.audit.map((r) => [r.action, r.actor])).toEqual([
          won === "Confirmed" ? ["send.approve", "ops-a"] : ["send.decline", "ops-b"],
        ]);
        // One post or void of the send's hold in the ledger, not two.
        expect(state.resolutions[0]?.n).toBe(1);
        expect((await balances()).eth).toBe(won === "Confirmed" ? before.eth : before.eth + ETH / 4n);
      });

      // On PostgreSQL the loser can get past its first look at the send and then wait on the row
      // lock: made certain here by deciding inside a transaction that stays open until it waits.
      test.skipIf(!full)(
        "a decision that waited for another's row lock reports that outcome and writes nothing",
        SLOW,
        async () => {
          const e = await target.withDb(async (db) => {
            const held = await holdWithdrawal(db, {
              walletId: carol.eth,
              units: ETH / 10n,
              destination: SEND_DESTINATIONS.c,
              amountUsd: null,
            });
            if (!held.ok) throw new Error(held.reason);
            return held.withdrawalId;
          });
          const before = await balances();
          let approve: Promise<Run> | undefined;
          await target.withDb((db) =>
            db.transaction(async (tx) => {
              expect(await voidWithdrawal(tx, e, "Held back by compliance.")).toMatchObject({ ok: true });
              approve = cli(["approve", e, "--as", "ops-late"]);
              const deadline = Date.now() + 60_000;
              for (;;) {
                const [waiting] = await db
                  .select({ n: sql<number>`count(*)::int` })
                  .from(sql`pg_stat_activity`)
                  .where(sql`wait_event_type = 'Lock' and datname = current_database()`);
                if (waiting?.n === 1) break;
                if (Date.now() > deadline) throw new Error("approve never waited for the lock");
                await new Promise((resolve) => setTimeout(resolve, 50));
              }
            }),
          );
          const done = await (approve ?? Promise.reject(new Error("not started")));
          const state = await target.withDb(async (db) => ({
            send: await findSend(db, e),
            audit: await auditOf(db, e),
          }));
          // Declined by the ledger directly (no one named): the answer says when, not by whom.
          expectFailure(
            done,
            new RegExp(
              `^error: The send ${e} was already Declined at ${escapeRe(state.send?.decidedAt?.toISOString() ?? "")}; nothing changed\\.$`,
              "m",
            ),
          );
          expect(state.send?.status).toBe("Declined");
          expect(state.audit).toEqual([]);
          expect((await balances()).eth).toBe(before.eth + ETH / 10n);
        },
      );
    });

    describe("messages: compliance messages out, support and contact messages in", () => {
      test(
        "message --to one user, --all to every user who exists now; each with its audit row",
        SLOW,
        async () => {
          const one = await cli([
            "message",
            "--to",
            seeded.email.toUpperCase(),
            "--as",
            "ops-msg",
            "Please confirm the source of your funds.",
          ]);
          expect(one.stderr).toBe("");
          expect(one.stdout).toMatch(
            new RegExp(`^Sent message ${UUID_SOURCE} to ${seeded.email.replace(/[.+]/g, "\\$&")}\\.\\n$`),
          );
          const all = await cli([
            "message",
            "--all",
            "--json",
            "--as",
            "ops-msg",
            "--",
            "-5 % fees are charged from today <b>not</b>",
          ]);
          const sent = JSON.parse(all.stdout) as { messageId: string; to: string; createdAt: string };
          expect(sent).toEqual({
            messageId: expect.stringMatching(UUID_PATTERN),
            to: "all",
            createdAt: expect.any(String),
          });

          const seen = await target.withDb(async (db) => {
            // A user created after the broadcast does not get it.
            const later = await createAccount(
              { db, keys: deriveServerKeys(BACKEND_SECRET) },
              uniqueEmail("later"),
              "pw",
            );
            if (!later.ok) throw new Error("account");
            return {
              alice: await unreadMessagesCount(db, seeded.userId),
              later: await unreadMessagesCount(db, later.userId),
              broadcast: await db.select().from(messages).where(eq(messages.id, sent.messageId)),
              audit: await auditOf(db, sent.messageId),
            };
          });
          expect(seen.alice).toBe(2);
          expect(seen.later).toBe(0);
          // Stored exactly as given (plain text; the pages show it as text).
          expect(seen.broadcast[0]?.message).toBe("-5 % fees are charged from today <b>not</b>");
          expect(seen.broadcast[0]?.userId).toBeNull();
          expect(seen.audit).toEqual([
            expect.objectContaining({ actor: "ops-msg", action: "message.send", subject: sent.messageId }),
          ]);
        },
      );

      test("message refusals: exit 1, one line, nothing written", SLOW, async () => {
        const before = await target.withDb((db) =>
          db.select({ n: sql<number>`count(*)::int` }).from(messages),
        );
        expectFailure(await cli(["message", "hello", "--as", "x"]), /--to <email> or --all/);
        expectFailure(
          await cli(["message", "--to", seeded.email, "--all", "hi", "--as", "x"]),
          /one of them/,
        );
        expectFailure(
          await cli(["message", "--to", "nobody@example.com", "hi", "--as", "x"]),
          /No user with the e-mail nobody@example\.com\./,
        );
        expectFailure(await cli(["message", "--all", "   ", "--as", "x"]), /The message is empty\./);
        expectFailure(
          await cli(["message", "--all", "x".repeat(5001), "--as", "x"]),
          /too long: 5001 characters, at most 5000/,
        );
        // --to is also audit's (the end of its time range), so the refusal names both.
        expectFailure(
          await cli(["users", "--to", seeded.email]),
          /^error: --to goes with audit and message only\.$/m,
        );
        expectFailure(await cli(["users", "--all"]), /^error: --all goes with message only\.$/m);
        expectFailure(
          await cli(["support", "--kind", "sales"]),
          /--kind is support or contact, not "sales"\./,
        );
        expectFailure(
          await cli(["support", "--limit", "0"]),
          /--limit must be a whole number from 1 to 1000\./,
        );
        const after = await target.withDb((db) =>
          db.select({ n: sql<number>`count(*)::int` }).from(messages),
        );
        expect(after).toEqual(before);
      });

      test(
        "support lists messages newest first, as plain text with control characters escaped",
        SLOW,
        async () => {
          const hostile = "Hi <script>alert(1)</script>\u001b[2J\u0007 help\nsecond line";
          await target.withDb(async (db) => {
            const contact = await storeSupportMessage(
              db,
              { kind: "contact", email: "Visitor@Example.com", comment: "Where are my coins?" },
              { ip: "203.0.113.7" },
            );
            expect(contact.ok).toBe(true);
            await new Promise((resolve) => setTimeout(resolve, 5));
            const support = await storeSupportMessage(
              db,
              {
                kind: "support",
                email: seeded.email,
                fullName: "Alice Example",
                phone: "+4420",
                comment: hostile,
              },
              { ip: null },
            );
            expect(support.ok).toBe(true);
          });
          const json = await cli(["support", "--json"]);
          const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
          expect(listed.slice(0, 2)).toEqual([
            expect.objectContaining({
              kind: "support",
              email: seeded.email,
              fullName: "Alice Example",
              phone: "+4420",
              comment: hostile,
              ip: null,
            }),
            expect.objectContaining({
              kind: "contact",
              email: "visitor@example.com",
              fullName: null,
              phone: null,
              comment: "Where are my coins?",
              ip: "203.0.113.7",
            }),
          ]);
          const contactsOnly = JSON.parse((await cli(["support", "--kind", "contact", "--json"])).stdout) as {
            kind: string;
          }[];
          expect(contactsOnly.every((m) => m.kind === "contact")).toBe(true);

          const text = await cli(["support", "--limit", "2"]);
          expect(text.stdout).toContain(`SUPPORT  Alice Example  <${seeded.email}>  +4420`);
          expect(text.stdout).toContain(
            "    Hi <script>alert(1)</script>\\u001b[2J\\u0007 help\n    second line\n",
          );
          expect(text.stdout).toContain("CONTACT  <visitor@example.com>");
          expect(text.stdout).toContain("from 203.0.113.7");
          // No raw control character reaches the terminal.
          // oxlint-disable-next-line no-control-regex
          expect(text.stdout).not.toMatch(/[\u0007\u001b]/);
          expect(text.stdout).toMatch(/2 messages, newest first\.\n$/);
        },
      );
    });

    test(
      "locks lists accounts with failed logins; unlock lifts a lock once, with its audit row",
      SLOW,
      async () => {
        const lockedEmail = uniqueEmail("locked");
        const throttledEmail = uniqueEmail("throttled");
        await target.withDb(async (db) => {
          const ctx = { db, keys: deriveServerKeys(BACKEND_SECRET) };
          for (const email of [lockedEmail, throttledEmail]) {
            if (!(await createAccount(ctx, email, "pw")).ok) throw new Error("account");
          }
          // Real failures through the limiter: 100 spread over the past day and a half from
          // many addresses (the backoff never holds them back), 6 just now from one address.
          let at = Date.now() - 36 * 3600_000;
          const past = createRateLimiter({
            db,
            secret: BACKEND_SECRET,
            policy: DEFAULT_RATE_LIMITS,
            now: () => new Date(at),
          });
          for (let i = 0; i < 100; i++) {
            at += 16 * 60_000;
            const attempt = await past.beginPasswordCheck(lockedEmail, `192.0.2.${(i % 50) + 1}`);
            expect(isLimited(attempt)).toBe(false);
          }
          // 20 from one address, each after the previous backoff ended; the last a minute ago,
          // which holds the account back for the backoff's cap (15 minutes).
          at = Date.now() - 60_000 - 19 * 901_000;
          for (let i = 0; i < 20; i++, at += 901_000) {
            expect(isLimited(await past.beginPasswordCheck(throttledEmail, "198.51.100.9"))).toBe(false);
          }
          const present = createRateLimiter({ db, secret: BACKEND_SECRET, policy: DEFAULT_RATE_LIMITS });
          expect(await present.beginPasswordCheck(lockedEmail, "198.51.100.10")).toEqual({ kind: "locked" });
        });

        const listed = JSON.parse((await cli(["locks", "--json"])).stdout) as {
          email: string;
          failures: number;
          locked: boolean;
        }[];
        const mine = listed.filter((l) => l.email === lockedEmail || l.email === throttledEmail);
        expect(mine).toEqual([
          { email: lockedEmail, failures: 100, locked: true },
          { email: throttledEmail, failures: 20, locked: false },
        ]);
        const text = await cli(["locks"]);
        expect(text.stdout.split("\n")[0]).toMatch(/^E-MAIL\s+FAILURES\s+STATE$/);
        expect(text.stdout).toMatch(new RegExp(`${lockedEmail.replace(/[.+]/g, "\\$&")}\\s+100\\s+locked`));
        expect(text.stdout).toMatch(new RegExp(`${throttledEmail.replace(/[.+]/g, "\\$&")}\\s+20\\s+open`));

        const unlock = await cli(["unlock", lockedEmail.toUpperCase(), "--as", "ops-unlock"]);
        expect(unlock).toEqual({
          code: 0,
          stdout: `Unlocked ${lockedEmail}: cleared 100 failed logins.\n`,
          stderr: "",
        });
        const again = await cli(["unlock", lockedEmail, "--as", "ops-unlock"]);
        expect(again.stdout).toBe(
          `${lockedEmail} has no failed logins: nothing to unlock. Nothing changed.\n`,
        );
        expectFailure(
          await cli(["unlock", "nobody@example.com"]),
          /^error: No user with the e-mail nobody@example\.com\.\n$/,
        );
        expectFailure(await cli(["unlock"]), /unlock takes 1 argument, got 0/);

        await target.withDb(async (db) => {
          const rows = await db.select().from(auditLog).where(eq(auditLog.action, "account.unlock"));
          expect(rows.filter((r) => r.actor === "ops-unlock")).toEqual([
            expect.objectContaining({ actor: "ops-unlock", details: { email: lockedEmail, failures: 100 } }),
          ]);
          // The lock is gone: the next password check is let through.
          const limiter = createRateLimiter({ db, secret: BACKEND_SECRET, policy: DEFAULT_RATE_LIMITS });
          expect(isLimited(await limiter.beginPasswordCheck(lockedEmail, "198.51.100.10"))).toBe(false);
          // The other account's count is untouched.
          expect((await limiter.accountStates([throttledEmail])).get(throttledEmail)).toEqual({
            failures: 20,
            locked: false,
          });
        });
      },
    );

    test(
      "the custody commands run through a running server's ops socket, each audited by who ran it",
      SLOW,
      async () => {
        const where = await mkdtemp(path.join(tmpdir(), "coinkeep-custody-"));
        const sol = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
        await writeFile(path.join(where, "sol.txt"), `# made offline\n${sol}\n`);
        const tx = "0x" + "c4".repeat(32);
        const steps: [string[], RegExp][] = [
          [["pause", "sends", "--coin", "ETH", "--reason", "node upgrade"], /^Paused sends of ETH/u],
          [["pauses"], /^WHAT +SCOPE/u],
          [["resume", "sends", "--coin", "ETH", "--reason", "upgrade done"], /^Resumed sends of ETH/u],
          [["holdings", "set", "ETH", "100", "--source", "geth eth_getBalance"], /ETH/u],
          [["reconcile"], /^COIN +OWED/u],
          [["pool", "add", "SOL", "sol.txt"], /^Added 1 SOL address to the pool\./u],
          [["pool"], /^COIN +FREE +TAKEN/u],
          [["issuing", "BTC", "manual", "--reason", "key rotation"], /^BTC issuing is now manual/u],
          [["custody"], /^COIN /u],
          [["deposit", "ETH", tx, "1", ETH_ADDRESS, "0.5", "--confirmations", "20"], /credited/iu],
          [["deposits"], /ETH/u],
        ];
        const runAll = async () => {
          const out: Run[] = [];
          for (const [args] of steps)
            out.push(await runCli([...args, "--as", "ops-socket"], target.env, where));
          return out;
        };
        let runs: Run[];
        if (target.withServer) {
          const served = await target.withServer(runAll);
          runs = served.result;
          // Every one went to the server, not to the database (which the server holds).
          expect(served.ran).toHaveLength(steps.length);
        } else {
          runs = await runAll();
        }
        for (const [i, run] of runs.entries()) {
          expect({ args: steps[i]?.[0], code: run.code, stderr: run.stderr }).toEqual({
            args: steps[i]?.[0],
            code: 0,
            stderr: "",
          });
          expect(run.stdout).toMatch(steps[i]?.[1] ?? /never/u);
        }
        const actions = await target.withDb((db) =>
          db.select().from(auditLog).where(eq(auditLog.actor, "ops-socket")).orderBy(auditLog.id),
        );
        expect(actions.map((a) => a.action)).toEqual([
          "pause",
          "resume",
          "holdings.set",
          "pool.add",
          "custody.issuing",
          "deposit.credit",
        ]);
        await rm(where, { recursive: true, force: true });
      },
    );

    test("deposits import reads the operator's file by a path relative to where they are", SLOW, async () => {
      const where = await mkdtemp(path.join(tmpdir(), "coinkeep-import-"));
      const tx = "0x" + "ef".repeat(32);
      await writeFile(
        path.join(where, "in.csv"),
        `coin,txid,output,address,amount,confirmations\nETH,${tx},3,${ETH_ADDRESS.toLowerCase()},0.25,1\n`,
      );
      const run = () => runCli(["deposits", "import", "in.csv", "--as", "ops"], target.env, where);
      let imported: Run;
      if (target.withServer) {
        // The server's working directory is not the operator's: the command line sends the full path.
        const served = await target.withServer(run);
        imported = served.result;
        expect(served.ran).toEqual([
          ["--as=ops", "deposits", "import", path.join(where, "in.csv"), "--as", "ops"],
        ]);
      } else {
        imported = await run();
      }
      expect(imported).toEqual({
        code: 0,
        stdout: `Imported ${path.join(where, "in.csv")}: 1 output: 0 credited, 1 pending, 0 unchanged.\n`,
        stderr: "",
      });
      const listed = await cli(["deposits", "--pending", "--json"]);
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({
          coin: "ETH",
          txid: tx,
          output: 3,
          address: ETH_ADDRESS,
          walletId: seeded.eth,
          amount: "0.25",
          confirmations: 1,
          required: 12,
          status: "pending",
        }),
      ]);
      const audit = await target.withDb((db) =>
        db.select().from(auditLog).where(eq(auditLog.action, "deposits.import")),
      );
      expect(audit).toEqual([
        expect.objectContaining({
          actor: "ops",
          subject: path.join(where, "in.csv"),
          details: expect.objectContaining({ lines: 1, credited: 0, pending: 1, unchanged: 0 }),
        }),
      ]);
      await rm(where, { recursive: true, force: true });
    });
  });
}
