// A holder's sessions (issue 27, record 048) over each real database: what a
// sign-in's row records (the User-Agent, cut to 512 characters, and the
// address), the last address and time moving with the idle deadline's
// once-a-minute touch and not more often, the owner's listing, and ending one
// session by its handle or all the others — never another holder's, never by
// a forged or stale handle, never this one.
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { RouterContextProvider } from "react-router";
import { beforeAll, expect, test } from "vitest";
import { servicesContext, type AppServices } from "../../app/context.ts";
import {
  describeUserAgent,
  endHolderSession,
  endOtherHolderSessions,
  listHolderSessions,
  sessionHandle,
} from "../../app/holder-sessions.server.ts";
import {
  commitSession,
  getSession,
  keepOnlyThisSession,
  requireUser,
  sessionOwner,
  startUserSession,
} from "../../app/session.server.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { webSessions } from "../../server/backend/db/schema.ts";
import { createSessionKV } from "../../server/host/web-sessions.ts";
import { describeEachDatabase } from "./api-suite.ts";
import { uniqueEmail } from "./helpers.ts";

const SECRET = "test-session-secret-0123456789abcdef";
const IDLE_MS = 30 * 60_000;
const MAX_MS = 12 * 3_600_000;
const WORDS = Array.from({ length: 12 }, (_, i) => `word${String.fromCharCode(97 + i)}`);
const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** The web tier's context for one request from `ip` (the host's clientAddress). */
function contextFor(db: AppDb, ip: string | undefined): RouterContextProvider {
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
    clientAddress: () => ip,
  };
  const context = new RouterContextProvider();
  context.set(servicesContext, services);
  return context;
}

function request(path: string, { cookie, userAgent }: { cookie?: string; userAgent?: string } = {}) {
  const headers = new Headers();
  if (cookie) headers.set("Cookie", cookie);
  if (userAgent !== undefined) headers.set("User-Agent", userAgent);
  return new Request(`http://app.test${path}`, { headers });
}

function cookieFrom(setCookie: string): string {
  return setCookie.split(";")[0] ?? "";
}

function tokenOf(cookie: string): string {
  const value = decodeURIComponent(cookie.slice(cookie.indexOf("=") + 1));
  return JSON.parse(Buffer.from(value.slice(0, value.lastIndexOf(".")), "base64").toString("utf8")) as string;
}

const rowId = (cookie: string) => createHash("sha256").update(tokenOf(cookie)).digest("hex");

describeEachDatabase("a holder's sessions on $name", (getDatabase) => {
  let db: AppDb;
  beforeAll(() => {
    db = getDatabase().database.db;
  });

  const row = async (cookie: string) =>
    (
      await db
        .select()
        .from(webSessions)
        .where(eq(webSessions.id, rowId(cookie)))
    )[0];

  async function signIn(email: string, { userAgent = FIREFOX, ip = "203.0.113.7" } = {}) {
    const headers = await startUserSession(request("/login", { userAgent }), contextFor(db, ip), {
      email,
      words: WORDS,
      userId: "00000000-0000-4000-8000-000000000000",
    });
    return cookieFrom(headers.getSetCookie().at(-1) ?? "");
  }

  /** The signed-in viewer behind a cookie, as the sessions page's loader and action read it. */
  async function viewer(cookie: string, ip = "203.0.113.7") {
    const context = contextFor(db, ip);
    return { context, viewer: await requireUser(request("/security/sessions", { cookie }), context) };
  }

  test("a sign-in's row keeps the User-Agent (512 characters at most, no control characters) and the address", async () => {
    const email = uniqueEmail("seen");
    const cookie = await signIn(email, { userAgent: FIREFOX, ip: "2001:db8::17" });
    const stored = await row(cookie);
    expect(stored?.userAgent).toBe(FIREFOX);
    expect(stored?.lastIp).toBe("2001:db8::17");
    expect(stored?.lastSeenAt?.getTime()).toBe(stored?.createdAt.getTime());
    expect(JSON.stringify(stored)).not.toContain(tokenOf(cookie));
    expect(JSON.stringify(stored)).not.toContain(email);

    const long = await signIn(uniqueEmail("long"), { userAgent: `${"A".repeat(600)}\u0001tail` });
    expect((await row(long))?.userAgent).toBe("A".repeat(512));
    // No User-Agent and no address (a client that sends none): nothing recorded, still signed in.
    const bare = await startUserSession(request("/login"), contextFor(db, undefined), {
      email: uniqueEmail("bare"),
      words: WORDS,
      userId: "00000000-0000-4000-8000-000000000000",
    });
    const bareRow = await row(cookieFrom(bare.getSetCookie().at(-1) ?? ""));
    expect([bareRow?.userAgent, bareRow?.lastIp]).toEqual([null, null]);
  });

  test("the last address and time move with the idle deadline's touch, at most once a minute, and never for the background poll", async () => {
    const cookie = await signIn(uniqueEmail("touch"), { ip: "203.0.113.1" });
    const id = rowId(cookie);
    // As if signed in ten minutes ago, the deadline last moved then.
    const then = new Date(Date.now() - 10 * 60_000);
    await db
      .update(webSessions)
      .set({ createdAt: then, lastSeenAt: then, expiresAt: new Date(then.getTime() + IDLE_MS) })
      .where(eq(webSessions.id, id));

    // The background poll is not activity: nothing moves.
    await getSession(request("/unread-count", { cookie }), contextFor(db, "198.51.100.9"));
    expect((await row(cookie))?.lastIp).toBe("203.0.113.1");
    expect((await row(cookie))?.lastSeenAt?.getTime()).toBe(then.getTime());

    // A page: the deadline, the address and the time move together.
    await getSession(request("/home", { cookie }), contextFor(db, "198.51.100.9"));
    const moved = await row(cookie);
    expect(moved?.lastIp).toBe("198.51.100.9");
    expect(moved?.lastSeenAt?.getTime()).toBeGreaterThan(Date.now() - 10_000);
    expect(moved?.expiresAt.getTime()).toBeGreaterThan(Date.now() + IDLE_MS - 60_000);

    // Within the minute, another address writes nothing (one write a minute per session).
    await getSession(request("/history", { cookie }), contextFor(db, "192.0.2.44"));
    expect(await row(cookie)).toEqual(moved);

    // Saving the session (a POST) moves the deadline, and the time with it, in its own write.
    await db.update(webSessions).set({ lastSeenAt: then }).where(eq(webSessions.id, id));
    const session = await getSession(request("/currency", { cookie }), contextFor(db, "192.0.2.44"));
    session.set("currency", "EUR");
    await commitSession(session, contextFor(db, "192.0.2.44"));
    expect((await row(cookie))?.lastSeenAt?.getTime()).toBeGreaterThan(Date.now() - 10_000);
  });

  test("the listing: the owner's live sessions only, this one first and marked, each with its browser and a handle, never a key", async () => {
    const email = uniqueEmail("list");
    const phone = await signIn(email, { userAgent: IPHONE, ip: "198.51.100.20" });
    const desk = await signIn(email.toUpperCase(), { userAgent: FIREFOX, ip: "198.51.100.21" });
    const gone = await signIn(email, { userAgent: FIREFOX });
    await db
      .update(webSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(webSessions.id, rowId(gone)));
    await signIn(uniqueEmail("bystander"));

    const { context, viewer: me } = await viewer(desk);
    const listed = await listHolderSessions(context, me);
    expect(listed.map((s) => [s.browser, s.system, s.ip, s.current])).toEqual([
      ["Firefox 128", "Windows 10", "198.51.100.21", true],
      ["Safari 17", "iOS 17.5", "198.51.100.20", false],
    ]);
    const text = JSON.stringify(listed);
    for (const cookie of [phone, desk, gone]) {
      expect(text).not.toContain(rowId(cookie));
      expect(text).not.toContain(tokenOf(cookie));
    }
    // The handles are the viewer's: the same session has another handle in another session's listing.
    const fromPhone = await viewer(phone);
    const phoneListed = await listHolderSessions(fromPhone.context, fromPhone.viewer);
    expect(phoneListed[0]?.current).toBe(true);
    const deskSeenFromPhone = phoneListed.find((s) => !s.current)?.handle;
    expect(deskSeenFromPhone).toBeDefined();
    expect(listed.map((s) => s.handle)).not.toContain(deskSeenFromPhone);
    expect(listed[0]?.handle).toBe(sessionHandle(SECRET, rowId(desk), rowId(desk)));
  });

  test("ending one session by its handle: that row goes; forged, foreign, own and stale handles end nothing", async () => {
    const email = uniqueEmail("end-one");
    const mine = await signIn(email);
    const other = await signIn(email, { userAgent: IPHONE });
    const stranger = uniqueEmail("stranger");
    const theirs = await signIn(stranger);
    const theirsToo = await signIn(stranger);

    const { context, viewer: me } = await viewer(mine);
    const listed = await listHolderSessions(context, me);
    const own = listed.find((s) => s.current)?.handle ?? "";
    const target = listed.find((s) => !s.current)?.handle ?? "";
    // Another holder's handle (from their own listing) names no session of mine.
    const them = await viewer(theirs);
    const foreign = (await listHolderSessions(them.context, them.viewer)).find((s) => !s.current)?.handle;

    for (const handle of [
      "A".repeat(43),
      "not a handle",
      `${target}x`,
      foreign ?? "",
      own,
      sessionHandle("another-secret-0123456789abcdefghij", rowId(mine), rowId(other)),
    ]) {
      expect(await endHolderSession(context, me, handle)).toBeNull();
    }
    // Another holder with my handle for their row: still nothing (the owner is part of the delete).
    expect(await endHolderSession(them.context, them.viewer, target)).toBeNull();
    for (const cookie of [mine, other, theirs, theirsToo]) expect(await row(cookie)).toBeDefined();

    expect(await endHolderSession(context, me, target)).toBe("Safari 17 on iOS 17.5");
    expect(await row(other)).toBeUndefined();
    expect(await row(mine)).toBeDefined();
    // The same handle again: already ended.
    expect(await endHolderSession(context, me, target)).toBeNull();
  });

  test("signing out all other sessions keeps this one and every other holder's", async () => {
    const email = uniqueEmail("end-others");
    const mine = await signIn(email);
    const others = [await signIn(email), await signIn(email, { userAgent: IPHONE })];
    const bystander = await signIn(uniqueEmail("bystander"));
    const { context, viewer: me } = await viewer(mine);
    expect(await endOtherHolderSessions(context, me)).toBe(2);
    for (const cookie of others) expect(await row(cookie)).toBeUndefined();
    expect(await row(mine)).toBeDefined();
    expect(await row(bystander)).toBeDefined();
    expect(await endOtherHolderSessions(context, me)).toBe(0);
  });

  test("after a password change this session moves to a new id (sign-in time, browser and address kept) and every other one ends", async () => {
    const email = uniqueEmail("changed");
    const mine = await signIn(email, { userAgent: IPHONE, ip: "198.51.100.30" });
    const elsewhere = await signIn(email);
    const before = await row(mine);
    const context = contextFor(db, "198.51.100.30");
    const session = await getSession(request("/security/password", { cookie: mine }), context);
    const { setCookie, ended } = await keepOnlyThisSession(
      request("/security/password", { cookie: mine }),
      session,
      context,
      email,
    );
    expect(ended).toBe(1);
    expect(await row(elsewhere)).toBeUndefined();
    expect(await row(mine)).toBeUndefined();
    const now = await row(cookieFrom(setCookie));
    expect(now).toMatchObject({
      owner: sessionOwner(SECRET, email),
      userAgent: IPHONE,
      lastIp: "198.51.100.30",
      createdAt: before?.createdAt,
    });
    const { user } = await requireUser(
      request("/home", { cookie: cookieFrom(setCookie) }),
      contextFor(db, "198.51.100.30"),
    );
    expect(user.email).toBe(email);
  });
});

test("browsers and systems as the list names them", () => {
  expect(describeUserAgent(FIREFOX)).toEqual({ browser: "Firefox 128", system: "Windows 10" });
  expect(describeUserAgent(IPHONE)).toEqual({ browser: "Safari 17", system: "iOS 17.5" });
  expect(
    describeUserAgent(
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36",
    ),
  ).toEqual({ browser: "Chrome 140", system: "Linux" });
  expect(describeUserAgent("Lynx/2.9.0dev.12 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.7.9")).toEqual({
    browser: "Lynx",
    system: "Unknown system",
  });
  expect(describeUserAgent(null)).toEqual({ browser: "Unknown browser", system: "Unknown system" });
  expect(describeUserAgent("   ")).toEqual({ browser: "Unknown browser", system: "Unknown system" });
  expect(describeUserAgent("x".repeat(512)).browser.length).toBeLessThanOrEqual(60);
});
