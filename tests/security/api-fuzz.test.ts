// Fuzzing every API route (the eleven POST routes and the two public GET feed
// routes, mounted as server/host/host.ts mounts them) with fast-check, on every
// test database. Three kinds of input:
//   (a) arbitrary JSON: any value, deep nesting, huge numbers, any code point;
//   (b) a valid body of a real account with fields replaced, removed, renamed
//       or added, from tests/security/naughty-strings.ts;
//   (c) raw bodies: truncated JSON, wrong content types, invalid UTF-8,
//       oversized and chunked bodies, lying Content-Length, broken streams.
// Properties of every answer:
//   - the status is 2xx or 4xx, never 5xx (nor a redirect);
//   - it is JSON, and every 4xx is { success: false, message: string };
//   - a refusal changes nothing: the row counts and a hash of the contents of
//     users, wallets, withdrawals, ledger_transfers, messages, message_reads,
//     support_messages and send_requests are the same before and after;
//   - a 2xx comes only for a body that is actually valid for the route, and
//     then only the route's own tables may change.
// The assertions hold whatever a 4xx is (400, 413, 415, 429…), so rate limits
// and "unknown fields ignored" do not break them.
//
// Runs per route: 200 on PGlite and 100 on PostgreSQL (split 60/100/40 over
// the three kinds). FUZZ_RUNS_SCALE=<n> multiplies them; FC_SEED=<n> replays.
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { DEFAULT_RATE_LIMITS } from "../../server/backend/domain/rate-limits.ts";
import { createFeedRoutes, FEED_PATHS, MAX_APP_URL_LENGTH } from "../../server/backend/feeds/routes.ts";
import { PLATFORM, ROUTES, createTestHandler } from "../backend/helpers.ts";
import { describeEachDatabase } from "../backend/api-suite.ts";
import {
  MAY_WRITE,
  answerOf,
  changedTables,
  createHolder,
  isValidBody,
  rawRequest,
  snapshot,
  validBody,
  type Holder,
  type Route,
  type Snapshot,
} from "./fuzz-support.ts";
import {
  LIMITS,
  NAUGHTY_GROUPS,
  NAUGHTY_RAW_VALUES,
  NAUGHTY_STRINGS,
  NAUGHTY_VALUES,
} from "./naughty-strings.ts";

const SCALE = Number(process.env.FUZZ_RUNS_SCALE ?? "1");
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const RUNS: Record<string, { json: number; naughty: number; raw: number; feeds: number }> = {
  pglite: { json: 60, naughty: 100, raw: 40, feeds: 200 },
  postgres: { json: 30, naughty: 50, raw: 20, feeds: 100 },
};

function params<T>(numRuns: number): fc.Parameters<T> {
  return {
    numRuns: Math.max(1, Math.round(numRuns * SCALE)),
    ...(SEED === undefined ? {} : { seed: SEED }),
    // A failing body is shown in full; shrinking keeps it small.
    endOnFailure: false,
  };
}

const encoder = new TextEncoder();

/** A JSON object written pair by pair, so keys like __proto__ stay ordinary keys. */
function renderObject(pairs: readonly (readonly [string, string])[]): string {
  return `{${pairs.map(([key, valueText]) => `${JSON.stringify(key)}:${valueText}`).join(",")}}`;
}

function pairsOf(body: Record<string, unknown>): [string, string][] {
  return Object.entries(body).map(([key, value]) => [key, JSON.stringify(value)]);
}

// ---------------------------------------------------------------------------
// (a) arbitrary JSON

const unicodeString = fc.string({ unit: "binary", maxLength: 200 });
const hugeNumberText = fc.oneof(
  fc.bigInt({ min: -(10n ** 400n), max: 10n ** 400n }).map(String),
  fc.constantFrom("1e309", "-1e309", "1e-400", "4.9e-324", "1.7976931348623157e308", "-0", "0e0"),
  fc.double().map((d) => (Number.isFinite(d) ? String(d) : "1e999")),
);

function deeplyNested(depth: number, kind: "array" | "object"): string {
  return kind === "array"
    ? `${"[".repeat(depth)}${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

function arbitraryJson(keys: readonly string[]): fc.Arbitrary<string> {
  const valueText = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    unicodeString.map((s) => JSON.stringify(s)),
    hugeNumberText,
    fc
      .tuple(fc.integer({ min: 50, max: 2500 }), fc.constantFrom<"array" | "object">("array", "object"))
      .map(([depth, kind]) => deeplyNested(depth, kind)),
  );
  const key = fc.oneof(
    fc.constantFrom(...keys),
    unicodeString,
    fc.constantFrom(...NAUGHTY_GROUPS.prototypeKeys),
  );
  return fc.oneof(
    // Any JSON value at all (mostly not an object).
    fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
    // An object past the platform check with arbitrary fields of the route.
    fc
      .array(fc.tuple(key, valueText), { maxLength: 8 })
      .map((pairs) => renderObject([["platform", JSON.stringify(PLATFORM)], ...pairs])),
    // Deep nesting as the whole body.
    fc
      .tuple(fc.integer({ min: 100, max: 5000 }), fc.constantFrom<"array" | "object">("array", "object"))
      .map(([depth, kind]) => deeplyNested(Math.min(depth, kind === "object" ? 3000 : 5000), kind)),
  );
}

// ---------------------------------------------------------------------------
// (b) naughty fields in a valid body

type Mutation =
  | { kind: "replace"; key: string; value: unknown }
  | { kind: "raw"; key: string; text: string }
  | { kind: "affix"; key: string; text: string; before: boolean }
  | { kind: "delete"; key: string }
  | { kind: "rename"; key: string; to: string };

const naughtyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NAUGHTY_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...NAUGHTY_VALUES) },
);

function mutations(keys: readonly string[]): fc.Arbitrary<Mutation[]> {
  // The body's own keys, and keys it lacks (mass assignment, prototype keys).
  const key = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...keys) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "__proto__",
        "constructor",
        "prototype",
        "userId",
        "user_id",
        "id",
        "balance",
        "status",
        "isAdmin",
        "role",
        "address",
      ),
    },
  );
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("replace" as const), key, value: naughtyValue }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("raw" as const),
        key,
        text: fc.constantFrom(...NAUGHTY_RAW_VALUES),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("affix" as const),
        key,
        text: fc.constantFrom(...NAUGHTY_STRINGS),
        before: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), key }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("rename" as const),
        key,
        to: fc.constantFrom(...NAUGHTY_STRINGS.filter((s) => s.length < 300)),
      }),
    },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 });
}

function applyMutations(body: Record<string, unknown>, list: readonly Mutation[]): string {
  const pairs = pairsOf(body);
  const find = (key: string) => pairs.findIndex(([k]) => k === key);
  for (const m of list) {
    const at = find(m.key);
    switch (m.kind) {
      case "replace":
      case "raw": {
        const text = m.kind === "raw" ? m.text : JSON.stringify(m.value);
        if (at === -1) pairs.push([m.key, text]);
        else pairs[at] = [m.key, text];
        break;
      }
      case "affix": {
        const current = at === -1 ? "" : (body[m.key] ?? "");
        const base = typeof current === "string" ? current : JSON.stringify(current);
        const text = JSON.stringify(m.before ? `${m.text}${base}` : `${base}${m.text}`);
        if (at === -1) pairs.push([m.key, text]);
        else pairs[at] = [m.key, text];
        break;
      }
      case "delete":
        if (at !== -1) pairs.splice(at, 1);
        break;
      case "rename":
        if (at !== -1) {
          const [, value] = pairs[at] ?? ["", "null"];
          pairs[at] = [m.to, value];
        }
        break;
    }
  }
  return renderObject(pairs);
}

// ---------------------------------------------------------------------------
// (c) raw bodies

interface RawCase {
  label: string;
  headers: Record<string, string>;
  /** A fresh body per call: a stream can be read once, and shrinking replays a case. */
  body: () => Uint8Array | ReadableStream<Uint8Array> | null;
  /** The bytes the body carries (for deciding whether a 2xx was deserved). */
  bytes: Uint8Array;
}

const JSON_TYPE = { "content-type": "application/json" };

const WRONG_CONTENT_TYPES = [
  "text/plain",
  "text/json",
  "text/html",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=----x",
  "application/jsonx",
  "application/json-patch+json",
  "application/problem+json",
  "application/ld+json",
  "application/xml",
  "json",
  "*/*",
  "",
  "application/json, text/plain",
  "application/octet-stream",
];

/** Still application/json: the body decides. */
const JSON_TYPE_VARIANTS = [
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json ; charset=UTF-8",
  "application/json; charset=iso-8859-1",
  "application/json; charset=utf-16",
  "application/json;;;",
];

const BAD_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0xaf], // overlong '/'
  [0xe0, 0x80, 0xaf], // overlong
  [0xed, 0xa0, 0x80], // an encoded surrogate
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xc3], // truncated sequence
  [0x80],
].map((b) => Uint8Array.from(b));

function streamOf(chunks: readonly Uint8Array[], failAfter?: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAfter !== undefined && i >= failAfter) {
        controller.error(new Error("connection reset by peer"));
        return;
      }
      const chunk = chunks[i++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
}

function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].toSorted((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function rawCases(valid: string): fc.Arbitrary<RawCase> {
  const validBytes = encoder.encode(valid);
  const plain = (label: string, bytes: Uint8Array, headers: Record<string, string> = JSON_TYPE): RawCase => ({
    label,
    headers,
    body: () => bytes,
    bytes,
  });
  return fc.oneof(
    fc
      .nat({ max: valid.length - 1 })
      .map((n) => plain(`truncated at ${n}`, encoder.encode(valid.slice(0, n)))),
    fc
      .constantFrom(...WRONG_CONTENT_TYPES)
      .map((type) =>
        plain(
          `content-type ${JSON.stringify(type)}`,
          validBytes,
          type === "" ? {} : { "content-type": type },
        ),
      ),
    fc
      .constantFrom(...JSON_TYPE_VARIANTS)
      .map((type) => plain(`content-type ${JSON.stringify(type)}`, validBytes, { "content-type": type })),
    fc
      .tuple(fc.nat({ max: validBytes.length }), fc.constantFrom(...BAD_UTF8), fc.boolean())
      .map(([at, bad, replace]) =>
        plain(
          `invalid UTF-8 at ${at}`,
          concat(validBytes.subarray(0, at), bad, validBytes.subarray(replace ? at + bad.length : at)),
        ),
      ),
    fc.integer({ min: LIMITS.body + 1, max: LIMITS.body * 8 }).chain((size) =>
      fc.constantFrom<"declared" | "undeclared" | "stream">("declared", "undeclared", "stream").map((how) => {
        const bytes = concat(validBytes, encoder.encode(" ".repeat(size - validBytes.length)));
        if (how === "stream") {
          return {
            label: `oversized ${size} B, streamed`,
            headers: JSON_TYPE,
            body: () => streamOf(splitAt(bytes, [1024, 4096, 9000])),
            bytes,
          };
        }
        const headers = how === "declared" ? { ...JSON_TYPE, "content-length": String(size) } : JSON_TYPE;
        return plain(`oversized ${size} B, ${how}`, bytes, headers);
      }),
    ),
    fc
      .constantFrom("-1", "abc", "1e3", "0", "99999999999999999999", " 5 ", "0x10", "1.5", "16385", "1, 2")
      .map((length) =>
        plain(`content-length ${JSON.stringify(length)}`, validBytes, {
          ...JSON_TYPE,
          "content-length": length,
        }),
      ),
    fc.array(fc.nat(), { maxLength: 6 }).map((cuts) => ({
      label: `chunked ${cuts.length}`,
      headers: JSON_TYPE,
      body: () => streamOf(splitAt(validBytes, cuts)),
      bytes: validBytes,
    })),
    fc.nat({ max: 4 }).map((after) => ({
      label: `stream broken after ${after} chunks`,
      headers: JSON_TYPE,
      body: () => streamOf(splitAt(validBytes, [8, 16, 32, 64]), after),
      // A broken stream is never a valid body.
      bytes: encoder.encode("broken"),
    })),
    fc.constantFrom(
      plain("UTF-8 BOM", concat(Uint8Array.from([0xef, 0xbb, 0xbf]), validBytes)),
      plain("UTF-16LE", Uint8Array.from(Buffer.from(valid, "utf16le"))),
      plain(
        "UTF-16LE with BOM",
        concat(Uint8Array.from([0xff, 0xfe]), Uint8Array.from(Buffer.from(valid, "utf16le"))),
      ),
      plain("gzip", Uint8Array.from(gzipSync(valid)), { ...JSON_TYPE, "content-encoding": "gzip" }),
      plain("empty", new Uint8Array(0)),
      plain("NUL bytes", Uint8Array.from([0, 0, 0, 0])),
      plain("two objects", encoder.encode(`${valid}${valid}`)),
      plain("trailing garbage", encoder.encode(`${valid}x`)),
      plain("a JSON string of the body", encoder.encode(JSON.stringify(valid))),
      plain("form encoding with a JSON type", encoder.encode("email=a%40b.co&password=x")),
      plain("JSON with comments", encoder.encode(`/* x */${valid}`)),
      plain("single quotes", encoder.encode(valid.replaceAll('"', "'"))),
    ),
  );
}

// ---------------------------------------------------------------------------
// The property: one request, checked against the database.

interface Checker {
  db: AppDb;
  handler: ApiHandler;
  last?: Snapshot | undefined;
}

async function checkRequest(
  checker: Checker,
  route: Route | "feed",
  request: Request,
  bytes: Uint8Array | null,
): Promise<number> {
  const before = checker.last ?? (await snapshot(checker.db));
  const answer = await answerOf(checker.handler, request);
  const after = await snapshot(checker.db);
  checker.last = after;
  const changed = changedTables(before, after);
  if (answer.status >= 200 && answer.status < 300) {
    if (route === "feed") {
      expect(changed).toEqual([]);
    } else {
      expect(
        bytes !== null && isValidBody(route, bytes),
        `2xx for a body the route should refuse: ${answer.text}`,
      ).toBe(true);
      for (const table of changed) expect(MAY_WRITE[route]).toContain(table);
      expect((answer.body as { success?: unknown } | undefined)?.success).not.toBe(false);
    }
  } else {
    // A refusal changes nothing.
    expect(changed, `refused with ${answer.status} but changed ${changed.join(", ")}`).toEqual([]);
  }
  return answer.status;
}

// ---------------------------------------------------------------------------

describeEachDatabase("fuzzing the API on $name", (getDatabase, targetName) => {
  const runs = RUNS[targetName] ?? RUNS.pglite;
  if (!runs) throw new Error("no run counts");
  const checker = {} as Checker;
  const holders = new Map<Route, Holder>();
  const statuses = new Map<string, Map<number, number>>();

  const tally = (name: string, status: number) => {
    const counts = statuses.get(name) ?? new Map<number, number>();
    counts.set(status, (counts.get(status) ?? 0) + 1);
    statuses.set(name, counts);
  };

  beforeAll(async () => {
    // The production limits (record 013): a fuzzer meets them like any client.
    const api = createTestHandler(getDatabase().database.db, { rateLimits: DEFAULT_RATE_LIMITS });
    const feeds = createFeedRoutes({ offline: true, platform: PLATFORM });
    // As server/host/host.ts mounts them: the feed routes first, then the API.
    checker.db = getDatabase().database.db;
    checker.handler = async (request) => (await feeds(request)) ?? api(request);
    // One account per route, so rate limits earned by one route's fuzzing do not blunt another's.
    for (const route of ROUTES) {
      holders.set(route, await createHolder(checker.db, { label: `fuzz${ROUTES.indexOf(route)}` }));
    }
  });

  afterAll(async () => {
    // What the runs were answered with, per test: shows how deep the fuzzing reached.
    const lines = [...statuses].map(
      ([name, counts]) =>
        `  ${name}: ${[...counts]
          .toSorted(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${n}`)
          .join(" ")}`,
    );
    if (process.env.FUZZ_REPORT) console.log(`statuses on ${targetName}:\n${lines.join("\n")}`);
  });

  function holderFor(route: Route): Holder {
    const holder = holders.get(route);
    if (!holder) throw new Error(`no holder for ${route}`);
    return holder;
  }

  test("the state hash sees a change (so 'nothing changed' means something)", async () => {
    const holder = holderFor("/api/request-transaction");
    const before = await snapshot(checker.db);
    const sent = await answerOf(
      checker.handler,
      rawRequest("/api/request-transaction", {
        body: JSON.stringify({
          ...validBody("/api/request-transaction", holder),
          idempotency_key: undefined,
        }),
      }),
    );
    expect(sent.status).toBe(200);
    const afterSend = await snapshot(checker.db);
    expect(changedTables(before, afterSend)).toEqual(["withdrawals", "ledger_transfers"]);
    const openAnswer = await answerOf(
      checker.handler,
      rawRequest("/api/aml-message-open-status", {
        body: JSON.stringify(validBody("/api/aml-message-open-status", holder)),
      }),
    );
    expect(openAnswer.status).toBe(200);
    expect(changedTables(afterSend, await snapshot(checker.db))).toEqual(["message_reads"]);
    checker.last = undefined;
  });

  /** Posts the text to the route, checks the request, and counts its status under the name. */
  async function checkText(name: string, route: Route, text: string) {
    const status = await checkRequest(
      checker,
      route,
      rawRequest(route, { body: text }),
      encoder.encode(text),
    );
    tally(name, status);
  }

  describe("(a) arbitrary JSON", () => {
    test.each(ROUTES)("%s", async (route) => {
      expect.hasAssertions();
      const keys = Object.keys(validBody(route, holderFor(route)));
      await fc.assert(
        fc.asyncProperty(arbitraryJson(keys), (text) => checkText(`json ${route}`, route, text)),
        params(runs.json),
      );
    });
  });

  describe("(b) naughty strings in valid bodies", () => {
    test.each(ROUTES)("%s", async (route) => {
      expect.hasAssertions();
      const body = validBody(route, holderFor(route));
      await fc.assert(
        fc.asyncProperty(mutations(Object.keys(body)), (list) =>
          checkText(`naughty ${route}`, route, applyMutations(body, list)),
        ),
        params(runs.naughty),
      );
    });
  });

  describe("(c) raw bodies", () => {
    test.each(ROUTES)("%s", async (route) => {
      expect.hasAssertions();
      const valid = JSON.stringify(validBody(route, holderFor(route)));
      await fc.assert(
        fc.asyncProperty(rawCases(valid), async (raw) => {
          const request = rawRequest(route, { headers: raw.headers, body: raw.body() });
          const status = await checkRequest(checker, route, request, raw.bytes);
          tally(`raw ${route}`, status);
        }),
        params(runs.raw),
      );
    });
  });

  describe("the public feed routes", () => {
    // Header values a client can send at all (ByteStrings without CR, LF or NUL).
    const headerSafe = NAUGHTY_STRINGS.filter(
      (s) => s.length <= MAX_APP_URL_LENGTH + 1 && /^[\u0020-\u007e\u0080-\u00ff\t]*$/u.test(s),
    );
    const headerValue = fc.oneof(
      fc.constantFrom(...headerSafe),
      fc.constant(PLATFORM),
      fc.constant("https://coinkeep.example"),
      fc.constant("x".repeat(MAX_APP_URL_LENGTH)),
      fc.constant("x".repeat(MAX_APP_URL_LENGTH + 1)),
    );
    const method = fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");
    const query = fc.oneof(
      fc.constant(""),
      fc
        .constantFrom(...NAUGHTY_STRINGS.filter((s) => s.length < 500 && s.isWellFormed()))
        .map((s) => `?q=${encodeURIComponent(s)}`),
      fc.webQueryParameters().map((q) => `?${q}`),
      fc.constantFrom("?q=%zz", "?q=%ED%A0%80", "?%00=%00", "?a=1&a=2", `?q=${"a".repeat(8000)}`),
    );

    test.each([FEED_PATHS.currencies, FEED_PATHS.cryptoPrices])("%s", async (path) => {
      await fc.assert(
        fc.asyncProperty(
          method,
          query,
          fc.option(headerValue),
          fc.option(headerValue),
          fc.option(fc.constantFrom(...NAUGHTY_STRINGS.filter((s) => s.length < 2000))),
          async (verb, search, appName, appUrl, payload) => {
            const headers: Record<string, string> = {};
            if (appName !== null) headers.app_name = appName;
            if (appUrl !== null) headers.app_url = appUrl;
            if (payload !== null) headers["content-type"] = "application/json";
            const body =
              verb === "GET" || verb === "HEAD" || payload === null ? null : JSON.stringify(payload);
            const request = rawRequest(`${path}${search}`, { method: verb, headers, body });
            const status = await checkRequest(checker, "feed", request, null);
            tally(`feed ${path}`, status);
            if (verb !== "GET") {
              expect(status).toBe(405);
            } else if (path === FEED_PATHS.currencies) {
              if (status !== 429) expect(status).toBe(200);
            } else {
              const known =
                appName === PLATFORM &&
                appUrl !== null &&
                appUrl.trim() !== "" &&
                appUrl.trim().length <= MAX_APP_URL_LENGTH;
              // A limit may answer 429 first; otherwise 200 exactly for a known application.
              if (status !== 429) expect(status).toBe(known ? 200 : 401);
            }
          },
        ),
        params(runs.feeds),
      );
    });
  });
});
