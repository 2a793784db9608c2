// Issue 31: what `npm test` and `npm start` say on a machine that lacks something, instead of
// the first failing tool's stack trace. The scripts run as a person runs them, in their own process.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

function run(args: string[], env: Record<string, string | undefined>) {
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    env: { ...process.env, CI: "", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe("npm test's preflight", () => {
  test("Chromium hidden: it stops at once with what is missing and the command that installs it", () => {
    const { status, out } = run(["scripts/preflight.mjs"], { CHROMIUM_PATH: "/nowhere/chromium" });
    expect(status).toBe(1);
    expect(out).toContain(
      "preflight: Chromium is not at CHROMIUM_PATH=/nowhere/chromium and the end-to-end tests need it: " +
        "`apt-get update && apt-get install -y chromium` (or set CHROMIUM_PATH to where it is) installs it.",
    );
    expect(out).not.toMatch(/\n\s+at /u);
  });

  test("a PostgreSQL that does not answer is named, its password never", () => {
    const { status, out } = run(["scripts/preflight.mjs"], {
      TEST_DATABASE_URL: "postgres://someone:s3cret-pw@127.0.0.1:1/none",
    });
    expect(status).toBe(1);
    expect(out).toContain("preflight: PostgreSQL at 127.0.0.1:1 (TEST_DATABASE_URL) does not answer");
    expect(out).not.toContain("s3cret-pw");
  });
});

describe("a Node too old for the project", () => {
  test("gets one sentence naming both versions and the fix, and a non-zero exit", () => {
    const { status, out } = run(
      [
        "--input-type=module",
        "-e",
        'import { checkNode } from "./scripts/node-version.mjs"; checkNode("20.20.2");',
      ],
      {},
    );
    expect(status).toBe(1);
    expect(out.trim()).toBe(
      "Coinkeep needs Node 22.22 or newer and this is Node 20.20.2: run `npm install` (it brings Node 24 into " +
        "node_modules/.bin) and start it with `npm start`, which uses that Node.",
    );
  });

  // The machines come with Node 20 at /usr/bin/node: start it there, as a person would by mistake.
  const old = spawnSync("/usr/bin/node", ["-p", "process.versions.node"], { encoding: "utf8" });
  const oldVersion = old.status === 0 ? old.stdout.trim() : "";
  const [major = 0, minor = 0] = oldVersion.split(".").map(Number);
  test.skipIf(!oldVersion || major > 22 || (major === 22 && minor >= 22))(
    `npm start's script under the machine's own Node (${oldVersion || "none"})`,
    () => {
      const result = spawnSync("/usr/bin/node", ["scripts/start.mjs"], { cwd: root, encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr.trim()).toBe(
        `Coinkeep needs Node 22.22 or newer and this is Node ${oldVersion}: run \`npm install\` (it brings ` +
          "Node 24 into node_modules/.bin) and start it with `npm start`, which uses that Node.",
      );
      expect(result.stdout).toBe("");
    },
  );
});
