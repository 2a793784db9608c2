// What `npm test` needs from the machine, checked before anything starts (record 044).
// The one list: .ci/run calls this too. For each missing tool it prints what is missing
// and the one command that installs it, and exits non-zero; run as root on Debian with
// CI set (as .ci/run runs), it installs what is missing itself.
//
//   node scripts/preflight.mjs            (npm test runs it first)
//
// Plain JavaScript, so an old Node gets the sentence from node-version.mjs, not a stack trace.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { checkNode } from "./node-version.mjs";

checkNode();

/**
 * What the suite runs, where it looks for it, and the Debian package that brings it.
 * `optional`: the tests that need it are skipped without it (they say so).
 */
const TOOLS = [
  {
    name: "Chromium",
    path: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    env: "CHROMIUM_PATH",
    pkg: "chromium",
    why: "the end-to-end tests",
  },
  {
    name: "Firefox ESR",
    path: process.env.FIREFOX_PATH || "/usr/bin/firefox-esr",
    env: "FIREFOX_PATH",
    pkg: "firefox-esr",
    why: "the Firefox walk (tests/e2e/firefox.spec.ts)",
  },
  {
    name: "lynx",
    path: process.env.LYNX_PATH || "/usr/bin/lynx",
    env: "LYNX_PATH",
    pkg: "lynx",
    why: "the text-browser check (tests/e2e/text-browser.spec.ts)",
  },
  {
    name: "nginx",
    path: "/usr/sbin/nginx",
    pkg: "nginx",
    why: "the reverse-proxy test (tests/security/proxy.test.ts)",
  },
  {
    name: "strace",
    path: "/usr/bin/strace",
    pkg: "strace",
    why: "the durability test (tests/backend/durability.test.ts)",
    optional: true,
  },
];

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function installCommand(packages) {
  return `apt-get update && apt-get install -y ${packages.join(" ")}`;
}

const canInstall = Boolean(process.env.CI) && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");

/** Installs Debian packages without a terminal (CI runs with no standard input). */
function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const opts = { stdio: ["ignore", "ignore", "inherit"], env };
  console.log(`preflight: installing ${packages.join(", ")} from Debian`);
  if (spawnSync("apt-get", ["update", "-qq"], opts).status !== 0) return false;
  if (spawnSync("apt-get", ["install", "-y", "-qq", ...packages], opts).status !== 0) return false;
  // A package that started its service on install (nginx): the tests run their own.
  if (packages.includes("nginx") && existsSync("/run/nginx.pid")) {
    spawnSync("/usr/sbin/nginx", ["-s", "quit"], { stdio: "ignore" });
  }
  return true;
}

let missing = TOOLS.filter((tool) => !executable(tool.path));
if (missing.length > 0 && canInstall) {
  // A path set by its variable is the person's choice: only the default places are installed to.
  const installable = missing.filter((tool) => !(tool.env && process.env[tool.env]));
  if (installable.length > 0) aptInstall(installable.map((tool) => tool.pkg));
  missing = TOOLS.filter((tool) => !executable(tool.path));
}

let failed = false;
for (const tool of missing) {
  const where = tool.env && process.env[tool.env] ? `${tool.env}=${tool.path}` : tool.path;
  const fix = tool.env
    ? `\`${installCommand([tool.pkg])}\` (or set ${tool.env} to where it is)`
    : `\`${installCommand([tool.pkg])}\``;
  if (tool.optional) {
    console.log(`preflight: ${tool.name} is not at ${where}, so ${tool.why} is skipped; ${fix} installs it.`);
  } else {
    console.error(`preflight: ${tool.name} is not at ${where} and ${tool.why} need it: ${fix} installs it.`);
    failed = true;
  }
}

// Native packages npm left out. `npm ci` run by an older Node (the machine's Node 20, before
// the project's own Node 24 is in node_modules, record 044) skips an optional package whose
// engines it does not meet: Hardhat's EDR binary for this machine (the EVM node of the chain
// watcher's tests, issue 30) needs Node 22. Fetched here at the locked version, its tarball
// checked against the lockfile's integrity, unpacked in place; nothing else in node_modules moves
// (an `npm install` of it would reshape the tree).
for (const [dir, entry] of skippedPlatformPackages()) {
  const name = dir.slice(dir.lastIndexOf("node_modules/") + "node_modules/".length);
  const fetched = fetchPackage(name, entry, dir);
  if (fetched === true) {
    console.log(`preflight: fetched ${name} ${entry.version}, which npm skipped under an older Node`);
  } else {
    console.error(
      `preflight: ${name} ${entry.version} is missing (npm skipped it) and could not be fetched: ${fetched}. Run \`npm ci\` with Node 24 first on PATH.`,
    );
    failed = true;
  }
}

/** The lockfile's optional packages built for this machine that are not in node_modules. */
function skippedPlatformPackages() {
  let lock;
  try {
    lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
  } catch {
    return [];
  }
  const glibc = Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
  const libc = glibc ? "glibc" : "musl";
  return Object.entries(lock.packages ?? {}).filter(
    ([dir, entry]) =>
      dir.startsWith("node_modules/") &&
      entry.optional === true &&
      entry.version &&
      entry.integrity &&
      (entry.os ?? []).includes(process.platform) &&
      (entry.cpu ?? []).includes(process.arch) &&
      (!entry.libc || entry.libc.includes(libc)) &&
      // Only where its parent is installed: an optional package of a package left out stays out.
      existsSync(dir.slice(0, dir.lastIndexOf("/node_modules/") + 1) || ".") &&
      !existsSync(`${dir}/package.json`),
  );
}

/** npm pack of name@version into a temp folder, checked, then unpacked into dir: true, or why not. */
function fetchPackage(name, entry, dir) {
  const temp = mkdtempSync(path.join(tmpdir(), "coinkeep-preflight-"));
  try {
    const packed = spawnSync(
      "npm",
      ["pack", `${name}@${entry.version}`, "--pack-destination", temp, "--silent"],
      {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const file = readdirSync(temp).find((f) => f.endsWith(".tgz"));
    if (packed.status !== 0 || !file) return (packed.stderr || "npm pack failed").trim().split("\n")[0];
    const [algorithm, expected] = entry.integrity.split("-", 2);
    const actual = createHash(algorithm)
      .update(readFileSync(path.join(temp, file)))
      .digest("base64");
    if (actual !== expected) return "its tarball does not match the lockfile's integrity";
    mkdirSync(dir, { recursive: true });
    const untar = spawnSync("tar", ["-xzf", path.join(temp, file), "-C", dir, "--strip-components=1"], {
      stdio: "ignore",
    });
    return untar.status === 0 ? true : "tar could not unpack it";
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

// PostgreSQL only when the suite is asked to run on it.
const databaseUrl = process.env.TEST_DATABASE_URL;
if (databaseUrl) {
  const ready = () => pgReady(databaseUrl);
  if (!(await ready()) && canInstall && existsSync("/etc/postgresql")) {
    console.log("preflight: starting PostgreSQL");
    const version = readdirSync("/etc/postgresql")[0];
    if (version) {
      spawnSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], {
        stdio: "ignore",
      });
    }
    for (let i = 0; i < 30 && !(await ready()); i++) await new Promise((r) => setTimeout(r, 1000));
  }
  if (!(await ready())) {
    const url = new URL(databaseUrl);
    console.error(
      `preflight: PostgreSQL at ${url.hostname}:${url.port || 5432} (TEST_DATABASE_URL) does not answer: ` +
        "start it (`pg_ctlcluster <version> main start`) or unset TEST_DATABASE_URL to test on PGlite alone.",
    );
    failed = true;
  }
}

if (failed) process.exit(1);

/** Whether the server behind `url` answers a query within 3 s (the password never printed). */
async function pgReady(url) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
