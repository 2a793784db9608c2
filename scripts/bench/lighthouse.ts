// Lighthouse scores of a few pages: performance and accessibility, mobile
// preset (Lighthouse's default form factor: Moto G Power-sized screen,
// simulated slow 4G and 4x CPU slowdown), in Debian's Chromium.
//
// Lighthouse is fetched by npx at bench time, at an exact version, rather than
// being a devDependency: it and its dependencies take about 176 MB (85
// packages) and only this benchmark uses them, while CI runs `npm ci` on every
// run and must stay fast. npx keeps it in its cache (~/.npm/_npx), so only the
// first bench run on a machine downloads it. The price: its own dependencies
// are not pinned by our package-lock.json. Change LIGHTHOUSE_VERSION to move.
//
//   node scripts/bench/lighthouse.ts [--runs=N] <baseURL> [cookie]
// runs /, /login, and with a session cookie /home and /wallet/btc.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../chromium.ts";

export const LIGHTHOUSE_VERSION = "13.5.0";

/** As TOOLCHAIN.md: no sandbox as root, and no calls out of the closed network. */
const CHROME_FLAGS = ["--headless=new", ...CHROMIUM_ARGS];

/** The metrics reported, by Lighthouse audit id. Times in milliseconds, CLS unitless, bytes in bytes. */
const METRICS: Record<string, string> = {
  FCP: "first-contentful-paint",
  LCP: "largest-contentful-paint",
  TBT: "total-blocking-time",
  CLS: "cumulative-layout-shift",
  SI: "speed-index",
  TTFB: "server-response-time",
  totalBytes: "total-byte-weight",
};

export interface LighthousePage {
  name: string;
  /** Path (or URL) relative to the base URL. */
  path: string;
  /** Cookie header for signed-in pages (sent with every request of the page load). */
  cookie?: string;
}

export interface FailedAudit {
  id: string;
  title: string;
  /** 0–1, or null when the audit itself errored. */
  score: number | null;
  category: "performance" | "accessibility";
  /** Lighthouse's short summary ("1.2 s", "3 elements"), when it gives one. */
  displayValue?: string;
}

export interface LighthouseResult {
  name: string;
  url: string;
  /** 0–100. */
  performance: number;
  accessibility: number;
  /** FCP, LCP, TBT, SI, TTFB in ms; CLS unitless; totalBytes in bytes. */
  metrics: Record<string, number>;
  /** Every audit of the two categories that did not score 1, lowest score first. */
  failedAudits: FailedAudit[];
  /** Lighthouse's own warnings about the run (e.g. a slow machine skewing results). */
  warnings: string[];
}

export interface LighthouseOptions {
  chromePath?: string;
  /** Per run; a loaded 2-core machine needs a while. */
  timeoutMs?: number;
  /**
   * Runs per page (default 1). With more, the run with the median performance
   * score is reported, as Lighthouse advises for noisy machines (scores here
   * moved by ±10 between runs).
   */
  runs?: number;
}

/** Lighthouse sometimes loses the trace on a loaded machine (NO_NAVSTART, NO_FCP…): a run is retried once. */
const ATTEMPTS = 2;

interface Audit {
  id: string;
  title: string;
  score: number | null;
  scoreDisplayMode: string;
  displayValue?: string;
  numericValue?: number;
}

interface Report {
  finalDisplayedUrl?: string;
  runtimeError?: { code: string; message: string };
  runWarnings?: string[];
  categories: Record<string, { score: number | null; auditRefs: { id: string }[] } | undefined>;
  audits: Record<string, Audit | undefined>;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, _out, err) => {
      if (error)
        reject(new Error(`${error.message}\n${String(err).trim().split("\n").slice(-15).join("\n")}`));
      else resolve();
    });
  });
}

function score(report: Report, category: string): number {
  const value = report.categories[category]?.score;
  if (typeof value !== "number") throw new Error(`no ${category} score in the report`);
  return Math.round(value * 100);
}

function failedAudits(report: Report): FailedAudit[] {
  const failed: FailedAudit[] = [];
  for (const category of ["performance", "accessibility"] as const) {
    for (const { id } of report.categories[category]?.auditRefs ?? []) {
      const audit = report.audits[id];
      if (!audit) continue;
      const failedToRun = audit.scoreDisplayMode === "error";
      if (!failedToRun && (audit.score === null || audit.score >= 1)) continue;
      failed.push({
        id,
        title: audit.title,
        score: failedToRun ? null : audit.score,
        category,
        ...(audit.displayValue ? { displayValue: audit.displayValue } : {}),
      });
    }
  }
  return failed.toSorted((a, b) => (a.score ?? -1) - (b.score ?? -1));
}

async function runOnce(url: string, cookie: string | undefined, options: LighthouseOptions): Promise<Report> {
  const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-lighthouse-"));
  try {
    const output = path.join(dir, "report.json");
    const args = [
      "-y",
      `lighthouse@${LIGHTHOUSE_VERSION}`,
      url,
      `--chrome-flags=${CHROME_FLAGS.join(" ")}`,
      "--output=json",
      `--output-path=${output}`,
      "--only-categories=performance,accessibility",
      "--quiet",
    ];
    if (cookie) {
      // In a file (readable only by us), so the session does not show in the process list.
      const headers = path.join(dir, "headers.json");
      writeFileSync(headers, JSON.stringify({ Cookie: cookie }), { mode: 0o600 });
      args.push(`--extra-headers=${headers}`);
    }
    // npx and Lighthouse run on this Node (Lighthouse 13 needs Node 22.19 or newer).
    const env = {
      ...process.env,
      CHROME_PATH: options.chromePath ?? process.env.CHROME_PATH ?? CHROMIUM_PATH,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    };
    await run("npx", args, env, options.timeoutMs ?? 300_000);
    return JSON.parse(readFileSync(output, "utf8")) as Report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs Lighthouse on each page in turn (never in parallel: they would skew each other's timings). */
export async function runLighthouse(
  baseURL: string,
  pages: LighthousePage[],
  options: LighthouseOptions = {},
): Promise<LighthouseResult[]> {
  const results: LighthouseResult[] = [];
  for (const page of pages) {
    const url = new URL(page.path, baseURL).href;
    const reports: Report[] = [];
    for (let i = 0; i < Math.max(1, options.runs ?? 1); i++) {
      let report = await runOnce(url, page.cookie, options);
      for (let attempt = 1; report.runtimeError && attempt < ATTEMPTS; attempt++) {
        report = await runOnce(url, page.cookie, options);
      }
      if (report.runtimeError) {
        const { code, message } = report.runtimeError;
        throw new Error(`${page.name}: Lighthouse failed ${ATTEMPTS} times: ${code} ${message}`);
      }
      reports.push(report);
    }
    const byScore = reports.toSorted((a, b) => score(a, "performance") - score(b, "performance"));
    const report = byScore[Math.floor(byScore.length / 2)]!;
    // A signed-in page whose session has ended lands on the login page: not what was asked for.
    const landed = report.finalDisplayedUrl ? new URL(report.finalDisplayedUrl) : undefined;
    if (landed && landed.pathname !== new URL(url).pathname) {
      throw new Error(
        `${page.name}: ${url} ended at ${landed.href}${page.cookie ? " (session ended?)" : ""}`,
      );
    }
    const metrics: Record<string, number> = {};
    for (const [name, id] of Object.entries(METRICS)) {
      const value = report.audits[id]?.numericValue;
      if (typeof value === "number")
        metrics[name] = name === "CLS" ? Math.round(value * 1000) / 1000 : Math.round(value);
    }
    results.push({
      name: page.name,
      url,
      performance: score(report, "performance"),
      accessibility: score(report, "accessibility"),
      metrics,
      failedAudits: failedAudits(report),
      warnings: report.runWarnings ?? [],
    });
  }
  return results;
}

// --- CLI ------------------------------------------------------------------------

async function main() {
  const args = process.argv.slice(2);
  const runsFlag = args.find((a) => a.startsWith("--runs="));
  const runs = runsFlag ? Number(runsFlag.slice("--runs=".length)) : 1;
  const [baseURL, cookie] = args.filter((a) => a !== runsFlag);
  if (!baseURL || !Number.isInteger(runs) || runs < 1) {
    console.error("usage: node scripts/bench/lighthouse.ts [--runs=N] <baseURL> [cookie]");
    process.exit(2);
  }
  const pages: LighthousePage[] = [
    { name: "landing", path: "/" },
    { name: "login", path: "/login" },
    ...(cookie
      ? [
          { name: "home", path: "/home", cookie },
          { name: "wallet", path: "/wallet/btc", cookie },
        ]
      : []),
  ];
  const median = runs > 1 ? `, median of ${runs} runs` : "";
  console.log(`Lighthouse ${LIGHTHOUSE_VERSION}, mobile preset, ${baseURL}${median}\n`);
  for (const result of await runLighthouse(baseURL, pages, { runs })) {
    const m = result.metrics;
    console.log(
      `${result.name} (${new URL(result.url).pathname}): performance ${result.performance}, ` +
        `accessibility ${result.accessibility}\n  FCP ${m.FCP} ms, LCP ${m.LCP} ms, TBT ${m.TBT} ms, ` +
        `CLS ${m.CLS}, SI ${m.SI} ms, TTFB ${m.TTFB} ms, ${((m.totalBytes ?? 0) / 1024).toFixed(1)} KB transferred`,
    );
    for (const a of result.failedAudits) {
      const value = a.displayValue ? ` — ${a.displayValue}` : "";
      console.log(`  [${a.category}] ${a.id} (${a.score ?? "error"}): ${a.title}${value}`);
    }
    for (const warning of result.warnings) console.log(`  warning: ${warning}`);
    console.log();
  }
}

if (import.meta.main) await main();
