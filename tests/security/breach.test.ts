// Record 035 over real HTTP, against the host serving the production build:
// pages go out gzip-compressed to browsers that take it, the CSRF token in
// them is masked afresh for every response (BREACH), a masked token still
// passes, a tampered one does not, and pages that may carry the 12-word
// phrase are never compressed.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { maskToken, unmaskToken } from "../../app/forms.server.ts";
import { cookiesOf, createAccount, raw } from "./support/http.ts";
import { formGuards, inputValue } from "../../scripts/html-forms.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

describe("the CSRF token's mask", () => {
  const token = "0rLJj1sC3Ql0VYkOqf3mJ2vTaGgbM9QnE7L_m3TqFYo.Wq6xA1n2yqTgkqv5x0Zr8l2pJ4nC_d8vEoPzS1uHq1c";

  test("masks differently every time and unmasks to the token", () => {
    const masked = new Set(Array.from({ length: 50 }, () => maskToken(token)));
    expect(masked.size).toBe(50);
    for (const value of masked) {
      expect(value).toMatch(/^m\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/u);
      expect(value).not.toContain(token.slice(0, 8));
      expect(unmaskToken(value)).toBe(token);
    }
  });

  test("an unmasked token passes through; a malformed or tampered mask gives no token", () => {
    expect(unmaskToken(token)).toBe(token);
    const masked = maskToken(token);
    const [, pad, xored] = masked.split(".");
    expect(unmaskToken(`m.${pad}`)).toBe("");
    expect(unmaskToken(`m.${pad}.${xored}.x`)).toBe("");
    expect(unmaskToken(`m.${pad}.${xored!.slice(4)}`)).toBe("");
    expect(unmaskToken("m..")).toBe("");
    const flipped = `m.${pad}.${xored!.startsWith("A") ? "B" : "A"}${xored!.slice(1)}`;
    expect(unmaskToken(flipped)).not.toBe(token);
  });
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: "127.0.0.1", port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const describeBuilt = built ? describe : describe.skip;

describeBuilt("compressed pages and masked tokens (a host over the production build)", () => {
  let host: RunningHost;

  beforeAll(async () => {
    host = await startHost();
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  test("a browser that takes gzip gets the page gzip-compressed, and Vary says why", async () => {
    const zipped = await get(host.port, "/login", { "accept-encoding": "gzip, deflate, br" });
    expect(zipped.status).toBe(200);
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(String(zipped.headers.vary)).toMatch(/Accept-Encoding/iu);
    const html = gunzipSync(zipped.body).toString("utf8");
    expect(html).toContain("<h1");
    expect(html).toContain("Log in");
    expect(zipped.body.length).toBeLessThan(html.length / 2);

    const plain = await get(host.port, "/login");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString("utf8")).toContain("Log in");
    const refused = await get(host.port, "/login", { "accept-encoding": "gzip;q=0, identity" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
  });

  test("the same cookie's token is masked differently in every page, in the form and in the page's data", async () => {
    const first = await raw(host.port, { path: "/login" });
    const cookie = cookiesOf(first);
    expect(cookie).toContain("ck_csrf=");
    const tokens = [inputValue(first.text, "csrf")];
    for (let i = 0; i < 3; i++)
      tokens.push(inputValue((await raw(host.port, { path: "/login", headers: { cookie } })).text, "csrf"));
    expect(new Set(tokens).size).toBe(4);
    const unmasked = new Set(tokens.map(unmaskToken));
    expect(unmasked.size).toBe(1);
    const [token] = [...unmasked];
    // The token itself appears nowhere in the page: not in the form, not in the hydration data.
    const page = await raw(host.port, { path: "/login", headers: { cookie } });
    expect(page.text).not.toContain(token!);
    expect(page.text).not.toContain(token!.split(".")[1]!);
  });

  test("a form posted with its masked token is accepted; with a tampered one, refused", async () => {
    const account = await createAccount(host.port, "breach");
    const page = await raw(host.port, { path: "/login" });
    const cookie = cookiesOf(page);
    const form = (csrf: string) =>
      new URLSearchParams({
        ...formGuards(page.text),
        csrf,
        email: account.email,
        password: account.password,
      }).toString();
    const post = (csrf: string) =>
      raw(host.port, {
        method: "POST",
        path: "/login",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie,
          origin: `http://127.0.0.1:${host.port}`,
        },
        body: form(csrf),
      });
    const masked = inputValue(page.text, "csrf");
    const [, pad, xored] = masked.split(".");
    const tampered = `m.${pad}.${xored!.startsWith("A") ? "B" : "A"}${xored!.slice(1)}`;
    const refused = await post(tampered);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("This form has expired. Go back, reload the page and try again.");
    const accepted = await post(masked);
    expect(accepted.status).toBe(302);
    expect(accepted.headers.location).toBe("/home");
  });

  test("pages that may carry the 12-word phrase are never compressed", async () => {
    for (const path of ["/create-wallet", "/restore-wallet"]) {
      const answer = await get(host.port, path, { "accept-encoding": "gzip" });
      expect([path, answer.status]).toEqual([path, 200]);
      expect([path, answer.headers["content-encoding"]]).toEqual([path, undefined]);
    }
  });
});
