// A staff member made and enrolled over plain HTTP, as a person with an
// authenticator app would (issue 26): the operator command prints the link,
// the enrolment page shows the secret, a code is computed from it. Used by
// the security tests and the end-to-end fixtures.
import { Secret, TOTP } from "otpauth";
import { inputValue } from "../../scripts/html-forms.ts";

/** The code an authenticator shows for `secret` (base32, spaces allowed) at `at`. */
export function totpCode(secret: string, at: number = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret.replace(/\s/gu, "")), digits: 6, period: 30 }).generate({
    timestamp: at,
  });
}

/** The TOTP time step of a moment. */
const step = (t: number) => Math.floor(t / 30_000);

/** A tiny cookie jar for fetch with manual redirects. */
export class Jar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      if (value === "" || /max-age=0/iu.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }
}

export async function get(base: string, path: string, jar: Jar): Promise<Response> {
  const response = await fetch(new URL(path, base), {
    headers: { cookie: jar.header() },
    redirect: "manual",
  });
  jar.take(response);
  return response;
}

export async function post(
  base: string,
  path: string,
  jar: Jar,
  fields: Record<string, string>,
): Promise<Response> {
  const response = await fetch(new URL(path, base), {
    method: "POST",
    headers: { cookie: jar.header(), "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  jar.take(response);
  return response;
}

/** The CSRF field of the page at `path` (which also sets the CSRF cookie in the jar). */
export async function csrfOf(base: string, path: string, jar: Jar): Promise<string> {
  const page = await get(base, path, jar);
  return inputValue(await page.text(), "csrf");
}

export interface EnrolledStaff {
  email: string;
  password: string;
  secret: string;
  recoveryCodes: string[];
  /** A moment in the last time step a code was used in (a sign-in code must be of a later one). */
  enrolledAt: number;
}

/** Opens an enrolment link and completes it with a password and the current code. */
export async function enrolOverHttp(
  base: string,
  enrolmentUrl: string,
  email: string,
  password = "staff password for tests",
): Promise<EnrolledStaff> {
  const jar = new Jar();
  const link = new URL(enrolmentUrl);
  const opened = await get(base, `${link.pathname}${link.search}`, jar);
  if (opened.status !== 302) throw new Error(`enrolment link answered ${opened.status}`);
  const page = await get(base, "/ops/enrol", jar);
  const html = await page.text();
  const secret = /id="totp-secret">([^<]+)</u.exec(html)?.[1] ?? "";
  if (secret === "") throw new Error(`no secret on the enrolment page (${page.status})`);
  const at = Date.now();
  const done = await post(base, "/ops/enrol", jar, {
    csrf: inputValue(html, "csrf"),
    password,
    confirmPassword: password,
    code: totpCode(secret, at),
  });
  const text = await done.text();
  if (done.status !== 200) throw new Error(`enrolment answered ${done.status}`);
  const recoveryCodes = [...text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/gu)].map((m) => m[1] ?? "");
  return { email, password, secret, recoveryCodes, enrolledAt: at };
}

/**
 * Signs a member in (password, then a code of a step after `notBefore`'s):
 * returns the jar holding the staff cookie.
 */
export async function signInOverHttp(base: string, who: EnrolledStaff, jar = new Jar()): Promise<Jar> {
  const first = await post(base, "/ops/login", jar, {
    csrf: await csrfOf(base, "/ops/login", jar),
    email: who.email,
    password: who.password,
  });
  if (first.status !== 302) throw new Error(`password step answered ${first.status}`);
  // A code of a step the member has not used yet: the next step's code is accepted
  // too (±1 step), so wait only when that one is used as well.
  while (step(Date.now()) + 1 <= step(who.enrolledAt)) await new Promise((r) => setTimeout(r, 250));
  const at = Math.max(Date.now(), (step(who.enrolledAt) + 1) * 30_000);
  const second = await post(base, "/ops/login", jar, {
    csrf: await csrfOf(base, "/ops/login", jar),
    code: totpCode(who.secret, at),
  });
  if (second.status !== 302 || second.headers.get("location") !== "/ops") {
    throw new Error(`code step answered ${second.status}`);
  }
  who.enrolledAt = at;
  return jar;
}
