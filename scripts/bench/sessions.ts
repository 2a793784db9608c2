// Signed-in sessions for the simulated users.
//
// signInThroughForm: as a browser does it: GET /login (CSRF cookie and token,
// honeypot fields), POST the form, keep the session cookie of the redirect.
// Each sign-in costs the server two argon2id hashes (~25–50 ms of CPU each here),
// so thousands of them would take minutes.
//
// mintSessions: the rest of the capacity users' sessions are made by the web
// tier's own code (app/session.server.ts startUserSession, the very function
// sign-in calls once the backend has checked the password), writing to the
// same sessions table through the host's own store (server/host/web-sessions.ts)
// with the server's SESSION_SECRET. The rows and cookies are exactly what a
// sign-in produces; only the password check is skipped. The harness checks a
// sample of them against the running server before the load.
import { registerHooks } from "node:module";
import { RouterContextProvider } from "react-router";
import type { AppDb } from "../../server/backend/db/index.ts";
import { createSessionKV } from "../../server/host/web-sessions.ts";
import type { AppServices } from "../../app/context.ts";
import { formsIn } from "../html-forms.ts";

/** The `name=value` pairs of a response's Set-Cookie headers. */
function cookiePairs(headers: Headers): string[] {
  return headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
}

/** Signs in through the real login form; returns the Cookie header the browser then sends. */
export async function signInThroughForm(base: string, email: string, password: string): Promise<string> {
  const page = await fetch(`${base}/login`);
  const html = await page.text();
  const jar = new Map(cookiePairs(page.headers).map((pair) => [pair.split("=")[0] ?? "", pair]));
  const form = new URLSearchParams(formsIn(html)[0]?.fields);
  form.set("email", email);
  form.set("password", password);
  const answer = await fetch(`${base}/login`, {
    method: "POST",
    body: form,
    redirect: "manual",
    headers: {
      cookie: [...jar.values()].join("; "),
      "content-type": "application/x-www-form-urlencoded",
      origin: base,
      "sec-fetch-site": "same-origin",
    },
  });
  await answer.arrayBuffer();
  if (answer.status !== 302) throw new Error(`login as ${email} answered ${answer.status}`);
  for (const pair of cookiePairs(answer.headers)) jar.set(pair.split("=")[0] ?? "", pair);
  return [...jar.values()].filter((pair) => !pair.endsWith("=")).join("; ");
}

// The app's modules import each other without file extensions (Vite resolves
// them); Node needs them. Resolve an extensionless relative import under app/
// to its .ts file, for this process only.
let hooked = false;
function resolveAppImports(): void {
  if (hooked) return;
  hooked = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      try {
        return nextResolve(specifier, context);
      } catch (error) {
        const relative = specifier.startsWith("./") || specifier.startsWith("../");
        if (!relative || !context.parentURL?.includes("/app/") || /\.[cm]?[jt]sx?$/u.test(specifier)) {
          throw error;
        }
        return nextResolve(`${specifier}.ts`, context);
      }
    },
  });
}

export interface SessionUser {
  email: string;
  words: string[];
  userId: string;
}

export interface MintOptions {
  sessionSecret: string;
  /** As the server decides it: true with NODE_ENV=production. */
  cookieSecure: boolean;
  idleMs: number;
  maxMs: number;
}

/**
 * One fresh session per entry of `users` (the same account may appear many
 * times: each gets its own session), made by the app's own sign-in code.
 * Returns each session's Cookie header.
 */
export async function mintSessions(
  db: AppDb,
  opts: MintOptions,
  users: readonly SessionUser[],
  concurrency: number,
): Promise<string[]> {
  resolveAppImports();
  const { startUserSession } = await import("../../app/session.server.ts");
  const { servicesContext } = await import("../../app/context.ts");
  const services: AppServices = {
    config: {
      platform: "CK",
      sessionSecret: opts.sessionSecret,
      cookieSecure: opts.cookieSecure,
      supportEmail: "support@bench.example",
      companyName: "Bench",
      companyNumber: "00000000",
      legalEmail: "legal@bench.example",
      backendBaseUrl: "http://127.0.0.1:1/api",
      pricesBaseUrl: "http://127.0.0.1:1/api",
      appUrl: "http://127.0.0.1:1",
      buyCryptoUrl: "https://example.com/",
      fastLoginOrigins: [],
    },
    backend: undefined,
    prices: undefined,
    sessions: createSessionKV(db, { idleMs: opts.idleMs, maxMs: opts.maxMs }),
  };
  const cookies: string[] = Array.from({ length: users.length });
  let next = 0;
  async function worker() {
    while (next < users.length) {
      const index = next++;
      const user = users[index];
      if (!user) continue;
      const context = new RouterContextProvider();
      context.set(servicesContext, services);
      const headers = await startUserSession(new Request("http://127.0.0.1/login"), context, {
        email: user.email,
        words: user.words,
        userId: user.userId,
      });
      cookies[index] = cookiePairs(headers).join("; ");
    }
  }
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return cookies;
}
