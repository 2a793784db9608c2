// The typed client's own behaviour: what it sends, and how it classifies
// answers and failures. Its fetch is an injection point by design, so these
// tests hand it small handlers and real sockets instead of the API.
import { describe, expect, test } from "vitest";
import { createHttpClient, type BackendResult } from "../../app/backend.server.ts";
import { serveEach } from "../support/serve.ts";

const PASSWORD = "p4ssw0rd-that-must-not-leak";
const WORDS = "legal winner thank year wave sausage worth useful legal winner thank yellow".split(" ");

function clientWith(fetch: (request: Request) => Promise<Response>, timeoutMs?: number) {
  return createHttpClient({ baseUrl: "http://backend.test/api/", platform: "CK", fetch, timeoutMs });
}

const jsonResponse = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function expectNoSecrets(result: BackendResult<unknown>) {
  const text = JSON.stringify(result);
  expect(text).not.toContain(PASSWORD);
  for (const word of ["sausage", "yellow"]) expect(text).not.toContain(word);
}

describe("requests", () => {
  test("POST JSON to the route, with the platform added and the words space-joined", async () => {
    const seen: { url: string; method: string; type: string | null; body: unknown }[] = [];
    const client = clientWith(async (request) => {
      seen.push({
        url: request.url,
        method: request.method,
        type: request.headers.get("content-type"),
        body: await request.json(),
      });
      return jsonResponse(200, { success: true, message: "Password changed." });
    });
    const result = await client.changePassword({
      email: "a@example.com",
      twelveWords: WORDS,
      password: PASSWORD,
      confirmPassword: PASSWORD,
    });
    expect(result).toEqual({ ok: true, data: { success: true, message: "Password changed." } });
    expect(seen).toEqual([
      {
        url: "http://backend.test/api/aml-client-change-password",
        method: "POST",
        type: "application/json",
        body: {
          platform: "CK",
          email: "a@example.com",
          twelveWords: WORDS.join(" "),
          password: PASSWORD,
          confirmPassword: PASSWORD,
        },
      },
    ]);
  });

  test("each method hits its route", async () => {
    const paths: string[] = [];
    const client = clientWith(async (request) => {
      paths.push(new URL(request.url).pathname);
      return jsonResponse(404, { success: false, message: "x" });
    });
    await client.createAccount({ email: "a@b.co", password: "p", passwordConfirmed: "p" });
    await client.login({ email: "a@b.co", password: "p" });
    await client.checkLoggedIn({ email: "a@b.co", twelveWords: WORDS });
    await client.checkPhrase({ email: "a@b.co", twelveWords: WORDS });
    await client.changePassword({ email: "a@b.co", twelveWords: WORDS, password: "p", confirmPassword: "p" });
    await client.clientBalances({ email: "a@b.co", twelveWords: WORDS });
    await client.requestWallet({ email: "a@b.co", twelveWords: WORDS, requestText: "ETH" });
    await client.requestTransaction({
      email: "a@b.co",
      twelveWords: WORDS,
      walletId: "w",
      amount: "1",
      amountInUsd: "1",
      receiverWalletAddress: "x",
    });
    await client.newMessagesCount({ email: "a@b.co", twelvewords: WORDS });
    await client.openMessage({ email: "a@b.co", twelveWords: WORDS, messageId: "m" });
    await client.requestMessage({ kind: "contact", email: "a@b.co", comment: "hello there" });
    expect(paths).toEqual([
      "/api/aml-authentication",
      "/api/aml-authorization",
      "/api/check-if-logged-in",
      "/api/request-change-password",
      "/api/aml-client-change-password",
      "/api/aml-client-balances",
      "/api/request-nonbtc-wallet",
      "/api/request-transaction",
      "/api/aml-new-messages-count",
      "/api/aml-message-open-status",
      "/api/request-message",
    ]);
  });
});

describe("answers", () => {
  test("a 4xx JSON answer passes the server's code and message through unchanged", async () => {
    const client = clientWith(async () =>
      jsonResponse(401, { success: false, code: "wrong_password", message: "Password is inccorect" }),
    );
    expect(await client.login({ email: "a@b.co", password: PASSWORD })).toEqual({
      ok: false,
      kind: "rejected",
      code: "wrong_password",
      status: 401,
      message: "Password is inccorect",
    });
  });

  test.each([
    [
      "a 5xx",
      () => jsonResponse(500, { success: false, code: "internal", message: "Internal server error." }),
    ],
    ["a 502 HTML page", () => new Response("<html>bad gateway</html>", { status: 502 })],
    ["a non-JSON 200", () => new Response("ok", { status: 200 })],
    ["a non-JSON 400", () => new Response("nope", { status: 400 })],
    ["a 4xx without a message", () => jsonResponse(404, { error: "gone" })],
    ["a 4xx without a code", () => jsonResponse(401, { success: false, message: "Password is inccorect" })],
    [
      "a 4xx with a code the contract lacks",
      () => jsonResponse(401, { success: false, code: "nope", message: "x" }),
    ],
    ["a 200 of the wrong shape", () => jsonResponse(200, { success: true, user: { email: 1 } })],
    ["a 200 that says failure", () => jsonResponse(200, { success: false, message: "no" })],
    ["a redirect", () => new Response(null, { status: 302, headers: { location: "/" } })],
  ])("%s is a network failure", async (_name, answer) => {
    const client = clientWith(async () => answer());
    const result = await client.login({ email: "a@b.co", password: PASSWORD });
    expect(result).toMatchObject({ ok: false, kind: "network" });
    expectNoSecrets(result);
  });

  test("a fetch that throws (even with secrets in its error) is a network failure without them", async () => {
    const client = clientWith(async (request) => {
      throw new TypeError(`fetch failed for ${await request.text()}`);
    });
    const result = await client.changePassword({
      email: "a@b.co",
      twelveWords: WORDS,
      password: PASSWORD,
      confirmPassword: PASSWORD,
    });
    expect(result).toMatchObject({ ok: false, kind: "network" });
    expectNoSecrets(result);
  });

  test("an in-process handler that never answers times out", async () => {
    const client = clientWith(() => new Promise<Response>(() => {}), 50);
    const started = performance.now();
    const result = await client.login({ email: "a@b.co", password: PASSWORD });
    expect(result).toEqual({ ok: false, kind: "network", message: "The backend did not answer in time." });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("over real sockets", () => {
  const serveOnce = serveEach();

  test("a refused connection is a network failure", async () => {
    const client = createHttpClient({ baseUrl: "http://127.0.0.1:1/api", platform: "CK" });
    const result = await client.login({ email: "a@b.co", password: PASSWORD });
    expect(result).toMatchObject({ ok: false, kind: "network" });
    expectNoSecrets(result);
  });

  test("a server that never answers times out", async () => {
    const { port } = await serveOnce(() => {
      /* never responds */
    });
    const client = createHttpClient({
      baseUrl: `http://127.0.0.1:${port}/api`,
      platform: "CK",
      timeoutMs: 100,
    });
    expect(await client.login({ email: "a@b.co", password: PASSWORD })).toEqual({
      ok: false,
      kind: "network",
      message: "The backend did not answer in time.",
    });
  });
});
