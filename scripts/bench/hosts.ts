// Section "hosts" (issue 29 item 3, record 051): the capacity of two hosts behind nginx on one
// PostgreSQL beside one host, in the same run on the same box. Each host is `npm start` with
// WORKERS=2 (so two hosts are four workers), the same secrets and database; nginx spreads the
// users over the two (scripts/nginx.ts, the README's upstream). Both arrangements are measured
// by the capacity section's machinery (capacity.ts: the signed-in users' mix, their event
// streams, the p99 limit), on one seeded database: one host first, then two hosts behind nginx.
// On a 2-core box the two hosts share the same two cores; what the section shows is what a
// second host costs (nginx's hop, twice the processes) rather than what it adds.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { startNginx, type RunningNginx } from "../nginx.ts";
import { runCapacity, type CapacityReport, type CapacitySettings } from "./capacity.ts";
import {
  log,
  machineCpuMs,
  onCleanup,
  processCpuMs,
  round,
  startServer,
  throwAwayDatabase,
  type ServerHandle,
} from "./lib.ts";
import { messageRaiser, seedCapacityAccounts, type SeededUser } from "./seed.ts";
import { mintSessions } from "./sessions.ts";

export interface HostsSettings {
  capacity: CapacitySettings;
  /** Accounts the users share (each user has its own session). */
  accounts: number;
  /** WORKERS of each host. */
  workersPerHost: number;
  /** Ports: one host's (and the first of two), the second host's, nginx's. */
  ports: { first: number; second: number; nginx: number };
}

export interface HostsArrangement {
  name: "one host" | "two hosts behind nginx";
  hosts: number;
  workers: number;
  capacity: CapacityReport | { error: string };
  /**
   * CPU of every server process (both hosts, their workers) and of nginx over the whole
   * arrangement, in ms, and the machine's busy share (the capacity levels' own CPU figures
   * count the first host only).
   */
  cpu: { serversMs: number; nginxMs: number; machinePct: number; seconds: number };
}

export interface HostsReport {
  settings: Omit<HostsSettings, "capacity"> & { levels: number[] };
  arrangements: HostsArrangement[];
}

export async function runHosts(settings: HostsSettings): Promise<HostsReport> {
  const dataRoot = mkdtempSync(path.join(os.tmpdir(), "coinkeep-bench-hosts-"));
  onCleanup(() => rmSync(dataRoot, { recursive: true, force: true }));
  const databaseUrl = await throwAwayDatabase(`coinkeep_bench_hosts_${randomBytes(4).toString("hex")}`);
  const sessionSecret = randomBytes(32).toString("base64url");
  const backendSecret = randomBytes(32).toString("base64url");
  const maxUsers = Math.max(...settings.capacity.levels);

  // Seeded once, sessions minted once for the highest level: both arrangements serve the same data.
  const database = await openDatabase({ databaseUrl, dataDir: dataRoot });
  let accounts: SeededUser[];
  let cookies: string[];
  try {
    accounts = await seedCapacityAccounts(
      { db: database.db, keys: deriveServerKeys(backendSecret) },
      settings.accounts,
      6,
    );
    cookies = await mintSessions(
      database.db,
      { sessionSecret, cookieSecure: true, idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 },
      Array.from({ length: maxUsers }, (_, i) => accounts[i % accounts.length] as SeededUser),
      8,
    );
    log(`hosts: seeded ${accounts.length} accounts, minted ${cookies.length} sessions`);
  } finally {
    await database.close();
  }

  // The users' pages are told of a message to their account, sent as `npm run ops` sends it.
  const changes = await openDatabase({ databaseUrl, dataDir: dataRoot });
  onCleanup(() => changes.close());
  const raiseEvent = messageRaiser(accounts, { db: changes.db });

  const host = (port: number, name: string): Promise<ServerHandle> =>
    startServer({
      port,
      dataDir: path.join(dataRoot, name),
      databaseUrl,
      sessionSecret,
      backendSecret,
      workers: settings.workersPerHost,
    });

  const measure = async (
    name: HostsArrangement["name"],
    servers: ServerHandle[],
    nginx: RunningNginx | undefined,
  ): Promise<HostsArrangement> => {
    const base = nginx?.base ?? servers[0]?.base ?? "";
    const first = servers[0];
    if (!first) throw new Error("no server");
    const cpuOf = () => ({
      servers: servers.reduce((a, s) => a + processCpuMs(s.pid), 0),
      nginx: nginx ? processCpuMs(nginx.pid) : 0,
      machine: machineCpuMs(),
      at: performance.now(),
    });
    const before = cpuOf();
    let delivered = 0;
    let capacity: CapacityReport | { error: string };
    try {
      capacity = await runCapacity(
        {
          base,
          accounts: accounts.length,
          raiseEvent,
          serverPid: () => first.pid,
          // Every host's processes, as one answer: a level's server figures cover them all.
          async serverStats(reset) {
            const answers = await Promise.all(servers.map((server) => server.stats(reset)));
            const found = answers.filter((answer) => answer !== undefined);
            const [head] = found;
            if (!head) return undefined;
            return {
              ...head,
              processes: found.flatMap((answer) => answer.processes),
              missing:
                found.reduce((sum, answer) => sum + answer.missing, 0) + (answers.length - found.length),
            };
          },
          ensureSessions(users) {
            const added = cookies.slice(delivered, users);
            delivered += added.length;
            return Promise.resolve(added);
          },
        },
        settings.capacity,
      );
    } catch (error) {
      capacity = { error: error instanceof Error ? error.message : String(error) };
      log(`hosts: ${name} failed: ${capacity.error}`);
    }
    const after = cpuOf();
    const machineTotal = after.machine.total - before.machine.total;
    const arrangement: HostsArrangement = {
      name,
      hosts: servers.length,
      workers: servers.length * settings.workersPerHost,
      capacity,
      cpu: {
        serversMs: round(after.servers - before.servers, 0),
        nginxMs: round(after.nginx - before.nginx, 0),
        machinePct: round((100 * (after.machine.busy - before.machine.busy)) / machineTotal, 1),
        seconds: round((after.at - before.at) / 1000, 1),
      },
    };
    log(
      `hosts: ${name}: ${"users" in capacity ? `${capacity.users} users carried` : "failed"}` +
        ` (servers ${arrangement.cpu.serversMs} ms CPU, nginx ${arrangement.cpu.nginxMs} ms, machine ${arrangement.cpu.machinePct} %)`,
    );
    return arrangement;
  };

  const arrangements: HostsArrangement[] = [];
  // One host, as the capacity section runs it (no proxy).
  {
    const one = await host(settings.ports.first, "one");
    try {
      arrangements.push(await measure("one host", [one], undefined));
    } finally {
      await one.stop();
    }
  }
  // Two hosts behind nginx.
  {
    const [a, b] = await Promise.all([host(settings.ports.first, "a"), host(settings.ports.second, "b")]);
    // Each stream holds two of nginx's connections (the user's and the host's), each a file
    // descriptor, and a worker cannot open more than the process limit allows (20,000 on our
    // boxes; nginx could not raise it): so four workers, each with up to 9,000 (17,000 streams
    // in all), the kernel spreading the connections over them (reuseport).
    const nginx = await startNginx({
      port: settings.ports.nginx,
      upstreams: [settings.ports.first, settings.ports.second],
      workers: 4,
      workerConnections: 9_000,
    });
    const forget = onCleanup(() => nginx.stop());
    try {
      arrangements.push(await measure("two hosts behind nginx", [a, b], nginx));
    } finally {
      forget();
      await nginx.stop();
      await Promise.all([a.stop(), b.stop()]);
    }
  }
  const { capacity: _capacity, ...rest } = settings;
  return { settings: { ...rest, levels: settings.capacity.levels }, arrangements };
}

/** The report's lines for the section (report.ts). */
export function hostsSection(report: HostsReport | { error: string } | undefined): string[] {
  if (report === undefined) return [];
  const lines = ["#### More than one host (PostgreSQL)", ""];
  if ("error" in report) return [...lines, `Failed: ${report.error}`, ""];
  lines.push(
    `Each host \`WORKERS=${report.settings.workersPerHost}\`, one seeded database, the capacity mix with` +
      ` event streams; levels ${report.settings.levels.join(", ")}. The level columns' server CPU is the` +
      " first host's; the CPU column is every server process and nginx over the whole arrangement.",
    "",
    "| arrangement | workers | users carried (p99 < limit) | p99 at that level (ms) | servers' CPU (s) | nginx CPU (s) | machine busy |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const a of report.arrangements) {
    const carried = "users" in a.capacity ? a.capacity.users : undefined;
    const level =
      "levels" in a.capacity ? a.capacity.levels.find((l) => l.users === carried && l.passed) : undefined;
    lines.push(
      `| ${a.name} | ${a.workers} | ${"error" in a.capacity ? `failed: ${a.capacity.error}` : String(carried)} | ` +
        `${level ? level.latencyMs.p99 : "—"} | ${round(a.cpu.serversMs / 1000, 1)} | ${round(a.cpu.nginxMs / 1000, 1)} | ${a.cpu.machinePct} % |`,
    );
  }
  lines.push("");
  return lines;
}
