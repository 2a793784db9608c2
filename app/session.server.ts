// Server-side sessions. The browser holds only an opaque, signed session token
// (HttpOnly, SameSite=Lax, Secure in production). The row behind it is keyed by
// the token's SHA-256 and its data is encrypted under a key derived from the
// token itself, so a copy of the sessions table reveals no phrase and no token.
//
// Timeouts (record 015): the store ends a session after SESSION_IDLE_MINUTES
// without activity and SESSION_MAX_HOURS after sign-in, on the row itself.
// Every request that reads a live session is activity, except the signed-in
// shell's background requests (the unread-count poll, the live-event stream and
// its reconnections, record 033); its 60 s data refresh runs only
// while the user touches the page: a tab left open still times out.
import type { SubmissionResult } from "@conform-to/react";
import { memoize } from "../common/memo.ts";
import { sessionOwner } from "../common/session-owner.ts";
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import {
  createSession,
  createSessionStorage,
  redirect,
  type Cookie,
  type RouterContextProvider,
  type Session,
  type SessionStorage,
} from "react-router";
import { servicesContext, type AppServices } from "./context.ts";
import { createSignedCookie } from "./signed-cookie.server.ts";

export interface SignedInUser {
  email: string;
  words: string[];
  userId: string;
}

export interface SessionData {
  user: SignedInUser;
  /** Create-wallet step 2: the account exists, the user has not pressed Next yet. */
  created: SignedInUser;
  /** Restore flow state between steps; the phrase never travels in hidden inputs. */
  restore: { step: 1 | 2 | 3; email: string; words?: string[]; twoFactor?: boolean };
  /** The preferred display currency; a fresh session (every login) starts at USD. */
  currency: string;
  /**
   * Sign-in's code step (issue 27, record 048): the password was right and the
   * account asks for a code. Kept for SIGN_IN_CODE_MINUTES in the sealed row,
   * like the phrase of a signed-in session; never in the page or the URL.
   */
  pendingSignIn: { email: string; password: string; until: number };
  /** A code was given in this session: the backend's grant covers sends and reveals until `until`. */
  stepUp: { grant: string; until: number };
  /** Two-factor enrolment between its steps: the secret awaiting its first code. */
  enrolment: { secret: string; uri: string; until: number };
}

/** How long sign-in's code step waits for its code. */
export const SIGN_IN_CODE_MINUTES = 5;

/** The session's step-up grant while it is good (issue 27), else undefined. */
export function liveGrant(session: AppSession, now = Date.now()): string | undefined {
  const stepUp = session.get("stepUp");
  return stepUp && stepUp.until > now ? stepUp.grant : undefined;
}

export interface FlashData {
  notice: string;
  /**
   * A refused form posted without scripts (the contact popup, the support
   * modal): its errors and values, shown once by the popup or modal it was
   * sent from (post → redirect → get, record 037).
   */
  formReply: { form: "contact" | "support"; result: SubmissionResult<string[]> };
}

export type AppSession = Session<SessionData, FlashData>;

/** The tokens createData issues: 32 random bytes, base64url. Anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/u;

/** Requests the browser makes on its own, which must not keep a session alive. */
const BACKGROUND_PATHS = new Set(["/unread-count", "/unread-count.data", "/events"]);

function isActivity(request: Request): boolean {
  try {
    return !BACKGROUND_PATHS.has(new URL(request.url).pathname);
  } catch {
    return true;
  }
}

// Whose session a row is (common/session-owner.ts: the back office counts sessions by it too).
export { sessionOwner };

/** A session belongs to the account signed in on it, or just created on it (create-wallet step 2). */
function ownerOf(secret: string, data: Partial<SessionData>): string | null {
  const email = data.user?.email ?? data.created?.email;
  return typeof email === "string" ? sessionOwner(secret, email) : null;
}

function rowKey(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function dataKey(secret: string, token: string): Buffer {
  return createHmac("sha256", secret).update(`coinkeep session data v1:${token}`).digest();
}

// Format: base64url(iv[12] | tag[16] | ciphertext)
function seal(secret: string, token: string, data: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", dataKey(secret, token), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(data), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

function open(secret: string, token: string, blob: string): unknown {
  try {
    const raw = Buffer.from(blob, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", dataKey(secret, token), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** What one request read of its session: the cookie's token and the live row's data (null: none). */
interface SessionRead {
  token: string | null;
  data: SessionData | null;
}

interface Sessions {
  storage: SessionStorage<SessionData, FlashData>;
  cookie: Cookie;
  /** The token and live data behind a Cookie header (a forged, stale or missing cookie reads as none). */
  load(cookieHeader: string | null, activity: boolean): Promise<SessionRead>;
  /** Commits the session's data under a new token; returns the token and the Set-Cookie value. */
  rotate(session: AppSession): Promise<{ token: string; setCookie: string }>;
}

/** The session machinery, made once per host's services. */
const sessionsFor = memoize((s: AppServices): Sessions => {
  const { sessionSecret, cookieSecure } = s.config;
  const kv = s.sessions;
  const cookie = createSignedCookie(cookieSecure ? "__Host-ck_session" : "ck_session", {
    httpOnly: true,
    sameSite: "lax",
    secure: cookieSecure,
    path: "/",
    secrets: [sessionSecret],
  });
  async function read(token: string, activity = false): Promise<SessionData | null> {
    if (!TOKEN.test(token)) return null;
    const blob = await kv.get(rowKey(token), { touch: activity });
    if (blob === null) return null;
    const data = open(sessionSecret, token, blob);
    // Sealed by us under this token (AES-GCM): its shape is ours.
    return data && typeof data === "object" ? (data as SessionData) : null;
  }
  const storage = createSessionStorage<SessionData, FlashData>({
    cookie,
    async createData(data) {
      const token = randomBytes(32).toString("base64url");
      await kv.insert(rowKey(token), seal(sessionSecret, token, data), ownerOf(sessionSecret, data));
      return token;
    },
    readData: (token) => read(token),
    async updateData(token, data) {
      await kv.update(rowKey(token), seal(sessionSecret, token, data), ownerOf(sessionSecret, data));
    },
    async deleteData(token) {
      if (TOKEN.test(token)) await kv.remove(rowKey(token));
    },
  });
  const sessions: Sessions = {
    storage,
    cookie,
    async rotate(session) {
      const token = randomBytes(32).toString("base64url");
      const data = session.data;
      const blob = seal(sessionSecret, token, data);
      const owner = ownerOf(sessionSecret, data);
      const old = session.id;
      // The old row moves to the new key (it keeps its created_at, so a rotation
      // never extends the absolute lifetime); a visitor without one gets a new row.
      const moved = TOKEN.test(old) && (await kv.rekey(rowKey(old), rowKey(token), blob, owner));
      if (!moved) await kv.insert(rowKey(token), blob, owner);
      return { token, setCookie: await cookie.serialize(token) };
    },
    async load(cookieHeader, activity) {
      // A forged, altered, truncated or stale cookie is simply no session: the
      // visitor is anonymous and a commit starts a new row under a new token
      // (never an update of a row that is gone).
      let token: unknown = null;
      try {
        token = cookieHeader ? await cookie.parse(cookieHeader) : null;
      } catch {
        token = null;
      }
      if (typeof token !== "string") return { token: null, data: null };
      return { token, data: await read(token, activity) };
    },
  };
  return sessions;
});

export function sessionStorageFor(s: AppServices): SessionStorage<SessionData, FlashData> {
  return sessionsFor(s).storage;
}

export function services(context: Readonly<RouterContextProvider>): AppServices {
  return context.get(servicesContext);
}

/**
 * Sessions an action rotated (commitRotatedSession), by request context: the
 * loaders that render the same request's answer run with the old cookie, whose
 * row has moved, so they are handed the rotated session instead. Keyed by the
 * cookie too: only the request that carried that cookie gets it.
 */
const rotatedIn = new WeakMap<
  Readonly<RouterContextProvider>,
  { cookie: string | null; session: AppSession }
>();

/**
 * The session each request read, by request context: the root loader, the
 * layout's and the page's (and an action before them) each ask for the
 * session, and the store is read once per request. Each caller gets its own
 * Session object over a copy of the data, as if it had read the row itself;
 * a commit or destroy within the request updates what later callers get.
 */
const readIn = new WeakMap<
  Readonly<RouterContextProvider>,
  { cookie: string | null; url: string; read: Promise<SessionRead> }
>();

export async function getSession(request: Request, context: Readonly<RouterContextProvider>) {
  const cookie = request.headers.get("Cookie");
  const rotated = rotatedIn.get(context);
  if (rotated && rotated.cookie === cookie) return rotated.session;
  // Keyed by the cookie and the URL too: only the same request's callers share a read.
  let entry = readIn.get(context);
  if (!entry || entry.cookie !== cookie || entry.url !== request.url) {
    entry = {
      cookie,
      url: request.url,
      read: sessionsFor(services(context)).load(cookie, isActivity(request)),
    };
    readIn.set(context, entry);
  }
  const { token, data } = await entry.read;
  if (token === null || data === null) return createSession<SessionData, FlashData>();
  return createSession<SessionData, FlashData>(structuredClone(data), token);
}

/** After a commit or destroy of `token` within this request: what later readers of it see. */
function rememberWrite(context: Readonly<RouterContextProvider>, token: string, data: SessionData | null) {
  const entry = readIn.get(context);
  if (!entry) return;
  const read = entry.read.then((was) =>
    was.token === token ? { token, data: data && structuredClone(data) } : was,
  );
  readIn.set(context, { ...entry, read });
}

/**
 * Ends every session of an account (a restore changed its password, record
 * 015): the rows go, so each of those browsers is anonymous on its next request.
 */
export async function endSessionsOf(
  context: Readonly<RouterContextProvider>,
  email: string,
): Promise<number> {
  const s = services(context);
  return s.sessions.removeOwner(sessionOwner(s.config.sessionSecret, email));
}

export async function commitSession(session: AppSession, context: Readonly<RouterContextProvider>) {
  const setCookie = await sessionStorageFor(services(context)).commitSession(session);
  if (session.id) rememberWrite(context, session.id, session.data as SessionData);
  return setCookie;
}

/**
 * Commits the session under a NEW id (issue 12: session fixation). Every step
 * that stores state in the session — create-wallet step 1, each restore step,
 * the security reveal; sign-in has startUserSession — commits through this, so
 * the state is only ever reachable through an id issued by the step that
 * wrote it: an id planted in the browser beforehand (or read off it) is dead
 * from that step on. Returns the Set-Cookie value.
 */
export async function commitRotatedSession(
  request: Request,
  session: AppSession,
  context: Readonly<RouterContextProvider>,
) {
  const { token, setCookie } = await sessionsFor(services(context)).rotate(session);
  // The loaders that render this answer (an action that returns data) read it under the new id.
  rotatedIn.set(context, {
    cookie: request.headers.get("Cookie"),
    session: createSession<SessionData, FlashData>(session.data as SessionData, token),
  });
  return setCookie;
}

export async function destroySession(session: AppSession, context: Readonly<RouterContextProvider>) {
  rotatedIn.delete(context);
  if (session.id) rememberWrite(context, session.id, null);
  return sessionStorageFor(services(context)).destroySession(session);
}

/**
 * Signs a user in on a fresh session: the old row is destroyed and a new token
 * issued (session fixation), carrying over nothing but a notice to show.
 * Returns the Set-Cookie headers to send with the redirect.
 */
export async function startUserSession(
  request: Request,
  context: Readonly<RouterContextProvider>,
  user: SignedInUser,
  stepUp?: SessionData["stepUp"],
): Promise<Headers> {
  const storage = sessionStorageFor(services(context));
  const old = await getSession(request, context);
  rotatedIn.delete(context);
  const headers = new Headers();
  if (old.id) {
    rememberWrite(context, old.id, null);
    headers.append("Set-Cookie", await storage.destroySession(old));
  }
  const fresh = createSession<SessionData, FlashData>();
  fresh.set("user", user);
  if (stepUp) fresh.set("stepUp", stepUp);
  headers.append("Set-Cookie", await storage.commitSession(fresh));
  return headers;
}

export async function getUser(request: Request, context: Readonly<RouterContextProvider>) {
  const session = await getSession(request, context);
  return { session, user: session.get("user") };
}

/**
 * The signed-in session an event stream watches (record 033): its user, the
 * row's key (what the host's session notifications name) and a reader of the
 * row's deadline that never counts as activity. Null when nobody is signed in.
 */
export async function liveSession(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Promise<{ user: SignedInUser; key: string; deadline: () => Promise<number | null> } | null> {
  const { session, user } = await getUser(request, context);
  if (!user || !session.id || !TOKEN.test(session.id)) return null;
  const key = rowKey(session.id);
  const kv = services(context).sessions;
  return { user, key, deadline: () => kv.deadline(key) };
}

/** Guard for protected loaders and actions: visitors go to the landing page. */
export async function requireUser(request: Request, context: Readonly<RouterContextProvider>) {
  const { session, user } = await getUser(request, context);
  if (!user) throw redirect("/");
  return { session, user };
}

/** Guard for public pages: a signed-in user is sent to /home. */
export async function requireAnonymous(request: Request, context: Readonly<RouterContextProvider>) {
  const { session, user } = await getUser(request, context);
  if (user) throw redirect("/home");
  return session;
}
