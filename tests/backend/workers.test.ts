// WORKERS (record 018): several server processes on one port, PostgreSQL only.
// The host is started as operators start it (`node server/host/host.ts`), over the
// production build, on a throw-away PostgreSQL database.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { openTempPostgres, type OpenedDatabase } from "./helpers.ts";
import { TEST_SECRETS, built, spawnHost, type HostProcess, type SpawnOptions } from "../../scripts/host.ts";
import { processEnv } from "./host-suite.ts";

describe("WORKERS", () => {
  test("1 unless set; more only with DATABASE_URL; a whole number from 1 to 64", () => {
    expect(loadConfig({ ...TEST_SECRETS }).workers).toBe(1);
    expect(
      loadConfig({ ...TEST_SECRETS, WORKERS: "2", DATABASE_URL: "postgres://x@127.0.0.1/y" }).workers,
    ).toBe(2);
    expect(() => loadConfig({ ...TEST_SECRETS, WORKERS: "2" })).toThrow(
      /WORKERS: more than 1 needs DATABASE_URL \(the embedded database serves one process\)/u,
    );
    for (const bad of ["0", "65", "1.5", "two"]) {
      expect(() =>
        loadConfig({ ...TEST_SECRETS, WORKERS: bad, DATABASE_URL: "postgres://x@127.0.0.1/y" }),
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
const describeWorkers = adminUrl && built ? describe : describe.skip;

/** WORKERS=2 on the database, as the tests here start it. */
const startWorkers = (databaseUrl: string, options: SpawnOptions = {}) =>
  spawnHost({
    ...options,
    env: processEnv(databaseUrl, 2),
  });

describeWorkers("two server processes on PostgreSQL", () => {
  let opened: OpenedDatabase;
  let host: HostProcess;
  let base = "";

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    host = await startWorkers(opened.databaseUrl ?? "", { stdio: ["ignore", "ignore", "inherit"] });
    base = (await host.ready()).base;
  }, 60_000);
  afterAll(async () => {
    await host?.stop({ signal: "SIGKILL" });
    await opened?.dispose();
  });

  test("a session made by one process is honoured by the other; SIGTERM stops them all", async () => {
    expect(host.child.pid).toBeTypeOf("number");
    const pid = host.child.pid ?? 0;
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
    host.child.kill("SIGTERM");
    const code = await host.exited;
    expect(code).toBe(0);
    for (const worker of workers) expect(existsSync(`/proc/${worker}`)).toBe(false);
  }, 60_000);
});

/** How one fresh connection ended: an HTTP answer, an error (reset, refused, closed), or nothing within the time. */
type Outcome = { answer: number } | { error: string } | { hang: true };

/** One request on a connection of its own, given up (and counted as hanging) after timeoutMs. */
function fresh(port: number, pathname: string, timeoutMs = 5000): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(
      { host: "127.0.0.1", port, path: pathname, agent: false, headers: { connection: "close" } },
      (res) => {
        res.resume();
        res.on("end", () => settle({ answer: res.statusCode ?? 0 }));
        res.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }));
      },
    );
    const timer = setTimeout(() => {
      settle({ hang: true });
      req.destroy();
    }, timeoutMs);
    req.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }));
    req.end();
  });
}

/** How many times a worker of the host logged that it listens. */
const listening = (host: HostProcess) =>
  host.output.stdout.split("\n").filter((line) => line.includes('"listening"')).length;

describeWorkers("a worker killed with kill -9 (issue 12, hole 5)", () => {
  let opened: OpenedDatabase;
  let host: HostProcess;
  let port: number;

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    host = await startWorkers(opened.databaseUrl ?? "");
    port = host.port;
    for (let i = 0; listening(host) < 2; i++) {
      if (i > 300) throw new Error(`the workers did not start: ${host.output.stderr}`);
      await sleep(100);
    }
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
    await opened?.dispose();
  });

  test("a second server with WORKERS on the same port is refused and the first keeps the port", async () => {
    const second = await startWorkers(opened.databaseUrl ?? "", { port, dataDir: host.dataDir });
    try {
      const code = await Promise.race([second.exited, sleep(20_000).then(() => null)]);
      expect(code).toBe(1);
      expect(second.output.stderr.toLowerCase()).toContain(`port ${port}`);
      for (let i = 0; i < 10; i++) expect(await fresh(port, "/login")).toEqual({ answer: 200 });
    } finally {
      await second.stop({ signal: "SIGKILL" });
    }
  }, 30_000);

  test("no connection hangs: the dead worker's requests fail fast, the rest are answered, then all are", async () => {
    const pid = host.child.pid ?? 0;
    // Two rounds: on node:cluster's shared handle each kill under load left one connection hanging.
    for (let round = 1; round <= 2; round++) {
      const before = childrenOf(pid);
      expect(before).toHaveLength(2);
      const upBefore = listening(host);
      const outcomes: Outcome[] = [];
      // Clients keep opening fresh connections while a worker dies, and after.
      const state = { running: true };
      const clients = Array.from({ length: 8 }, async () => {
        while (state.running) outcomes.push(await fresh(port, "/login"));
      });
      await sleep(500);
      process.kill(before[0] ?? 0, "SIGKILL");
      for (let i = 0; i < 50; i++) outcomes.push(await fresh(port, "/login"));
      outcomes.push(...(await Promise.all(Array.from({ length: 20 }, () => fresh(port, "/login")))));
      state.running = false;
      await Promise.all(clients);

      const hung = outcomes.filter((o) => "hang" in o).length;
      const failed = outcomes.filter((o) => "error" in o);
      const answered = outcomes.filter((o) => "answer" in o);
      console.log(`kill -9, round ${round}:`, {
        total: outcomes.length,
        answered: answered.length,
        failed: failed.length,
        hung,
      });
      expect([round, hung]).toEqual([round, 0]);
      expect(answered.every((o) => "answer" in o && o.answer === 200)).toBe(true);
      // The connections the dead worker had taken fail, with a reset or a close.
      for (const o of failed) {
        expect(["ECONNRESET", "ECONNREFUSED", "socket hang up"]).toContain("error" in o ? o.error : "");
      }

      // The replacement comes up; from then on every fresh connection is answered.
      for (let i = 0; listening(host) <= upBefore; i++) {
        if (i > 300) throw new Error("no replacement worker");
        await sleep(100);
      }
      expect(childrenOf(pid)).toHaveLength(2);
      const after: Outcome[] = [];
      for (let i = 0; i < 40; i++) after.push(await fresh(port, "/login"));
      after.push(...(await Promise.all(Array.from({ length: 20 }, () => fresh(port, "/login")))));
      expect(after.filter((o) => !("answer" in o && o.answer === 200))).toEqual([]);
    }
  }, 120_000);
});
