import os from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./scripts/chromium.ts";

// End-to-end tests run against the production build (npm run test:e2e builds
// first), served by the real host on its own port with a fresh embedded
// database, in Debian's Chromium, once with JavaScript and once without.
const port = Number(process.env.E2E_PORT ?? 3210);
const baseURL = `http://127.0.0.1:${port}`;
// With E2E_BACKEND=remote the web tier reaches a separate backend process over
// HTTP (BACKEND_URL); test fixtures then create users on that backend.
const remote = process.env.E2E_BACKEND === "remote";
process.env.E2E_API_URL = remote ? `http://127.0.0.1:${port + 1}` : baseURL;
// The backend's data folder: operator commands in the tests run against it.
process.env.E2E_DATA_DIR ??= path.join(os.tmpdir(), `coinkeep-e2e-${port}`);
// What the servers logged, and every secret the tests used: the teardown checks
// that none of them is in the log (record 015).
process.env.E2E_LOG_FILE ??= `${process.env.E2E_DATA_DIR}.log`;
process.env.E2E_SECRETS_FILE ??= `${process.env.E2E_DATA_DIR}.secrets`;
// The local EVM node the e2e server starts and watches (ETH, issue 30): far from the suite's
// ports (E2E_PORT, +1) and below the ephemeral range, so runs on other E2E_PORTs do not clash.
process.env.E2E_CHAIN_RPC ??= `http://127.0.0.1:${port + 20_000}`;

export default defineConfig({
  testDir: "tests/e2e",
  globalTeardown: "./tests/e2e/logs-teardown.ts",
  fullyParallel: true,
  workers: process.env.CI ? 2 : 2,
  retries: 0,
  timeout: 180_000,
  expect: { timeout: 7_000 },
  reporter: process.env.CI ? [["list"]] : [["list"]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] },
  },
  projects: [
    { name: "js", use: { javaScriptEnabled: true } },
    { name: "no-js", use: { javaScriptEnabled: false } },
  ],
  webServer: {
    command: "node scripts/e2e-server.mjs",
    url: `${baseURL}/login`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      E2E_BACKEND: remote ? "remote" : "",
      E2E_DATA_DIR: process.env.E2E_DATA_DIR,
      E2E_LOG_FILE: process.env.E2E_LOG_FILE,
      E2E_SECRETS_FILE: process.env.E2E_SECRETS_FILE,
      E2E_CHAIN_RPC: process.env.E2E_CHAIN_RPC,
    },
  },
});
