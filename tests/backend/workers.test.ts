// WORKERS (record 018): several server processes on one port, PostgreSQL only.
// The host is started as operators start it (`node server/host.ts`), over the
// production build, on a throw-away PostgreSQL database.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { openTempPostgres, type OpenedDatabase } from "./helpers.ts";

const root = path.resolve(import.meta.dirname, "../..");
const secrets = { SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) };

describe("WORKERS", () => {
  test("1 unless set; more only with DATABASE_URL; a whole number from 1 to 64", () => {
    expect(loadConfig({ ...secrets }).workers).toBe(1);
    expect(loadConfig({ ...secrets, WORKERS: "2", DATABASE_URL: "postgres://x@127.0.0.1/y" }).workers).toBe(
      2,
    );
    expect(() => loadConfig({ ...secrets, WORKERS: "2" })).toThrow(
      /WORKERS: more than 1 needs DATABASE_URL \(the embedded database serves one process\)/u,
    );
    for (const bad of ["0", "65", "1.5", "two"]) {
      expect(() =>
        loadConfig({ ...secrets, WORKERS: bad, DATABASE_URL: "postgres://x@127.0.0.1/y" }),
      ).toThrow(ConfigError);
    }
  });
});

/** The direct child processes of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] === String(pid)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const adminUrl = process.env.TEST_DATABASE_URL;
const built = existsSync(path.join(root, "build/server/index.js"));
const describeWorkers = adminUrl && built ? describe : describe.skip;

describeWorkers("two server processes on PostgreSQL", () => {
  let opened: OpenedDatabase;
  let host: ChildProcess;
  let dataDir: string;
  const port = 3480 + Math.floor(Math.random() * 100);
  const base = `http://127.0.0.1:${port}`;

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    dataDir = mkdtempSync(path.join(tmpdir(), "coinkeep-workers-"));
    host = spawn(process.execPath, [path.join(root, "server/host.ts")], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "test",
        HOST: "127.0.0.1",
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: opened.databaseUrl,
        FEEDS_OFFLINE: "true",
        RATE_LIMITS: "off",
        WORKERS: "2",
        ...secrets,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/login`)).ok) break;
      } catch {
        // not up yet
      }
      if (i > 300) throw new Error("the server did not start");
      await sleep(100);
    }
  }, 60_000);
  afterAll(async () => {
    if (host.exitCode === null) host.kill("SIGKILL");
    await opened?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("a session made by one process is honoured by the other; SIGTERM stops them all", async () => {
    expect(host.pid).toBeTypeOf("number");
    const pid = host.pid ?? 0;
    await expect.poll(() => childrenOf(pid).length, { timeout: 20_000 }).toBe(2);

    const email = `workers-${Date.now()}@example.com`;
    const created = await fetch(`${base}/api/aml-authentication`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        platform: "CK",
        email,
        password: "pw-workers-1",
        passwordConfirmed: "pw-workers-1",
      }),
    });
    expect(created.status).toBe(200);
    const signedIn = await fetch(
      `${base}/fast-login?email=${encodeURIComponent(email)}&password=pw-workers-1`,
      {
        redirect: "manual",
      },
    );
    expect(signedIn.headers.get("location")).toBe("/home");
    const cookie = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    // Each request is a new connection: the processes take them in turn.
    for (let i = 0; i < 12; i++) {
      const page = await fetch(`${base}/home`, {
        headers: { cookie, connection: "close" },
        redirect: "manual",
      });
      expect([i, page.status]).toEqual([i, 200]);
      await page.arrayBuffer();
    }

    const workers = childrenOf(pid);
    host.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => host.once("exit", (c) => resolve(c)));
    expect(code).toBe(0);
    for (const worker of workers) expect(existsSync(`/proc/${worker}`)).toBe(false);
  }, 60_000);
});
