// Section 2, server-rendered pages: requests per second of each page with
// autocannon, each beside a bare node:http hello world measured with the same
// settings just before and just after it (the ratio is the figure, so the
// machine's noise at that moment cancels out).
import path from "node:path";
import { log, root, round, run, spawnTracked, stopChild } from "./lib.ts";

export interface PageTarget {
  name: string;
  path: string;
  cookie?: string | undefined;
}

export interface PageSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  helloPort: number;
}

export interface CannonFigures {
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Responses received in the measured seconds (0: none came back in time, the figures mean nothing). */
  answered: number;
}

export interface PageReport extends CannonFigures {
  name: string;
  path: string;
  /** The hello world's req/s, the mean of the runs just before and after this page. */
  helloPerSecond: number;
  /** This page's req/s as a share of the hello world's. */
  ratio: number;
}

const autocannonBin = path.join(root, "node_modules/autocannon/autocannon.js");

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

async function cannon(url: string, settings: PageSettings, cookie?: string): Promise<CannonFigures> {
  const args = [autocannonBin, "-c", String(settings.connections), "-d", String(settings.seconds), "-j"];
  if (settings.warmupSeconds > 0) {
    args.push("--warmup", "[", "-c", String(settings.connections), "-d", String(settings.warmupSeconds), "]");
  }
  if (cookie) args.push("-H", `cookie=${cookie}`);
  args.push(url);
  const { stdout } = await run(process.execPath, args);
  const json = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as AutocannonJson;
  return {
    perSecond: round(json.requests.average, 0),
    p50: json.latency.p50,
    p99: json.latency.p99,
    non2xx: json.non2xx,
    errors: json.errors + json.timeouts,
    answered: json.requests.total,
  };
}

async function startHello(port: number) {
  const child = spawnTracked(process.execPath, [path.join(import.meta.dirname, "hello.ts")], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the hello world server exited (${code})`)));
    child.stdout?.setEncoding("utf8").once("data", () => resolve());
  });
  return child;
}

/** The bare node:http hello world's req/s with the pages' settings, in its own process. */
export async function measureHello(settings: PageSettings): Promise<CannonFigures> {
  const hello = await startHello(settings.helloPort);
  try {
    const figures = await cannon(`http://127.0.0.1:${settings.helloPort}/`, settings);
    log(`capacity: hello world ${figures.perSecond} req/s`);
    return figures;
  } finally {
    await stopChild(hello);
  }
}

export async function runPages(
  base: string,
  pages: PageTarget[],
  settings: PageSettings,
): Promise<PageReport[]> {
  const hello = await startHello(settings.helloPort);
  try {
    const helloUrl = `http://127.0.0.1:${settings.helloPort}/`;
    const reports: PageReport[] = [];
    let before = await cannon(helloUrl, settings);
    log(`pages: hello world ${before.perSecond} req/s`);
    for (const page of pages) {
      const figures = await cannon(`${base}${page.path}`, settings, page.cookie);
      const after = await cannon(helloUrl, settings);
      const helloPerSecond = round((before.perSecond + after.perSecond) / 2, 0);
      const report: PageReport = {
        name: page.name,
        path: page.path,
        ...figures,
        helloPerSecond,
        ratio: round(figures.perSecond / helloPerSecond, 4),
      };
      reports.push(report);
      log(
        `pages: ${page.path} ${figures.perSecond} req/s (p99 ${figures.p99} ms, non-2xx ${figures.non2xx}, ` +
          `errors ${figures.errors}, ${figures.answered} answers); hello world ${after.perSecond} req/s; ratio ${(report.ratio * 100).toFixed(2)} %`,
      );
      before = after;
    }
    return reports;
  } finally {
    await stopChild(hello);
  }
}
