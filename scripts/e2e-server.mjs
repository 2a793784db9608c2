// The servers the end-to-end tests run against: the production build on a
// fresh data folder, so every run starts from an empty embedded database.
// With E2E_BACKEND=remote, two processes run: a backend on PORT+1 and the web
// tier on PORT reaching it over HTTP through BACKEND_URL. The backend believes
// the visitor's address the web tier forwards only from a configured web tier
// with the shared token (record 026): WEB_TIER_HOSTS=loopback, and a fresh
// BACKEND_TOKEN for both.
// The backend watches a local EVM node (Hardhat's, started here on E2E_CHAIN_RPC's port and
// stopped with the servers) for ETH deposits (issue 30, record 053), polling every 200 ms with
// the default confirmations policy (ETH: 12, which tests/e2e/deposits.spec.ts asserts). Nothing
// is sent on it but what tests/e2e/chain-deposits.spec.ts sends; blocks are mined only when a
// transaction is sent or a test mines them.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEvmNode } from "../tests/support/evm-node.ts";
import { startSmtpSink } from "../tests/support/smtp-sink.ts";

const root = path.resolve(import.meta.dirname, "..");
// Watch-only issuing (record 039) for one coin no other spec issues by hand: DOGE's account
// key of shared/COINS.md's public test mnemonic (tests/fixtures/account-keys.ts), so a
// requested DOGE wallet shows its address at once (tests/e2e/issuing.spec.ts).
const DOGE_ACCOUNT_KEY =
  "xpub6CumZhScigjUzbxiKYTT5abUp13nu44g9AqY5jWerd37mJigK44PF1bTJLrEsqYuEKJqyarA8dqwgjTMM7YHhbgwbCisxc4K8Eqo2oHWTeB";
const port = Number(process.env.PORT ?? 3210);
const dirs = [];
const children = [];

// Everything the servers print goes to the console and to one log file, which
// the suite's teardown (tests/e2e/logs-teardown.ts) searches for every password,
// phrase and session cookie the tests used (recorded in the secrets file).
const logFile = process.env.E2E_LOG_FILE;
const secretsFile = process.env.E2E_SECRETS_FILE;
const logStream = logFile ? createWriteStream(logFile, { flags: "w" }) : undefined;
if (secretsFile) writeFileSync(secretsFile, "");
writeFileSync(`${process.env.E2E_DATA_DIR}.clock`, "0");

// A real SMTP server (issue 28): what the servers mail is written, one JSON line per mail,
// to E2E_DATA_DIR.mail, where the tests read it (tests/e2e/mail.ts).
const mailFile = `${process.env.E2E_DATA_DIR}.mail`;
writeFileSync(mailFile, "");
const sink = await startSmtpSink({
  onMail: (mail) =>
    appendFileSync(
      mailFile,
      `${JSON.stringify({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html })}\n`,
    ),
});
const mailEnv = { SMTP_URL: sink.url, PUBLIC_URL: `http://127.0.0.1:${port}` };

// A stale lock of a run that was killed (the spec takes it while it sends and mines).
rmSync(`${process.env.E2E_DATA_DIR}.chain-lock`, { recursive: true, force: true });
const chainRpc = new URL(process.env.E2E_CHAIN_RPC ?? `http://127.0.0.1:${port + 20_000}`);
const evmNode = await startEvmNode({ port: Number(chainRpc.port) });
const chainEnv = { CHAIN_RPC_ETH: evmNode.rpcUrl, CHAIN_POLL_MS: "200" };

// The backend's data folder is announced in E2E_DATA_DIR so tests can run
// operator commands against the same database.
function start(name, env) {
  const dataDir =
    name === "web" && process.env.E2E_BACKEND === "remote"
      ? mkdtempSync(path.join(tmpdir(), "coinkeep-e2e-web-"))
      : process.env.E2E_DATA_DIR;
  rmSync(dataDir, { recursive: true, force: true });
  dirs.push(dataDir);
  const child = spawn(process.execPath, [path.join(root, "server/host/host.ts")], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      FEEDS_OFFLINE: "true",
      ACCOUNT_KEY_DOGE: DOGE_ACCOUNT_KEY,
      // The holds' clock (record 048): a test moves it by writing milliseconds into this file.
      TEST_CLOCK_FILE: `${process.env.E2E_DATA_DIR}.clock`,
      // Every test's browser and requests come from 127.0.0.1: the suite's deliberate wrong
      // passwords, phrases and codes would fill one address's 15-minute window of 100 on a fast
      // machine and refuse later tests' sign-ins. The per-account limits stay the defaults.
      RATE_LIMIT_IP_FAILURES: "2000",
      ...env,
    },
    stdio: ["ignore", logStream ? "pipe" : "inherit", logStream ? "pipe" : "inherit"],
  });
  if (logStream) {
    child.stdout?.on("data", (chunk) => {
      process.stdout.write(chunk);
      logStream.write(chunk);
    });
    child.stderr?.on("data", (chunk) => {
      process.stderr.write(chunk);
      logStream.write(chunk);
    });
  }
  child.on("exit", (code) => {
    if (code) void evmNode.stop().finally(() => process.exit(code));
  });
  children.push(child);
}

if (process.env.E2E_BACKEND === "remote") {
  const token = randomBytes(32).toString("base64url");
  // A secret like the others: the log teardown checks it never reaches the log.
  if (secretsFile) writeFileSync(secretsFile, `${JSON.stringify({ kind: "backend token", value: token })}\n`);
  start("backend", {
    PORT: String(port + 1),
    WEB_TIER_HOSTS: "loopback",
    BACKEND_TOKEN: token,
    ...mailEnv,
    ...chainEnv,
  });
  start("web", {
    PORT: String(port),
    BACKEND_URL: `http://127.0.0.1:${port + 1}/api`,
    BACKEND_TOKEN: token,
  });
} else {
  start("web", { PORT: String(port), ...mailEnv, ...chainEnv });
}

function stop() {
  for (const child of children) child.kill("SIGTERM");
  void evmNode.stop();
  setTimeout(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }, 1_500).unref();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
