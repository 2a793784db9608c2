// One-off measurement (not a test): server time to render /home and
// /wallet/btc for a user with 9 wallets and 1,000 transactions.
//   node scripts/measure-home.ts
// It seeds a fresh embedded database in a temporary folder, starts the
// production server on it, signs in through the real login form and times
// sequential requests. Needs a build (npm run build).
import { mkdtempSync, rmSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import path from "node:path";
import { TICKERS, type Ticker } from "../common/coins.ts";
import { loadConfig } from "../server/host/config.ts";
import { openDatabase } from "../server/backend/db/index.ts";
import { createAccount } from "../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../server/backend/domain/crypto.ts";
import { creditDeposit } from "../server/backend/domain/ledger.ts";
import { issueAddress, requestWallet } from "../server/backend/domain/wallets.ts";
import { startHost } from "../server/host/host.ts";

const ADDRESSES: Record<Ticker, string> = {
  BTC: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
  ETH: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  ADA: "addr1qyr8jjfnypp95eq74aqzn7ss687ehxclgj7mu6gratmg3mul2040vt35dypp042awzsjk5xm3zr3zm5qh7454uwdv08s84ray2",
  BNB: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  DOGE: "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f",
  SOL: "2bUBiBNZyD29gP1oV6de7nxowMLoDBtopMMTGgMvjG5m",
  TRX: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
  USDT: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
  XRP: "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3",
};

const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-measure-"));
const env = { DATA_DIR: dir, PORT: "0", FEEDS_OFFLINE: "true" };
const config = loadConfig(env);
const email = "measure@example.com";
const password = "measure-password";

const seedStart = performance.now();
const database = await openDatabase({ dataDir: dir });
const ctx = { db: database.db, keys: deriveServerKeys(config.backendSecret) };
const account = await createAccount(ctx, email, password);
if (!account.ok) throw new Error("could not create the account");
const walletIds: string[] = [];
for (const ticker of TICKERS) {
  const requested = await requestWallet(database.db, account.userId, ticker);
  if (!requested.ok) throw new Error(`request ${ticker}`);
  const issued = await issueAddress(database.db, requested.wallet.id, ADDRESSES[ticker]);
  if (!issued.ok) throw new Error(`issue ${ticker}: ${issued.reason}`);
  walletIds.push(requested.wallet.id);
}
for (let i = 0; i < 1000; i++) {
  const walletId = walletIds[i % walletIds.length]!;
  const done = await creditDeposit(database.db, {
    walletId,
    units: BigInt(1000 + i),
    externalTxId: `measure-${i}`,
    amountUsd: "1.00",
  });
  if (!done.ok) throw new Error(`credit ${i}`);
}
await database.close();
console.log(`seeded 9 wallets and 1000 deposits in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const host = await startHost(config);
const base = `http://127.0.0.1:${host.port}`;
try {
  // Sign in through the real form: CSRF token, honeypot and all.
  const page = await fetch(`${base}/login`);
  const cookies = page.headers.getSetCookie().map((c) => c.split(";")[0]);
  const loginHtml = await page.text();
  const field = (name: string) => new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(loginHtml)?.[1] ?? "";
  const form = new URLSearchParams({
    csrf: field("csrf").replaceAll("&amp;", "&"),
    ck_name__confirm: "",
    ck_from__confirm: field("ck_from__confirm"),
    email,
    password,
  });
  const login = await fetch(`${base}/login`, {
    method: "POST",
    body: form,
    redirect: "manual",
    headers: { cookie: cookies.join("; "), "content-type": "application/x-www-form-urlencoded" },
  });
  if (login.status !== 302) throw new Error(`login answered ${login.status}`);
  const session = [...cookies, ...login.headers.getSetCookie().map((c) => c.split(";")[0])].join("; ");

  for (const route of ["/home", "/wallet/btc", "/history"]) {
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const started = performance.now();
      const response = await fetch(`${base}${route}`, { headers: { cookie: session } });
      await response.text();
      if (response.status !== 200) throw new Error(`${route} answered ${response.status}`);
      if (i >= 10) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
    console.log(
      `${route}: median ${at(0.5)} ms, p95 ${at(0.95)} ms (50 sequential requests after 10 warm-up)`,
    );
  }

  // What the browser downloads for each page: its module scripts and styles, gzip-compressed.
  for (const route of ["/", "/login", "/home", "/wallet/btc"]) {
    const signedIn = route === "/home" || route.startsWith("/wallet/");
    const response = await fetch(`${base}${route}`, { headers: signedIn ? { cookie: session } : {} });
    const html = await response.text();
    let js = 0;
    let css = 0;
    for (const [, href = ""] of html.matchAll(/<link rel="(?:modulepreload|stylesheet)" href="([^"]+)"/gu)) {
      const body = Buffer.from(await (await fetch(`${base}${href}`)).arrayBuffer());
      const size = gzipSync(body, { level: 9 }).length;
      if (href.endsWith(".css")) css += size;
      else js += size;
    }
    console.log(`${route}: JS ${(js / 1024).toFixed(1)} KB gzip, CSS ${(css / 1024).toFixed(1)} KB gzip`);
  }
} finally {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
}
