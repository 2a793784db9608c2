// Every form the pages render, posted back with hostile values, over real HTTP
// against the host serving the production build: never a 5xx. The forms are
// read from the pages themselves (each <form method="post">, its named fields
// and each of its intent buttons), so a form added later is fuzzed too. Each
// field in turn gets a sample of the naughty strings, the rest keep the values
// the page gave them; the CSRF token and honeypot fields are tampered with too.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { NAUGHTY_STRINGS } from "./naughty-strings.ts";
import { cookiesOf, createAccount, raw } from "./support/http.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

interface PageForm {
  page: string;
  action: string;
  fields: [string, string][];
  /** The intent buttons' values ([] when the form has none). */
  intents: string[];
}

function decode(value: string): string {
  return value
    .replaceAll("&quot;", '"')
    .replaceAll("&#x27;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

function attr(tag: string, name: string): string | undefined {
  const found = new RegExp(`\\s${name}="([^"]*)"`, "u").exec(tag)?.[1];
  return found === undefined ? undefined : decode(found);
}

/** The post forms of a page, with their named fields as rendered. */
function formsOf(page: string, html: string): PageForm[] {
  const forms: PageForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gu)) {
    const open = `<form${match[1] ?? ""}>`;
    if ((attr(open, "method") ?? "get").toLowerCase() !== "post") continue;
    const body = match[2] ?? "";
    const fields: [string, string][] = [];
    for (const input of body.matchAll(/<input\b[^>]*>/gu)) {
      const name = attr(input[0], "name");
      if (!name) continue;
      const type = attr(input[0], "type") ?? "text";
      if ((type === "checkbox" || type === "radio") && !/\schecked/u.test(input[0])) continue;
      fields.push([name, attr(input[0], "value") ?? (type === "checkbox" ? "on" : "")]);
    }
    for (const area of body.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gu)) {
      const name = attr(`<t${area[1] ?? ""}>`, "name");
      if (name) fields.push([name, decode(area[2] ?? "")]);
    }
    const intents = [...body.matchAll(/<button\b[^>]*>/gu)]
      .filter((b) => attr(b[0], "name") === "intent")
      .map((b) => attr(b[0], "value") ?? "");
    const pathOnly = page.split("?")[0] ?? page;
    forms.push({ page, action: attr(open, "action") ?? pathOnly, fields, intents });
  }
  return forms;
}

const describeBuilt = built ? describe : describe.skip;

describeBuilt("web forms under hostile input (a host over the production build)", () => {
  let host: RunningHost;
  let session: string;

  beforeAll(async () => {
    host = await startHost();
    const account = await createAccount(host.port, "forms");
    const signedIn = await raw(host.port, {
      path: `/fast-login?email=${encodeURIComponent(account.email)}&password=${encodeURIComponent(account.password)}`,
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
