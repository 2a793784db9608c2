// Watch-only issuing (issue 16, record 039), on both databases: with the Trust Wallet
// mnemonic's account keys configured (shared/COINS.md; BNB and USDT on accounts of their own,
// record 054), a wallet requested through call 5 shows its
// address in call 4 at once (index 0 first, then 1); SOL from the pool; a coin set to
// manual, or an issuing pause, leaves the request waiting; pool add refuses bad files
// whole and catches waiting requests up, as does issuing auto. The operator commands run
// as the server runs them for its ops socket (runInServer), on the test's database.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { and, asc, count, eq, isNull } from "drizzle-orm";
import { afterAll, expect, test } from "vitest";
import type { Ticker } from "../../common/coins.ts";
import {
  addressPool,
  auditLog,
  custodyIndexCounters,
  pauses,
  wallets,
} from "../../server/backend/db/schema.ts";
import {
  accountKeyFingerprint,
  deriveAddress,
  KEYED_COINS,
  parseAccountKey,
} from "../../server/backend/custody/derive.ts";
import { issueAutomatically } from "../../server/backend/domain/issuing.ts";
import { loadConfig } from "../../server/config.ts";
import { parseCommandLine, runInServer } from "../../server/ops/registry.ts";
import { CONFIGURED_INDEX0, CONFIGURED_KEYS, TRUST_KEY_ENV } from "../fixtures/account-keys.ts";
import { connectApi, describeEachDatabase, type Api, type ApiAccount } from "./api-suite.ts";
import { overHttp } from "./helpers.ts";

const LOW_WATER = 3;
const scratch = mkdtempSync(path.join(tmpdir(), "coinkeep-issuing-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const config = loadConfig({
  DATA_DIR: path.join(scratch, "data"),
  SESSION_SECRET: "s".repeat(32),
  BACKEND_SECRET: "b".repeat(32),
  POOL_LOW_WATER: String(LOW_WATER),
  ...TRUST_KEY_ENV,
});

/** A Solana public key of a fresh keypair (on the curve), as a custodian generates offline. */
function solKey(): string {
  return base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
}
/** 32 bytes that are no ed25519 point: an address nobody holds the key of (as a PDA). */
function offCurveKey(): string {
  for (;;) {
    const bytes = randomBytes(32);
    try {
      ed25519.Point.fromBytes(bytes);
    } catch {
      return base58.encode(bytes);
    }
  }
}

let files = 0;
function poolFile(lines: string[]): string {
  const file = path.join(scratch, `pool-${++files}.txt`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describeEachDatabase("issuing, database: $name", (getDatabase) => {
  const api: Api = connectApi(overHttp, getDatabase, {
    custody: { keys: config.accountKeys, poolLowWater: LOW_WATER },
  });
  const ops = (argv: string[]) => runInServer(argv, { db: api.db, config });
  const policy = { keys: config.accountKeys, usdtNetwork: config.usdtNetwork, poolLowWater: LOW_WATER };

  async function request(account: ApiAccount, coin: Ticker) {
    return api.call("/request-nonbtc-wallet", {
      email: account.email,
      twelveWords: account.twelveWords,
      request_text: coin,
    });
  }
  /** The address call 4 shows for the account's wallet of the coin. */
  async function shownAddress(account: ApiAccount, coin: Ticker): Promise<string> {
    const answer = await api.call("/aml-client-balances", {
      email: account.email,
      twelveWords: account.twelveWords,
    });
    expect(answer.status).toBe(200);
    const list = answer.body.wallets as { wallet_crypto: string; wallet_address: string }[];
    const wallet = list.find((w) => w.wallet_crypto === coin);
    if (!wallet) throw new Error(`no ${coin} wallet in call 4`);
    return wallet.wallet_address;
  }
  async function walletRow(account: ApiAccount, coin: Ticker) {
    const [row] = await api.db
      .select()
      .from(wallets)
      .where(and(eq(wallets.userId, account.userId), eq(wallets.coin, coin)));
    if (!row) throw new Error("no wallet row");
    return row;
  }
  async function auditOf(walletId: string) {
    return api.db
      .select({ actor: auditLog.actor, action: auditLog.action, details: auditLog.details })
      .from(auditLog)
      .where(eq(auditLog.subject, walletId))
      .orderBy(asc(auditLog.id));
  }
  const requested = { status: 200, body: { success: true, message: "Wallet requested." } };

  test("each keyed coin's first wallet gets its account's index-0 address at once, the second index 1", async () => {
    for (const coin of KEYED_COINS) {
      const first = await api.newAccount("issuing");
      expect(await request(first, coin)).toEqual(requested);
      expect([coin, await shownAddress(first, coin)]).toEqual([coin, CONFIGURED_INDEX0[coin]]);

      const key = parseAccountKey(coin, CONFIGURED_KEYS[coin]);
      const fingerprint = accountKeyFingerprint(key);
      const row = await walletRow(first, coin);
      expect(row).toMatchObject({
        address: CONFIGURED_INDEX0[coin],
        addressSource: "derived",
        derivationKey: fingerprint,
        derivationIndex: 0,
      });
      expect(row.issuedAt).toBeInstanceOf(Date);
      expect(await auditOf(row.id)).toEqual([
        {
          actor: "system",
          action: "wallet.issue-derived",
          details: {
            userId: first.userId,
            coin,
            address: CONFIGURED_INDEX0[coin],
            keyId: fingerprint,
            index: 0,
            trigger: "request",
          },
        },
      ]);

      const second = await api.newAccount("issuing");
      expect(await request(second, coin)).toEqual(requested);
      expect(await shownAddress(second, coin)).toBe(deriveAddress(coin, key, 1));
      expect((await walletRow(second, coin)).derivationIndex).toBe(1);
    }
  });

  test("a repeated request changes nothing and spends no index", async () => {
    const account = await api.newAccount("issuing");
    expect(await request(account, "BTC")).toEqual(requested);
    const counter = () =>
      api.db
        .select({ next: custodyIndexCounters.nextIndex })
        .from(custodyIndexCounters)
        .where(eq(custodyIndexCounters.coin, "BTC"));
    const before = await counter();
    expect(await request(account, "BTC")).toEqual({
      status: 200,
      body: { success: true, message: "Wallet already requested." },
    });
    expect(await counter()).toEqual(before);
    expect(await shownAddress(account, "BTC")).toBe(deriveAddress("BTC", CONFIGURED_KEYS.BTC, 2));
  });

  test("a request that rolls back gives its index back: the next wallet gets it", async () => {
    const counter = async () =>
      Number(
        (
          await api.db
            .select({ next: custodyIndexCounters.nextIndex })
            .from(custodyIndexCounters)
            .where(eq(custodyIndexCounters.coin, "TRX"))
        )[0]?.next,
      );
    const before = await counter();
    const account = await api.newAccount("issuing-rollback");
    await expect(
      api.db.transaction(async (tx) => {
        const [wallet] = await tx.insert(wallets).values({ userId: account.userId, coin: "TRX" }).returning();
        if (!wallet) throw new Error("no wallet");
        const outcome = await issueAutomatically(tx, { ...wallet, coin: "TRX" }, policy, "test");
        expect(outcome).toMatchObject({ issued: true, index: before });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await counter()).toBe(before);
    expect(await request(account, "TRX")).toEqual(requested);
    expect(await shownAddress(account, "TRX")).toBe(deriveAddress("TRX", CONFIGURED_KEYS.TRX, before));
  });

  test("SOL: requested while the pool is empty; pool add issues it the oldest address, later requests take the next", async () => {
    const waiting = await api.newAccount("issuing-sol");
    expect(await request(waiting, "SOL")).toEqual(requested);
    expect(await shownAddress(waiting, "SOL")).toBe("Not added yet");

    // Two loads: the first's addresses go out before the second's (within a load, in any order).
    const first = [solKey(), solKey()];
    const later = [solKey(), solKey(), solKey()];
    const file = poolFile([
      "# SOL keys generated offline",
      first[0] ?? "",
      "",
      `${first[1] ?? ""}  # second`,
    ]);
    expect(await ops(["pool", "add", "SOL", file, "--as", "Ops Olga"])).toEqual({
      code: 0,
      stdout:
        "Added 2 SOL addresses to the pool. Free now: 1 (taken: 1).\n" +
        "Issued 1 waiting SOL request at once.\n" +
        "Warning: the SOL address pool is low: 1 left.\n",
      stderr: "",
    });
    const issued = await shownAddress(waiting, "SOL");
    expect(first).toContain(issued);
    const row = await walletRow(waiting, "SOL");
    expect(row).toMatchObject({ addressSource: "pool", derivationKey: null, derivationIndex: null });
    expect(await auditOf(row.id)).toMatchObject([
      {
        actor: "system",
        action: "wallet.issue-pool",
        details: { coin: "SOL", address: issued, poolLeft: 1, trigger: "pool add" },
      },
    ]);
    const [poolAudit] = await api.db.select().from(auditLog).where(eq(auditLog.action, "pool.add"));
    expect(poolAudit).toMatchObject({
      actor: "Ops Olga",
      subject: "SOL",
      details: { coin: "SOL", added: 2, file: path.basename(file), first: first[0], last: first[1] },
    });

    expect(await ops(["pool", "add", "SOL", poolFile(later), "--as", "Ops Olga"])).toEqual({
      code: 0,
      stdout: "Added 3 SOL addresses to the pool. Free now: 4 (taken: 1).\n",
      stderr: "",
    });
    const next = await api.newAccount("issuing-sol");
    expect(await request(next, "SOL")).toEqual(requested);
    expect(await shownAddress(next, "SOL")).toBe(first.find((k) => k !== issued));
    const third = await api.newAccount("issuing-sol");
    expect(await request(third, "SOL")).toEqual(requested);
    expect(later).toContain(await shownAddress(third, "SOL"));
    // Below POOL_LOW_WATER (3) free: low.
    expect(await ops(["pool"])).toEqual({
      code: 0,
      stdout:
        "COIN  FREE  TAKEN  LEVEL\n----  ----  -----  -----\nSOL      2      3  low\n\n" +
        "Low (fewer than POOL_LOW_WATER free): SOL. Load more with: pool add <coin> <file>\n",
      stderr: "",
    });
    expect(JSON.parse((await ops(["pool", "--json"])).stdout)).toEqual([
      { coin: "SOL", free: 2, taken: 3, low: true },
    ]);
  });

  test("pool add refuses a file with a bad line, a duplicate, an off-curve key, a pooled or a wallet's address: nothing written, every line named", async () => {
    const [taken] = await api.db
      .select({ address: wallets.address })
      .from(wallets)
      .where(eq(wallets.coin, "SOL"));
    const [pooled] = await api.db
      .select({ address: addressPool.address })
      .from(addressPool)
      .where(and(eq(addressPool.coin, "SOL"), isNull(addressPool.walletId)));
    const good = solKey();
    const file = poolFile([
      good,
      "not-an-address",
      good,
      offCurveKey(),
      "# a comment",
      pooled?.address ?? "",
      taken?.address ?? "",
      CONFIGURED_INDEX0.ETH,
    ]);
    const poolSize = async () => Number((await api.db.select({ n: count() }).from(addressPool))[0]?.n);
    const auditSize = async () => Number((await api.db.select({ n: count() }).from(auditLog))[0]?.n);
    const [poolBefore, auditBefore] = [await poolSize(), await auditSize()];
    expect(await ops(["pool", "add", "SOL", file, "--as", "ops"])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        `error: Nothing added: 6 bad lines in ${path.basename(file)} — ` +
        "line 2: This is not a valid Solana address: it contains characters that never appear in one; line 3: the same address as line 1; " +
        "line 4: not a point on the ed25519 curve (a program-derived address has no key); " +
        "line 6: already in the SOL pool; line 7: already the address of a SOL wallet; " +
        "line 8: This is an Ethereum or BNB Smart Chain address, not a Solana address.\n",
    });
    expect([await poolSize(), await auditSize()]).toEqual([poolBefore, auditBefore]);
    expect(await ops(["pool", "add", "SOL", path.join(scratch, "missing.txt")])).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: Cannot read ${path.join(scratch, "missing.txt")} (ENOENT).\n`,
    });
    expect((await ops(["pool", "add", "SOL", poolFile(["# nothing here", ""])])).stderr).toMatch(
      /^error: \S+ holds no addresses\. Nothing added\.\n$/u,
    );
    expect((await ops(["pool", "take", "SOL", file])).stderr).toBe(
      'error: Unknown pool command "take": pool, or pool add <coin> <file>.\n',
    );
  });

  test("manual leaves requests waiting for issue-address; issuing auto issues them at once, audited", async () => {
    expect(await ops(["issuing", "ETH", "manual", "--reason", "key rotation", "--as", "Ops Olga"])).toEqual({
      code: 0,
      stdout: "ETH issuing is now manual (was auto): new ETH wallet requests wait for issue-address.\n",
      stderr: "",
    });
    const [setting] = await api.db.select().from(auditLog).where(eq(auditLog.action, "custody.issuing"));
    expect(setting).toMatchObject({
      actor: "Ops Olga",
      subject: "ETH",
      details: {
        coin: "ETH",
        reason: "key rotation",
        before: { issuing: "auto" },
        after: { issuing: "manual" },
      },
    });
    expect((await ops(["issuing", "ETH", "manual", "--reason", "again"])).stdout).toBe(
      "ETH issuing is already manual. Nothing changed.\n",
    );

    const account = await api.newAccount("issuing-manual");
    expect(await request(account, "ETH")).toEqual(requested);
    expect(await shownAddress(account, "ETH")).toBe("Not added yet");
    expect((await ops(["requests"])).stdout).toContain(`${account.email}  ETH`);
    expect((await ops(["custody"])).stdout).toMatch(/^ETH +manual \(set by Ops Olga on \S+\) +no +1$/mu);

    const next = Number(
      (await api.db.select().from(custodyIndexCounters).where(eq(custodyIndexCounters.coin, "ETH")))[0]
        ?.nextIndex,
    );
    const fingerprint = accountKeyFingerprint(parseAccountKey("ETH", CONFIGURED_KEYS.ETH));
    expect(await ops(["issuing", "eth", "auto", "--reason", "rotation done", "--as", "Ops Olga"])).toEqual({
      code: 0,
      stdout:
        `ETH issuing is now auto (was manual): derived from key ${fingerprint}, next index ${next + 1}.\n` +
        "Issued 1 waiting ETH request at once.\n",
      stderr: "",
    });
    expect(await shownAddress(account, "ETH")).toBe(deriveAddress("ETH", CONFIGURED_KEYS.ETH, next));
    const row = await walletRow(account, "ETH");
    expect(await auditOf(row.id)).toMatchObject([
      { actor: "system", action: "wallet.issue-derived", details: { index: next, trigger: "issuing auto" } },
    ]);
    expect((await ops(["issuing", "ETH", "auto"])).stderr).toBe(
      'error: Say why with --reason "…" (1 to 500 characters).\n',
    );
    expect((await ops(["issuing", "ETH", "sometimes", "--reason", "x"])).stderr).toBe(
      'error: Say auto or manual, not "sometimes".\n',
    );
  });

  test("an issuing pause (coin or user) leaves requests waiting and refuses issue-address, naming its reason", async () => {
    await api.db
      .insert(pauses)
      .values({ what: "issuing", coin: "DOGE", reason: "key under review", actor: "ops" });
    const account = await api.newAccount("issuing-paused");
    expect(await request(account, "DOGE")).toEqual(requested);
    expect(await shownAddress(account, "DOGE")).toBe("Not added yet");
    const wallet = await walletRow(account, "DOGE");
    const manual = deriveAddress("DOGE", CONFIGURED_KEYS.DOGE, 1000);
    expect(await ops(["issue-address", wallet.id, manual, "--as", "ops"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: Issuing is paused for DOGE (key under review). Nothing changed.\n",
    });
    expect((await ops(["custody"])).stdout).toMatch(
      /^DOGE +derived from key \w{16}, next index \d+ +yes: key under review +1$/mu,
    );

    const user = await api.newAccount("issuing-paused-user");
    await api.db
      .insert(pauses)
      .values({ what: "issuing", userId: user.userId, reason: "identity check", actor: "ops" });
    expect(await request(user, "XRP")).toEqual(requested);
    expect(await shownAddress(user, "XRP")).toBe("Not added yet");
    const xrp = await walletRow(user, "XRP");
    expect(
      (await ops(["issue-address", xrp.id, "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3", "--as", "ops"])).stderr,
    ).toBe(`error: Issuing is paused for the user ${user.email} (identity check). Nothing changed.\n`);

    // Lifted: the operator's address is recorded as manual.
    await api.db.delete(pauses).where(eq(pauses.what, "issuing"));
    expect((await ops(["issue-address", wallet.id, manual, "--as", "ops"])).code).toBe(0);
    expect(await walletRow(account, "DOGE")).toMatchObject({
      address: manual,
      addressSource: "manual",
      derivationIndex: null,
    });
  });

  test("ops resume issuing issues the requests the pause held back, in the resume's transaction", async () => {
    expect(
      (await ops(["pause", "issuing", "--coin", "TRX", "--reason", "key audit", "--as", "ops"])).code,
    ).toBe(0);
    const account = await api.newAccount("issuing-resumed");
    expect(await request(account, "TRX")).toEqual(requested);
    expect(await shownAddress(account, "TRX")).toBe("Not added yet");

    expect(
      await ops(["resume", "issuing", "--coin", "TRX", "--reason", "audit done", "--as", "ops"]),
    ).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^Resumed issuing of TRX \(every user\)\. Reason: audit done\n.*\nIssued 1 waiting TRX request at once\.\n$/su,
      ),
    });
    const row = await walletRow(account, "TRX");
    expect(row).toMatchObject({ addressSource: "derived" });
    expect(await shownAddress(account, "TRX")).toBe(
      deriveAddress("TRX", CONFIGURED_KEYS.TRX, row.derivationIndex ?? -1),
    );
    expect(await auditOf(row.id)).toMatchObject([
      { actor: "system", action: "wallet.issue-derived", details: { coin: "TRX", trigger: "resume" } },
    ]);
  });

  test("issue-address refuses an address of the coin's pool", async () => {
    const free = solKey();
    const account = await api.newAccount("issuing-pool-manual");
    await ops(["issuing", "SOL", "manual", "--reason", "hand out by hand", "--as", "ops"]);
    expect((await ops(["pool", "add", "SOL", poolFile([free]), "--as", "ops"])).stdout).toBe(
      "Added 1 SOL address to the pool. Free now: 3 (taken: 3).\n",
    );
    expect(await request(account, "SOL")).toEqual(requested);
    const wallet = await walletRow(account, "SOL");
    expect((await ops(["issue-address", wallet.id, free, "--as", "ops"])).stderr).toBe(
      `error: The address ${free} is in the SOL address pool; the pool issues it.\n`,
    );
  });
});

test("through the ops socket, pool add hands the server its file as an absolute path", () => {
  const argv = ["pool", "add", "SOL", "keys/sol.txt", "--as", "ops"];
  const invocation = parseCommandLine(argv);
  if (invocation.kind !== "run") throw new Error("not a command");
  expect(invocation.forward).toEqual(["pool", "add", "SOL", path.resolve("keys/sol.txt"), "--as", "ops"]);
  expect(() => parseCommandLine(["pool", "add", "SOL"])).toThrow(
    "pool takes 0 or 3 arguments, got 2. Usage: node server/ops/cli.ts pool [--json]",
  );
  expect(() => parseCommandLine(["pool", "add", "DOGECOIN", "f"])).toThrow(
    'Unknown coin "DOGECOIN": one of BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT, XRP.',
  );
  expect(() => parseCommandLine(["custody", "--reason", "x"])).toThrow(
    "--reason goes with decline, issuing, pause, resume, staff end-sessions, staff remove, staff roles, staff unlock and threshold set only.",
  );
});
