// The sessions page and the password change (issue 27, record 048) under
// attack, over raw HTTP against real hosts serving the production build, on
// each database (tests/security/README.md lists the rows):
//   - CSRF: each new form posted without its token, or with another
//     browser's, is refused (403) and ends or changes nothing;
//   - a forged handle, another holder's handle, or one's own handle from a
//     listing made on another session ends nothing; no page, URL or form holds
//     a session's id, token or row key;
//   - ending a session reaches its open event stream ('session-ended') and
//     its next request lands on the landing page; a password change does the
//     same to every other session and keeps this one under a new id;
//   - a password change through the contract without the current password,
//     or with a wrong one, changes nothing.
import { createHash } from "node:crypto";
import { beforeAll, expect, test } from "vitest";
import { openEventStream } from "../support/event-stream.ts";
import { inputValue } from "../../scripts/html-forms.ts";
import type { RunningHost } from "../../scripts/host.ts";
import { describeEachHost } from "../backend/host-suite.ts";
import { cookiesOf, createAccount, fastLoginPath, raw, rawCall, type RawAnswer } from "./support/http.ts";

const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** The ck_session pair in a Cookie header. */
function sessionPair(cookie: string): string {
  return cookie.split("; ").find((pair) => pair.startsWith("ck_session=")) ?? "";
}

/** The token inside a ck_session pair, and its row key (SHA-256 of the token). */
function keysOf(cookie: string): { token: string; key: string } {
  const value = decodeURIComponent(sessionPair(cookie).slice("ck_session=".length));
  const token = JSON.parse(
    Buffer.from(value.slice(0, value.lastIndexOf(".")), "base64").toString("utf8"),
  ) as string;
  return { token, key: createHash("sha256").update(token).digest("hex") };
}

/** The handles of a sessions page's "Sign out" forms, in page order. */
function handlesIn(html: string): string[] {
  return [...html.matchAll(/<input type="hidden" name="session" value="([^"]*)"/gu)].map((m) => m[1] ?? "");
}

/** A Cookie header with the pairs of `fresh` replacing those of the same name. */
function merge(cookie: string, fresh: string): string {
  const pairs = new Map<string, string>();
  for (const pair of [...cookie.split("; "), ...fresh.split("; ")].filter(Boolean)) {
    pairs.set(pair.slice(0, pair.indexOf("=")), pair);
  }
  return [...pairs.values()].join("; ");
}

/** An open event stream and the events it has had; `next` waits for one. */
async function openStream(port: number, cookie: string) {
  const stream = await openEventStream(port, cookie);
  if (stream.status !== 200) throw new Error(`stream answered ${stream.status}`);
  return stream;
}

describeEachHost(
  "the sessions page and the password change under attack ($name)",
  () => ({ RATE_LIMITS: "off" }),
  (each) => {
    let host: RunningHost;
    beforeAll(() => {
      host = each.host;
    });

    const get = (path: string, cookie: string) => raw(host.port, { path, headers: { cookie } });
    const post = (path: string, cookie: string, fields: Record<string, string>) =>
      raw(host.port, {
        method: "POST",
        path,
        headers: {
          cookie,
          "content-type": "application/x-www-form-urlencoded",
          origin: `http://127.0.0.1:${host.port}`,
        },
        body: new URLSearchParams(fields).toString(),
      });

    /** A browser signed in to the account (through /fast-login, with this User-Agent). */
    async function browser(account: { email: string; password: string }, userAgent = FIREFOX) {
      const signedIn = await raw(host.port, {
        path: fastLoginPath(account),
        headers: { "user-agent": userAgent },
      });
      expect(signedIn.headers.location).toBe("/home");
      let cookie = cookiesOf(signedIn);
      return {
        get cookie() {
          return cookie;
        },
        /** Opens a page, keeping the cookies it sets (the CSRF cookie, a rotated session). */
        async open(path: string): Promise<RawAnswer> {
          const page = await get(path, cookie);
          cookie = merge(cookie, cookiesOf(page));
          return page;
        },
        async post(path: string, fields: Record<string, string>): Promise<RawAnswer> {
          const answer = await post(path, cookie, fields);
          cookie = merge(cookie, cookiesOf(answer));
          return answer;
        },
      };
    }

    async function signedInTwice() {
      const account = await createAccount(host.port, "sessions");
      return { account, here: await browser(account, FIREFOX), there: await browser(account, IPHONE) };
    }

    test("the page lists both browsers with 'This device' on one, never a session's token or key, and is not cached", async () => {
      const { here, there } = await signedInTwice();
      const page = await here.open("/security/sessions");
      expect(page.status).toBe(200);
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(page.text).toContain("Firefox 128 on Windows 10");
      expect(page.text).toContain("Safari 17 on iOS 17.5");
      expect(page.text.match(/This device/gu)).toHaveLength(1);
      for (const cookie of [here.cookie, there.cookie]) {
        const { token, key } = keysOf(cookie);
        expect(page.text).not.toContain(token);
        expect(page.text).not.toContain(key);
        expect(page.text).not.toContain(encodeURIComponent(token));
      }
      expect(handlesIn(page.text)).toHaveLength(1);
      const password = await here.open("/security/password");
      expect(password.status).toBe(200);
      expect(password.headers["cache-control"]).toBe("no-store");
    });

    test("CSRF: each new form without its token, or with another browser's, is refused and changes nothing", async () => {
      const { account, here, there } = await signedInTwice();
      const page = await here.open("/security/sessions");
      const [handle = ""] = handlesIn(page.text);
      const theirs = inputValue((await there.open("/security/sessions")).text, "csrf");
      const forms: [string, Record<string, string>][] = [
        ["/security/sessions", { intent: "end", session: handle }],
        ["/security/sessions", { intent: "end-others" }],
        [
          "/security/password",
          { currentPassword: account.password, password: "hijacked-1", confirmPassword: "hijacked-1" },
        ],
      ];
      for (const [path, fields] of forms) {
        for (const csrf of [undefined, theirs, "m.AAAA.BBBB"]) {
          const answer = await here.post(path, csrf === undefined ? fields : { ...fields, csrf });
          expect(answer.status, `${path} ${JSON.stringify(fields)} csrf=${String(csrf)}`).toBe(403);
          expect(answer.text).toContain("This form has expired");
        }
      }
      // Both browsers are still signed in, and the password is the old one.
      for (const b of [here, there]) expect((await b.open("/home")).status).toBe(200);
      const signIn = await rawCall(host.port, "/aml-authorization", {
        email: account.email,
        password: account.password,
      });
      expect(signIn.status).toBe(200);
    });

    test("forged, foreign and stale handles end nothing; the right one ends that session, and its stream", async () => {
      const { here, there } = await signedInTwice();
      const stranger = await browser(await createAccount(host.port, "stranger"), IPHONE);
      const strangersOther = await browser(await createAccount(host.port, "stranger2"));
      const page = await here.open("/security/sessions");
      const csrf = inputValue(page.text, "csrf");
      const [handle = ""] = handlesIn(page.text);
      // The stranger's own listing, with a handle for their other session… of another account: none.
      const strangerPage = await stranger.open("/security/sessions");
      expect(handlesIn(strangerPage.text)).toEqual([]);
      // The other browser's listing: its handle for *this* session (valid there, not here).
      const [fromThere = ""] = handlesIn((await there.open("/security/sessions")).text);

      const stream = await openStream(host.port, sessionPair(there.cookie));
      await stream.next("ready");
      // One character changed: the first, which carries six bits of the handle. (The old forgery
      // put "A" last: one handle in sixteen ends in "A", a 32-byte value's last character being
      // one of sixteen, and then the "forgery" was the handle itself.)
      const oneChanged = `${handle.startsWith("A") ? "B" : "A"}${handle.slice(1)}`;
      expect(oneChanged).not.toBe(handle);
      for (const forged of ["A".repeat(43), oneChanged, fromThere, "../../etc", ""]) {
        const answer = await here.post("/security/sessions", { csrf, intent: "end", session: forged });
        expect([400, 404], `${forged}`).toContain(answer.status);
      }
      // The stranger posting this holder's handle (with the stranger's own token): nothing.
      const strangerCsrf = inputValue(strangerPage.text, "csrf");
      const foreign = await stranger.post("/security/sessions", {
        csrf: strangerCsrf,
        intent: "end",
        session: handle,
      });
      expect(foreign.status).toBe(404);
      expect(foreign.text).toContain("That session has already ended.");
      for (const b of [here, there, stranger, strangersOther])
        expect((await b.open("/home")).status).toBe(200);
      expect(stream.events.map((e) => e.event)).not.toContain("session-ended");

      // The real handle: that session goes, its stream hears so and closes, its next page is the landing page.
      const ended = await here.post("/security/sessions", { csrf, intent: "end", session: handle });
      expect(ended.status).toBe(302);
      expect(ended.headers.location).toBe("/security/sessions");
      await stream.next("session-ended");
      await stream.ended;
      const next = await there.open("/home");
      expect(next.status).toBe(302);
      expect(next.headers.location).toBe("/");
      const events = await raw(host.port, {
        path: "/events",
        headers: { accept: "text/event-stream", cookie: sessionPair(there.cookie) },
      });
      expect(events.status).toBe(204);
      // The holder is told, and the list is down to this device.
      const after = await here.open("/security/sessions");
      expect(after.text).toContain("Signed out: Safari 17 on iOS 17.5.");
      expect(handlesIn(after.text)).toEqual([]);
      // The same handle again: already ended.
      const again = await here.post("/security/sessions", { csrf, intent: "end", session: handle });
      expect(again.status).toBe(404);
    }, 60_000);

    test("a password change ends every other session (and its stream) and keeps this one under a new id", async () => {
      const { account, here, there } = await signedInTwice();
      const third = await browser(account, FIREFOX);
      const streams = [
        await openStream(host.port, sessionPair(there.cookie)),
        await openStream(host.port, sessionPair(third.cookie)),
      ];
      for (const stream of streams) await stream.next("ready");
      const before = keysOf(here.cookie).token;
      const oldPair = sessionPair(here.cookie);
      const form = await here.open("/security/password");
      const changed = await here.post("/security/password", {
        csrf: inputValue(form.text, "csrf"),
        currentPassword: account.password,
        password: "a brand-new password",
        confirmPassword: "a brand-new password",
      });
      expect(changed.status).toBe(302);
      expect(changed.headers.location).toBe("/security");
      for (const stream of streams) {
        await stream.next("session-ended");
        await stream.ended;
      }
      for (const b of [there, third]) expect((await b.open("/home")).headers.location).toBe("/");
      // This browser: a new id, still signed in; the old id is nobody's.
      expect(keysOf(here.cookie).token).not.toBe(before);
      const security = await here.open("/security");
      expect(security.status).toBe(200);
      expect(security.text).toContain(
        "Your password has been changed. Every other session has been signed out.",
      );
      const old = await raw(host.port, { path: "/home", headers: { cookie: oldPair } });
      expect(old.headers.location).toBe("/");
      const sessions = await here.open("/security/sessions");
      expect(sessions.text).toContain("This device");
      expect(handlesIn(sessions.text)).toEqual([]);
      // The old password fails, the new one works, the phrase is the same.
      const oldSignIn = await rawCall(host.port, "/aml-authorization", {
        email: account.email,
        password: account.password,
      });
      expect(oldSignIn.status).toBe(401);
      const newSignIn = await rawCall(host.port, "/aml-authorization", {
        email: account.email,
        password: "a brand-new password",
      });
      expect(JSON.parse(newSignIn.text)).toMatchObject({ user: { twelveWords: account.words } });
    }, 60_000);

    test("a wrong current password is shown at its field and changes nothing; nor does a change through the contract without one", async () => {
      const { account, here, there } = await signedInTwice();
      const form = await here.open("/security/password");
      const wrong = await here.post("/security/password", {
        csrf: inputValue(form.text, "csrf"),
        currentPassword: "not my password",
        password: "new-password-1",
        confirmPassword: "new-password-1",
      });
      expect(wrong.status).toBe(400);
      expect(wrong.text).toMatch(/id="change-password-currentPassword"[^>]*aria-invalid="true"/u);
      expect(wrong.text).toContain("Incorrect password");
      expect(wrong.text).not.toContain("new-password-1");
      expect((await there.open("/home")).status).toBe(200);

      const body = { email: account.email, twelveWords: account.words };
      const missing = await rawCall(host.port, "/change-password", {
        ...body,
        password: "new-password-2",
        confirm_password: "new-password-2",
      });
      expect(missing.status).toBe(400);
      expect(JSON.parse(missing.text)).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "current_password" }],
      });
      const guessed = await rawCall(host.port, "/change-password", {
        ...body,
        current_password: "guess",
        password: "new-password-3",
        confirm_password: "new-password-3",
      });
      expect(guessed.status).toBe(401);
      // Someone else's words with this e-mail: the session's proof fails first.
      const other = await createAccount(host.port, "other");
      const foreign = await rawCall(host.port, "/change-password", {
        email: account.email,
        twelveWords: other.words,
        current_password: account.password,
        password: "new-password-4",
        confirm_password: "new-password-4",
      });
      expect(foreign.status).toBe(401);
      expect(JSON.parse(foreign.text)).toMatchObject({ code: "invalid_credentials" });
      const still = await rawCall(host.port, "/aml-authorization", {
        email: account.email,
        password: account.password,
      });
      expect(still.status).toBe(200);
      expect((await there.open("/home")).status).toBe(200);
    }, 60_000);
  },
);
