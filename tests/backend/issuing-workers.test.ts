// Issuing with real server processes (record 039). The ordering claim: two server processes
// (WORKERS=2) on one PostgreSQL database, 50 users requesting a BTC wallet at the same moment
// over HTTP, each on a connection of its own (so both processes serve them). The counter row's
// lock must give the 50 wallets the indexes 0..49 exactly: none twice, none skipped. And what a
// server does at start with a key: log it for the operator to check, issue what waited.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../../server/backend/db/index.ts";
import { auditLog, wallets } from "../../server/backend/db/schema.ts";
import {
  accountKeyFingerprint,
  deriveAddress,
  parseAccountKey,
} from "../../server/backend/custody/derive.ts";
import { createAccount } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { requestWallet } from "../../server/backend/domain/wallets.ts";
import { TRUST_INDEX0, TRUST_KEYS } from "../fixtures/account-keys.ts";
import { openTempPostgres, uniqueEmail, type OpenedDatabase } from "./helpers.ts";
import { TEST_SECRETS, built, spawnHost, type HostProcess } from "../../scripts/host.ts";
import { processEnv } from "./host-suite.ts";

const adminUrl = process.env.TEST_DATABASE_URL;
const describeWorkers = adminUrl && built ? describe : describe.skip;
const USERS = 50;

describeWorkers("issuing with two server processes on PostgreSQL", () => {
  let opened: OpenedDatabase;
  let host: HostProcess;
  let base = "";

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    host = await spawnHost({
      env: { ...processEnv(opened.databaseUrl, 2), ACCOUNT_KEY_BTC: TRUST_KEYS.BTC },
      stdio: ["ignore", "ignore", "inherit"],
    });
    base = (await host.ready()).base;
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
    await opened?.dispose();
  });

  const api = async (call: string, body: Record<string, unknown>) => {
    const response = await fetch(`${base}/api/${call}`, {
      method: "POST",
      // A connection each: the two processes take them in turn.
      headers: { "content-type": "application/json", connection: "close" },
      body: JSON.stringify({ platform: "CK", ...body }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test(`${USERS} concurrent wallet requests get ${USERS} distinct, consecutive indexes`, async () => {
    const accounts = await Promise.all(
      Array.from({ length: USERS }, async () => {
        const email = uniqueEmail("issuing-workers");
        const created = await api("aml-authentication", { email, password: "pw", passwordConfirmed: "pw" });
        expect(created.status).toBe(200);
        return { email, twelveWords: (created.body.twelveWords as string[]).join(" ") };
      }),
    );
    const answers = await Promise.all(
      accounts.map((a) =>
        api("request-nonbtc-wallet", { email: a.email, twelveWords: a.twelveWords, request_text: "BTC" }),
      ),
    );
    for (const answer of answers) {
      expect(answer).toEqual({ status: 200, body: { success: true, message: "Wallet requested." } });
    }

    const rows = await opened.database.db
      .select({ address: wallets.address, index: wallets.derivationIndex, source: wallets.addressSource })
      .from(wallets)
      .where(eq(wallets.coin, "BTC"));
    expect(rows).toHaveLength(USERS);
    const indexes = rows.map((r) => r.index ?? -1).toSorted((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: USERS }, (_, i) => i));
    expect(new Set(rows.map((r) => r.address)).size).toBe(USERS);
    for (const row of rows) {
      expect(row).toEqual({
        address: deriveAddress("BTC", TRUST_KEYS.BTC, row.index ?? -1),
        index: row.index,
        source: "derived",
      });
    }
    // What each user sees in call 4 is the stored address.
    const shown = await api("aml-client-balances", accounts[0] ?? {});
    const [wallet] = shown.body.wallets as { wallet_address: string }[];
    expect(rows.map((r) => r.address)).toContain(wallet?.wallet_address);
  }, 120_000);
});

// At start (record 039): each key's fingerprint and index-0 address are logged, for the
// operator to check, and requests that waited (no key until now) are issued.
const describeBuilt = built ? describe : describe.skip;
describeBuilt("a server starting with a key", () => {
  test("logs the key's fingerprint and index-0 address, nothing more of it, and issues the waiting requests", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "coinkeep-issuing-start-"));
    try {
      const database = await openDatabase({ dataDir });
      const account = await createAccount(
        { db: database.db, keys: deriveServerKeys(TEST_SECRETS.BACKEND_SECRET) },
        uniqueEmail("issuing-start"),
        "pw",
      );
      if (!account.ok) throw new Error("account");
      const waiting = await requestWallet(database.db, account.userId, "DOGE");
      if (!waiting.ok || waiting.wallet.address !== null) throw new Error("request");
      await database.close();

      const host = await spawnHost({
        dataDir,
        env: { ...processEnv(), ACCOUNT_KEY_DOGE: TRUST_KEYS.DOGE },
      });
      try {
        await expect.poll(() => host.output.stdout, { timeout: 30_000 }).toContain('"message":"listening"');
      } finally {
        await host.stop();
      }
      const lines = host.output.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const fingerprint = accountKeyFingerprint(parseAccountKey("DOGE", TRUST_KEYS.DOGE));
      expect(lines.filter((l) => l.message === "account key")).toEqual([
        {
          time: expect.any(String),
          level: "info",
          message: "account key",
          coin: "DOGE",
          fingerprint,
          index0: TRUST_INDEX0.DOGE,
        },
      ]);
      expect(lines.find((l) => l.message === "issued waiting requests")).toMatchObject({
        coin: "DOGE",
        issued: 1,
        waiting: 0,
      });
      expect(`${host.output.stdout}${host.output.stderr}`).not.toContain(TRUST_KEYS.DOGE.slice(4, 40));

      const reopened = await openDatabase({ dataDir });
      try {
        const [row] = await reopened.db.select().from(wallets).where(eq(wallets.id, waiting.wallet.id));
        expect(row).toMatchObject({
          address: TRUST_INDEX0.DOGE,
          addressSource: "derived",
          derivationKey: fingerprint,
          derivationIndex: 0,
        });
        const [audit] = await reopened.db
          .select()
          .from(auditLog)
          .where(eq(auditLog.subject, waiting.wallet.id));
        expect(audit).toMatchObject({
          actor: "system",
          action: "wallet.issue-derived",
          details: { trigger: "start" },
        });
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
