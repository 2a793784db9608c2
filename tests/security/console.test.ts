// The staff console under attack (issue 26), over HTTP against the host
// serving the production build: a holder's cookie on console pages and a
// staff cookie on holder pages, a replayed or wrong code, a forged or reused
// enrolment link, a post without the CSRF token or from another site, a role
// taken away while signed in, and the nonce CSP on console pages.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";
import { callOpsSocket } from "../../server/ops/socket.ts";
import {
  csrfOf,
  enrolOverHttp,
  get,
  Jar,
  post,
  signInOverHttp,
  totpCode,
  type EnrolledStaff,
} from "../support/staff.ts";
import { createAccount, fastLoginPath } from "./support/http.ts";

const describeBuilt = built ? describe : describe.skip;

describeBuilt("the staff console under attack (a host over the production build)", () => {
  let host: RunningHost;
  let base: string;
  const ops = async (...argv: string[]) => {
    const result = await callOpsSocket(path.join(host.dataDir, "ops.sock"), [
      ...argv,
      "--as",
      "security-test",
    ]);
    if (!result) throw new Error("no ops socket");
    return result;
  };
  const addMember = async (email: string, roles: string) => {
    const added = await ops("staff", "add", email, "--role", roles, "--json");
    expect(added.stderr).toBe("");
    return (JSON.parse(added.stdout) as { enrolmentUrl: string }).enrolmentUrl;
  };
  let admin: EnrolledStaff;
  let adminJar: Jar;

  beforeAll(async () => {
    host = await startHost({});
    base = host.base;
    admin = await enrolOverHttp(
      base,
      await addMember("sec-admin@staff.example", "admin"),
      "sec-admin@staff.example",
    );
    adminJar = await signInOverHttp(base, admin);
  }, 120_000);
  afterAll(async () => {
    await host?.close();
  });

  test("a holder's session opens no console page; a staff session opens no holder page", async () => {
    const account = await createAccount(host.port, "holder");
    const holder = new Jar();
    const signedIn = await get(base, fastLoginPath(account), holder);
    expect(signedIn.status).toBe(302);
    expect(holder.get("ck_session")).toBeDefined();
    expect((await get(base, "/home", holder)).status).toBe(200);
    for (const page of ["/ops", "/ops/audit", "/ops/staff"]) {
      const answer = await get(base, page, holder);
      expect(answer.status).toBe(302);
      expect(answer.headers.get("location")).toBe("/ops/login");
    }
    // The staff cookie carries nobody into the holders' side.
    for (const page of ["/home", "/security", "/history"]) {
      const answer = await get(base, page, adminJar);
      expect(answer.status).toBe(302);
      expect(answer.headers.get("location")).toBe("/");
    }
    expect((await get(base, "/ops", adminJar)).status).toBe(200);
  });

  test("console pages carry the nonce CSP on every script, no-store and no referrer", async () => {
    const page = await get(base, "/ops", adminJar);
    const csp = page.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/u.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).not.toContain("unsafe-inline");
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/gu)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
  });

  test("a replayed code is refused, and wrong codes lead to the lock", async () => {
    const email = "sec-replay@staff.example";
    const who = await enrolOverHttp(base, await addMember(email, "support"), email);
    const jar = await signInOverHttp(base, who);
    const used = who.enrolledAt;
    // Signed in with the code of `used`; the same code again, on a new sign-in, is refused.
    const again = new Jar();
    await post(base, "/ops/login", again, {
      csrf: await csrfOf(base, "/ops/login", again),
      email,
      password: who.password,
    });
    const replay = await post(base, "/ops/login", again, {
      csrf: await csrfOf(base, "/ops/login", again),
      code: totpCode(who.secret, used),
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("That code was used already. Wait for the next one.");
    for (let i = 0; i < 8; i++) {
      const wrong = await post(base, "/ops/login", again, {
        csrf: await csrfOf(base, "/ops/login", again),
        code: "000000",
      });
      expect(wrong.status).toBe(400);
    }
    // Replay + 8 wrong codes = 9 failures; the tenth (a wrong password) locks.
    const fresh = new Jar();
    const tenth = await post(base, "/ops/login", fresh, {
      csrf: await csrfOf(base, "/ops/login", fresh),
      email,
      password: "not the password at all",
    });
    expect(tenth.status).toBe(423);
    expect(await tenth.text()).toContain("Sign-in is locked after too many wrong passwords or codes.");
    // The lock ended the member's live session too.
    expect((await get(base, "/ops", jar)).headers.get("location")).toBe("/ops/login");
    const unlocked = await ops("staff", "unlock", email, "--reason", "verified in person");
    expect(unlocked.stdout).toContain(`Unlocked ${email} (10 failures cleared).`);
  });

  test("an enrolment link used twice, forged or malformed creates nothing", async () => {
    const email = "sec-link@staff.example";
    const url = await addMember(email, "support");
    // The page with the secret has no script at all (no hydration data to read it from).
    const peek = new Jar();
    const from = new URL(url);
    await get(base, `${from.pathname}${from.search}`, peek);
    const secretPage = await (await get(base, "/ops/enrol", peek)).text();
    expect(secretPage).toContain('id="totp-secret"');
    expect(secretPage).not.toContain("<script");
    await enrolOverHttp(base, url, email);
    const jar = new Jar();
    const link = new URL(url);
    expect((await get(base, `${link.pathname}${link.search}`, jar)).status).toBe(302);
    const reused = await get(base, "/ops/enrol", jar);
    expect(reused.status).toBe(410);
    expect(await reused.text()).toContain("This enrolment link has been used already.");
    const forged = new Jar();
    await get(base, `/ops/enrol?token=${"A".repeat(43)}`, forged);
    const page = await get(base, "/ops/enrol", forged);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("This enrolment link is not valid.");
    expect((await get(base, "/ops/enrol?token=%3Cscript%3E", new Jar())).status).toBe(404);
    const listed = await ops("staff", "--json");
    const members = JSON.parse(listed.stdout) as { email: string }[];
    expect(members.filter((m) => m.email === email)).toHaveLength(1);
  });

  test("posts without the CSRF token, or from another site, change nothing", async () => {
    const noToken = await post(base, "/ops/logout", adminJar, {});
    expect(noToken.status).toBe(403);
    expect((await get(base, "/ops", adminJar)).status).toBe(200);
    // Another site's form: the browser sends no SameSite=Strict staff cookie with it.
    const crossSite = new Jar();
    const csrf = await csrfOf(base, "/ops/login", crossSite);
    const answer = await post(base, "/ops/logout", crossSite, { csrf });
    expect(answer.headers.get("location")).toBe("/ops/login?signed-out=1");
    expect((await get(base, "/ops", adminJar)).status).toBe(200);
    const setCookie = (await get(base, "/ops/login", new Jar())).headers.getSetCookie().join("\n");
    expect(setCookie).not.toContain("ck_staff=");
  });

  test("a role taken away while signed in: the next request is refused", async () => {
    const email = "sec-roles@staff.example";
    const who = await enrolOverHttp(base, await addMember(email, "admin,support"), email);
    const jar = await signInOverHttp(base, who);
    expect((await get(base, "/ops/staff", jar)).status).not.toBe(302);
    await ops("staff", "roles", email, "--role", "support", "--reason", "least privilege");
    const next = await get(base, "/ops/staff", jar);
    expect(next.status).toBe(302);
    expect(next.headers.get("location")).toBe("/ops/login");
    const back = await signInOverHttp(base, who);
    const refused = await get(base, "/ops/audit", back);
    expect(refused.status).toBe(403);
    const text = await refused.text();
    expect(text).toContain("This page needs the admin or compliance role.");
    expect(text).not.toContain('href="/ops/audit"');
    expect(text).not.toContain('href="/ops/staff"');
    // A removed member's next request: refused and signed out.
    await ops("staff", "remove", email, "--reason", "left the company");
    const gone = await get(base, "/ops", back);
    expect(gone.headers.get("location")).toBe("/ops/login");
  });
});
