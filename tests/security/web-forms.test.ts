// Every form the pages render, posted back with hostile values, over real HTTP
// against the host serving the production build: never a 5xx. The forms are
// read from the pages themselves (each <form method="post">, its named fields
// and each of its intent buttons), so a form added later is fuzzed too. Each
// field in turn gets a sample of the naughty strings, the rest keep the values
// the page gave them; the CSRF token and honeypot fields are tampered with too.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { formsIn, type HtmlForm } from "../../scripts/html-forms.ts";
import { NAUGHTY_STRINGS } from "./naughty-strings.ts";
import { cookiesOf, createAccount, raw, fastLoginPath } from "./support/http.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

/** A post form of a page, with the page it is on and where it posts. */
interface PageForm extends HtmlForm {
  page: string;
  action: string;
}

/** The post forms of a page, with their named fields as rendered. */
function formsOf(page: string, html: string): PageForm[] {
  const pathOnly = page.split("?")[0] ?? page;
  return formsIn(html)
    .filter((form) => form.method === "post")
    .map((form) => ({ ...form, page, action: form.action ?? pathOnly }));
}

const describeBuilt = built ? describe : describe.skip;

describeBuilt("web forms under hostile input (a host over the production build)", () => {
  let host: RunningHost;
  let session: string;

  beforeAll(async () => {
    host = await startHost();
    const account = await createAccount(host.port, "forms");
    const signedIn = await raw(host.port, {
      path: fastLoginPath(account),
    });
    session = cookiesOf(signedIn);
    if (signedIn.headers.location !== "/home") throw new Error("fast login failed");
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  /** A page's forms, with the cookies its CSRF token goes with. */
  async function load(page: string, cookie: string) {
    const answer = await raw(host.port, { path: page, headers: cookie ? { cookie } : {} });
    expect([page, answer.status]).toEqual([page, 200]);
    const fresh = cookiesOf(answer);
    return { cookie: [cookie, fresh].filter(Boolean).join("; "), forms: formsOf(page, answer.text) };
  }

  async function post(form: PageForm, cookie: string, fields: [string, string][]) {
    const answer = await raw(host.port, {
      method: "POST",
      path: form.action,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: `http://127.0.0.1:${host.port}`,
        cookie,
      },
      body: new URLSearchParams(fields).toString(),
    });
    return answer.status;
  }

  const PAGES: { page: string; signedIn: boolean }[] = [
    { page: "/login", signedIn: false },
    { page: "/create-wallet", signedIn: false },
    { page: "/restore-wallet", signedIn: false },
    { page: "/about-us?modal=contact&step=2", signedIn: false },
    { page: "/home", signedIn: true },
    { page: "/home?modal=support", signedIn: true },
    { page: "/wallet/eth?send", signedIn: true },
    { page: "/wallet/btc", signedIn: true },
    { page: "/security", signedIn: true },
    { page: "/history?modal=support", signedIn: true },
    { page: "/notifications", signedIn: true },
    // Last: its forms check the password, and many wrong ones in a row lock the account (record 013).
    { page: "/security/addresses", signedIn: true },
  ];

  test.each(PAGES)(
    "$page: every field of every form, hostile values → never a 5xx",
    async ({ page, signedIn }) => {
      const { cookie, forms } = await load(page, signedIn ? session : "");
      // Exit would end the session the later pages use.
      const fuzzed = forms.filter((f) => f.action !== "/logout");
      expect(fuzzed.length).toBeGreaterThan(0);
      const samples = fc.sample(fc.constantFrom(...NAUGHTY_STRINGS), { numRuns: 8, seed: 20261122 });
      const statuses = new Map<number, number>();
      for (const form of fuzzed) {
        for (const intent of form.intents.length > 0 ? form.intents : [null]) {
          const base: [string, string][] =
            intent === null ? form.fields : [...form.fields, ["intent", intent]];
          for (const [name] of base) {
            for (const value of [...samples, "", "\u0000", "x".repeat(70_000)]) {
              const fields = base.map(([k, v]): [string, string] => [k, k === name ? value : v]);
              const status = await post(form, cookie, fields);
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              expect([page, form.action, intent, name, value.slice(0, 40), status < 500]).toEqual([
                page,
                form.action,
                intent,
                name,
                value.slice(0, 40),
                true,
              ]);
            }
          }
        }
      }
      // Something was refused, so the values did reach the checks.
      expect([...statuses.keys()].some((s) => s >= 400 && s < 500)).toBe(true);
    },
    240_000,
  );
});
