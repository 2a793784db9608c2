// Summarises V8 CPU profiles (node --cpu-prof): the share of samples by group
// (PGlite, each package, Node's internals, our code, idle, GC) and the top
// functions by self time.
//   node scripts/bench/cpu-profile.ts <dir or .cpuprofile file>…
// (profile-page.ts prints one this way; BENCH_SERVER_PROFILE makes the bench's servers write them.)
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { root } from "./lib.ts";

interface Profile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  samples: number[];
}

function groupOf(url: string, name: string): string {
  if (url.startsWith("wasm://") || url.includes("pglite")) return "pglite";
  if (url.includes("node_modules/")) return `nm:${url.split("node_modules/")[1]?.split("/")[0] ?? "?"}`;
  if (url.startsWith("node:")) return "node internals";
  if (url.includes("/build/server/")) return "app (build/server)";
  if (url.includes("/server/") || url.includes("/common/")) return "server/common";
  return name.startsWith("(") ? name : "native/other";
}

/** Prints one profile's groups and its top 40 functions by self time. */
export function printProfile(file: string, top = 40): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const self = new Map<number, number>();
  for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1);
  const byFrame = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const n = self.get(node.id) ?? 0;
    const key = `${functionName || "(anon)"} ${url.replace(/^.*node_modules\//u, "nm:").replace(root, "")}:${lineNumber}`;
    byFrame.set(key, (byFrame.get(key) ?? 0) + n);
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + n);
  }
  const total = profile.samples.length;
  const pct = (n: number) => `${((n / total) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${file}: ${total} samples`);
  console.log("by group:");
  for (const [key, n] of [...groups].toSorted((a, b) => b[1] - a[1]).slice(0, 16)) {
    console.log(`  ${pct(n)}  ${key}`);
  }
  console.log(`self time, top ${top}:`);
  for (const [key, n] of [...byFrame].toSorted((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${pct(n)}  ${key}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const arg of process.argv.slice(2)) {
    const files = statSync(arg).isDirectory()
      ? readdirSync(arg)
          .filter((f) => f.endsWith(".cpuprofile"))
          .map((f) => path.join(arg, f))
      : [arg];
    for (const file of files) printProfile(file, 25);
  }
}
