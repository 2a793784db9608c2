// The HTTP edge of the API, with raw Requests straight to the handler:
// every client mistake is a 4xx with the exact JSON error shape, and nothing
// is written to the database.
import { isRefusalCode, REFUSALS, type RefusalCode } from "../../common/contract/refusals.ts";
import { drizzle } from "drizzle-orm/node-postgres";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import * as schema from "../../server/backend/db/schema.ts";
import {
  PLATFORM,
  ROUTES,
  countUsers,
  createTestHandler,
  openTempPglite,
  post,
  postJson,
  type OpenedDatabase,
} from "./helpers.ts";

let opened: OpenedDatabase;
let handler: ApiHandler;

beforeAll(async () => {
  opened = await openTempPglite();
  handler = createTestHandler(opened.database.db, { maxBodyBytes: 1024 });
});
afterAll(async () => {
  await opened?.dispose();
});

const users = () => countUsers(opened.database.db);

const PHRASE = "abandon ability able about above absent absorb abstract absurd abuse access accident";

const validBodies: Record<(typeof ROUTES)[number], Record<string, unknown>> = {
  "/api/aml-authentication": {
    platform: PLATFORM,
    email: "edge@example.com",
    password: "pw",
    passwordConfirmed: "pw",
  },
  "/api/aml-authorization": { platform: PLATFORM, email: "edge@example.com", password: "pw" },
  "/api/check-if-logged-in": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE },
  "/api/request-change-password": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE },
  "/api/aml-client-change-password": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    password: "pw",
    confirmPassword: "pw",
  },
  "/api/aml-client-balances": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE },
  "/api/request-nonbtc-wallet": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    request_text: "eth",
  },
  "/api/aml-new-messages-count": { platform: PLATFORM, email: "edge@example.com", twelvewords: PHRASE },
  "/api/request-transaction": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    amount: "0.5",
    amount_in_usd: "1500",
    receiver_wallet_address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
    wallet_id: "00000000-0000-4000-8000-000000000000",
  },
  "/api/aml-message-open-status": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    messageId: "00000000-0000-4000-8000-000000000000",
  },
  "/api/request-message": {
    platform: PLATFORM,
    email: "edge@example.com",
    full_name: "Edge Case",
    phone: "+123",
    comment: "A support message.",
  },
  "/api/change-password": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    current_password: "pw",
    password: "pw-2",
    confirm_password: "pw-2",
  },
  "/api/email": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE },
  "/api/email/verify": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE },
  "/api/email/confirm": { platform: PLATFORM, token: "a".repeat(43) },
  "/api/sign-in-seen": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    browser_id: "b".repeat(43),
    browser_name: "Firefox 128 on Linux",
  },
  "/api/sessions-ended": { platform: PLATFORM, email: "edge@example.com", twelveWords: PHRASE, count: 1 },
  "/api/statement": {
    platform: PLATFORM,
    email: "edge@example.com",
    twelveWords: PHRASE,
    from: "2026-01-01",
    to: "2026-01-31",
  },
};

interface Answer {
  status: number;
  body: { success: boolean; code?: string; message: string; issues?: { path: string; message: string }[] };
  text: string;
  headers: Headers;
}

async function send(request: Request): Promise<Answer> {
  const response = await handler(request);
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text, headers: response.headers };
}

/** Asserts the exact error shape: { success: false, code, message } (+ issues for validation), the code's text and status from the contract. */
function expectError(answer: Answer, status: number, message: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(answer.headers.get("cache-control")).toBe("no-store");
  if (message === "Invalid request.") {
    expect(Object.keys(answer.body).toSorted()).toEqual(["code", "issues", "message", "success"]);
    expect(answer.body.issues?.length).toBeGreaterThan(0);
    for (const issue of answer.body.issues ?? []) {
      expect(Object.keys(issue).toSorted()).toEqual(["message", "path"]);
      expect(typeof issue.path).toBe("string");
      expect(typeof issue.message).toBe("string");
    }
  } else {
    expect(Object.keys(answer.body).toSorted()).toEqual(["code", "message", "success"]);
  }
  expect(answer.body.success).toBe(false);
  expect(answer.body.message).toBe(message);
  const code = answer.body.code as RefusalCode;
  expect(isRefusalCode(code)).toBe(true);
  expect(REFUSALS[code]).toEqual({ status, message });
}

describe("routing", () => {
  test.each([
    "/api",
    "/api/",
    "/api/nope",
    "/",
    "/api/aml-authentication/",
    "/API/aml-authentication",
    "/api/__proto__",
    "/api/constructor",
  ])("unknown path %s → 404", async (pathname) => {
    expectError(await send(postJson(pathname, validBodies["/api/aml-authorization"])), 404, "Not found.");
  });

  test.each(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])(
    "%s on a known path → 405 with Allow",
    async (method) => {
      for (const route of ROUTES) {
        const response = await handler(new Request(`http://backend.test${route}`, { method }));
        expect(response.status).toBe(405);
        expect(response.headers.get("allow")).toBe("POST");
        if (method !== "HEAD") {
          expect(await response.json()).toEqual({
            success: false,
            code: "method_not_allowed",
            message: "Method not allowed.",
          });
        }
      }
    },
  );
});

describe("content type and size", () => {
  const body = JSON.stringify(validBodies["/api/aml-authentication"]);

  test.each([
    ["text/plain", { "content-type": "text/plain" }],
    ["form-urlencoded", { "content-type": "application/x-www-form-urlencoded" }],
    ["multipart", { "content-type": "multipart/form-data; boundary=x" }],
    ["application/jsonx", { "content-type": "application/jsonx" }],
    ["missing", {}],
  ])("%s → 415", async (_name, headers) => {
    const before = await users();
    // A string body makes fetch add text/plain; delete it for the "missing" case.
    const request = post("/api/aml-authentication", body, headers);
    if (!("content-type" in headers)) request.headers.delete("content-type");
    expectError(await send(request), 415, "Content-Type must be application/json.");
    expect(await users()).toBe(before);
  });

  test("parameters on application/json are fine", async () => {
    const answer = await send(
      post("/api/aml-authorization", JSON.stringify(validBodies["/api/aml-authorization"]), {
        "content-type": "Application/JSON ; charset=UTF-8",
      }),
    );
    expectError(answer, 404, "User not found with this email address.");
  });

  test("a declared Content-Length over the limit → 413", async () => {
    const request = post("/api/aml-authentication", "{}", {
      "content-type": "application/json",
      "content-length": "100000000",
    });
    expectError(await send(request), 413, "Request body too large.");
  });

  test("a big body without Content-Length (chunked stream) → 413, read only up to the limit", async () => {
    const before = await users();
    let pulled = 0;
    const chunk = new TextEncoder().encode(`"${"a".repeat(254)}",`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"platform":"CK","email":['));
      },
      pull(controller) {
        pulled += chunk.byteLength;
        // An endless body: the handler must stop reading on its own.
        controller.enqueue(chunk);
      },
    });
    const request = post("/api/aml-authentication", stream);
    expect(request.headers.get("content-length")).toBeNull();
    expectError(await send(request), 413, "Request body too large.");
    expect(pulled).toBeLessThan(1024 * 8);
    expect(await users()).toBe(before);
  });

  test("a big string body → 413", async () => {
    const big = JSON.stringify({ ...validBodies["/api/aml-authentication"], password: "x".repeat(2000) });
    expectError(await send(post("/api/aml-authentication", big)), 413, "Request body too large.");
  });

  test("a body exactly at the limit is read", async () => {
    const base = JSON.stringify({ ...validBodies["/api/aml-authorization"], password: "" });
    const filler = "p".repeat(1024 - base.length);
    const exact = JSON.stringify({ ...validBodies["/api/aml-authorization"], password: filler });
    expect(new TextEncoder().encode(exact).byteLength).toBe(1024);
    // 1024 chars of password is valid; the e-mail is unknown.
    expectError(
      await send(post("/api/aml-authorization", exact)),
      404,
      "User not found with this email address.",
    );
  });
});

describe("JSON", () => {
  test.each(["", "{", "{'a':1}", '{"platform":"CK",}', "undefined", "NaN", "\u00ef\u00bb\u00bf{}"])(
    "malformed %j → 400",
    async (text) => {
      expectError(await send(post("/api/aml-authentication", text)), 400, "Malformed JSON body.");
    },
  );

  test("invalid UTF-8 → 400 malformed", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
    expectError(await send(post("/api/aml-authentication", stream)), 400, "Malformed JSON body.");
  });

  test.each(["[]", '[{"platform":"CK"}]', "1", "-0.5", "null", "true", '"text"'])(
    "non-object %s → 400",
    async (text) => {
      expectError(
        await send(post("/api/aml-authentication", text)),
        400,
        "Request body must be a JSON object.",
      );
    },
  );
});

describe("platform", () => {
  test.each(ROUTES)("%s: missing platform → 400", async (route) => {
    const { platform: _omit, ...body } = validBodies[route];
    expectError(await send(postJson(route, body)), 400, "Missing or unknown platform.");
  });

  test.each([["XQ-SECRET-PLATFORM"], ["ck"], [""], [1], [null], [["CK"]], [{ CK: true }]])(
    "wrong platform %j → 400 without echoing it",
    async (platform) => {
      const before = await users();
      const answer = await send(
        postJson("/api/aml-authentication", { ...validBodies["/api/aml-authentication"], platform }),
      );
      expectError(answer, 400, "Missing or unknown platform.");
      if (typeof platform === "string" && platform.length > 2) expect(answer.text).not.toContain(platform);
      expect(await users()).toBe(before);
    },
  );
});

describe("schema validation", () => {
  const cases: [string, (typeof ROUTES)[number], Record<string, unknown>][] = [
    ["number email", "/api/aml-authentication", { email: 42 }],
    ["empty email", "/api/aml-authentication", { email: "" }],
    ["blank email", "/api/aml-authentication", { email: "   " }],
    ["not an email", "/api/aml-authentication", { email: "alice" }],
    ["email too long", "/api/aml-authentication", { email: `${"a".repeat(250)}@example.com` }],
    ["array password", "/api/aml-authentication", { password: ["pw"], passwordConfirmed: ["pw"] }],
    ["empty password", "/api/aml-authentication", { password: "", passwordConfirmed: "" }],
    ["null password", "/api/aml-authorization", { password: null }],
    ["missing password", "/api/aml-authorization", { password: undefined }],
    ["object twelveWords", "/api/check-if-logged-in", { twelveWords: { 0: "abandon" } }],
    ["number twelveWords", "/api/request-change-password", { twelveWords: 12 }],
    ["11 words", "/api/check-if-logged-in", { twelveWords: PHRASE.split(" ").slice(0, 11).join(" ") }],
    ["13 words", "/api/check-if-logged-in", { twelveWords: `${PHRASE} abandon` }],
    ["11-word list", "/api/request-change-password", { twelveWords: PHRASE.split(" ").slice(0, 11) }],
    ["13-word list", "/api/aml-client-change-password", { twelveWords: [...PHRASE.split(" "), "zoo"] }],
    [
      "list with a number",
      "/api/check-if-logged-in",
      { twelveWords: [...PHRASE.split(" ").slice(0, 11), 7] },
    ],
    ["digits in a word", "/api/check-if-logged-in", { twelveWords: PHRASE.replace("abandon", "aband0n") }],
    [
      "a 17-letter word",
      "/api/check-if-logged-in",
      { twelveWords: PHRASE.replace("abandon", "a".repeat(17)) },
    ],
    ["empty phrase", "/api/request-change-password", { twelveWords: "" }],
    [
      "non-ASCII letter",
      "/api/request-change-password",
      { twelveWords: PHRASE.replace("abandon", "abändon") },
    ],
    ["missing confirmPassword", "/api/aml-client-change-password", { confirmPassword: undefined }],
    ["missing messageId", "/api/aml-message-open-status", { messageId: undefined }],
    ["number messageId", "/api/aml-message-open-status", { messageId: 1 }],
    ["missing words on call 8", "/api/aml-message-open-status", { twelveWords: undefined }],
    ["number comment", "/api/request-message", { comment: 123456 }],
    ["missing comment", "/api/request-message", { comment: undefined }],
    ["null phone", "/api/request-message", { phone: null }],
    ["missing current_password", "/api/change-password", { current_password: undefined }],
    ["number confirm_password", "/api/change-password", { confirm_password: 1234 }],
  ];

  test.each(cases)("%s → 400 Invalid request.", async (_name, route, patch) => {
    const before = await users();
    const answer = await send(postJson(route, { ...validBodies[route], ...patch }));
    expectError(answer, 400, "Invalid request.");
    expect(await users()).toBe(before);
  });

  test("an empty-string email names the field in issues", async () => {
    const answer = await send(
      postJson("/api/aml-authentication", { ...validBodies["/api/aml-authentication"], email: "" }),
    );
    expectError(answer, 400, "Invalid request.");
    expect(answer.body.issues?.map((i) => i.path)).toEqual(["email"]);
  });

  // Record 004: unknown fields are ignored (issue 6), so each answer is the one the clean body gets.
  test.each([
    ["/api/aml-authentication", { admin: true, role: "operator" }],
    ["/api/aml-authorization", { remember: true }],
    ["/api/check-if-logged-in", { userId: "00000000-0000-4000-8000-000000000000" }],
    ["/api/request-transaction", { fee: "0", status: "Confirmed" }],
    ["/api/aml-message-open-status", { open_status: 0 }],
    ["/api/request-message", { kind: "contact", user_id: "00000000-0000-4000-8000-000000000000" }],
  ] as const)("unknown fields on %s are ignored", async (route, extra) => {
    const before = await users();
    // Mismatched passwords: call 1 answers after the schema and creates nobody.
    const clean =
      route === "/api/aml-authentication"
        ? { ...validBodies[route], passwordConfirmed: "other" }
        : validBodies[route];
    const plain = await send(postJson(route, clean));
    const extended = await send(postJson(route, { ...clean, ...extra }));
    expect(plain.body.message).not.toBe("Invalid request.");
    expect([extended.status, extended.body]).toEqual([plain.status, plain.body]);
    expect(await users()).toBe(before);
  });

  test("call 12: a contact body (no full_name) with a stray phone is still a contact message", async () => {
    const contact = { platform: PLATFORM, email: "edge@example.com", comment: "A contact message." };
    for (const phone of ["+123", 123, null, "not a phone"]) {
      const answer = await send(postJson("/api/request-message", { ...contact, phone }));
      expect([phone, answer.status, answer.body]).toEqual([
        phone,
        200,
        { success: true, message: "Message sent!" },
      ]);
    }
    // With full_name present it is a support message, and its phone is checked.
    expectError(
      await send(postJson("/api/request-message", { ...contact, full_name: "Edge Case", phone: 123 })),
      400,
      "Invalid request.",
    );
  });

  test('"__proto__", "constructor" and "prototype" keys are dropped and pollute nothing', async () => {
    const before = await users();
    const polluting =
      '"__proto__":{"x":1,"isAdmin":true},"constructor":{"prototype":{"isAdmin":true}},"prototype":{"x":1},';
    for (const route of ROUTES) {
      const clean =
        route === "/api/aml-authentication"
          ? { ...validBodies[route], passwordConfirmed: "other" }
          : validBodies[route];
      const plain = await send(postJson(route, clean));
      const answer = await send(post(route, JSON.stringify(clean).replace(/^\{/, `{${polluting}`)));
      expect([route, answer.status, answer.body]).toEqual([route, plain.status, plain.body]);
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("isAdmin");
    // Without the platform, the platform check answers first.
    expectError(
      await send(post("/api/aml-authentication", '{"__proto__":{"platform":"CK"}}')),
      400,
      "Missing or unknown platform.",
    );
    expect(await users()).toBe(before);
  });

  test("a password is never echoed in validation issues", async () => {
    const secret = "hunter2-super-secret";
    const answer = await send(
      postJson("/api/aml-authentication", {
        ...validBodies["/api/aml-authentication"],
        password: secret,
        passwordConfirmed: 42,
      }),
    );
    expectError(answer, 400, "Invalid request.");
    expect(answer.text).not.toContain(secret);
  });
});

describe("internal errors", () => {
  test("a broken database answers 500 with the generic message and logs no body", async () => {
    // A real driver whose server is unreachable: every query fails inside the handler.
    const pool = new pg.Pool({
      connectionString: "postgres://postgres@127.0.0.1:1/none",
      connectionTimeoutMillis: 2000,
    });
    pool.on("error", () => {});
    const brokenHandler = createTestHandler(drizzle({ client: pool, schema }));
    const secret = "do-not-log-this-password";
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      return true;
    }) as typeof process.stderr.write;
    let response: Response;
    try {
      response = await brokenHandler(
        postJson("/api/aml-authorization", {
          platform: PLATFORM,
          email: "someone@example.com",
          password: secret,
        }),
      );
    } finally {
      process.stderr.write = original;
      await pool.end();
    }
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      success: false,
      code: "internal",
      message: "Internal server error.",
    });
    const log = written.join("");
    expect(log).toContain("api internal error");
    expect(log).toContain("ECONNREFUSED");
    expect(log).not.toContain(secret);
    expect(log).not.toContain("someone@example.com");
  });
});

describe("property: arbitrary JSON never yields a 5xx", () => {
  const fieldValue = fc.oneof(
    fc.jsonValue(),
    fc.string(),
    fc.constantFrom("", " ", "a@b.co", PHRASE, PHRASE.split(" ").join("  ")),
    fc.array(fc.string(), { maxLength: 14 }),
  );
  const keys = fc.constantFrom(
    "platform",
    "email",
    "password",
    "passwordConfirmed",
    "confirmPassword",
    "twelveWords",
    "__proto__",
    "constructor",
    "toString",
    "x",
  );
  const body = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.dictionary(keys, fieldValue, { maxKeys: 7 }).map((d) => JSON.stringify({ platform: PLATFORM, ...d })),
    fc.string().map((s) => `{"platform":"CK",${s}`),
  );

  test.each(ROUTES)("%s", async (route) => {
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const response = await handler(post(route, text));
        expect(response.status).toBeGreaterThanOrEqual(200);
        expect(response.status).toBeLessThan(500);
        const parsed = (await response.json()) as { success: unknown; message: unknown };
        expect(typeof parsed.success).toBe("boolean");
        if (response.status >= 400) expect(typeof parsed.message).toBe("string");
      }),
      { numRuns: 150 },
    );
  });

  test("the property run wrote no account for an address it did not choose", async () => {
    // Random bodies may legitimately create a@b.co; nothing else is plausible.
    const rows = await opened.database.db.query.users.findMany({ columns: { email: true } });
    for (const row of rows) expect(row.email).toBe("a@b.co");
  });
});
