// The HTTP edge of the API: JSON responses, content-type and size checks,
// bounded body reading and JSON parsing, and who sent the request. Nothing
// here knows about accounts.
import { createHash, timingSafeEqual } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { refusal, type Issue, type Refusal, type RefusalCode } from "../../../common/contract/refusals.ts";
import { readAtMost } from "../streams.ts";

export type { Issue };

export const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function failure(
  status: number,
  message: string,
  extra: { issues?: Issue[]; headers?: Record<string, string> } = {},
) {
  const body: { success: false; message: string; issues?: Issue[] } = { success: false, message };
  if (extra.issues) body.issues = extra.issues;
  return json(status, body, extra.headers);
}

/**
 * A refusal as JSON: { success: false, code, message } (+ issues), and for a
 * 429 its Retry-After. The code is ours (record 004); the message is the spec's.
 */
export function refusalResponse(refused: Refusal, headers: Record<string, string> = {}): Response {
  const body: { success: false; code: RefusalCode; message: string; issues?: Issue[] } = {
    success: false,
    code: refused.code,
    message: refused.message,
  };
  if (refused.issues) body.issues = refused.issues;
  const retry: Record<string, string> =
    refused.retryAfter === undefined ? {} : { "retry-after": String(refused.retryAfter) };
  return json(refused.status, body, { ...headers, ...retry });
}

/** A request that must be answered with this response instead of being handled. */
export class Rejection {
  readonly response: Response;
  constructor(response: Response) {
    this.response = response;
  }
}

export function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const mediaType = value.split(";", 1)[0]?.trim().toLowerCase();
  return mediaType === "application/json";
}

/**
 * Reads the body as UTF-8 text, refusing more than maxBytes: first by the
 * declared Content-Length, then by counting while reading, so a chunked or
 * lying body is never buffered past the limit.
 */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string | Rejection> {
  const tooLarge = () => new Rejection(refusalResponse(refusal("body_too_large")));
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared.trim());
    if (!Number.isFinite(length) || length < 0)
      return new Rejection(refusalResponse(refusal("invalid_content_length")));
    if (length > maxBytes) return tooLarge();
  }
  if (!request.body) return "";

  let bytes: Uint8Array | "too-large";
  try {
    bytes = await readAtMost(request.body, maxBytes);
  } catch {
    // The client went away or sent a broken stream: its mistake, not ours.
    return new Rejection(refusalResponse(refusal("malformed_json")));
  }
  if (bytes === "too-large") return tooLarge();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return new Rejection(refusalResponse(refusal("malformed_json")));
  }
}

/**
 * Keys dropped from every parsed body, at any depth. JSON.parse itself makes
 * "__proto__" an own property (it never sets the prototype), but a later
 * spread, merge or `obj[key] = …` copy of such an object could; dropping them
 * here means no code after the parser ever sees one (issue 6).
 */
const POLLUTING_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Parses the body text into a plain JSON object, or says why it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | Rejection {
  let value: unknown;
  try {
    // A reviver that returns undefined deletes the key from its holder.
    value = JSON.parse(text, (key, item: unknown) => (POLLUTING_KEYS.has(key) ? undefined : item));
  } catch {
    return new Rejection(refusalResponse(refusal("malformed_json")));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new Rejection(refusalResponse(refusal("not_an_object")));
  }
  return value as Record<string, unknown>;
}

/**
 * The connection a request came over, as @remix-run/node-fetch-server's
 * request listener hands it to a fetch handler (its ClientAddress). Absent
 * when the handler is called in-process, e.g. by the web tier's client.
 */
export interface ClientAddress {
  address: string;
}

/**
 * Set by our own web tier on its calls to the API: the visitor's address.
 * Believed only from an in-process call, or from a configured web-tier host
 * that also sends the shared token (records 011, 026).
 */
export const CLIENT_IP_HEADER = "X-Coinkeep-Client-Ip";

/** The shared secret (BACKEND_TOKEN) a web tier on another host or process sends with every call (record 026). */
export const BACKEND_TOKEN_HEADER = "X-Coinkeep-Backend-Token";

/**
 * An IP address in the form it is stored in: IPv4 dotted, IPv6 lower-case,
 * an IPv4-mapped IPv6 address as its IPv4 address, no zone (PostgreSQL's inet
 * has none). Anything else (a list, a port, a host name) is null.
 */
export function normaliseIp(value: string): string | null {
  let ip = value.trim();
  const zone = ip.indexOf("%");
  if (zone !== -1) ip = ip.slice(0, zone);
  const version = isIP(ip);
  if (version === 4) return ip;
  if (version !== 6) return null;
  ip = ip.toLowerCase();
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/u.exec(ip)?.[1];
  return mapped !== undefined && isIP(mapped) === 4 ? mapped : ip;
}

/** One entry of an address list (TRUST_PROXY, WEB_TIER_HOSTS): "loopback", an IP address, or a CIDR block. */
export type AddressEntry =
  { kind: "loopback" } | { kind: "subnet"; network: string; prefix: number; family: 4 | 6 };

/** A test of an address (in normaliseIp's form) against a list; an empty list matches nothing. */
export function addressMatcher(entries: readonly AddressEntry[]): (ip: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    if (entry.kind === "loopback") {
      list.addSubnet("127.0.0.0", 8, "ipv4");
      list.addAddress("::1", "ipv6");
    } else {
      list.addSubnet(entry.network, entry.prefix, entry.family === 4 ? "ipv4" : "ipv6");
    }
  }
  return (ip) => {
    const family = isIP(ip);
    if (family === 4) return list.check(ip, "ipv4");
    return family === 6 && list.check(ip, "ipv6");
  };
}

/**
 * A web tier outside this process whose X-Coinkeep-Client-Ip is believed
 * (record 026): it connects from one of `hosts` (WEB_TIER_HOSTS) and sends
 * `token` (BACKEND_TOKEN) in X-Coinkeep-Backend-Token. Both are required.
 */
export interface WebTierTrust {
  hosts: readonly AddressEntry[];
  token: string;
}

/**
 * Whether a connection (in normaliseIp's form) carrying this token header is
 * a configured web tier. Without a configuration, never.
 */
export type WebTierCheck = (connection: string, token: string | null | undefined) => boolean;

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

export const NO_WEB_TIER: WebTierCheck = () => false;

export function webTierCheck(trust: WebTierTrust | undefined): WebTierCheck {
  if (!trust || trust.hosts.length === 0) return NO_WEB_TIER;
  if (trust.token.length < 32) throw new Error("the web tier's token must be at least 32 characters");
  const isHost = addressMatcher(trust.hosts);
  const expected = digest(trust.token);
  // Digests of equal length, compared in constant time: the token's length and prefix do not leak.
  return (connection, token) =>
    typeof token === "string" && isHost(connection) && timingSafeEqual(digest(token), expected);
}

/**
 * The address to record as the sender of a request (and to count its limits
 * by): the forwarded visitor's address when the request comes from our own
 * web tier and carries a valid one; otherwise the connection's. Our own web
 * tier is the in-process one (no connection at all), or a connection that
 * `webTier` recognises (a configured host with the token). A loopback
 * connection is not enough: any process on the machine can open one.
 * Null when neither address is known.
 */
export function senderAddress(
  request: Request,
  client: ClientAddress | undefined,
  webTier: WebTierCheck = NO_WEB_TIER,
): string | null {
  const connection = client ? normaliseIp(client.address) : null;
  const fromOurWebTier =
    client === undefined ||
    (connection !== null && webTier(connection, request.headers.get(BACKEND_TOKEN_HEADER)));
  if (fromOurWebTier) {
    const forwarded = request.headers.get(CLIENT_IP_HEADER);
    const ip = forwarded === null ? null : normaliseIp(forwarded);
    if (ip !== null) return ip;
  }
  return connection;
}
