// A cached public data source (crypto prices, currency rates) that answers
// even when the network is down.
//
//   - A live value is served from cache for ttlMs.
//   - At most one refresh runs at a time; concurrent callers share it.
//   - A refresh is bounded by timeoutMs: fetchLive gets an AbortSignal that
//     fires then, and the answer does not wait for a fetchLive that ignores it.
//   - On failure or timeout the last good live value is served (stale, with
//     its own asOf), else the shipped snapshot; and the network is not tried
//     again for retryAfterMs, so a dead network costs one timeout per minute,
//     never one per request.
//   - offline: true never touches the network: always the snapshot.
//
// Env-free: everything comes in through the options.
import { log } from "../../../common/log.ts";
import { readAtMost } from "../streams.ts";

export type FeedSourceKind = "live" | "snapshot";

export interface FeedAnswer<T> {
  data: T;
  /** ISO time the data describes (live: the source's own date, else the fetch time). */
  asOf: string;
  source: FeedSourceKind;
  /** ISO time the data was obtained (snapshot: the time of this answer). */
  fetchedAt: string;
}

export interface CachedSourceOptions<T> {
  /** For logs only. */
  name: string;
  /** A live value; a string `asOf` on it is used as the answer's asOf, else the fetch time. */
  fetchLive: (signal: AbortSignal) => Promise<T & { asOf?: string }>;
  /** The shipped fallback. */
  snapshot: () => T & { asOf: string };
  /** Default 60 000. */
  ttlMs?: number;
  /** Default 3 000. */
  timeoutMs?: number;
  /** How long the network is left alone after a failure. Default 60 000. */
  retryAfterMs?: number;
  /** Default Date.now. */
  now?: () => number;
  /** Never touch the network. Default false. */
  offline?: boolean;
  /** Told about each failed refresh. Default: a warning in the log. */
  onFailure?: (failure: { name: string; reason: string }) => void;
}

export interface CachedSource<T> {
  /** Never rejects unless the snapshot itself throws. */
  get(): Promise<FeedAnswer<T>>;
}

export const DEFAULT_TTL_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 3_000;
export const DEFAULT_RETRY_AFTER_MS = 60_000;

const TIMED_OUT: unique symbol = Symbol("timed out");

/** Why a refresh failed, safe to log: the error's class and message (no bodies, no headers). */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code: unknown = (cause as (Error & { code?: unknown }) | undefined)?.code;
  const detail = `${error.name}: ${error.message}`.slice(0, 300);
  return typeof code === "string" ? `${detail} (${code})` : detail;
}

const iso = (ms: number) => new Date(ms).toISOString();

function checkMs(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}`);
  return value;
}

export function createCachedSource<T>(opts: CachedSourceOptions<T>): CachedSource<T> {
  const ttlMs = checkMs("ttlMs", opts.ttlMs ?? DEFAULT_TTL_MS, 0);
  const timeoutMs = checkMs("timeoutMs", opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1);
  const retryAfterMs = checkMs("retryAfterMs", opts.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS, 0);
  const now = opts.now ?? Date.now;
  const onFailure =
    opts.onFailure ??
    ((failure) => log.warn("feed unavailable", { feed: failure.name, reason: failure.reason }));

  let good: { data: T; asOf: string; fetchedAtMs: number } | undefined;
  let inflight: Promise<FeedAnswer<T>> | undefined;
  let retryAt = Number.NEGATIVE_INFINITY;

  function fromSnapshot(): FeedAnswer<T> {
    const value = opts.snapshot();
    return { data: value, asOf: value.asOf, source: "snapshot", fetchedAt: iso(now()) };
  }

  function fromGood(value: NonNullable<typeof good>): FeedAnswer<T> {
    return { data: value.data, asOf: value.asOf, source: "live", fetchedAt: iso(value.fetchedAtMs) };
  }

  const fallback = () => (good ? fromGood(good) : fromSnapshot());

  async function refresh(): Promise<FeedAnswer<T>> {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The signal stops a real fetch; the race also bounds a fetchLive that ignores it.
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`${opts.name}: no answer within ${timeoutMs} ms`));
        resolve(TIMED_OUT);
      }, timeoutMs);
    });
    try {
      const value = await Promise.race([opts.fetchLive(controller.signal), timedOut]);
      if (value === TIMED_OUT) throw new Error(`no answer within ${timeoutMs} ms`);
      const fetchedAtMs = now();
      const ownAsOf: unknown = (value as { asOf?: unknown } | null)?.asOf;
      good = { data: value, asOf: typeof ownAsOf === "string" ? ownAsOf : iso(fetchedAtMs), fetchedAtMs };
      retryAt = Number.NEGATIVE_INFINITY;
      return fromGood(good);
    } catch (error) {
      retryAt = now() + retryAfterMs;
      try {
        onFailure({ name: opts.name, reason: describeFailure(error) });
      } catch {
        // A failing logger must not turn a fallback answer into an error.
      }
      return fallback();
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async get() {
      if (opts.offline) return fromSnapshot();
      const at = now();
      if (good && at - good.fetchedAtMs < ttlMs) return fromGood(good);
      if (at < retryAt) return fallback();
      inflight ??= refresh().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
  };
}

export const USER_AGENT = "Coinkeep/0.1 (+price display)";
export const DEFAULT_MAX_FEED_BYTES = 1_048_576;

/**
 * GETs a URL and reads the body as UTF-8 text: throws on a non-2xx status or a
 * body over maxBytes (by Content-Length, then by counting while reading).
 * The signal bounds the whole exchange, body included.
 */
export async function fetchText(
  fetchImpl: typeof fetch,
  url: string,
  init: { signal: AbortSignal; accept: string; maxBytes?: number },
): Promise<string> {
  const maxBytes = init.maxBytes ?? DEFAULT_MAX_FEED_BYTES;
  const response = await fetchImpl(url, {
    method: "GET",
    signal: init.signal,
    headers: { accept: init.accept, "user-agent": USER_AGENT },
  });
  const tooLarge = () => new Error(`the body is larger than ${maxBytes} bytes`);
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`HTTP status ${response.status}`);
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return "";
  const bytes = await readAtMost(response.body, maxBytes);
  if (bytes === "too-large") throw tooLarge();
  return new TextDecoder("utf-8").decode(bytes);
}
