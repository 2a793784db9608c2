// The HTTP edge of the whole process (record 014): what every response
// carries (CSP with a per-request nonce, HSTS, nosniff, …), which proxies are
// believed (TRUST_PROXY), and which requests are refused before any handler
// runs (cross-site posts, oversized form bodies). The host calls `inspect`
// once per request and runs the rest of the request inside `runWithFacts`, so
// the web tier's load context and the API read the same facts.
import { REFUSALS, type RefusalCode } from "../../common/contract/refusals.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  addressMatcher,
  BACKEND_TOKEN_HEADER,
  CLIENT_IP_HEADER,
  NO_WEB_TIER,
  normaliseIp,
  type AddressEntry,
  type ClientAddress,
  type WebTierCheck,
} from "../backend/api/http.ts";

/**
 * The largest form post the web tier reads (413 beyond, before reading it).
 * The longest form, the contact comment (5000 characters), is at most 60 KB
 * url-encoded (a 4-byte character becomes 12 bytes).
 */
export const WEB_MAX_BODY_BYTES = 65_536;

// ---------------------------------------------------------------- TRUST_PROXY

/** One entry of TRUST_PROXY: "loopback", an IP address, or a CIDR block (read by parseTrustProxy, server/config.ts). */
export type TrustEntry = AddressEntry;

export interface ProxyTrust {
  /** True when `ip` (in normaliseIp's form) is a proxy whose forwarded headers are believed. */
  trusts(ip: string): boolean;
  readonly enabled: boolean;
}

export function createProxyTrust(entries: readonly TrustEntry[]): ProxyTrust {
  const matches = addressMatcher(entries);
  return { enabled: entries.length > 0, trusts: matches };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * The address the connection really comes from. With the peer a trusted
 * proxy, X-Forwarded-For is read from the right: every trusted address is a
 * hop of ours, and the first untrusted one is the client (what is left of it
 * was written by the client and is never believed). An entry that is not an
 * IP address stops the walk at the last hop believed. Otherwise, the peer.
 */
export function clientOf(
  peer: string | null,
  forwardedFor: string | undefined,
  trust: ProxyTrust,
): string | null {
  if (peer === null || !trust.trusts(peer) || forwardedFor === undefined) return peer;
  let client = peer;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = normaliseIp(hops[i] ?? "");
    if (ip === null) break;
    client = ip;
    if (!trust.trusts(ip)) break;
  }
  return client;
}

// ---------------------------------------------------------------- per request

export interface RequestFacts {
  /** The CSP nonce of this response (base64, 128 bits). */
  nonce: string;
  /** The TCP peer, normalised; null if the socket is already gone. */
  peer: string | null;
  /** The client after the trusted proxies (logs, limits); the peer without TRUST_PROXY. */
  clientIp: string | null;
  /** The visitor's request arrived over HTTPS: a TLS socket, or X-Forwarded-Proto from a trusted proxy. */
  https: boolean;
  /**
   * What to hand senderAddress (record 011) as the connection: the client,
   * or, when the client is a configured web tier (WEB_TIER_HOSTS, sending
   * BACKEND_TOKEN; record 026), the X-Coinkeep-Client-Ip it forwards. Never
   * the header of any other client, loopback or trusted proxy included.
   */
  sender: ClientAddress | undefined;
}

const facts = new AsyncLocalStorage<RequestFacts>();

export function runWithFacts<T>(value: RequestFacts, fn: () => T): T {
  return facts.run(value, fn);
}

/** The facts of the request being served, if any. */
export function requestFacts(): RequestFacts | undefined {
  return facts.getStore();
}

export function inspect(
  req: IncomingMessage,
  trust: ProxyTrust,
  webTier: WebTierCheck = NO_WEB_TIER,
): RequestFacts {
  const peer = req.socket.remoteAddress === undefined ? null : normaliseIp(req.socket.remoteAddress);
  const fromTrustedProxy = peer !== null && trust.trusts(peer);
  const clientIp = clientOf(peer, headerText(req.headers["x-forwarded-for"]), trust);
  const tls = "encrypted" in req.socket && req.socket.encrypted === true;
  // The left-most value: a chain of our proxies appends, the first one saw the visitor.
  const proto = headerText(req.headers["x-forwarded-proto"])?.split(",")[0]?.trim().toLowerCase();
  const https = tls || (fromTrustedProxy && proto === "https");

  let sender: ClientAddress | undefined = clientIp === null ? undefined : { address: clientIp };
  const token = headerText(req.headers[BACKEND_TOKEN_HEADER.toLowerCase()]);
  if (clientIp !== null && webTier(clientIp, token)) {
    const forwarded = headerText(req.headers[CLIENT_IP_HEADER.toLowerCase()]);
    const ip = forwarded === undefined ? null : normaliseIp(forwarded);
    if (ip !== null) sender = { address: ip };
  }
  return { nonce: randomBytes(16).toString("base64"), peer, clientIp, https, sender };
}

// ---------------------------------------------------------------- headers

export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

export const HSTS = "max-age=63072000; includeSubDomains";

/**
 * The headers every response starts with. Handlers may replace some
 * (Cache-Control on assets and the public price routes, Referrer-Policy on
 * fast login); they are set on `res`, so a handler's own value wins.
 */
export function setSecurityHeaders(res: ServerResponse, f: RequestFacts, production: boolean) {
  res.removeHeader("X-Powered-By");
  res.setHeader("Content-Security-Policy", contentSecurityPolicy(f.nonce));
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "strict-origin-when-cross-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Cache-Control", "no-store");
  if (production || f.https) res.setHeader("Strict-Transport-Security", HSTS);
}

// ---------------------------------------------------------------- refusals

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A state-changing request a browser sent from another site: Sec-Fetch-Site
 * "cross-site", or "same-site" from another origin; without it, an Origin
 * that is not ours. Requests with neither (curl, our own web tier calling the
 * API, old browsers) pass; forms still need their CSRF token.
 */
export function isCrossSite(req: IncomingMessage, ours: () => string): boolean {
  if (SAFE_METHODS.has(req.method ?? "GET")) return false;
  const site = headerText(req.headers["sec-fetch-site"])?.trim().toLowerCase();
  const origin = headerText(req.headers.origin)?.trim();
  if (site !== undefined) {
    if (site === "cross-site") return true;
    if (site === "same-site") return origin !== ours();
    return false;
  }
  return origin !== undefined && origin !== ours();
}

/** Our origin: PUBLIC_URL's when set, else the scheme and Host of the request. */
export function ownOrigin(req: IncomingMessage, f: RequestFacts, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return new URL(publicUrl).origin;
  return `${f.https ? "https" : "http"}://${req.headers.host ?? ""}`;
}

/**
 * The web tier's body limit, judged before reading: 413 over the limit by
 * Content-Length; 411 for a body without one (a chunked upload), which no
 * browser sends for a form. Null when the request may go on.
 */
export function webBodyRefusal(req: IncomingMessage, limit = WEB_MAX_BODY_BYTES): 411 | 413 | null {
  if (req.method === "GET" || req.method === "HEAD") return null;
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > limit ? 413 : null;
  return req.headers["transfer-encoding"] === undefined ? null : 411;
}

const EDGE_REFUSALS = {
  403: "cross_site",
  411: "length_required",
  413: "body_too_large",
} as const satisfies Record<403 | 411 | 413, RefusalCode>;

/**
 * Answers a refused request without reading its body, and closes the
 * connection so the unread body is not drained. The API's refusals keep its
 * JSON shape (record 004).
 */
export function refuse(res: ServerResponse, status: 403 | 411 | 413, api: boolean) {
  const code = EDGE_REFUSALS[status];
  const { message } = REFUSALS[code];
  const body = api ? JSON.stringify({ success: false, code, message }) : `${message}\n`;
  res.statusCode = status;
  res.setHeader("Content-Type", api ? "application/json; charset=utf-8" : "text/plain; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.setHeader("Connection", "close");
  res.end(body);
}
