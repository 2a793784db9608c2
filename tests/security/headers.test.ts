// Record 014 over real HTTP, against the host serving the production build:
// the headers of every kind of response, the CSP nonce, cross-site posts,
// the web tier's body limit, and TRUST_PROXY's reading of X-Forwarded-*.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { clientOf, createProxyTrust, type TrustEntry } from "../../server/host/edge.ts";
import { loadConfig, parseTrustProxy } from "../../server/config.ts";
import {
  cookiesOf,
  createAccount,
  raw,
  type RawAnswer,
  rawBytes,
  fastLoginPath,
  rawCall,
} from "./support/http.ts";
import { formGuards } from "../../scripts/html-forms.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

/** The policy after default-src and script-src, written out here rather than taken from server/host/edge.ts. */
const CSP_REST =
  "style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'";

/** An answer's status, the headers every answer carries, and its cache-control when one is named. */
function expectAnswer(answer: RawAnswer, status: number, what: string, cacheControl?: string) {
  expect(answer.status).toBe(status);
  expectSecurityHeaders(answer, what);
  if (cacheControl !== undefined) expect(answer.headers["cache-control"]).toBe(cacheControl);
}

/** The nonce of the answer's CSP, after checking the whole policy. */
function cspNonce(answer: RawAnswer): string {
  const csp = answer.headers["content-security-policy"];
  expect(csp).toBeTypeOf("string");
  const match = /^default-src 'self'; script-src 'self' 'nonce-([A-Za-z0-9+/]{22}==)'; (.*)$/u.exec(
    String(csp),
  );
  if (!match) throw new Error(`unexpected CSP: ${String(csp)}`);
  expect(match[2]).toBe(CSP_REST);
  expect(String(csp)).not.toContain("unsafe-inline");
  return match[1] ?? "";
}

/** A page: 200, all headers and no-store, and each script tag carries the CSP's nonce; its script tags. */
function expectPage(page: RawAnswer, name: string): string[] {
  expectAnswer(page, 200, name, "no-store");
  const nonce = cspNonce(page);
  const scripts = page.text.match(/<script\b[^>]*>/gu) ?? [];
  for (const tag of scripts) expect(tag).toContain(` nonce="${nonce}"`);
  return scripts;
}

function expectSecurityHeaders(answer: RawAnswer, what: string) {
  const h = answer.headers;
  cspNonce(answer);
  expect([what, h["x-content-type-options"]]).toEqual([what, "nosniff"]);
  expect([what, h["x-frame-options"]]).toEqual([what, "DENY"]);
  expect([what, h["cross-origin-opener-policy"]]).toEqual([what, "same-origin"]);
  expect([what, h["cross-origin-resource-policy"]]).toEqual([what, "same-origin"]);
  expect([what, h["x-powered-by"]]).toEqual([what, undefined]);
  // Not production, not HTTPS: no HSTS.
  expect([what, h["strict-transport-security"]]).toEqual([what, undefined]);
}

const describeBuilt = built ? describe : describe.skip;

describeBuilt("headers on every response (a host over the production build)", () => {
  let host: RunningHost;
  let account: { email: string; password: string };
  let session: string;

  beforeAll(async () => {
    host = await startHost();
    account = await createAccount(host.port, "headers");
    const signedIn = await raw(host.port, {
      path: fastLoginPath(account),
    });
    session = cookiesOf(signedIn);
    if (signedIn.headers.location !== "/home" || !session.includes("ck_session")) {
      throw new Error(`fast login failed: ${signedIn.status} ${signedIn.headers.location}`);
    }
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  const ours = () => `http://127.0.0.1:${host.port}`;

  async function loginForm() {
    const page = await raw(host.port, { path: "/login" });
    const form = new URLSearchParams({
      ...formGuards(page.text),
      email: account.email,
      password: account.password,
    });
    return { cookie: cookiesOf(page), body: form.toString() };
  }

  const formPost = (cookie: string, body: string, headers: Record<string, string>) =>
    raw(host.port, {
      method: "POST",
      path: "/login",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
      body,
    });

  const apiCall = (headers: Record<string, string>) =>
    rawCall(
      host.port,
      "/aml-authorization",
      { email: account.email, password: account.password },
      { headers },
    );

  test("a public page: all headers, no-store, and its scripts carry the header's nonce", async () => {
    const page = await raw(host.port, { path: "/login" });
    const scripts = expectPage(page, "/login");
    expect(page.headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    expect(scripts.length).toBeGreaterThan(0);
    // Nothing a style-src 'self' policy would block: no <style>, no style="".
    expect(page.text).not.toMatch(/<style\b/u);
    expect(page.text).not.toMatch(/\sstyle="/u);
    // The honeypot is still there, hidden by the stylesheet.
    expect(page.text).toContain('class="honeypot"');
  });

  test("the nonce differs on every request", async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) nonces.add(cspNonce(await raw(host.port, { path: "/" })));
    expect(nonces.size).toBe(5);
  });

  test("a protected page (signed in): all headers and no-store", async () => {
    const page = await raw(host.port, { path: "/home", headers: { cookie: session } });
    expectPage(page, "/home");
    expect(page.text).not.toMatch(/<style\b|\sstyle="/u);
  });

  test("a redirect (protected page, signed out)", async () => {
    const answer = await raw(host.port, { path: "/home" });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe("/");
    expectSecurityHeaders(answer, "redirect");
    expect(answer.headers["cache-control"]).toBe("no-store");
  });

  test("fast login keeps no-referrer", async () => {
    const answer = await raw(host.port, { path: "/fast-login?email=a%40b.co&password=x" });
    expectAnswer(answer, 302, "fast-login");
    expect(answer.headers["referrer-policy"]).toBe("no-referrer");
    expect(answer.headers["cache-control"]).toBe("no-store");
  });

  test("an unknown page (redirected to /, spec), a 404 file and an API 404", async () => {
    const page = await raw(host.port, { path: "/no-such-page" });
    expect([page.status, page.headers.location]).toEqual([302, "/"]);
    expectSecurityHeaders(page, "unknown page");
    expect(page.headers["cache-control"]).toBe("no-store");
    const file = await raw(host.port, { path: "/favicon.ico" });
    expectAnswer(file, 404, "404 file");
    const api = await raw(host.port, { path: "/api/nope", method: "POST" });
    expectAnswer(api, 404, "API 404", "no-store");
  });

  test("a hashed asset: immutable; a public file: cacheable; both with the headers", async () => {
    const page = await raw(host.port, { path: "/login" });
    const asset = /<script[^>]*src="(\/assets\/[^"]+\.js)"|href="(\/assets\/[^"]+\.(?:js|css))"/u.exec(
      page.text,
    );
    const assetPath = asset?.[1] ?? asset?.[2];
    expect(assetPath).toBeDefined();
    const answer = await raw(host.port, { path: assetPath ?? "" });
    expectAnswer(answer, 200, "asset", "public, max-age=31536000, immutable");
    const icon = await raw(host.port, { path: "/favicon.svg" });
    expectAnswer(icon, 200, "favicon");
  });

  test("the API: no-store on every answer; the public price routes stay cacheable", async () => {
    const answer = await rawCall(host.port, "/aml-authorization", {
      email: account.email,
      password: account.password,
    });
    expectAnswer(answer, 200, "API", "no-store");
    const rates = await raw(host.port, { path: "/api/currencies" });
    expectAnswer(rates, 200, "rates", "public, max-age=30");
  });

  describe("cross-site requests are refused before any handler", () => {
    test.each([
      ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
      ["cross-site without an Origin", { "sec-fetch-site": "cross-site" }],
      ["same-site, another origin", { "sec-fetch-site": "same-site", origin: "http://evil.127.0.0.1" }],
      ["a foreign Origin, no Sec-Fetch-Site", { origin: "https://evil.example" }],
      ["Origin: null, no Sec-Fetch-Site", { origin: "null" }],
      ["our host over https (another origin)", { origin: "https://127.0.0.1" }],
    ])("a form post (%s) → 403, nothing signed in", async (_name, headers) => {
      const { cookie, body } = await loginForm();
      const answer = await formPost(cookie, body, headers);
      expect(answer.status).toBe(403);
      expect(answer.text).toBe("Cross-site request refused.\n");
      expect(answer.headers["set-cookie"]).toBeUndefined();
      expectSecurityHeaders(answer, "403");
    });

    test.each([
      ["same-origin", { "sec-fetch-site": "same-origin", origin: "OURS" }],
      ["Origin only", { origin: "OURS" }],
      ["neither (curl, an old browser)", {}],
    ])("a form post from our own page (%s) goes through", async (_name, headers) => {
      const { cookie, body } = await loginForm();
      const resolved = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, v === "OURS" ? ours() : v]),
      );
      const answer = await formPost(cookie, body, resolved);
      expect([answer.status, answer.headers.location]).toEqual([302, "/home"]);
    });

    test("the honeypot: a bot that fills it, or leaves it out, is refused before the password is checked", async () => {
      for (const [i, tamper] of [
        (form: URLSearchParams) => form.set("ck_name__confirm", "Bot McBotface"),
        (form: URLSearchParams) => form.delete("ck_name__confirm"),
        (form: URLSearchParams) => form.set("ck_from__confirm", "not-the-encrypted-timestamp"),
      ].entries()) {
        const { cookie, body } = await loginForm();
        const form = new URLSearchParams(body);
        tamper(form);
        const answer = await formPost(cookie, form.toString(), { origin: ours() });
        expect([i, answer.status]).toEqual([i, 400]);
        expect(answer.text).toContain("<h1>Error 400</h1><p>The form could not be accepted.</p>");
        expect(answer.headers.location).toBeUndefined();
      }
      // The same form untouched signs in.
      const { cookie, body } = await loginForm();
      expect((await formPost(cookie, body, { origin: ours() })).headers.location).toBe("/home");
    });

    test("without its CSRF token a same-origin form post is still refused (the token guards the rest)", async () => {
      const { cookie } = await loginForm();
      const answer = await formPost(cookie, `email=${encodeURIComponent(account.email)}&password=x`, {
        origin: ours(),
      });
      expect(answer.status).toBe(403);
      expect(answer.text).not.toBe("Cross-site request refused.\n");
    });

    test.each([
      ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
      ["a foreign Origin", { origin: "https://evil.example" }],
      ["same-site, another origin", { "sec-fetch-site": "same-site", origin: "http://a.127.0.0.1" }],
    ])("an API call (%s) → 403 in the API's JSON shape", async (_name, headers) => {
      const answer = await apiCall(headers);
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.text)).toEqual({
        success: false,
        code: "cross_site",
        message: "Cross-site request refused.",
      });
      expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    });

    test("API calls without Origin (our web tier, scripts) and same-origin ones are answered", async () => {
      expect((await apiCall({})).status).toBe(200);
      expect((await apiCall({ origin: ours(), "sec-fetch-site": "same-origin" })).status).toBe(200);
    });

    test("a cross-site GET (a link) is not refused", async () => {
      const answer = await raw(host.port, {
        path: "/login",
        headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
      });
      expect(answer.status).toBe(200);
    });
  });

  describe("the web tier's body limit", () => {
    test("a form post declaring more than 64 KiB → 413 before its body is read", async () => {
      // Headers and 10 bytes of a 10 MB body: the answer comes without the rest.
      const answer = await rawBytes(
        host.port,
        "POST /contact HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\n" +
          "comment=xx",
      );
      expect(answer).toMatch(/^HTTP\/1\.1 413 /u);
      expect(answer).toMatch(/content-security-policy: default-src 'self'/iu);
      expect(answer).toContain("Request body too large.");
    });

    test("a chunked form post (no Content-Length) → 411", async () => {
      const answer = await rawBytes(
        host.port,
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
          "Transfer-Encoding: chunked\r\n\r\n5\r\nemail\r\n",
      );
      expect(answer).toMatch(/^HTTP\/1\.1 411 /u);
    });

    test("a form post under the limit is read (refused by its CSRF check, not by size)", async () => {
      const answer = await raw(host.port, {
        method: "POST",
        path: "/contact",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `comment=${"x".repeat(60_000)}`,
      });
      expect(answer.status).toBe(403);
      expect(answer.text).not.toContain("Request body too large.");
    });

    test("the API keeps its own limit (16 KiB, JSON 413)", async () => {
      const answer = await rawCall(host.port, "/request-message", {
        email: "a@b.co",
        comment: "x".repeat(20_000),
      });
      expect([answer.status, JSON.parse(answer.text)]).toEqual([
        413,
        { success: false, code: "body_too_large", message: "Request body too large." },
      ]);
    });
  });

  describe("forwarded headers without TRUST_PROXY (the default) are not believed", () => {
    test("X-Forwarded-Proto: https from a direct client: no HSTS", async () => {
      const answer = await raw(host.port, { path: "/", headers: { "x-forwarded-proto": "https" } });
      expect(answer.headers["strict-transport-security"]).toBeUndefined();
    });
  });
});

describeBuilt("HSTS", () => {
  test("in production, and over HTTPS through a trusted proxy; never from an untrusted peer", async () => {
    const production = await startHost({ env: { NODE_ENV: "production", COOKIE_SECURE: "false" } });
    try {
      for (const path of ["/", "/login", "/api/nope", "/favicon.svg", "/home"]) {
        const answer = await raw(production.port, { path });
        expect([path, answer.headers["strict-transport-security"]]).toEqual([
          path,
          "max-age=63072000; includeSubDomains",
        ]);
      }
    } finally {
      await production.close();
    }
    const proxied = await startHost({ env: { TRUST_PROXY: "127.0.0.2" } });
    try {
      const viaProxy = await raw(proxied.port, {
        path: "/",
        localAddress: "127.0.0.2",
        headers: { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7" },
      });
      expect(viaProxy.headers["strict-transport-security"]).toBe("max-age=63072000; includeSubDomains");
      const direct = await raw(proxied.port, {
        path: "/",
        localAddress: "127.0.0.3",
        headers: { "x-forwarded-proto": "https" },
      });
      expect(direct.headers["strict-transport-security"]).toBeUndefined();
      const plain = await raw(proxied.port, { path: "/", localAddress: "127.0.0.2" });
      expect(plain.headers["strict-transport-security"]).toBeUndefined();
    } finally {
      await proxied.close();
    }
  }, 180_000);
});

const entries = (value: string): TrustEntry[] => {
  const parsed = parseTrustProxy(value);
  if (typeof parsed === "string") throw new Error(parsed);
  return parsed;
};
describe("TRUST_PROXY", () => {
  test("parses off, loopback, addresses and CIDR blocks; refuses the rest by name", () => {
    expect(entries("off")).toEqual([]);
    expect(entries("")).toEqual([]);
    expect(entries("loopback")).toEqual([{ kind: "loopback" }]);
    expect(entries(" 10.0.0.0/8 , 192.0.2.1,fd00::/8, loopback")).toHaveLength(4);
    for (const bad of [
      "yes",
      "10.0.0.0/33",
      "10.0.0.0/8/1",
      "fd00::/129",
      "10.0.0.0/",
      "example.com",
      "off,10.0.0.1",
    ]) {
      expect([bad, typeof parseTrustProxy(bad)]).toEqual([bad, "string"]);
    }
    expect(
      loadConfig({
        DATA_DIR: "/tmp/ck-unused",
        SESSION_SECRET: "s".repeat(32),
        BACKEND_SECRET: "b".repeat(32),
      }).trustProxy,
    ).toEqual([]);
    expect(() =>
      loadConfig({ TRUST_PROXY: "everyone", SESSION_SECRET: "s".repeat(32), BACKEND_SECRET: "b".repeat(32) }),
    ).toThrow(/TRUST_PROXY: "everyone" is not/u);
  });

  test("the client is the right-most untrusted address; the left part is the client's own text", () => {
    const trust = createProxyTrust(entries("loopback,10.0.0.0/8"));
    expect(clientOf("127.0.0.1", "203.0.113.7", trust)).toBe("203.0.113.7");
    // A spoofed entry left of what our proxy appended is never reached.
    expect(clientOf("127.0.0.1", "6.6.6.6, 203.0.113.7", trust)).toBe("203.0.113.7");
    // Our own hops are skipped.
    expect(clientOf("127.0.0.1", "6.6.6.6, 203.0.113.7, 10.1.2.3", trust)).toBe("203.0.113.7");
    // Garbage stops the walk at the last hop believed.
    expect(clientOf("127.0.0.1", "6.6.6.6, not-an-ip, 10.1.2.3", trust)).toBe("10.1.2.3");
    expect(clientOf("127.0.0.1", "::ffff:203.0.113.9", trust)).toBe("203.0.113.9");
    // An untrusted peer's header is ignored.
    expect(clientOf("198.51.100.4", "203.0.113.7", trust)).toBe("198.51.100.4");
    expect(clientOf("127.0.0.1", "203.0.113.7", createProxyTrust([]))).toBe("127.0.0.1");
  });
});
