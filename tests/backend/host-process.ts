// The host as operators start it (`node server/host/host.ts`), for the tests
// that need a real process: over the production build, on the test's data
// folder or database, with the feeds offline and the abuse limits off.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "../..");
export const secrets = { SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) };
/** Whether the production build is there (the host serves it). */
export const built = existsSync(path.join(root, "build/server/index.js"));

export interface HostProcess {
  child: ChildProcess;
  /** What it printed, when its output is piped (the default). */
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Starts the host on 127.0.0.1:port; env adds to (or overrides) the test settings. */
export function startHostProcess(
  port: number,
  env: Record<string, string | undefined>,
  stdio: StdioOptions = ["ignore", "pipe", "pipe"],
): HostProcess {
  const child = spawn(process.execPath, [path.join(root, "server/host/host.ts")], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "test",
      HOST: "127.0.0.1",
      PORT: String(port),
      FEEDS_OFFLINE: "true",
      RATE_LIMITS: "off",
      ...env,
      ...secrets,
    },
    stdio,
  });
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output, exited };
}
