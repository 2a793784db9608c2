// Statements under attack (issue 28 item 2, record 050), over raw HTTP against
// the host serving the production build: another holder's rows (there is no
// parameter that names a holder: stray ones are ignored), header injection
// through what becomes the file name, huge and malformed ranges (answered on
// /history, never a 500, never a body), and a visitor. CSV injection through a
// chain transaction id is tested value by value in
// tests/backend/statements.test.ts and end to end in tests/e2e/statements.spec.ts.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";
import { createAccount, fastLoginPath, raw, rawCall, type RawAnswer } from "./support/http.ts";

const describeBuilt = built ? describe : describe.skip;

function sessionOf(answer: RawAnswer): string {
  for (const line of answer.headers["set-cookie"] ?? []) {
    const match = /^(?:__Host-)?ck_session=([^;]*)/u.exec(line);
    if (match?.[1]) return `ck_session=${match[1]}`;
  }
  throw new Error("no session cookie");
}

describeBuilt("statements under attack (a host over the production build)", () => {
  let host: RunningHost;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    host = await startHost();
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  const get = (path: string, cookie = "") => raw(host.port, { path, headers: cookie ? { cookie } : {} });

  async function signedIn(tag: string) {
    const account = await createAccount(host.port, tag);
    const answer = await get(fastLoginPath(account));
    expect(answer.headers.location).toBe("/home");
    return { ...account, cookie: sessionOf(answer) };
  }

  test("a visitor is sent to /login; nothing is read", async () => {
    const answer = await get(`/history/statement.csv?from=${today}&to=${today}`);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe("/login");
    expect(answer.text).not.toContain("Date (UTC)");
  });

  test("another holder's rows: the statement is always the signed-in holder's own, whatever the query says", async () => {
    const victim = await signedIn("victim");
    const attacker = await signedIn("attacker");
    const victimId = JSON.parse(
      (await rawCall(host.port, "/check-if-logged-in", { email: victim.email, twelveWords: victim.words }))
        .text,
    ) as { user: { userId: string } };
    const answer = await get(
      `/history/statement.csv?from=2020-01-01&to=${today}&email=${encodeURIComponent(victim.email)}&userId=${victimId.user.userId}&user=${victimId.user.userId}`,
      attacker.cookie,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/csv; charset=utf-8");
    // The header line only: the attacker has no transactions, and the victim's are never read.
    expect(answer.text.trim().split("\r\n")).toHaveLength(1);
    // Over the API the words decide: the attacker's e-mail with the victim's words is refused.
    const api = await rawCall(host.port, "/statement", {
      email: attacker.email,
      twelveWords: victim.words,
      from: "2020-01-01",
      to: today,
    });
    expect(api.status).toBe(401);
    expect(JSON.parse(api.text)).toMatchObject({ success: false, code: "invalid_credentials" });
  });

  test("header injection through the file name: only checked fields name the file", async () => {
    const holder = await signedIn("filename");
    for (const coin of [
      'ETH"\r\nSet-Cookie: pwned=1',
      "ETH%0d%0aX-Injected:%201",
      "../../etc/passwd",
      "ETH;.exe",
    ]) {
      const answer = await get(
        `/history/statement.csv?from=${today}&to=${today}&coin=${encodeURIComponent(coin)}`,
        holder.cookie,
      );
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toMatch(/^\/history\?.*statement=check#statement$/u);
      expect(answer.headers["content-disposition"]).toBeUndefined();
      expect(answer.headers["x-injected"]).toBeUndefined();
      // The fields go back to the form percent-encoded in the Location, never as raw text.
      expect(answer.headers.location).not.toMatch(/[\r\n"]/u);
      expect(JSON.stringify(answer.headers["set-cookie"] ?? [])).not.toContain("pwned");
    }
    const fine = await get(
      `/history/statement.csv?from=${today}&to=${today}&coin=eth&currency=gbp`,
      holder.cookie,
    );
    expect(fine.headers["content-disposition"]).toBe(
      `attachment; filename="coinkeep-statement-eth-${today}-to-${today}-gbp.csv"`,
    );
    expect(fine.headers["cache-control"]).toBe("no-store");
    const api = await rawCall(host.port, "/statement", {
      email: holder.email,
      twelveWords: holder.words,
      from: today,
      to: today,
      coin: 'BTC"\r\nX-Injected: 1',
    });
    expect(api.status).toBe(400);
    expect(api.headers["content-disposition"]).toBeUndefined();
    expect(JSON.parse(api.text)).toMatchObject({ code: "invalid_statement", issues: [{ path: "coin" }] });
  });

  test("huge, reversed and malformed ranges: the form's page with its message, never a 500", async () => {
    const holder = await signedIn("ranges");
    const cases: [string, string][] = [
      [
        `from=1900-01-01&to=${today}`,
        "A statement covers at most 10 years. Choose a later start or an earlier end.",
      ],
      [`from=${today}&to=9999-12-31`, "Choose today or an earlier day."],
      [`from=${today}&to=2020-01-01`, "The end must be on or after the start."],
      [`from=${"9".repeat(5000)}&to=${today}`, "Enter a date as YYYY-MM-DD, like 2026-01-31."],
      [`from[]=x&to=${today}`, "Enter a date as YYYY-MM-DD, like 2026-01-31."],
      [`from=${today}&to=${today}&currency=BTC`, "Choose USD, EUR, GBP or CAD."],
    ];
    for (const [query, message] of cases) {
      const answer = await get(`/history/statement.csv?${query}`, holder.cookie);
      expect(answer.status).toBe(303);
      const page = await get(answer.headers.location ?? "", holder.cookie);
      expect(page.status).toBe(200);
      expect(page.text).toContain(message);
      expect(page.text).toContain('aria-invalid="true"');
    }
  });
});
