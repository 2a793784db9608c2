// Serves the built browser assets (build/client). Only files that exist under
// that folder at start are served; everything is read once and kept in memory,
// gzip-compressed where it helps. Fingerprinted files under /assets/ are immutable.
import { gzipSync } from "node:zlib";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

const COMPRESSIBLE = new Set([".js", ".mjs", ".css", ".svg", ".txt", ".json", ".webmanifest"]);

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  immutable: boolean;
}

function walk(dir: string, base: string, into: Map<string, Asset>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      walk(full, base, into);
      continue;
    }
    if (!statSync(full).isFile()) continue;
    const ext = path.extname(entry.name).toLowerCase();
    const type = TYPES[ext];
    if (!type) continue;
    const body = readFileSync(full);
    const gz = COMPRESSIBLE.has(ext) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined;
    const urlPath = "/" + path.relative(base, full).split(path.sep).join("/");
    into.set(urlPath, {
      type,
      body,
      gzip: gz && gz.length < body.length ? gz : undefined,
      immutable: urlPath.startsWith("/assets/"),
    });
  }
}

export function createStaticHandler(clientDir: string) {
  const assets = new Map<string, Asset>();
  walk(clientDir, clientDir, assets);

  /** Answers and returns true when the request is for a known asset. */
  return function serveStatic(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const asset = assets.get(pathname);
    if (!asset) return false;
    const useGzip = asset.gzip !== undefined && /\bgzip\b/.test(req.headers["accept-encoding"] ?? "");
    const body = useGzip ? asset.gzip! : asset.body;
    res.statusCode = 200;
    res.setHeader("Content-Type", asset.type);
    res.setHeader("Content-Length", body.length);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Vary", "Accept-Encoding");
    res.setHeader(
      "Cache-Control",
      asset.immutable ? "public, max-age=31536000, immutable" : "public, max-age=3600",
    );
    if (useGzip) res.setHeader("Content-Encoding", "gzip");
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  };
}
