// The one way the tests and the scripts start the host (server/host/host.ts):
//   - startHost: in this process, on an ephemeral port (the cheap way, for tests
//     that talk to a real server over real sockets);
//   - spawnHost: as operators start it, `node server/host/host.ts` in a child
//     process (a cluster of WORKERS, a process to kill, trace or profile).
// Both start from the same settings: test mode, on 127.0.0.1, the feeds offline,
// on a fresh data folder unless given one; `env` adds to these or overrides
// them (undefined leaves a setting out). The host serves the production build.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PGlite } from "@electric-sql/pglite";

export const root = path.resolve(import.meta.dirname, "..");
/** Whether the production build is there (the host serves it; `npx react-router build` makes it). */
export const built = existsSync(path.join(root, "build/server/index.js"));

/** Fixed secrets, for hosts whose data a test prepares or that share a database with another process. */
export const TEST_SECRETS = { SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) };

export type HostEnv = Record<string, string | undefined>;

/** What every host here starts with. */
const DEFAULTS: HostEnv = { NODE_ENV: "test", HOST: "127.0.0.1", FEEDS_OFFLINE: "true" };

// ---------------------------------------------------------------------------
// Data folders. PGlite's initdb costs ~3 s per fresh folder: an empty, just
// initialised cluster (no migrations) is kept in the temp folder, keyed by the
// PGlite build, and copied into each fresh data folder; the host migrates it.
// ---------------------------------------------------------------------------

function pgliteBuildKey(): string {
  const dist = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  const parts = ["pglite.wasm", "pglite.data", "initdb.wasm"].map((file) => {
    const stat = statSync(path.join(dist, file));
    return `${file}:${stat.size}:${stat.mtimeMs}`;
  });
  return createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 16);
}

let template: Promise<string | undefined> | undefined;

/** The folder of an initialised empty PGlite cluster to copy (undefined when it cannot be made). */
export async function pgliteTemplate(): Promise<string | undefined> {
  template ??= (async () => {
    try {
      const dir = path.join(tmpdir(), `coinkeep-pglite-template-${pgliteBuildKey()}`);
      if (existsSync(path.join(dir, "PG_VERSION"))) return dir;
      const building = `${dir}.building-${randomBytes(4).toString("hex")}`;
      const pglite = await PGlite.create(building);
      await pglite.close();
      try {
        await rename(building, dir);
      } catch {
        // Another run finished first; use its copy.
        await rm(building, { recursive: true, force: true });
      }
      return existsSync(path.join(dir, "PG_VERSION")) ? dir : undefined;
    } catch {
      return undefined;
    }
  })();
  return template;
}

export interface DataDir {
  /** A folder not made yet, in a new temp folder: whatever opens it makes it (and its parents). */
  dataDir: string;
  /** Deletes the temp folder and everything in it. */
  remove(): Promise<void>;
}

/** A new data folder; its embedded database seeded from the template unless `seed` is false. */
export async function freshDataDir(prefix = "coinkeep-", seed = true): Promise<DataDir> {
  const parent = await mkdtemp(path.join(tmpdir(), prefix));
  const dataDir = path.join(parent, "data");
  const from = seed ? await pgliteTemplate() : undefined;
  if (from) await cp(from, path.join(dataDir, "pglite"), { recursive: true });
  return { dataDir, remove: () => rm(parent, { recursive: true, force: true }) };
}

/**
 * A port nothing listens on now: the kernel's pick, or, with TEST_PORTS=<from>-<to> (a shared
 * machine that gives each user a range), one of that range.
 */
export async function freePort(): Promise<number> {
  const range = /^(\d+)-(\d+)$/.exec(process.env.TEST_PORTS ?? "");
  if (!range) return await listenOnce(0);
  const from = Number(range[1]);
  const size = Number(range[2]) - from + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = from + ((start + i) % size);
    try {
      return await listenOnce(port);
    } catch {
      // taken; the next one
    }
  }
  throw new Error(`no free port in TEST_PORTS=${process.env.TEST_PORTS ?? ""}`);
}

async function listenOnce(port: number): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export interface HostOptions {
  /** Settings added to the defaults or overriding them; undefined leaves one out. */
  env?: HostEnv;
  /** Default: a fresh folder (seeded unless env names a DATABASE_URL), deleted when the host stops. */
  dataDir?: string;
  /** Default: startHost an ephemeral one, spawnHost a free one. */
  port?: number;
}

/** The data folder to use, and how to clean up after it (nothing for a caller's own). */
async function dataDirFor(options: HostOptions): Promise<DataDir> {
  if (options.dataDir !== undefined) return { dataDir: options.dataDir, remove: async () => {} };
  const data = await freshDataDir("coinkeep-host-", !options.env?.DATABASE_URL);
  await mkdir(data.dataDir, { recursive: true });
  return data;
}

function settings(env: HostEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

// ---------------------------------------------------------------------------
// In this process.
// ---------------------------------------------------------------------------

export interface RunningHost {
  port: number;
  /** http://127.0.0.1:port */
  base: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startHost(options: HostOptions = {}): Promise<RunningHost> {
  const data = await dataDirFor(options);
  const { loadConfig } = await import("../server/config.ts");
  const { startHost: start } = await import("../server/host/host.ts");
  const config = loadConfig(
    settings({
      ...DEFAULTS,
      PORT: String(options.port ?? 0),
      DATA_DIR: data.dataDir,
      ...options.env,
    }),
  );
  const host = await start(config);
  return {
    port: host.port,
    base: `http://127.0.0.1:${host.port}`,
    dataDir: data.dataDir,
    async close() {
      await host.close();
      await data.remove();
    },
  };
}

// ---------------------------------------------------------------------------
// In a child process, as operators start it.
// ---------------------------------------------------------------------------

export interface SpawnOptions extends HostOptions {
  /** Default: stdout and stderr piped into `output`. */
  stdio?: StdioOptions;
  /** Node's own flags, before the script (--cpu-prof). */
  nodeArgs?: string[];
}

export interface ReadyOptions {
  /** What must answer 2xx; default /login. */
  path?: string;
  /** Default 30 s. */
  timeoutMs?: number;
  /** Runs between the looks (a test that watches the host while it starts). */
  whileWaiting?: () => Promise<void>;
}

export interface HostProcess {
  port: number;
  base: string;
  dataDir: string;
  child: ChildProcess;
  /** What it printed on the streams that are piped. */
  output: { stdout: string; stderr: string };
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Waits until it answers; when it exits or the time is up first, kills it and throws. */
  ready(options?: ReadyOptions): Promise<HostProcess>;
  /** Sends the signal (SIGTERM) and waits for the exit (SIGKILL after graceMs); deletes the folder it made. */
  stop(options?: { signal?: NodeJS.Signals; graceMs?: number }): Promise<void>;
}

export async function spawnHost(options: SpawnOptions = {}): Promise<HostProcess> {
  const data = await dataDirFor(options);
  const port = options.port ?? (await freePort());
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), path.join(root, "server/host/host.ts")],
    {
      cwd: root,
      env: settings({
        PATH: process.env.PATH,
        ...DEFAULTS,
        PORT: String(port),
        DATA_DIR: data.dataDir,
        ...options.env,
      }),
      stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
    },
  );
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  const host: HostProcess = {
    port,
    base: `http://127.0.0.1:${port}`,
    dataDir: data.dataDir,
    child,
    output,
    exited,
    async ready({ path: probe = "/login", timeoutMs = 30_000, whileWaiting } = {}) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        await whileWaiting?.();
        try {
          const answer = await fetch(`${host.base}${probe}`);
          await answer.arrayBuffer();
          if (answer.ok) return host;
        } catch {
          // not up yet
        }
        const failure = !running()
          ? `the host exited at start (${child.exitCode ?? child.signalCode})`
          : Date.now() > until
            ? `the host did not answer ${probe} within ${timeoutMs} ms`
            : undefined;
        if (failure) {
          await host.stop({ signal: "SIGKILL" });
          throw new Error(`${failure}: ${output.stderr.slice(-4000)}`);
        }
        await sleep(100);
      }
    },
    async stop({ signal = "SIGTERM", graceMs = 5_000 } = {}) {
      if (running()) {
        child.kill(signal);
        const stopped = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
        if (!stopped) child.kill("SIGKILL");
      }
      await exited;
      await data.remove();
    },
  };
  return host;
}
