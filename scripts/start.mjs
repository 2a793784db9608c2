// npm start: build the app when the build is missing or older than its sources,
// then run the server (which applies migrations before it listens).
//
// First, the Node it runs on: `npm install` brings Node 24 as a dependency (the `node`
// package, record 044) and `npm start` runs with node_modules/.bin first on PATH, so this
// only answers someone who started it with an older Node some other way. This file is
// plain JavaScript that Node 18 and 20 can still read, so they get a sentence, not the
// stack trace that loading the TypeScript server would give.
import { checkNode } from "./node-version.mjs";

checkNode();

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const built = path.join(root, "build/server/index.js");

function newest(target) {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const name of readdirSync(target)) latest = Math.max(latest, newest(path.join(target, name)));
  return latest;
}

const sources = ["app", "public", "react-router.config.ts", "vite.config.ts", "package-lock.json"]
  .map((p) => path.join(root, p))
  .filter((p) => existsSync(p));

if (!existsSync(built) || Math.max(...sources.map(newest)) > statSync(built).mtimeMs) {
  console.log("Building the app (react-router build)…");
  const result = spawnSync(
    process.execPath,
    [path.join(root, "node_modules/@react-router/dev/bin.cjs"), "build"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const { main } = await import("../server/host/host.ts");
await main();
