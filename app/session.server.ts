// Server-side sessions. The browser holds only an opaque, signed session token
// (HttpOnly, SameSite=Lax, Secure in production). The row behind it is keyed by
// the token's SHA-256 and its data is encrypted under a key derived from the
// token itself, so a copy of the sessions table reveals no phrase and no token.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import {
  createCookie,
  createSessionStorage,
  redirect,
  type RouterContextProvider,
  type Session,
  type SessionStorage,
} from "react-router";
import { servicesContext, type AppServices } from "./context";

/** Absolute lifetime of a session row; the cookie itself is a browser-session cookie. */
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

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
  restore: { step: 2 | 3; email: string; words?: string[] };
  /** The preferred display currency; a fresh session (every login) starts at USD. */
  currency: string;
}

export interface FlashData {
  notice: string;
}

export type AppSession = Session<SessionData, FlashData>;

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

const storages = new WeakMap<AppServices, SessionStorage<SessionData, FlashData>>();

export function sessionStorageFor(s: AppServices): SessionStorage<SessionData, FlashData> {
  const known = storages.get(s);
  if (known) return known;
  const { sessionSecret, cookieSecure } = s.config;
  const kv = s.sessions;
  const storage = createSessionStorage<SessionData, FlashData>({
    cookie: createCookie(cookieSecure ? "__Host-ck_session" : "ck_session", {
      httpOnly: true,
      sameSite: "lax",
      secure: cookieSecure,
      path: "/",
      secrets: [sessionSecret],
    }),
    async createData(data, expires) {
      const token = randomBytes(32).toString("base64url");
      const until = expires ?? new Date(Date.now() + SESSION_TTL_MS);
      await kv.insert(rowKey(token), seal(sessionSecret, token, data), until);
      return token;
    },
    async readData(token) {
      const blob = await kv.get(rowKey(token));
      if (blob === null) return null;
      const data = open(sessionSecret, token, blob);
      return data && typeof data === "object" ? (data as never) : null;
    },
    async updateData(token, data, expires) {
      const until = expires ?? new Date(Date.now() + SESSION_TTL_MS);
      await kv.update(rowKey(token), seal(sessionSecret, token, data), until);
    },
    async deleteData(token) {
      await kv.remove(rowKey(token));
    },
  });
  storages.set(s, storage);
  return storage;
}

export function services(context: Readonly<RouterContextProvider>): AppServices {
  return context.get(servicesContext);
}

export async function getSession(request: Request, context: Readonly<RouterContextProvider>) {
  return sessionStorageFor(services(context)).getSession(request.headers.get("Cookie"));
}

export async function commitSession(session: AppSession, context: Readonly<RouterContextProvider>) {
  return sessionStorageFor(services(context)).commitSession(session);
}

export async function destroySession(session: AppSession, context: Readonly<RouterContextProvider>) {
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
): Promise<Headers> {
  const storage = sessionStorageFor(services(context));
  const old = await storage.getSession(request.headers.get("Cookie"));
  const headers = new Headers();
  if (old.id) headers.append("Set-Cookie", await storage.destroySession(old));
  const fresh = await storage.getSession(null);
  fresh.set("user", user);
  headers.append("Set-Cookie", await storage.commitSession(fresh));
  return headers;
}

export async function getUser(request: Request, context: Readonly<RouterContextProvider>) {
  const session = await getSession(request, context);
  return { session, user: session.get("user") };
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
