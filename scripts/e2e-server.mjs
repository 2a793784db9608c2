// The servers the end-to-end tests run against: the production build on a
// fresh data folder, so every run starts from an empty embedded database.
// With E2E_BACKEND=remote, two processes run: a backend on PORT+1 and the web
// tier on PORT reaching it over HTTP through BACKEND_URL.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.PORT ?? 3210);
const dirs = [];
const children = [];

// The backend's data folder is announced in E2E_DATA_DIR so tests can run
// operator commands against the same database.
function start(name, env) {
  const dataDir =
    name === "web" && process.env.E2E_BACKEND === "remote"
      ? mkdtempSync(path.join(tmpdir(), "coinkeep-e2e-web-"))
      : process.env.E2E_DATA_DIR;
  rmSync(dataDir, { recursive: true, force: true });
  dirs.push(dataDir);
  const child = spawn(process.execPath, [path.join(root, "server/host.ts")], {
    env: { ...process.env, DATA_DIR: dataDir, FEEDS_OFFLINE: "true", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  child.on("exit", (code) => {
    if (code) process.exit(code);
  });
  children.push(child);
}

if (process.env.E2E_BACKEND === "remote") {
  start("backend", { PORT: String(port + 1) });
  start("web", { PORT: String(port), BACKEND_URL: `http://127.0.0.1:${port + 1}/api` });
} else {
  start("web", { PORT: String(port) });
}

function stop() {
  for (const child of children) child.kill("SIGTERM");
  setTimeout(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }, 1_500).unref();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
