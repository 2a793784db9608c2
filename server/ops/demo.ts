// Fills the configured database with a demo account to click through:
//   node server/ops/demo.ts [--force]
//
// demo@coinkeep.example / demo-password, with wallets in all three states
// (issued, requested, none), deposits (one still unconfirmed), sends in every status (pending,
// Confirmed, Declined: through the ledger's hold, post and void) and two
// messages (one read, one unread). Every step is idempotent: run again, it
// says the account exists, fills in only what is missing (nothing, after a
// complete run) and prints the login again. It refuses a DATABASE_URL
// database unless --force: demo data does not belong in production.
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { eq, inArray, sql, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { COINS, type Ticker } from "../../common/coins.ts";
import { ConfigError, loadConfig, sharedSecrets, type Config } from "../config.ts";
import { openDatabase, type AppDb, type Database } from "../backend/db/index.ts";
import { checkSecrets, SecretMismatchError } from "../backend/db/secret-checks.ts";
import { messageReads, messages, users, withdrawals } from "../backend/db/schema.ts";
import { createAccount, login, type AccountsContext } from "../backend/domain/accounts.ts";
import { validateAddress } from "../../common/addresses.ts";
import { parseAmount } from "../backend/domain/amounts.ts";
import { deriveServerKeys } from "../backend/domain/crypto.ts";
import { recordDeposit } from "../backend/domain/deposits.ts";
import { creditDeposit, holdWithdrawal, postWithdrawal, voidWithdrawal } from "../backend/domain/ledger.ts";
import { issueAddress, requestWallet, type WalletInfo } from "../backend/domain/wallets.ts";

export const DEMO_EMAIL = "demo@coinkeep.example";
export const DEMO_PASSWORD = "demo-password";

const USAGE = `Usage: node server/ops/demo.ts [--force]

Creates the demo account ${DEMO_EMAIL} (password ${DEMO_PASSWORD}) in the
configured database, with wallets, deposits, sends and messages, and prints how
to log in. Run again, it adds nothing twice. It refuses a DATABASE_URL database
unless --force is given. The embedded database (DATA_DIR) serves one process at
a time: stop the server first.`;

// Public test vectors (shared/COINS.md): valid addresses nobody here owns.
const ISSUED: Partial<Record<Ticker, string>> = {
  BTC: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
  ETH: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  SOL: "2bUBiBNZyD29gP1oV6de7nxowMLoDBtopMMTGgMvjG5m",
};
const USDT_ADDRESS = {
  erc20: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  trc20: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
};
/** Requested, no address yet ('Not added yet'). */
const REQUESTED: Ticker = "XRP";

/** Illustrative USD prices for the recorded USD values (the demo does not call the price feeds). */
const DEMO_PRICE_CENTS: Partial<Record<Ticker, bigint>> = {
  BTC: 6_500_000n,
  ETH: 320_000n,
  SOL: 15_000n,
  USDT: 100n,
};

interface DemoDeposit {
  coin: Ticker;
  amount: string;
  label: string;
}
const DEPOSITS: DemoDeposit[] = [
  { coin: "BTC", amount: "0.5", label: "btc-1" },
  { coin: "ETH", amount: "2.75", label: "eth-1" },
  { coin: "USDT", amount: "1500", label: "usdt-1" },
  { coin: "SOL", amount: "40", label: "sol-1" },
  { coin: "BTC", amount: "0.0125", label: "btc-2" },
];

interface DemoSend {
  coin: Ticker;
  amount: string;
  /** Validated for the coin before use. */
  destination: string | { erc20: string; trc20: string };
  outcome: "pending" | "Confirmed" | "Declined";
}
const SENDS: DemoSend[] = [
  {
    coin: "ETH",
    amount: "0.4",
    destination: "0xde0B295669a9FD93d5F28D9Ec85E40f4cb697BAe",
    outcome: "Confirmed",
  },
  {
    coin: "BTC",
    amount: "0.05",
    destination: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
    outcome: "Confirmed",
  },
  {
    coin: "USDT",
    amount: "200",
    destination: {
      erc20: "0xde0B295669a9FD93d5F28D9Ec85E40f4cb697BAe",
      trc20: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
    },
    outcome: "Declined",
  },
  {
    coin: "SOL",
    amount: "5",
    destination: "So11111111111111111111111111111111111111112",
    outcome: "Declined",
  },
  {
    coin: "BTC",
    amount: "0.01",
    destination: "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
    outcome: "pending",
  },
];

const MESSAGES = [
  {
    text: "Welcome to Coinkeep! Your deposit addresses for BTC, ETH, SOL and USDT are ready on their wallet pages.",
    read: true,
  },
  {
    text: "Compliance check: your recent SOL send was declined. Please tell us the purpose of the payment through Support before trying again.",
    read: false,
  },
];

class DemoError extends Error {}

function say(line: string) {
  process.stdout.write(`${line}\n`);
}

function units(coin: Ticker, amount: string): bigint {
  const parsed = parseAmount(coin, amount);
  if (!parsed.ok) throw new Error(`demo amount ${amount} ${coin}: ${parsed.reason}`);
  return parsed.units;
}

/** The USD value at the demo price, rounded down to cents, as a decimal string. */
function usdValue(coin: Ticker, amount: bigint): string | null {
  const cents = DEMO_PRICE_CENTS[coin];
  if (cents === undefined) return null;
  const total = (amount * cents) / 10n ** BigInt(COINS[coin].decimals);
  return `${total / 100n}.${(total % 100n).toString().padStart(2, "0")}`;
}

/** A deterministic, realistic-looking 64-hex transaction id per demo deposit. */
function demoTxid(label: string): string {
  return createHash("sha256").update(`coinkeep-demo-${label}`).digest("hex");
}

function checked(coin: Ticker, address: string, config: Config): string {
  const result = validateAddress(coin, address, { usdtNetwork: config.usdtNetwork });
  if (!result.ok) throw new Error(`demo address for ${coin} refused: ${result.reason}`);
  return result.address;
}

/** Whether no row of `table` matches `where`. */
async function noRows(db: AppDb, table: PgTable, where: SQL): Promise<boolean> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(table)
    .where(where);
  return (row?.n ?? 0) === 0;
}

async function seed(db: AppDb, config: Config, userId: string) {
  const byCoin = new Map<Ticker, WalletInfo>();
  const issuedCoins: Ticker[] = [...(Object.keys(ISSUED) as Ticker[]), "USDT"];
  for (const coin of [...issuedCoins, REQUESTED]) {
    const requested = await requestWallet(db, userId, coin);
    if (!requested.ok) throw new Error("the demo user disappeared");
    byCoin.set(coin, requested.wallet);
  }
  for (const coin of issuedCoins) {
    const wallet = byCoin.get(coin);
    if (!wallet || wallet.address !== null) continue;
    const raw = coin === "USDT" ? USDT_ADDRESS[config.usdtNetwork] : ISSUED[coin];
    if (!raw) continue;
    const issued = await issueAddress(db, wallet.id, checked(coin, raw, config));
    if (issued.ok) byCoin.set(coin, issued.wallet);
    else if (issued.reason === "address-taken")
      say(`  (the demo ${coin} address is already used by another wallet: left requested)`);
  }

  for (const d of DEPOSITS) {
    const wallet = byCoin.get(d.coin);
    if (!wallet?.address) continue;
    const amount = units(d.coin, d.amount);
    await creditDeposit(db, {
      walletId: wallet.id,
      units: amount,
      externalTxId: demoTxid(d.label),
      amountUsd: usdValue(d.coin, amount),
    });
  }

  // One deposit still on its way (record 040): 'Unconfirmed' in the list, not in the balance. Keyed
  // on its chain output like any other, so a second run finds it and adds nothing.
  const btc = byCoin.get("BTC");
  if (btc?.address) {
    const amount = units("BTC", "0.004");
    await recordDeposit(
      db,
      {
        coin: "BTC",
        txid: demoTxid("btc-on-its-way"),
        outputIndex: 0,
        address: btc.address,
        units: amount,
        confirmations: 0,
        amountUsd: usdValue("BTC", amount),
      },
      { confirmations: config.confirmations, usdtNetwork: config.usdtNetwork },
    );
  }

  // Sends are not keyed by anything external: made only while the demo wallets have none.
  const walletIds = [...byCoin.values()].map((w) => w.id);
  if (await noRows(db, withdrawals, inArray(withdrawals.walletId, walletIds))) {
    for (const s of SENDS) {
      const wallet = byCoin.get(s.coin);
      if (!wallet?.address) continue;
      const amount = units(s.coin, s.amount);
      const raw = typeof s.destination === "string" ? s.destination : s.destination[config.usdtNetwork];
      const hold = await holdWithdrawal(db, {
        walletId: wallet.id,
        units: amount,
        destination: checked(s.coin, raw, config),
        amountUsd: usdValue(s.coin, amount),
      });
      if (!hold.ok) throw new Error(`demo send of ${s.amount} ${s.coin} refused: ${hold.reason}`);
      if (s.outcome === "Confirmed") await postWithdrawal(db, hold.withdrawalId);
      if (s.outcome === "Declined") {
        await voidWithdrawal(db, hold.withdrawalId, "Declined by compliance review (demo).");
      }
    }
  }

  if (await noRows(db, messages, eq(messages.userId, userId))) {
    for (const m of MESSAGES) {
      await db.transaction(async (tx) => {
        const [row] = await tx
          .insert(messages)
          .values({ userId, message: m.text })
          .returning({ id: messages.id });
        if (row && m.read) await tx.insert(messageReads).values({ messageId: row.id, userId });
      });
    }
  }
}

export async function main(argv: string[]): Promise<number> {
  let database: Database | undefined;
  try {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: { force: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      }));
    } catch (error) {
      throw new DemoError(`${error instanceof Error ? error.message : String(error)}. See --help.`);
    }
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const config = loadConfig();
    if (config.databaseUrl && !values.force) {
      throw new DemoError(
        "Refusing to put demo data into the DATABASE_URL database; pass --force if you really mean to.",
      );
    }
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await checkSecrets(database.db, sharedSecrets(config));
    const ctx: AccountsContext = { db: database.db, keys: deriveServerKeys(config.backendSecret) };

    const created = await createAccount(ctx, DEMO_EMAIL, DEMO_PASSWORD);
    let userId: string;
    let words: string[] | undefined;
    if (created.ok) {
      say(`Created the demo account ${DEMO_EMAIL}.`);
      userId = created.userId;
      words = created.words;
    } else {
      say(`The demo account ${DEMO_EMAIL} already exists; nothing is added twice.`);
      const loggedIn = await login(ctx, DEMO_EMAIL, DEMO_PASSWORD);
      const [found] = await ctx.db.select({ id: users.id }).from(users).where(eq(users.email, DEMO_EMAIL));
      const id = found?.id;
      if (!id) throw new Error("the demo account vanished");
      userId = id;
      words = loggedIn.ok ? loggedIn.words : undefined;
    }
    await seed(database.db, config, userId);

    const url = `http://${config.host}:${config.port}/login`;
    say("");
    say(`Log in at ${url}`);
    say(`  E-mail:   ${DEMO_EMAIL}`);
    if (words) {
      say(`  Password: ${DEMO_PASSWORD}`);
      say(`  12 words: ${words.join(" ")}`);
    } else {
      say(
        `  Password: changed since the demo created it (it was ${DEMO_PASSWORD}); the 12 words cannot be shown.`,
      );
    }
    say("");
    say("Wallets: BTC, ETH, SOL and USDT issued; XRP requested (Not added yet); the others not requested.");
    say(
      "Sends: one pending (BTC), two Confirmed (ETH, BTC), two Declined (USDT, SOL). A BTC deposit waiting for confirmations (Unconfirmed). Messages: one read, one unread.",
    );
    return 0;
  } catch (error) {
    const message =
      error instanceof DemoError || error instanceof ConfigError || error instanceof SecretMismatchError
        ? error.message
        : String(error);
    process.stderr.write(
      `error: ${message
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
        .join(" ")}\n`,
    );
    return 1;
  } finally {
    await database?.close().catch(() => {});
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
