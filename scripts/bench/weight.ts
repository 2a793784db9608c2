// Page weight: the JavaScript and CSS a browser downloads on a full document
// load of each page route, in bytes as our server sends them.
//
// What "as sent" means here: server/host/static.ts keeps every built asset in memory
// gzip-compressed at level 9 when the file is larger than 512 bytes and the
// gzip is smaller, and serves that to any client that accepts gzip (every
// browser). Smaller files go out as they are. So `jsGzipBytes` / `cssGzipBytes`
// are the response body sizes a browser receives (HTTP headers excluded).
//
// Two ways to measure, which agree (the CLI checks one against the other):
// - from a running server (`baseURL`): request each route's document, collect
//   its <script src>, <link rel=modulepreload|stylesheet> and the modules the
//   inline module script imports, add the static imports of every module
//   (what the browser fetches before it can run them), then request each file
//   with a browser's Accept-Encoding and count the bytes on the wire;
// - from the build alone: the list React Router's SSR document would emit
//   (the entry, then the module, imports and css of every matched route, all
//   from the assets manifest, plus the stylesheets the routes' `links()`
//   return, which the manifest does not list), and the sizes static.ts would serve.
// Pages that need a session (the protected layout) redirect without a cookie;
// pass `cookie` so the server mode can load them, otherwise the build numbers
// are used for them (`source: "build"`).
//
//   node scripts/bench/weight.ts [baseURL] [cookie]     (needs npm run build)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";

export interface AssetWeight {
  url: string;
  kind: "js" | "css";
  /** Uncompressed size. */
  bytes: number;
  /** Size of the response body as served (gzip level 9 above 512 bytes). */
  gzipBytes: number;
  /** Reached only through another module's static import, not announced by the document. */
  viaImport: boolean;
}

export interface RouteWeight {
  /** The route's URL pattern, as in app/routes.ts ("/wallet/:ticker"). */
  route: string;
  /** The URL that was measured ("/wallet/btc"). */
  path: string;
  jsGzipBytes: number;
  cssGzipBytes: number;
  jsBytes: number;
  cssBytes: number;
  /** Where the file list came from: a real document, or the build's manifest. */
  source: "server" | "build";
  /** Server mode: the document's status and body size as sent to a browser (gzip-compressed since record 035). */
  status?: number;
  documentBytes?: number;
  assets: AssetWeight[];
}

/**
 * Values for dynamic segments when a pattern is turned into a URL to load: a coin's page, and the
 * staff console's user page (an id no user has: its code weighs the same whoever it shows).
 */
export const SAMPLE_PARAMS: Readonly<Record<string, string>> = {
  ticker: "btc",
  id: "00000000-0000-4000-8000-000000000000",
};
const SPLAT_SAMPLE = "no-such-page";

// --- the build --------------------------------------------------------------

interface ManifestRoute {
  id: string;
  parentId?: string;
  path?: string;
  index?: boolean;
  module: string;
  imports?: string[];
  css?: string[];
  hasDefaultExport?: boolean;
}

interface AssetsManifest {
  entry: { module: string; imports: string[]; css: string[] };
  routes: Record<string, ManifestRoute>;
  url?: string;
}

type LinkDescriptor = Record<string, unknown>;

interface ServerBuildShape {
  assets: AssetsManifest;
  routes: Record<string, { id: string; module: { default?: unknown; links?: () => LinkDescriptor[] } }>;
  publicPath?: string;
  routeDiscovery?: { mode?: string };
}

interface Build {
  clientDir: string;
  publicPath: string;
  manifest: AssetsManifest;
  server: ServerBuildShape;
}

async function loadBuild(root: string): Promise<Build> {
  const serverFile = path.join(root, "build/server/index.js");
  if (!existsSync(serverFile)) throw new Error(`no build at ${serverFile}: run npm run build first`);
  // The query keeps a rebuilt server bundle from being served from the module cache.
  const href = `${pathToFileURL(serverFile).href}?mtime=${statSync(serverFile).mtimeMs}`;
  const server = (await import(href)) as ServerBuildShape;
  return {
    clientDir: path.join(root, "build/client"),
    publicPath: server.publicPath ?? "/",
    manifest: server.assets,
    server,
  };
}

export interface PageRoute {
  /** URL pattern ("/", "/wallet/:ticker", "/*"). */
  route: string;
  /** Route ids from the root to the leaf. */
  chain: string[];
}

/** The routes that render a page: leaves of the route tree with a component (resource routes left out). */
export function pageRoutes(manifest: AssetsManifest): PageRoute[] {
  const routes = Object.values(manifest.routes);
  const parents = new Set(routes.map((r) => r.parentId).filter((id) => id !== undefined));
  const pages: PageRoute[] = [];
  for (const leaf of routes) {
    if (parents.has(leaf.id) || leaf.hasDefaultExport === false) continue;
    const chain: ManifestRoute[] = [];
    for (
      let r: ManifestRoute | undefined = leaf;
      r;
      r = r.parentId ? manifest.routes[r.parentId] : undefined
    ) {
      chain.unshift(r);
    }
    const segments = chain.flatMap((r) => (r.path ? r.path.split("/") : [])).filter(Boolean);
    pages.push({ route: `/${segments.join("/")}`, chain: chain.map((r) => r.id) });
  }
  return pages;
}

/** A URL for a pattern: dynamic segments from `params`, the splat a path no route claims. */
export function samplePath(
  pattern: string,
  params: Readonly<Record<string, string>> = SAMPLE_PARAMS,
): string {
  const segments = pattern
    .split("/")
    .filter(Boolean)
    .map((segment) => {
      if (segment === "*") return SPLAT_SAMPLE;
      const optional = segment.endsWith("?");
      const bare = optional ? segment.slice(0, -1) : segment;
      if (!bare.startsWith(":")) return bare;
      const name = bare.slice(1);
      const value = params[name];
      if (value === undefined && !optional) throw new Error(`no sample value for :${name} in ${pattern}`);
      return value ?? "";
    });
  return `/${segments.filter(Boolean).join("/")}`;
}

function matches(pattern: string, pathname: string): boolean {
  const want = pattern.split("/").filter(Boolean);
  const got = pathname.split("/").filter(Boolean);
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === "*") return true;
    if (got[i] === undefined) return segment.endsWith("?");
    if (!segment.startsWith(":") && segment.replace(/\?$/u, "") !== got[i]) return false;
  }
  return got.length <= want.length;
}

/** The page route for a pattern or a concrete path; the most specific one (fewest wildcards). */
function findPage(pages: PageRoute[], route: string): PageRoute {
  const exact = pages.find((p) => p.route === route);
  if (exact) return exact;
  const score = (p: PageRoute) => (p.route.match(/[:*]/gu) ?? []).length;
  const found = pages.filter((p) => matches(p.route, route)).toSorted((a, b) => score(a) - score(b))[0];
  if (!found) throw new Error(`no page route matches ${route}`);
  return found;
}

// --- modules -----------------------------------------------------------------

// The import declarations a bundled chunk starts with (Rolldown hoists them all
// to the top): `import{a as b}from"./x.js"`, `import"./y.js"`, `import*as c from"/z.js"`.
const LEADING_IMPORT =
  /(?:\s|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n)*(?:import|export)\s*(?:[\w$*{},\s]*?\s*from\s*)?(["'])([^"'\n]+)\1\s*;?/uy;

/** The specifiers of a module's static imports (not its dynamic `import()`s). */
export function staticImports(code: string): string[] {
  const found: string[] = [];
  LEADING_IMPORT.lastIndex = 0;
  for (let m = LEADING_IMPORT.exec(code); m; m = LEADING_IMPORT.exec(code)) found.push(m[2]!);
  return found;
}

/** Imports of an inline module script, where the document also `import()`s the entry at once. */
function inlineImports(code: string): string[] {
  const found: string[] = [];
  for (const m of code.matchAll(/\bimport\s*(?:[\w$*{},\s]*?\s*from\s*)?(["'])([^"'\n]+)\1/gu))
    found.push(m[2]!);
  for (const m of code.matchAll(/\bimport\(\s*(["'])([^"'\n]+)\1\s*\)/gu)) found.push(m[2]!);
  return found;
}

function kindOf(url: string): "js" | "css" {
  return new URL(url, "http://x").pathname.endsWith(".css") ? "css" : "js";
}

/** What static.ts would send for a file of this content. */
function servedSize(body: Buffer): number {
  if (body.length <= 512) return body.length;
  return Math.min(body.length, gzipSync(body, { level: 9 }).length);
}

interface Fetched {
  status: number;
  location: string | undefined;
  /** Body as received. */
  wire: number;
  /** Body decoded. */
  body: Buffer;
}

function get(url: string, headers: Record<string, string>): Promise<Fetched> {
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const raw = Buffer.concat(chunks);
        const location = res.headers.location;
        resolve({
          status: res.statusCode ?? 0,
          location: typeof location === "string" ? location : undefined,
          wire: raw.length,
          body: res.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw,
        });
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`timed out: ${url}`)));
    req.on("error", reject);
  });
}

/** What Chromium sends; our server answers gzip where it has one. */
const BROWSER_ENCODINGS = { "accept-encoding": "gzip, deflate, br, zstd" };

/**
 * Sizes `announced` (absolute URLs) and everything they statically import.
 * `load` returns a file's decoded content and the size it is sent with.
 */
async function closure(
  announced: { url: string; kind: "js" | "css" }[],
  load: (url: string) => Promise<{ body: Buffer; sent: number }>,
): Promise<AssetWeight[]> {
  const seen = new Map<string, AssetWeight>();
  const queue = announced.map((a) => ({ ...a, viaImport: false }));
  for (let item = queue.shift(); item; item = queue.shift()) {
    if (seen.has(item.url)) continue;
    const { body, sent } = await load(item.url);
    seen.set(item.url, {
      url: item.url,
      kind: item.kind,
      bytes: body.length,
      gzipBytes: sent,
      viaImport: item.viaImport,
    });
    if (item.kind !== "js") continue;
    for (const specifier of staticImports(body.toString("utf8"))) {
      const url = new URL(specifier, item.url).href;
      if (!seen.has(url)) queue.push({ url, kind: kindOf(url), viaImport: true });
    }
  }
  return [...seen.values()];
}

function total(assets: AssetWeight[], kind: "js" | "css", field: "bytes" | "gzipBytes"): number {
  return assets.filter((a) => a.kind === kind).reduce((sum, a) => sum + a[field], 0);
}

function summarize(
  page: PageRoute,
  pathname: string,
  assets: AssetWeight[],
  source: "server" | "build",
  extra: { status?: number; documentBytes?: number } = {},
): RouteWeight {
  return {
    route: page.route,
    path: pathname,
    jsGzipBytes: total(assets, "js", "gzipBytes"),
    cssGzipBytes: total(assets, "css", "gzipBytes"),
    jsBytes: total(assets, "js", "bytes"),
    cssBytes: total(assets, "css", "bytes"),
    source,
    ...extra,
    assets: assets
      .map((a) => ({ ...a, url: new URL(a.url).pathname }))
      .toSorted((a, b) => b.gzipBytes - a.gzipBytes),
  };
}

// --- from the build ------------------------------------------------------------

const BUILD_ORIGIN = "http://build.invalid";

/** The files React Router's document announces for a page, as its <Links>/<Scripts> compute them. */
function announcedByBuild(build: Build, page: PageRoute): { url: string; kind: "js" | "css" }[] {
  const { manifest, server } = build;
  const list: { url: string; kind: "js" | "css" }[] = [];
  const add = (href: string, kind: "js" | "css") =>
    list.push({ url: new URL(href, BUILD_ORIGIN).href, kind });
  add(manifest.entry.module, "js");
  for (const href of manifest.entry.imports) add(href, "js");
  for (const href of manifest.entry.css) add(href, "css");
  // With eager route discovery the whole manifest is a module the document loads.
  if (server.routeDiscovery?.mode === "initial" && manifest.url) add(manifest.url, "js");
  for (const id of page.chain) {
    const route = manifest.routes[id];
    if (!route) throw new Error(`route ${id} missing from the assets manifest`);
    add(route.module, "js");
    for (const href of route.imports ?? []) add(href, "js");
    for (const href of route.css ?? []) add(href, "css");
    for (const link of server.routes[id]?.module.links?.() ?? []) {
      if (typeof link.href !== "string") continue;
      const as = link.as;
      if (link.rel === "stylesheet" || (link.rel === "preload" && as === "style")) add(link.href, "css");
      else if (link.rel === "modulepreload" || (link.rel === "preload" && as === "script"))
        add(link.href, "js");
    }
  }
  return list;
}

async function weighFromBuild(build: Build, page: PageRoute, pathname: string): Promise<RouteWeight> {
  const assets = await closure(announcedByBuild(build, page), async (url) => {
    const local = new URL(url).pathname.slice(build.publicPath.length);
    const body = readFileSync(path.join(build.clientDir, local));
    return { body, sent: servedSize(body) };
  });
  return summarize(page, pathname, assets, "build");
}

// --- from a running server --------------------------------------------------

function attributes(tag: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/gu)) {
    attrs[m[1]!.toLowerCase()] = (m[2] ?? m[3] ?? "").replaceAll("&amp;", "&");
  }
  return attrs;
}

/** The scripts and styles a document makes the browser fetch at once. */
export function announcedByDocument(
  html: string,
  documentURL: string,
): { url: string; kind: "js" | "css" }[] {
  const list: { url: string; kind: "js" | "css" }[] = [];
  const add = (href: string, kind: "js" | "css") => list.push({ url: new URL(href, documentURL).href, kind });
  for (const [tag] of html.matchAll(/<link\b[^>]*>/giu)) {
    const a = attributes(tag);
    const rel = (a.rel ?? "").toLowerCase().split(/\s+/u);
    if (!a.href) continue;
    if (rel.includes("stylesheet") || (rel.includes("preload") && a.as === "style")) add(a.href, "css");
    else if (rel.includes("modulepreload") || (rel.includes("preload") && a.as === "script"))
      add(a.href, "js");
  }
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/giu)) {
    const a = attributes(m[1]!);
    if (a.src) add(a.src, "js");
    else if (a.type === "module")
      for (const specifier of inlineImports(m[2]!)) add(specifier, kindOf(specifier));
  }
  return list;
}

async function weighFromServer(
  baseURL: string,
  page: PageRoute,
  pathname: string,
  cookie: string | undefined,
): Promise<RouteWeight | { status: number; location: string | undefined }> {
  const documentURL = new URL(pathname, baseURL).href;
  let doc = await get(documentURL, { ...BROWSER_ENCODINGS, accept: "text/html" });
  // Signed-in pages redirect to the login page without a session: only then send the cookie,
  // since public pages may redirect a signed-in visitor elsewhere.
  if (doc.status >= 300 && doc.status < 400 && cookie) {
    doc = await get(documentURL, { ...BROWSER_ENCODINGS, accept: "text/html", cookie });
  }
  if (doc.status >= 300 && doc.status < 400) return { status: doc.status, location: doc.location };
  const assets = await closure(announcedByDocument(doc.body.toString("utf8"), documentURL), async (url) => {
    const file = await get(url, BROWSER_ENCODINGS);
    if (file.status !== 200) throw new Error(`${url} answered ${file.status}`);
    return { body: file.body, sent: file.wire };
  });
  return summarize(page, pathname, assets, "server", { status: doc.status, documentBytes: doc.wire });
}

// --- the API ------------------------------------------------------------------

export interface WeightOptions {
  /** Values for dynamic segments (default SAMPLE_PARAMS). */
  params?: Readonly<Record<string, string>>;
  /** Called when a page could not be loaded from the server and the build's numbers stand in. */
  onFallback?: (route: string, why: string) => void;
}

/**
 * JS and CSS weight of every page route of the app built in `root`. With
 * `baseURL`, measured from the documents a server there sends (signed-in pages
 * with `cookie`); without, computed from the build exactly as the document
 * would announce it.
 */
export async function measureWeight(
  root: string,
  baseURL?: string,
  cookie?: string,
  options: WeightOptions = {},
): Promise<RouteWeight[]> {
  const build = await loadBuild(root);
  const results: RouteWeight[] = [];
  for (const page of pageRoutes(build.manifest)) {
    const pathname = samplePath(page.route, options.params);
    if (baseURL) {
      const measured = await weighFromServer(baseURL, page, pathname, cookie);
      if ("route" in measured) {
        results.push(measured);
        continue;
      }
      options.onFallback?.(
        page.route,
        `${pathname} answered ${measured.status}${measured.location ? ` → ${measured.location}` : ""}`,
      );
    }
    results.push(await weighFromBuild(build, page, pathname));
  }
  return results;
}

// --- profiling ------------------------------------------------------------------

export interface ChunkContribution {
  /** A package ("react-dom", "@conform-to/dom") or one of our files ("app/routes/home.tsx"). */
  name: string;
  /** Minified bytes of the chunk that come from it. */
  bytes: number;
}

export interface ChunkWeight {
  url: string;
  bytes: number;
  gzipBytes: number;
  /** Largest contributors first; from the chunk's source map when the build has one, else from known markers. */
  contents: ChunkContribution[];
  contentsFrom: "sourcemap" | "markers";
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Generated bytes per source, from a source map's mappings (VLQ segments). */
function bytesPerSource(code: string, map: { sources: string[]; mappings: string }): Map<string, number> {
  const lines = code.split("\n");
  const out = new Map<string, number>();
  let source = 0;
  map.mappings.split(";").forEach((line, row) => {
    const text = lines[row] ?? "";
    let column = 0;
    const segments: { column: number; source: number | undefined }[] = [];
    for (const segment of line.split(",")) {
      if (!segment) continue;
      const fields: number[] = [];
      let value = 0;
      let shift = 0;
      for (const ch of segment) {
        const digit = BASE64.indexOf(ch);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0] ?? 0;
      if (fields.length >= 4) source += fields[1]!;
      segments.push({ column, source: fields.length >= 4 ? source : undefined });
    }
    segments.forEach((s, i) => {
      if (s.source === undefined) return;
      const end = segments[i + 1]?.column ?? text.length;
      const name = map.sources[s.source] ?? "?";
      out.set(name, (out.get(name) ?? 0) + Math.max(0, end - s.column));
    });
  });
  return out;
}

/** "node_modules/.pnpm/x/node_modules/@scope/pkg/dist/a.js" → "@scope/pkg"; our files relative to root. */
function owner(source: string, root: string): string {
  const parts = source.split("/");
  const at = parts.lastIndexOf("node_modules");
  if (at >= 0) {
    const first = parts[at + 1] ?? "?";
    return first.startsWith("@") ? `${first}/${parts[at + 2] ?? ""}` : first;
  }
  const local = path.relative(root, path.resolve(root, "build/client/assets", source.replace(/^\/@fs/u, "")));
  return local.startsWith("..") ? source : local;
}

// Without a source map: strings that survive minification, for a rough idea.
const MARKERS: [string, RegExp][] = [
  ["react-dom", /__reactContainer\$|__reactFiber\$/u],
  ["react", /react\.transitional\.element/u],
  ["react-router", /__reactRouter|ErrorResponseImpl/u],
  ["zod", /\$Zod|ZodError/u],
  ["@conform-to", /conform/u],
];

function guessContents(code: string): ChunkContribution[] {
  return MARKERS.filter(([, re]) => re.test(code)).map(([name]) => ({ name, bytes: 0 }));
}

/**
 * The largest files a page downloads, with what they contain. `route` is a
 * pattern ("/wallet/:ticker") or a concrete path ("/wallet/btc"). Contents come
 * from source maps (build with `build.sourcemap: "hidden"` for exact figures;
 * static.ts does not serve .map files) or, without them, from marker strings.
 */
export async function largestChunks(
  root: string,
  route: string,
  options: {
    baseURL?: string;
    cookie?: string;
    limit?: number;
    params?: Readonly<Record<string, string>>;
  } = {},
): Promise<ChunkWeight[]> {
  const build = await loadBuild(root);
  const page = findPage(pageRoutes(build.manifest), route);
  const pathname =
    route.includes(":") || route.includes("*") ? samplePath(page.route, options.params) : route;
  let weight: RouteWeight | undefined;
  if (options.baseURL) {
    const measured = await weighFromServer(options.baseURL, page, pathname, options.cookie);
    if ("route" in measured) weight = measured;
  }
  weight ??= await weighFromBuild(build, page, pathname);
  return weight.assets.slice(0, options.limit ?? 5).map((asset) => {
    const file = path.join(build.clientDir, asset.url.slice(build.publicPath.length));
    const code = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (existsSync(`${file}.map`)) {
      const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[]; mappings: string };
      const byOwner = new Map<string, number>();
      for (const [source, bytes] of bytesPerSource(code, map)) {
        const name = owner(source, root);
        byOwner.set(name, (byOwner.get(name) ?? 0) + bytes);
      }
      const contents = [...byOwner]
        .map(([name, bytes]) => ({ name, bytes }))
        .toSorted((a, b) => b.bytes - a.bytes);
      return {
        url: asset.url,
        bytes: asset.bytes,
        gzipBytes: asset.gzipBytes,
        contents,
        contentsFrom: "sourcemap",
      };
    }
    return {
      url: asset.url,
      bytes: asset.bytes,
      gzipBytes: asset.gzipBytes,
      contents: asset.kind === "css" ? [] : guessContents(code),
      contentsFrom: "markers",
    };
  });
}

// --- CLI ------------------------------------------------------------------------

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** Newest modification time under a file or folder. */
function newest(target: string): number {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(target).map((name) => newest(path.join(target, name))));
}

async function main() {
  const root = path.resolve(import.meta.dirname, "../..");
  const [baseURL, cookie] = process.argv.slice(2);
  const built = path.join(root, "build/server/index.js");
  if (existsSync(built) && newest(path.join(root, "app")) > statSync(built).mtimeMs) {
    console.warn("warning: app/ changed after the last build; run npm run build for current figures");
  }
  const fromBuild = await measureWeight(root);
  const measured = baseURL
    ? await measureWeight(root, baseURL, cookie, {
        onFallback: (route, why) => console.warn(`${route}: ${why}; build figures used`),
      })
    : fromBuild;
  console.log(
    `JS and CSS per page as served (gzip level 9 above 512 B, as server/host/static.ts sends them)` +
      ` — ${baseURL ? `measured from ${baseURL}` : "computed from the build"}\n`,
  );
  const rows = measured.map((w) => [
    w.route,
    w.path,
    kb(w.jsGzipBytes),
    kb(w.cssGzipBytes),
    kb(w.jsBytes),
    kb(w.cssBytes),
    String(w.assets.length),
    w.source,
  ]);
  const head = ["route", "path", "JS gzip", "CSS gzip", "JS raw", "CSS raw", "files", "source"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [head, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "));

  if (baseURL) {
    // The build's computation and the real documents must name the same files.
    let differences = 0;
    for (const real of measured.filter((w) => w.source === "server")) {
      const computed = fromBuild.find((w) => w.route === real.route);
      const a = new Set(real.assets.map((x) => x.url));
      const b = new Set(computed?.assets.map((x) => x.url) ?? []);
      const onlyServer = [...a].filter((u) => !b.has(u));
      const onlyBuild = [...b].filter((u) => !a.has(u));
      if (onlyServer.length || onlyBuild.length || real.jsGzipBytes !== computed?.jsGzipBytes) {
        differences++;
        console.log(`\n${real.route}: document vs build differ`, { onlyServer, onlyBuild });
      }
    }
    console.log(
      differences ? "" : "\nCross-check: every document loads exactly the files the build predicts.",
    );
  }
  const late = measured.flatMap((w) =>
    w.assets.filter((a) => a.viaImport).map((a) => `${w.route}: ${a.url}`),
  );
  if (late.length)
    console.log(`\nModules not preloaded by the document (found through imports):\n  ${late.join("\n  ")}`);

  for (const route of ["/home", "/wallet/:ticker"]) {
    if (!measured.some((w) => w.route === route)) continue;
    console.log(`\nLargest files on ${route}:`);
    for (const chunk of await largestChunks(root, route, { baseURL, cookie })) {
      const contents = chunk.contents
        .slice(0, 4)
        .map((c) => (c.bytes ? `${c.name} ${kb(c.bytes)}` : c.name))
        .join(", ");
      console.log(`  ${kb(chunk.gzipBytes).padStart(9)}  ${chunk.url}  ${contents ? `(${contents})` : ""}`);
    }
  }
}

if (import.meta.main) await main();
