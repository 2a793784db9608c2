// One-off measurement (not a test): what the server does for one send Confirm
// and for one signed-in page (issue 13's before/after figures).
//
//   node scripts/request-path.ts [--json] [--no-build] [--runs <n>] [--port <n>] [--inspect-port <n>]
//                                [--host <file>] [--cli <file>]
//
// It builds the app with a source map for the server bundle only
// (`react-router build --sourcemapServer hidden`: the same code as the default
// build, build/server/index.js.map beside it, no map for the browser; it
// replaces the tree's build/), starts the real host (NODE_ENV=production) on a
// fresh embedded database in a temporary folder with the V8 inspector on,
// and sets up a user the way a user and an operator would: call 1 creates the
// account, /fast-login signs in, the wallet page's form requests a BTC wallet,
// the operator CLI (through the server's ops socket) issues its address and
// credits a deposit. Then, with scripts off as a browser would post it, it fills
// the send form (Convert, Send) and measures the Confirm (the POST and the GET
// of its redirect), then GET /home and GET /wallet/btc, --runs times (default 2).
//
// What is measured comes from V8's precise coverage with call counts (block
// coverage, so an async function counts once per call), taken right before and
// right after each request (taking it resets the counters).
// The backend and the host run unbundled (type stripping), so their functions
// have their real files; the web tier runs from build/server/index.js, whose
// functions are mapped back to app/ and common/ files with the source map.
// Which functions count as an exchange, a credential check or a session read
// is the COUNTED table below; the report prints it.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

// ─── What is counted ────────────────────────────────────────────────────────
// One row per function: the end of its file's path from the project root
// (a suffix, so both the old server/… and the new server/backend/… layout
// match) and its name as V8 reports it (a web-tier function by its name in the
// bundle, less the bundler's $n). Refactors rename and move functions: change
// the rows here; the report marks a row whose name it finds in no loaded file.
//
//   exchange      (b) an in-process JSON exchange between the web tier and the backend
//   credential    (c) a credential check: e-mail + 12-word phrase, or e-mail + password
//   session-read  a read of the web session store
//   prices        an in-process exchange with the prices service (shown apart from (b))
//   primitive     the checks under the credential checks (one phrase HMAC comparison,
//                 one argon2 verification); shown, never added to (c)
type Kind = "exchange" | "credential" | "session-read" | "prices" | "primitive";

interface CountedFunction {
  kind: Kind;
  file: string;
  name: string;
  what: string;
}

const COUNTED: readonly CountedFunction[] = [
  {
    kind: "exchange",
    file: "api/handler.ts",
    name: "apiHandler",
    what: "the handler createApiHandler() returned before issue 13: a Request in, a JSON Response out",
  },
  {
    kind: "exchange",
    file: "api/handler.ts",
    name: "handler",
    what: "the HTTP handler createBackend() returns (issue 13): a Request in, a JSON Response out",
  },
  {
    kind: "credential",
    file: "domain/accounts.ts",
    name: "checkCredentials",
    what: "e-mail + phrase (the calls that carry twelveWords)",
  },
  {
    kind: "credential",
    file: "domain/accounts.ts",
    name: "findCredentials",
    what: "e-mail + phrase (restore: calls 10 and 11)",
  },
  { kind: "credential", file: "domain/accounts.ts", name: "checkLogin", what: "e-mail + password (call 2)" },
  { kind: "session-read", file: "web-sessions.ts", name: "get", what: "the session store's get" },
  { kind: "prices", file: "feeds/routes.ts", name: "feedRoutes", what: "the prices service's routes" },
  { kind: "primitive", file: "domain/crypto.ts", name: "phraseMatches", what: "one phrase HMAC comparison" },
  { kind: "primitive", file: "domain/crypto.ts", name: "verifyPassword", what: "one argon2 verification" },
];
// ────────────────────────────────────────────────────────────────────────────

const USAGE = `Usage: node scripts/request-path.ts [--json] [--no-build] [--runs <n>] [--port <n>] [--inspect-port <n>] [--host <file>] [--cli <file>]`;

const { values: args } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    "no-build": { type: "boolean", default: false },
    runs: { type: "string", default: "2" },
    port: { type: "string", default: "0" },
    "inspect-port": { type: "string", default: "0" },
    host: { type: "string" },
    cli: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

const root = path.resolve(import.meta.dirname, "..");
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error("--runs must be 1 to 20");
/** The host file: the one given, else the first that exists (new layout, then the old one). */
const hostFile =
  args.host ?? ["server/host/host.ts", "server/host.ts"].find((f) => existsSync(path.join(root, f)));
if (!hostFile) throw new Error("No host file found; pass --host <file>");
const cliFile = args.cli ?? "server/ops/cli.ts";
const bundle = path.join(root, "build/server/index.js");
const bundleMap = `${bundle}.map`;
const platform = process.env.PLATFORM_CODE || "CK";
/** The send's destination: a valid mainnet BTC address (BIP 173's example), not the wallet's own. */
const DESTINATION = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";
const WALLET_ADDRESS = "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d";
/** After an answer arrives, what the server still does for it (the "finish" log line) gets this long. */
const SETTLE_MS = 150;

const progress = (message: string) => process.stderr.write(`${message}\n`);

// ─── Build ──────────────────────────────────────────────────────────────────

function run(command: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new Error(
            `${path.basename(argv[0] ?? command)} ${argv.slice(1).join(" ")} exited ${code}:\n${err}${out}`,
          ),
        );
    });
  });
}

if (!args["no-build"]) {
  progress("Building (react-router build --sourcemapServer hidden)…");
  await run(process.execPath, [
    path.join(root, "node_modules/@react-router/dev/bin.cjs"),
    "build",
    "--sourcemapServer",
    "hidden",
  ]);
}
if (!existsSync(bundle)) throw new Error(`${bundle} is missing: build first, or drop --no-build`);
const bundleSource = readFileSync(bundle, "utf8");
/** The bundle's source map, or null (then web-tier functions count by their bundled names only). */
const mapPayload = (() => {
  if (!existsSync(bundleMap)) return null;
  // A map left over from an earlier build would point at the wrong places.
  if (Math.abs(statSync(bundleMap).mtimeMs - statSync(bundle).mtimeMs) > 60_000) return null;
  return JSON.parse(readFileSync(bundleMap, "utf8")) as SourceMapPayload;
})();
const sourceMap = mapPayload && new SourceMap(mapPayload);

// ─── The server and its inspector ───────────────────────────────────────────

interface CoverageRange {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface FunctionCoverage {
  functionName: string;
  ranges: CoverageRange[];
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: FunctionCoverage[];
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
class Inspector {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id === undefined) return;
      const waiting = this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    });
  }

  static connect(url: string): Promise<Inspector> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener("open", () => resolve(new Inspector(socket)), { once: true });
      socket.addEventListener("error", () => reject(new Error(`Could not connect to ${url}`)), {
        once: true,
      });
    });
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: (value) => resolve(value as T), reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close() {
    this.#socket.close();
  }
}

const workDir = mkdtempSync(path.join(tmpdir(), "coinkeep-request-path-"));
const dataDir = path.join(workDir, "data");
const serverLog = path.join(workDir, "server.log");
mkdirSync(dataDir);

// The embedded database, the in-process backend and prices service, one process.
const serverEnv: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: "production",
  DATA_DIR: dataDir,
  HOST: "127.0.0.1",
  PORT: args.port,
  WORKERS: "1",
  FEEDS_OFFLINE: "true",
  PLATFORM_CODE: platform,
  OPERATOR: "request-path",
};
for (const name of [
  "DATABASE_URL",
  "BACKEND_URL",
  "PRICES_URL",
  "PUBLIC_URL",
  "TRUST_PROXY",
  "RATE_LIMITS",
]) {
  delete serverEnv[name];
}

let server: ChildProcess | undefined;
let inspector: Inspector | undefined;
let failed = true;

/** Starts the host; resolves with its base URL and inspector URL once it listens. */
function startServer(): Promise<{ base: string; inspectorUrl: string }> {
  const child = spawn(process.execPath, [`--inspect=127.0.0.1:${args["inspect-port"]}`, hostFile!], {
    cwd: root,
    env: serverEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  server = child;
  let log = "";
  return new Promise((resolve, reject) => {
    let base: string | undefined;
    let inspectorUrl: string | undefined;
    const settle = () => {
      if (base && inspectorUrl) resolve({ base, inspectorUrl });
    };
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      log += text;
      writeFileSync(serverLog, log);
      const ws = /Debugger listening on (ws:\/\/\S+)/u.exec(log);
      if (ws) inspectorUrl = ws[1];
      for (const line of log.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          const entry = JSON.parse(line) as { message?: string; url?: string };
          if (entry.message === "listening" && entry.url) base = entry.url;
        } catch {
          // A line cut in two between chunks: read again with the next one.
        }
      }
      settle();
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("exit", (code) =>
      reject(new Error(`The server exited (${code}) before listening; see ${serverLog}`)),
    );
  });
}

// ─── Coverage → files and counted functions ─────────────────────────────────

/** Where each line of the bundle starts, to turn a V8 offset into a line and column. */
const lineStarts = (() => {
  const starts = [0];
  for (let i = 0; i < bundleSource.length; i++) if (bundleSource.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
})();

function lineAndColumn(offset: number): { line: number; column: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (lineStarts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return { line: low, column: offset - lineStarts[low]! };
}

/** The project file (from the root) a bundled function was written in, or null (bundler or library code). */
const bundleFileCache = new Map<number, string | null>();
function bundleFileOf(range: CoverageRange): string | null {
  const cached = bundleFileCache.get(range.startOffset);
  if (cached !== undefined) return cached;
  let file: string | null = null;
  if (sourceMap) {
    const { line, column } = lineAndColumn(range.startOffset);
    const entry = sourceMap.findEntry(line, column) as { originalSource?: string; generatedLine?: number };
    // findEntry answers the nearest mapping at or before the position: it must be on the same line.
    if (entry.originalSource && entry.generatedLine === line) {
      const source = entry.originalSource.startsWith("file://")
        ? fileURLToPath(entry.originalSource)
        : path.resolve(path.dirname(bundle), entry.originalSource);
      file = projectFile(source.replace(/\?.*$/u, ""));
    }
  }
  bundleFileCache.set(range.startOffset, file);
  return file;
}

/** A path from the project root when it is one of the project's sources, else null. */
function projectFile(absolute: string): string | null {
  const relative = path.relative(root, absolute).split(path.sep).join("/");
  if (relative.startsWith("..") || path.isAbsolute(relative)) return null;
  if (/^(node_modules|build|\.react-router)\//u.test(relative)) return null;
  return relative;
}

/** Strips the suffix a bundler adds to keep names apart (loader$2 → loader). */
const plainName = (name: string) => name.replace(/\$\d+$/u, "");

interface Measure {
  /** Project files whose code ran, each with the number of function calls in it. */
  files: Record<string, number>;
  /** Calls of each COUNTED row, in table order. */
  counted: number[];
  /** Functions that ran in the bundle but map to no project file (bundler helpers, inlined libraries). */
  unmappedBundleCalls: number;
}

/** The project files the server loaded, and those in the bundle: where the table's functions must be. */
const loadedFiles = new Set<string>();
for (const source of mapPayload?.sources ?? []) {
  const file = projectFile(path.resolve(path.dirname(bundle), source.replace(/\?.*$/u, "")));
  if (file) loadedFiles.add(file);
}

/** Whether a row's function is there at all: a loaded file ending in its suffix that names it. */
function rowFound(row: CountedFunction): boolean {
  const named = new RegExp(`\\b${row.name}\\b`, "u");
  return [...loadedFiles].some(
    (file) => file.endsWith(row.file) && named.test(readFileSync(path.join(root, file), "utf8")),
  );
}

function measureOf(scripts: ScriptCoverage[]): Measure {
  const files: Record<string, number> = {};
  const counted = COUNTED.map(() => 0);
  let unmappedBundleCalls = 0;
  for (const script of scripts) {
    if (!script.url.startsWith("file://")) continue;
    const absolute = fileURLToPath(script.url);
    const inBundle = absolute === bundle;
    const file = inBundle ? null : projectFile(absolute);
    if (!inBundle && file === null) continue;
    if (file !== null) loadedFiles.add(file);
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      if (!range) continue;
      const where = inBundle ? bundleFileOf(range) : file;
      COUNTED.forEach((row, i) => {
        if (where !== null && where.endsWith(row.file) && plainName(fn.functionName) === row.name) {
          counted[i]! += range.count;
        }
      });
      if (range.count === 0) continue;
      if (where === null) unmappedBundleCalls += range.count;
      else files[where] = (files[where] ?? 0) + range.count;
    }
  }
  return { files, counted, unmappedBundleCalls };
}

function sumMeasures(a: Measure, b: Measure): Measure {
  const files = { ...a.files };
  for (const [file, calls] of Object.entries(b.files)) files[file] = (files[file] ?? 0) + calls;
  return {
    files,
    counted: a.counted.map((n, i) => n + b.counted[i]!),
    unmappedBundleCalls: a.unmappedBundleCalls + b.unmappedBundleCalls,
  };
}

async function takeCoverage(): Promise<ScriptCoverage[]> {
  const { result } = await inspector!.send<{ result: ScriptCoverage[] }>("Profiler.takePreciseCoverage");
  return result;
}

/** Runs `request` between two coverage takes (the first resets the counters) and measures it. */
async function measured<T>(request: () => Promise<T>): Promise<{ value: T; measure: Measure }> {
  await sleep(SETTLE_MS);
  measureOf(await takeCoverage());
  const value = await request();
  await sleep(SETTLE_MS);
  return { value, measure: measureOf(await takeCoverage()) };
}

// ─── A browser with scripts off ─────────────────────────────────────────────

const cookies = new Map<string, string>();

function keepCookies(response: Response) {
  for (const header of response.headers.getSetCookie()) {
    const [pair = "", ...flags] = header.split(";");
    const at = pair.indexOf("=");
    const name = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    const gone = flags.some((a) => /^\s*max-age=0\s*$/iu.test(a) || /^\s*expires=Thu, 01 Jan 1970/iu.test(a));
    if (gone || value === "") cookies.delete(name);
    else cookies.set(name, value);
  }
}

const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");

let base = "";

/** A top-level navigation (a typed URL, a link, a redirect followed): never follows redirects itself. */
async function navigate(target: string, site: "none" | "same-origin" = "same-origin"): Promise<Response> {
  const response = await fetch(new URL(target, base), {
    redirect: "manual",
    headers: {
      accept: "text/html",
      cookie: cookieHeader(),
      "sec-fetch-site": site,
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    },
  });
  keepCookies(response);
  return response;
}

/** A plain HTML form post from a page of ours. */
async function post(action: string, fields: [string, string][], from: string): Promise<Response> {
  const response = await fetch(new URL(action, base), {
    method: "POST",
    redirect: "manual",
    body: new URLSearchParams(fields),
    headers: {
      accept: "text/html",
      "content-type": "application/x-www-form-urlencoded",
      cookie: cookieHeader(),
      origin: base,
      referer: new URL(from, base).href,
      "sec-fetch-site": "same-origin",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    },
  });
  keepCookies(response);
  return response;
}

const decode = (text: string) =>
  text
    .replaceAll("&quot;", '"')
    .replaceAll("&#x27;", "'")
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, name = "", value = ""] of tag.matchAll(/([A-Za-z_:][\w:.-]*)(?:="([^"]*)")?/gu)) {
    found.set(name.toLowerCase(), decode(value));
  }
  return found;
}

/**
 * The first post form whose markup contains `marker`: its action and the
 * fields a browser would send (every named input but the submit buttons,
 * whose name and value are sent only for the button pressed).
 */
function postForm(html: string, marker: string): { action: string; fields: [string, string][] } {
  for (const [form = "", open = ""] of html.matchAll(/(<form\b[^>]*>)[\s\S]*?<\/form>/gu)) {
    if (!form.includes(marker) || attributes(open).get("method") !== "post") continue;
    const fields: [string, string][] = [];
    for (const [input = ""] of form.matchAll(/<input\b[^>]*>/gu)) {
      const a = attributes(input);
      const name = a.get("name");
      if (!name || a.get("type") === "submit" || a.has("disabled")) continue;
      fields.push([name, a.get("value") ?? ""]);
    }
    return { action: attributes(open).get("action") ?? "", fields };
  }
  throw new Error(`No post form with ${marker} on the page`);
}

/** The form's fields with some replaced (or added), and the button pressed. */
function submission(fields: [string, string][], intent: string, set: Record<string, string> = {}) {
  const out: [string, string][] = fields.map(([name, value]) => [name, set[name] ?? value]);
  for (const [name, value] of Object.entries(set))
    if (!fields.some(([n]) => n === name)) out.push([name, value]);
  out.push(["intent", intent]);
  return out;
}

async function expectStatus(response: Response, status: number, what: string): Promise<string> {
  const body = await response.text();
  if (response.status !== status) {
    throw new Error(`${what}: status ${response.status}, expected ${status}\n${body.slice(0, 500)}`);
  }
  return body;
}

async function ops(...argv: string[]): Promise<string> {
  return run(process.execPath, [cliFile, ...argv], serverEnv);
}

/** The commit measured, marked when the tree has changes beside it. */
function gitCommit(): string {
  try {
    const git = (...argv: string[]) =>
      execFileSync("git", ["-C", root, ...argv], { encoding: "utf8" }).trim();
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? " (with uncommitted changes)" : ""}`;
  } catch {
    return "unknown commit";
  }
}

// ─── The measurement ────────────────────────────────────────────────────────

interface Run {
  confirmPost: Measure;
  confirmRedirect: Measure;
  confirm: Measure;
  home: Measure;
  wallet: Measure;
}

const results: Run[] = [];

try {
  progress(`Starting ${hostFile} with the inspector…`);
  const started = await startServer();
  base = started.base;
  inspector = await Inspector.connect(started.inspectorUrl);
  await inspector.send("Profiler.enable");
  // Block coverage (detailed) for the function counts too: without it V8 counts an async
  // function once more for every await it resumes from; with it, once per call.
  await inspector.send("Profiler.startPreciseCoverage", { callCount: true, detailed: true });

  // The account (call 1), as any client of the API would create it.
  const email = `request-path-${randomBytes(4).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(12).toString("base64url")}`;
  const created = await fetch(new URL("/api/aml-authentication", base), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform, email, password, passwordConfirmed: password }),
  });
  await expectStatus(created, 200, "POST /api/aml-authentication");

  // Signed in through /fast-login, as a typed URL.
  const query = new URLSearchParams({ email, password });
  const login = await navigate(`/fast-login?${query}`, "none");
  await expectStatus(login, 302, "GET /fast-login");
  if (login.headers.get("location") !== "/home") throw new Error("/fast-login did not sign in");

  // The BTC wallet, requested on its page.
  const walletPage = await expectStatus(await navigate("/wallet/btc"), 200, "GET /wallet/btc");
  const requestForm = postForm(walletPage, 'value="request"');
  await expectStatus(
    await post(requestForm.action || "/wallet/btc", submission(requestForm.fields, "request"), "/wallet/btc"),
    302,
    "POST /wallet/btc intent=request",
  );

  // The operator: the address, and a deposit of 1 BTC.
  const pending = JSON.parse(await ops("requests", "--json")) as {
    walletId: string;
    email: string;
    coin: string;
  }[];
  const wallet = pending.find((r) => r.email === email && r.coin === "BTC");
  if (!wallet) throw new Error("The BTC wallet request is not in the operator's list");
  await ops("issue-address", wallet.walletId, WALLET_ADDRESS);
  await ops(
    "credit",
    wallet.walletId,
    "1",
    `request-path-${randomBytes(8).toString("hex")}`,
    "--usd",
    "100000",
  );

  for (let i = 1; i <= runs; i++) {
    progress(`Run ${i} of ${runs}…`);
    // The send form, as a browser without scripts walks through it: open, Convert, Send.
    const open = await expectStatus(await navigate("/wallet/btc?send=1"), 200, "GET /wallet/btc?send=1");
    let form = postForm(open, 'value="convert-coin"');
    const from = "/wallet/btc?send=1";
    const converted = await expectStatus(
      await post(
        form.action || from,
        submission(form.fields, "convert-coin", { address: DESTINATION, coin: "0.001" }),
        from,
      ),
      200,
      "POST intent=convert-coin",
    );
    form = postForm(converted, 'value="review"');
    const reviewed = await expectStatus(
      await post(form.action || from, submission(form.fields, "review"), from),
      200,
      "POST intent=review",
    );
    form = postForm(reviewed, 'value="confirm"');
    const confirmForm = form;

    // Measured: the Confirm, then the GET of its redirect.
    const confirmed = await measured(() =>
      post(confirmForm.action || from, submission(confirmForm.fields, "confirm"), from),
    );
    await expectStatus(confirmed.value, 302, "POST intent=confirm");
    const location = confirmed.value.headers.get("location") ?? "";
    if (!location.startsWith("/wallet/btc?sent=")) throw new Error(`The Confirm redirected to "${location}"`);
    const after = await measured(async () => expectStatus(await navigate(location), 200, `GET ${location}`));
    if (!after.value.includes("Sent!")) throw new Error(`GET ${location} does not say Sent!`);

    const home = await measured(async () => expectStatus(await navigate("/home"), 200, "GET /home"));
    const walletGet = await measured(async () =>
      expectStatus(await navigate("/wallet/btc"), 200, "GET /wallet/btc"),
    );
    results.push({
      confirmPost: confirmed.measure,
      confirmRedirect: after.measure,
      confirm: sumMeasures(confirmed.measure, after.measure),
      home: home.measure,
      wallet: walletGet.measure,
    });
  }
  failed = false;
} finally {
  inspector?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (failed) progress(`Kept ${workDir} (server.log) for a look.`);
  else rmSync(workDir, { recursive: true, force: true });
}

// ─── Report ─────────────────────────────────────────────────────────────────

/** The tiers' folders, for the files' subtotals (the same in both layouts). */
const TOP_FOLDERS = ["app", "common", "server"] as const;

const sumOf = (m: Measure, kind: Kind) =>
  COUNTED.reduce((n, row, i) => (row.kind === kind ? n + m.counted[i]! : n), 0);

function figures(m: Measure) {
  return {
    files: Object.keys(m.files).length,
    filesIn: Object.fromEntries(
      TOP_FOLDERS.map((top) => [top, Object.keys(m.files).filter((f) => f.startsWith(`${top}/`)).length]),
    ),
    exchanges: sumOf(m, "exchange"),
    credentialChecks: sumOf(m, "credential"),
    sessionReads: sumOf(m, "session-read"),
    pricesExchanges: sumOf(m, "prices"),
    unmappedBundleCalls: m.unmappedBundleCalls,
    byFunction: Object.fromEntries(COUNTED.map((row, i) => [`${row.file}#${row.name}`, m.counted[i]!])),
  };
}

const sections = [
  ["confirm", "Send Confirm (POST /wallet/btc intent=confirm + GET of its redirect)"],
  ["confirmPost", "  of which the POST"],
  ["confirmRedirect", "  of which the redirect's GET"],
  ["home", "GET /home"],
  ["wallet", "GET /wallet/btc"],
] as const;

const sameFiles = (a: Measure, b: Measure) =>
  JSON.stringify(Object.keys(a.files).toSorted()) === JSON.stringify(Object.keys(b.files).toSorted());
const repeatable = results.every((r) =>
  sections.every(
    ([key]) =>
      JSON.stringify(figures(r[key])) === JSON.stringify(figures(results[0]![key])) &&
      sameFiles(r[key], results[0]![key]),
  ),
);

const firstConfirm = results[0]!.confirm;
const confirmFiles = Object.entries(firstConfirm.files).toSorted(([a], [b]) => a.localeCompare(b));

if (args.json) {
  console.log(
    JSON.stringify(
      {
        root,
        commit: gitCommit(),
        host: hostFile,
        sourceMap: sourceMap !== null,
        table: COUNTED,
        repeatable,
        runs: results.map((r) =>
          Object.fromEntries(sections.map(([key]) => [key, { ...figures(r[key]), fileCalls: r[key].files }])),
        ),
      },
      null,
      2,
    ),
  );
} else {
  const out: string[] = [];
  out.push(`Request path — ${root} at ${gitCommit()}, host ${hostFile}, embedded database, FEEDS_OFFLINE`);
  out.push(
    sourceMap
      ? "Web tier: build/server/index.js, functions mapped to app/ and common/ files through its source map."
      : "Web tier: NO source map for build/server/index.js: its functions are not counted as files (names only).",
  );
  out.push("");
  out.push("Counted functions (the COUNTED table at the top of the script):");
  const width = Math.max(...COUNTED.map((r) => `${r.file} ${r.name}`.length));
  for (const row of COUNTED) {
    const matched = rowFound(row) ? "" : "   ← NOT FOUND in any loaded file: check the table";
    out.push(`  ${row.kind.padEnd(13)} ${`${row.file} ${row.name}`.padEnd(width)}  ${row.what}${matched}`);
  }
  out.push("");
  const header = results.map((_, i) => `run ${i + 1}`.padStart(7)).join("");
  const line = (label: string, pick: (m: Measure) => number, key: (typeof sections)[number][0]) =>
    `    ${label.padEnd(44)}${results.map((r) => String(pick(r[key])).padStart(7)).join("")}`;
  for (const [key, title] of sections) {
    out.push(`${title.padEnd(48)}${key === "confirm" || key === "home" ? header : ""}`);
    out.push(line("project files whose code ran", (m) => figures(m).files, key));
    for (const top of TOP_FOLDERS) out.push(line(`  in ${top}/`, (m) => figures(m).filesIn[top] ?? 0, key));
    out.push(line("(b) in-process JSON exchanges (API handler)", (m) => figures(m).exchanges, key));
    out.push(line("(c) credential checks", (m) => figures(m).credentialChecks, key));
    for (const [i, row] of COUNTED.entries()) {
      if (row.kind !== "credential") continue;
      out.push(line(`      ${row.name}`, (m) => m.counted[i]!, key));
    }
    out.push(line("session reads (store get)", (m) => figures(m).sessionReads, key));
    out.push(line("prices exchanges (in-process, not in (b))", (m) => figures(m).pricesExchanges, key));
    for (const [i, row] of COUNTED.entries()) {
      if (row.kind !== "primitive") continue;
      out.push(line(`${row.name} calls`, (m) => m.counted[i]!, key));
    }
    out.push(line("bundle glue calls (mapped to no file)", (m) => m.unmappedBundleCalls, key));
  }
  out.push("");
  out.push(
    repeatable
      ? `Repeatable: every run gave the same figures and files.`
      : "NOT repeatable: the runs differ (see --json).",
  );
  out.push("");
  out.push(
    `Files whose code ran for the send Confirm (run 1: ${confirmFiles.length}; function calls in each):`,
  );
  for (const [file, calls] of confirmFiles) {
    const where = [
      results[0]!.confirmPost.files[file] ? "POST" : "",
      results[0]!.confirmRedirect.files[file] ? "GET" : "",
    ]
      .filter(Boolean)
      .join("+");
    out.push(`  ${file.padEnd(48)} ${String(calls).padStart(6)}  ${where}`);
  }
  console.log(out.join("\n"));
}
