// Section 1, capacity: how many signed-in users (mix.ts) one machine carries
// with p99 latency under the limit and no errors. The user count steps up
// through `levels` until a level fails, then bisects between the last pass and
// the first failure. The load generator runs in its own process (load.ts).
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { log, machineCpuMs, onCleanup, processCpuMs, round, stopChild } from "./lib.ts";
import type { LoadCommand, LoadResult } from "./load.ts";
import { perUserPerMinute } from "./mix.ts";

export interface CapacitySettings {
  levels: number[];
  warmupSeconds: number;
  seconds: number;
  bisectSteps: number;
  p99LimitMs: number;
  sockets: number;
  maxOutstanding: number;
  /** Pause between levels, for the server to settle. */
  pauseSeconds: number;
}

export interface LevelReport extends Omit<LoadResult, "type"> {
  passed: boolean;
  /** Share of one core used during the level: the server process, the load generator, the whole machine (of cores × 100). */
  cpu: { serverPct: number; loadGeneratorPct: number; machinePct: number; serverMsPerRequest: number };
}

export interface CapacityReport {
  users: number;
  settings: CapacitySettings;
  mix: Array<{ name: string; perMinute: number }>;
  levels: LevelReport[];
}

export interface CapacityTarget {
  base: string;
  /** The server process (it may be restarted between levels to add sessions). */
  serverPid(): number;
  /** Makes sure `users` sessions exist; returns the cookies added since the last call. */
  ensureSessions(users: number): Promise<string[]>;
}

class LoadGenerator {
  private child: ChildProcess;
  private waiting: ((result: LoadResult | Error) => void) | undefined;

  constructor() {
    this.child = fork(path.join(import.meta.dirname, "load.ts"), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const forget = onCleanup(() => stopChild(this.child));
    this.child.once("exit", (code) => {
      forget();
      this.waiting?.(new Error(`the load generator exited (${code})`));
    });
    this.child.on("message", (message: LoadResult | { type: "error"; message: string }) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(message.type === "result" ? message : new Error(message.message));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  send(command: LoadCommand): void {
    this.child.send(command);
  }

  async run(command: Extract<LoadCommand, { type: "run" }>): Promise<LoadResult> {
    const answer = new Promise<LoadResult | Error>((resolve) => (this.waiting = resolve));
    this.child.send(command);
    const result = await answer;
    if (result instanceof Error) throw result;
    return result;
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/**
 * Waits `pauseSeconds`, then until the server answers a page within 100 ms
 * again (at most 30 s more): after an overloaded level it still has a backlog.
 */
async function settle(base: string, pauseSeconds: number): Promise<void> {
  await sleep(pauseSeconds * 1000);
  const until = performance.now() + 30_000;
  while (performance.now() < until) {
    const started = performance.now();
    try {
      const answer = await fetch(`${base}/login`);
      await answer.arrayBuffer();
      if (performance.now() - started < 100) return;
    } catch {
      // not answering yet
    }
    await sleep(500);
  }
}

export async function runCapacity(
  target: CapacityTarget,
  settings: CapacitySettings,
): Promise<CapacityReport> {
  const generator = new LoadGenerator();
  const levels: LevelReport[] = [];
  try {
    generator.send({ type: "init", base: target.base, sockets: settings.sockets });

    const measure = async (users: number): Promise<LevelReport> => {
      const added = await target.ensureSessions(users);
      if (added.length > 0) generator.send({ type: "cookies", cookies: added });
      const pid = target.serverPid();
      const serverBefore = processCpuMs(pid);
      const generatorBefore = processCpuMs(generator.pid);
      const machineBefore = machineCpuMs();
      const result = await generator.run({
        type: "run",
        users,
        warmupSeconds: settings.warmupSeconds,
        seconds: settings.seconds,
        maxOutstanding: settings.maxOutstanding,
      });
      const machineAfter = machineCpuMs();
      const wall = result.wallMs;
      const { type: _type, ...figures } = result;
      const errors = Object.values(result.errors).reduce((a, b) => a + b, 0);
      const report: LevelReport = {
        ...figures,
        passed: !result.overloaded && errors === 0 && result.latencyMs.p99 < settings.p99LimitMs,
        cpu: {
          serverPct: round(((processCpuMs(pid) - serverBefore) / wall) * 100, 0),
          // The server's CPU per answered request (the level's rate held over its whole wall time).
          serverMsPerRequest: round(
            (processCpuMs(pid) - serverBefore) / ((result.perSecond * wall) / 1000),
            1,
          ),
          loadGeneratorPct: round(((processCpuMs(generator.pid) - generatorBefore) / wall) * 100, 0),
          machinePct: round(
            ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
            0,
          ),
        },
      };
      levels.push(report);
      const slowest = result.byEntry.toSorted((a, b) => b.p99 - a.p99)[0];
      log(
        `capacity ${users} users: ${report.passed ? "pass" : "FAIL"}, ${result.perSecond} req/s, ` +
          `p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, errors ${errors}` +
          `${result.overloaded ? " (overloaded, cut short)" : ""}; slowest: ${slowest?.name} p99 ${slowest?.p99} ms; ` +
          `cpu server ${report.cpu.serverPct}% (${report.cpu.serverMsPerRequest} ms/request), load ${report.cpu.loadGeneratorPct}%, machine ${report.cpu.machinePct}%`,
      );
      await settle(target.base, settings.pauseSeconds);
      return report;
    };

    let passed = 0;
    let failed = Number.POSITIVE_INFINITY;
    for (const users of settings.levels) {
      const level = await measure(users);
      if (!level.passed) {
        failed = users;
        break;
      }
      passed = users;
    }
    for (let step = 0; step < settings.bisectSteps && Number.isFinite(failed); step++) {
      // Round to a readable number of users (multiples of 250, or 50 below 1,000).
      const grain = failed - passed > 1000 ? 250 : 50;
      const middle = Math.round((passed + failed) / 2 / grain) * grain;
      if (middle <= passed || middle >= failed) break;
      const level = await measure(middle);
      if (level.passed) passed = middle;
      else failed = middle;
    }
    return { users: passed, settings, mix: perUserPerMinute(), levels };
  } finally {
    await generator.stop();
  }
}
