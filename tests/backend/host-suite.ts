// Real hosts (scripts/host.ts startHost) in a describe, one per database: the
// fresh embedded one, and a throw-away PostgreSQL database with
// TEST_DATABASE_URL; an operator's command line beside each, in its own
// process as operators run it. Skipped without the production build.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe } from "vitest";
import { TEST_SECRETS, built, root, startHost, type HostEnv, type RunningHost } from "../../scripts/host.ts";
import { openTempPostgres, type OpenedDatabase } from "./helpers.ts";

const run = promisify(execFile);

/**
 * The settings of a host process of the tests' own (spawnHost): fixed secrets (processes
 * on one database must agree), no abuse limits, on the database, with WORKERS when given.
 */
export function processEnv(databaseUrl?: string, workers?: number): HostEnv {
  return {
    ...TEST_SECRETS,
    RATE_LIMITS: "off",
    DATABASE_URL: databaseUrl,
    WORKERS: workers === undefined ? undefined : String(workers),
  };
}

/**
 * `npm run ops -- …args` as an operator runs it beside a host: on the database `where` names
 * (the embedded one through a running host's ops socket, or PostgreSQL); what it printed.
 */
export async function runOps(
  where: { DATA_DIR: string; DATABASE_URL?: string | undefined },
  ...args: string[]
): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(root, "server/ops/cli.ts"), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, OPERATOR: "tests", ...where },
    timeout: 60_000,
  });
  return stdout;
}

export interface DatabaseHost {
  readonly driver: "pglite" | "postgres";
  /** The host (after the describe's beforeAll). */
  readonly host: RunningHost;
  /** Its throw-away PostgreSQL database (postgres only). */
  readonly opened: OpenedDatabase | undefined;
  /** `npm run ops -- …args` on the host's database; what it printed. */
  ops(...args: string[]): Promise<string>;
}

/** One describe per database ("$name" in the title), with a host started with `env()`'s settings. */
export function describeEachHost(
  title: string,
  env: () => HostEnv | Promise<HostEnv>,
  suite: (each: DatabaseHost) => void,
): void {
  const adminUrl = process.env.TEST_DATABASE_URL;
  const drivers: DatabaseHost["driver"][] = adminUrl ? ["pglite", "postgres"] : ["pglite"];
  for (const driver of drivers) {
    describe.skipIf(!built)(`${title.replaceAll("$name", driver)}`, () => {
      let host: RunningHost | undefined;
      let opened: OpenedDatabase | undefined;
      beforeAll(async () => {
        const settings = await env();
        if (driver === "postgres") opened = await openTempPostgres(adminUrl ?? "");
        host = await startHost({ env: { ...settings, DATABASE_URL: opened?.databaseUrl } });
      }, 120_000);
      afterAll(async () => {
        await host?.close();
        await opened?.dispose();
      });
      const each: DatabaseHost = {
        driver,
        get host() {
          if (!host) throw new Error("the host is not up yet");
          return host;
        },
        get opened() {
          return opened;
        },
        ops: (...args) => runOps({ DATA_DIR: each.host.dataDir, DATABASE_URL: opened?.databaseUrl }, ...args),
      };
      suite(each);
    });
  }
}
