// Records the HTTP requests the real signed-in client makes with scripts on,
// to check the capacity benchmark's request mix (scripts/bench/mix.ts):
//
//   npm run build && node scripts/bench/record-client.ts
//
// It seeds an embedded database in a temporary folder with one user (nine
// wallets, a few transactions, messages), starts the production server, signs
// in with Debian's Chromium through the login form, waits for hydration, then
// records every request for BENCH_RECORD_SECONDS (default 70) on /home (at
// half time an operator's message to the user, through the server's ops
// socket, as `npm run ops -- message` would), follows one link to
// /wallet/btc, and prints the requests by method and URL, and the event
// streams the page opened (record 033).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { chromium } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../chromium.ts";
import { openDatabase } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { callOpsSocket, opsSocketPath } from "../../server/ops/socket.ts";
import { cleanupAll, log, startServer } from "./lib.ts";
import { PASSWORD, seedPageUser } from "./seed.ts";

const seconds = Number(process.env.BENCH_RECORD_SECONDS ?? 70);
const dataDir = mkdtempSync(path.join(os.tmpdir(), "coinkeep-record-"));
const sessionSecret = randomBytes(32).toString("hex");
const backendSecret = randomBytes(32).toString("hex");

try {
  const database = await openDatabase({ dataDir });
  const user = await seedPageUser(
    { db: database.db, keys: deriveServerKeys(backendSecret) },
    "record@bench.example",
    60,
  );
  await database.close();
  const server = await startServer({ port: 3397, dataDir, sessionSecret, backendSecret });
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS],
  });
  try {
    const page = await browser.newPage();
    const streams: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/events") streams.push(request.url());
    });
    await page.goto(`${server.base}/login`);
    await page.locator("html[data-hydrated]").waitFor();
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log In" }).click();
    await page.waitForURL("**/home");
    await page.locator("html[data-hydrated]").waitFor();

    const seen: Array<{ at: number; method: string; url: string }> = [];
    const started = performance.now();
    page.on("request", (request) => {
      const url = new URL(request.url());
      seen.push({
        at: (performance.now() - started) / 1000,
        method: request.method(),
        url: `${url.pathname}${url.search}`,
      });
    });
    log(`recording /home for ${seconds} s…`);
    await sleep((seconds * 1000) / 2);
    const message = await callOpsSocket(opsSocketPath(dataDir), [
      "--as=record-client",
      "message",
      "--to",
      user.email,
      "A message sent while the page is open.",
    ]);
    if (message?.code !== 0) throw new Error(`the message was not sent: ${message?.stderr ?? "no server"}`);
    log(`an operator's message at ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await sleep((seconds * 1000) / 2);
    const beforeNavigation = seen.length;
    await page.locator('a[href="/wallet/btc"]').first().click();
    await page.waitForURL("**/wallet/btc");
    await sleep(1000);

    const counts = new Map<string, number>();
    for (const r of seen.slice(0, beforeNavigation)) {
      const key = `${r.method} ${r.url}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    console.log(`\nRequests on /home in ${seconds} s (scripts on, page visible):`);
    for (const [key, n] of [...counts].toSorted((a, b) => b[1] - a[1])) {
      console.log(`  ${String(n).padStart(4)}  ${key}  (${((n * 60) / seconds).toFixed(1)} per minute)`);
    }
    console.log(`\nEvent streams opened (GET /events) since sign-in: ${streams.length}`);
    console.log("\nEach request on /home, in order (s since recording began):");
    for (const r of seen.slice(0, beforeNavigation))
      console.log(`  ${r.at.toFixed(1).padStart(6)}  ${r.method} ${r.url}`);
    console.log("\nOne client-side navigation to /wallet/btc:");
    for (const r of seen.slice(beforeNavigation)) console.log(`  ${r.method} ${r.url}`);
  } finally {
    await browser.close();
    await server.stop();
  }
} finally {
  await cleanupAll();
  rmSync(dataDir, { recursive: true, force: true });
}
