// The data folder's lock (issue 12, hole 6; record 019): one process at a time
// opens the embedded database. The host is started as operators start it
// (`node server/host/host.ts`), over the production build, on temp folders.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "../../server/backend/db/index.ts";
import { DataDirLockedError, lockDataDir, type DataDirLock } from "../../server/backend/db/lock.ts";
import {
  TEST_SECRETS,
  built,
  freshDataDir,
  root,
  spawnHost,
  type DataDir,
  type HostProcess,
} from "../../scripts/host.ts";
import { processEnv } from "./host-suite.ts";

/** A host on the folder, as the tests here start it. */
const startServer = (dataDir: string, port: number) => spawnHost({ dataDir, port, env: processEnv() });

/** Whether the account can sign in (the data the first server wrote is there). */
async function signsIn(port: number, email: string): Promise<boolean> {
  const response = await fetch(
    `http://127.0.0.1:${port}/fast-login?email=${encodeURIComponent(email)}&password=pw-lock-1`,
    { redirect: "manual" },
  );
  return response.headers.get("location") === "/home";
}

/** Tries to connect to the port back to back until stop() is called; how many connections were accepted. */
function watchPort(port: number) {
  let accepted = 0;
  let attempts = 0;
  const state = { running: true };
  const once = () =>
    new Promise<void>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        accepted++;
        socket.destroy();
        resolve();
      });
      socket.once("error", () => resolve());
    });
  const loops = Array.from({ length: 4 }, async () => {
    while (state.running) {
      attempts++;
      await once();
    }
  });
  return {
    async stop() {
      state.running = false;
      await Promise.all(loops);
      return { accepted, attempts };
    },
  };
}

describe("lockDataDir", () => {
  test("of many takers at once on a folder with a stale lock, exactly one gets it; released, it is free again", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "coinkeep-lock-"));
    try {
      // A holder that dies with kill -9 leaves its socket file behind.
      const holder = spawn(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { lockDataDir } from ${JSON.stringify(path.join(root, "server/backend/db/lock.ts"))};
           await lockDataDir(process.argv[1]); console.log("held"); setInterval(() => {}, 1000);`,
          dataDir,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      await new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
      await expect(lockDataDir(dataDir)).rejects.toThrow(DataDirLockedError);
      holder.kill("SIGKILL");
      await new Promise((resolve) => holder.once("exit", resolve));
      expect(existsSync(path.join(dataDir, "coinkeep.lock"))).toBe(true);

      const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockDataDir(dataDir)));
      const won = results.filter((r): r is PromiseFulfilledResult<DataDirLock> => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(r.reason).toBeInstanceOf(DataDirLockedError);
      }
      await won[0]?.value.release();
      const again = await lockDataDir(dataDir);
      await again.release();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);

  test("the operator command line does not open a folder another process holds", async () => {
    const { dataDir, remove } = await freshDataDir("coinkeep-lock-cli-");
    const database = await openDatabase({ dataDir });
    try {
      // No server and no ops socket: only the lock stands between the two.
      const cli = spawnSync(process.execPath, [path.join(root, "server/ops/cli.ts"), "users"], {
        cwd: root,
        env: { PATH: process.env.PATH, DATA_DIR: dataDir, ...TEST_SECRETS },
        encoding: "utf8",
      });
      expect(cli.status).toBe(1);
      expect(cli.stderr).toContain(`Another Coinkeep process is using the data directory ${dataDir}`);
    } finally {
      await database.close();
      await remove();
    }
  }, 120_000);
});

describe.runIf(built)("two servers on one data folder (issue 12, hole 6)", () => {
  let data: DataDir;
  let dataDir: string;
  let first: HostProcess;
  const portA = 4700 + Math.floor(Math.random() * 30);
  const portB = portA + 30;
  const portC = portA + 60;
  const email = `lock-${Date.now()}@example.com`;

  beforeAll(async () => {
    data = await freshDataDir("coinkeep-lock-host-");
    dataDir = data.dataDir;
    first = await startServer(dataDir, portA);
    await first.ready({ timeoutMs: 90_000 });
    const created = await fetch(`http://127.0.0.1:${portA}/api/aml-authentication`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ platform: "CK", email, password: "pw-lock-1", passwordConfirmed: "pw-lock-1" }),
    });
    if (created.status !== 200) throw new Error(`could not create the account: ${created.status}`);
  }, 120_000);
  afterAll(async () => {
    await first?.stop({ signal: "SIGKILL" });
    await data?.remove();
  });

  test("a second start exits non-zero naming the folder, without ever listening; the first is untouched", async () => {
    const watch = watchPort(portB);
    const second = await startServer(dataDir, portB);
    let code: number | null;
    try {
      code = await Promise.race([second.exited, sleep(30_000).then(() => "timeout" as const)]).then((c) =>
        c === "timeout" ? null : c,
      );
    } finally {
      if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill("SIGKILL");
    }
    // A little longer: a late listener would be seen too.
    await sleep(200);
    const { accepted, attempts } = await watch.stop();
    console.log("second start:", { code, accepted, attempts });
    expect(code).toBe(1);
    expect(second.output.stderr).toContain(`Another Coinkeep process is using the data directory ${dataDir}`);
    expect(accepted).toBe(0);
    expect(attempts).toBeGreaterThan(10);
    expect(second.output.stdout).not.toContain('"listening"');
    expect(await signsIn(portA, email)).toBe(true);
  }, 120_000);

  test("after kill -9 of the first, a new start takes the folder and finds the data", async () => {
    first.child.kill("SIGKILL");
    await first.exited;
    const third = await startServer(dataDir, portC);
    try {
      await third.ready({ timeoutMs: 90_000 });
      expect(await signsIn(portC, email)).toBe(true);
    } finally {
      third.child.kill("SIGTERM");
      expect(await third.exited).toBe(0);
    }
  }, 120_000);
});
