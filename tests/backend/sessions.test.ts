// Web sessions over each real database (record 015): idle and absolute
// timeouts on the row, the owner tag a restore uses to end every session of
// an account, logout, and cookies that are forged, altered, truncated, random
// or point at a row that is gone — all simply anonymous, never an error.
import { createHash, randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { createCookie, RouterContextProvider } from "react-router";
import { beforeAll, describe, expect, test } from "vitest";
import { servicesContext, type AppServices } from "../../app/context.ts";
import {
  commitRotatedSession,
  commitSession,
  destroySession,
  endSessionsOf,
  getSession,
  liveSession,
  requireUser,
  sessionOwner,
  startUserSession,
} from "../../app/session.server.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { webSessions } from "../../server/backend/db/schema.ts";
import { createSessionKV } from "../../server/host/web-sessions.ts";
import { uniqueEmail } from "./helpers.ts";
import { describeEachDatabase } from "./api-suite.ts";

const SECRET = "test-session-secret-0123456789abcdef";
const IDLE_MS = 30 * 60_000;
const MAX_MS = 12 * 3_600_000;
const WORDS = Array.from({ length: 12 }, (_, i) => `word${String.fromCharCode(97 + i)}`);

function contextFor(db: AppDb): RouterContextProvider {
  const services: AppServices = {
    config: {
      platform: "CK",
      sessionSecret: SECRET,
      cookieSecure: false,
      supportEmail: "support@example.com",
      companyName: "Test Ltd",
      companyNumber: "00000000",
      legalEmail: "legal@example.com",
      backendBaseUrl: "http://backend.invalid/api",
      pricesBaseUrl: "http://backend.invalid/api",
      appUrl: "http://app.test",
      buyCryptoUrl: "https://buy.example.com/",
      fastLoginOrigins: [],
    },
    backend: undefined,
    prices: undefined,
    sessions: createSessionKV(db, { idleMs: IDLE_MS, maxMs: MAX_MS }),
  };
  const context = new RouterContextProvider();
  context.set(servicesContext, services);
  return context;
}

function request(path: string, cookie?: string): Request {
  return new Request(`http://app.test${path}`, cookie ? { headers: { Cookie: cookie } } : {});
}

/** The name=value part of each Set-Cookie header. */
function cookieFrom(headers: Headers): string {
  const set = headers.getSetCookie().at(-1) ?? "";
  return set.split(";")[0] ?? "";
}

/** A row's key: SHA-256 of the token, as app/session.server.ts keys them. */
function rowId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The token inside a signed session cookie (base64 JSON string, then a signature). */
function tokenOf(cookie: string): string {
  const value = decodeURIComponent(cookie.slice(cookie.indexOf("=") + 1));
  const encoded = value.slice(0, value.lastIndexOf("."));
  return JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as string;
}

async function expectAnonymous(context: RouterContextProvider, cookie: string, path = "/home") {
  const session = await getSession(request(path, cookie), context);
  expect(session.get("user")).toBeUndefined();
  expect(session.id).toBe("");
  const thrown = await requireUser(request(path, cookie), context).then(
    () => null,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(Response);
  expect((thrown as Response).status).toBe(302);
  expect((thrown as Response).headers.get("Location")).toBe("/");
}

async function otherSecretCookie(): Promise<string> {
  const other = createCookie("ck_session", { secrets: ["another-secret-0123456789abcdefghij"] });
  const set = await other.serialize(randomBytes(32).toString("base64url"));
  return (set.split(";")[0] ?? "").split("=")[1] ?? "";
}

function flip(text: string, at: number): string {
  return text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
}

describeEachDatabase("web sessions on $name", (getDatabase) => {
  let db: AppDb;
  let context: RouterContextProvider;
  beforeAll(() => {
    db = getDatabase().database.db;
    context = contextFor(db);
  });

  async function signIn(email: string): Promise<string> {
    const headers = await startUserSession(request("/login"), context, {
      email,
      words: WORDS,
      userId: "00000000-0000-4000-8000-000000000000",
    });
    return cookieFrom(headers);
  }
  const row = async (cookie: string) =>
    (
      await db
        .select()
        .from(webSessions)
        .where(eq(webSessions.id, rowId(tokenOf(cookie))))
    )[0];

  test("a sign-in's row is tagged with an HMAC of the e-mail, never the e-mail", async () => {
    const email = uniqueEmail("owner");
    const cookie = await signIn(email);
    const stored = await row(cookie);
    expect(stored?.owner).toBe(sessionOwner(SECRET, email));
    expect(stored?.owner).toMatch(/^[0-9a-f]{64}$/u);
    expect(sessionOwner(SECRET, ` ${email.toUpperCase()} `)).toBe(stored?.owner);
    expect(JSON.stringify(stored)).not.toContain(email);
    expect(JSON.stringify(stored)).not.toContain(tokenOf(cookie));
    const { user } = await requireUser(request("/home", cookie), context);
    expect(user.email).toBe(email);
    // The idle deadline, not the absolute one.
    const left = (stored?.expiresAt.getTime() ?? 0) - Date.now();
    expect(left).toBeGreaterThan(IDLE_MS - 60_000);
    expect(left).toBeLessThanOrEqual(IDLE_MS);
  });

  test("forged, altered, truncated, random and stale cookies are anonymous, never an error", async () => {
    const cookie = await signIn(uniqueEmail("forged"));
    const [name, value = ""] = cookie.split("=");
    const decoded = decodeURIComponent(value);
    const dot = decoded.lastIndexOf(".");
    const variants = {
      "altered signature": `${name}=${encodeURIComponent(flip(decoded, decoded.length - 2))}`,
      "altered token": `${name}=${encodeURIComponent(flip(decoded, 3))}`,
      truncated: `${name}=${value.slice(0, value.length - 6)}`,
      "signature only": `${name}=${encodeURIComponent(decoded.slice(dot + 1))}`,
      "token unsigned": `${name}=${encodeURIComponent(decoded.slice(0, dot))}`,
      random: `${name}=${randomBytes(40).toString("base64url")}`,
      "bad percent-encoding": `${name}=%E0%A4%A`,
      empty: `${name}=`,
      "other secret": cookie.replace(value, await otherSecretCookie()),
    };
    for (const [label, variant] of Object.entries(variants)) {
      await expectAnonymous(context, variant).catch((error: unknown) => {
        throw new Error(`${label}: ${String(error)}`);
      });
    }

    // A correctly signed cookie whose row is gone (logged out, restored, expired).
    const signer = createCookie(name ?? "ck_session", { secrets: [SECRET], path: "/" });
    const stale = cookieFrom(
      new Headers([["Set-Cookie", await signer.serialize(randomBytes(32).toString("base64url"))]]),
    );
    await expectAnonymous(context, stale);
    // …and a signed value that is not a token at all is not even looked up.
    const weird = cookieFrom(new Headers([["Set-Cookie", await signer.serialize({ user: "x" })]]));
    await expectAnonymous(context, weird);

    // A stale cookie's visitor gets a new row when something is saved (not a lost write).
    const session = await getSession(request("/restore-wallet", stale), context);
    session.set("restore", { step: 2, email: "a@example.com" });
    const fresh = cookieFrom(new Headers([["Set-Cookie", await commitSession(session, context)]]));
    expect(tokenOf(fresh)).not.toBe(tokenOf(stale));
    expect((await getSession(request("/restore-wallet", fresh), context)).get("restore")?.step).toBe(2);
  });

  test("idle timeout: a row past its idle deadline is gone for the reader", async () => {
    const cookie = await signIn(uniqueEmail("idle"));
    await db
      .update(webSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(webSessions.id, rowId(tokenOf(cookie))));
    await expectAnonymous(context, cookie);
  });

  test("absolute timeout: a row created longer ago than the lifetime is gone, whatever its idle deadline", async () => {
    const cookie = await signIn(uniqueEmail("absolute"));
    await db
      .update(webSessions)
      .set({ createdAt: new Date(Date.now() - MAX_MS - 1000), expiresAt: new Date(Date.now() + IDLE_MS) })
      .where(eq(webSessions.id, rowId(tokenOf(cookie))));
    await expectAnonymous(context, cookie);
  });

  test("an event stream watches its session's deadline without moving it; none once the row is gone", async () => {
    const cookie = await signIn(uniqueEmail("stream"));
    const id = rowId(tokenOf(cookie));
    const soon = new Date(Date.now() + 5 * 60_000);
    await db.update(webSessions).set({ expiresAt: soon }).where(eq(webSessions.id, id));
    const live = await liveSession(request("/events", cookie), context);
    expect(live?.key).toBe(id);
    expect(live?.user.userId).toBe("00000000-0000-4000-8000-000000000000");
    expect(await live?.deadline()).toBe(soon.getTime());
    expect((await row(cookie))?.expiresAt.getTime()).toBe(soon.getTime());
    // Near the end of the lifetime, the lifetime is the deadline.
    const created = new Date(Date.now() - MAX_MS + 60_000);
    await db.update(webSessions).set({ createdAt: created }).where(eq(webSessions.id, id));
    expect(await live?.deadline()).toBe(created.getTime() + MAX_MS);
    await db.delete(webSessions).where(eq(webSessions.id, id));
    expect(await live?.deadline()).toBeNull();
    // (Another request: a request's own reads are shared within it.)
    expect(await liveSession(request("/events?again", cookie), context)).toBeNull();
  });

  test("activity moves the idle deadline; the unread-count poll does not; never past the lifetime", async () => {
    const cookie = await signIn(uniqueEmail("touch"));
    const id = rowId(tokenOf(cookie));
    const soon = new Date(Date.now() + 5 * 60_000);
    await db.update(webSessions).set({ expiresAt: soon }).where(eq(webSessions.id, id));

    for (const path of ["/unread-count", "/unread-count.data", "/events"]) {
      await getSession(request(path, cookie), context);
      expect((await row(cookie))?.expiresAt.getTime()).toBe(soon.getTime());
    }

    await getSession(request("/home", cookie), context);
    const moved = (await row(cookie))?.expiresAt.getTime() ?? 0;
    expect(moved).toBeGreaterThan(Date.now() + IDLE_MS - 60_000);

    // Near the end of the lifetime the deadline stops at created_at + lifetime.
    const created = new Date(Date.now() - MAX_MS + 10 * 60_000);
    await db
      .update(webSessions)
      .set({ createdAt: created, expiresAt: new Date(Date.now() + 60_000) })
      .where(eq(webSessions.id, id));
    await getSession(request("/history", cookie), context);
    const capped = (await row(cookie))?.expiresAt.getTime() ?? 0;
    expect(Math.abs(capped - (created.getTime() + MAX_MS))).toBeLessThan(1000);

    // Saving the session (a POST) is activity too, under the same cap.
    const session = await getSession(request("/currency", cookie), context);
    session.set("currency", "EUR");
    await commitSession(session, context);
    expect(
      Math.abs(((await row(cookie))?.expiresAt.getTime() ?? 0) - (created.getTime() + MAX_MS)),
    ).toBeLessThan(1000);
  });

  test("a restore ends every session of the account, and only those", async () => {
    const email = uniqueEmail("restored");
    const first = await signIn(email);
    const second = await signIn(email.toUpperCase());
    const other = await signIn(uniqueEmail("bystander"));
    // The restoring browser: a visitor's session with the flow's state.
    const visitor = await getSession(request("/restore-wallet"), context);
    visitor.set("restore", { step: 3, email, words: WORDS });
    const visiting = cookieFrom(new Headers([["Set-Cookie", await commitSession(visitor, context)]]));

    expect(await endSessionsOf(context, email)).toBe(2);
    await expectAnonymous(context, first);
    await expectAnonymous(context, second);
    expect((await requireUser(request("/home", other), context)).user.email).toContain("bystander");
    expect((await getSession(request("/restore-wallet", visiting), context)).get("restore")?.step).toBe(3);
    expect(await endSessionsOf(context, email)).toBe(0);
  });

  test("a new sign-in replaces the old row; logout deletes the row", async () => {
    const email = uniqueEmail("logout");
    const first = await signIn(email);
    const headers = await startUserSession(request("/login", first), context, {
      email,
      words: WORDS,
      userId: "00000000-0000-4000-8000-000000000000",
    });
    expect(await row(first)).toBeUndefined();
    const second = cookieFrom(headers);
    expect(await row(second)).toBeDefined();

    const session = await getSession(request("/logout", second), context);
    const cleared = await destroySession(session, context);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/u);
    expect(await row(second)).toBeUndefined();
    await expectAnonymous(context, second);
    const count = await db.select({ n: sql<number>`count(*)::int` }).from(webSessions);
    expect(count[0]?.n).toBeGreaterThan(0);
  });

  test("a rotated session (issue 12) moves to a new id: same data, owner and sign-in time; the old id is anonymous", async () => {
    const email = uniqueEmail("rotated");
    const first = await signIn(email);
    // Signed in long ago: a rotation must not restart the absolute lifetime.
    const created = new Date(Date.now() - MAX_MS + 10 * 60_000);
    await db
      .update(webSessions)
      .set({ createdAt: created })
      .where(eq(webSessions.id, rowId(tokenOf(first))));
    const before = await row(first);

    const session = await getSession(request("/security", first), context);
    const setCookie = await commitRotatedSession(request("/security", first), session, context);
    const second = setCookie.split(";")[0] ?? "";
    expect(tokenOf(second)).not.toBe(tokenOf(first));
    expect(await row(first)).toBeUndefined();
    const after = await row(second);
    expect(after?.createdAt.getTime()).toBe(created.getTime());
    expect(after?.owner).toBe(before?.owner);
    expect(after?.owner).toBe(sessionOwner(SECRET, email));
    // Never past created_at + the lifetime.
    expect(after?.expiresAt.getTime()).toBeLessThanOrEqual(created.getTime() + MAX_MS);
    const { user } = await requireUser(request("/home", second), contextFor(db));
    expect(user.email).toBe(email);
    await expectAnonymous(contextFor(db), first);

    // A visitor's fresh session (no row yet) gets a new row.
    const visitor = await getSession(request("/create-wallet"), context);
    visitor.set("currency", "EUR");
    const fresh =
      (await commitRotatedSession(request("/create-wallet"), visitor, context)).split(";")[0] ?? "";
    expect(await row(fresh)).toBeDefined();
  });
});

describe("session settings", () => {
  const base = { SESSION_SECRET: SECRET, BACKEND_SECRET: SECRET, DATA_DIR: "/nonexistent-coinkeep" };
  test("defaults: 30 minutes idle, 12 hours in all", () => {
    const config = loadConfig(base);
    expect(config.sessionIdleMs).toBe(30 * 60_000);
    expect(config.sessionMaxMs).toBe(12 * 3_600_000);
  });
  test("configurable; the idle timeout never exceeds the lifetime", () => {
    const config = loadConfig({ ...base, SESSION_IDLE_MINUTES: "600", SESSION_MAX_HOURS: "2" });
    expect(config.sessionIdleMs).toBe(2 * 3_600_000);
    expect(config.sessionMaxMs).toBe(2 * 3_600_000);
  });
  test("a malformed value stops the start with a message naming it", () => {
    for (const [name, value] of [
      ["SESSION_IDLE_MINUTES", "0"],
      ["SESSION_IDLE_MINUTES", "ten"],
      ["SESSION_MAX_HOURS", "1.5"],
      ["SESSION_MAX_HOURS", "100000"],
    ] as const) {
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(name);
    }
  });
});
