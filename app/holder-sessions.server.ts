// A holder's sessions (issue 27, record 048): every live session of the
// signed-in account, as /security/sessions lists them, and ending one of them
// or all the others. The rows are the web tier's own (web_sessions through
// SessionKV, record 003), found by their owner tag; the backend is not asked.
//
// A page never holds a session's id, token or row key. Each listed session is
// named in its form by a handle: an HMAC, under the session secret, of the
// viewer's own row key and the listed row's key. Only the server can make one,
// it means nothing in another session (or after either session's id rotates),
// and the action finds the row again by recomputing the handles of the
// viewer's own rows: a handle can only ever end a session of the same owner.
import { createHmac, timingSafeEqual } from "node:crypto";
import { parse } from "bowser";
import { z } from "zod";
import type { RouterContextProvider } from "react-router";
import type { OwnedSession } from "./context.ts";
import { log } from "../common/log.ts";
import {
  services,
  sessionKeyOf,
  sessionOwner,
  type AppSession,
  type SignedInUser,
} from "./session.server.ts";

/** A handle is 32 bytes, base64url: 43 characters. */
export const HANDLE = /^[A-Za-z0-9_-]{43}$/u;

/** The sessions page's forms: sign out one session (by its handle), or all the others. */
export const sessionsFormSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("end"), session: z.string().regex(HANDLE) }),
  z.object({ intent: z.literal("end-others") }),
]);

/** A session as the page shows it: what it is, where and when; never its key. */
export interface ListedSession {
  handle: string;
  /** "Chrome 140", "Safari 17.5", or "Unknown browser". */
  browser: string;
  /** "Linux", "Windows 10", "iOS 17.5", or "Unknown system". */
  system: string;
  /** The address it was last seen from, when known. */
  ip: string | null;
  /** ISO 8601: the sign-in, and the last activity recorded. */
  startedAt: string;
  lastSeenAt: string;
  current: boolean;
}

/** A name as the list shows it: a User-Agent can say anything, at any length. */
const shown = (value: string) => value.slice(0, 60);

/** A browser's name and version, and its system, from its User-Agent (bowser: MIT, no dependencies). */
export function describeUserAgent(userAgent: string | null): { browser: string; system: string } {
  const text = userAgent?.trim() ?? "";
  // bowser refuses an empty string; a missing User-Agent is simply unknown.
  if (text === "") return { browser: "Unknown browser", system: "Unknown system" };
  const parsed = parse(text);
  // An agent bowser does not know comes back whole, with a version from any token: it is named by
  // its first product token, without a version ("Lynx/2.9.0dev.12 libwww-FM/2.14 SSL-MM/1.4.1" → Lynx).
  const raw = parsed.browser.name ?? "";
  const known = !raw.includes("/");
  const name = known ? raw.trim() : (raw.split("/")[0]?.trim() ?? "");
  const major = known ? ((parsed.browser.version ?? "").split(".")[0] ?? "") : "";
  const os = parsed.os.name ?? "";
  const osVersion = parsed.os.versionName ?? parsed.os.version ?? "";
  return {
    browser: name ? shown(/^\d+$/u.test(major) ? `${name} ${major}` : name) : "Unknown browser",
    system: os
      ? shown(osVersion && !osVersion.startsWith("NT") ? `${os} ${osVersion}` : os)
      : "Unknown system",
  };
}

/** The handle of `rowKey` in the listing shown to the session `viewerKey`. */
export function sessionHandle(secret: string, viewerKey: string, rowKey: string): string {
  return createHmac("sha256", secret)
    .update(`coinkeep session handle v1:${viewerKey}:${rowKey}`)
    .digest("base64url");
}

function sameHandle(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface Viewer {
  session: AppSession;
  user: SignedInUser;
}

function ownerAndKey(context: Readonly<RouterContextProvider>, { session, user }: Viewer) {
  const s = services(context);
  return { s, owner: sessionOwner(s.config.sessionSecret, user.email), key: sessionKeyOf(session) };
}

/** The signed-in holder's live sessions, this one first, then the most recently used. */
export async function listHolderSessions(
  context: Readonly<RouterContextProvider>,
  viewer: Viewer,
): Promise<ListedSession[]> {
  const { s, owner, key } = ownerAndKey(context, viewer);
  if (key === null) return [];
  const rows = await s.sessions.listOwner(owner);
  const listed = rows.map((row: OwnedSession): ListedSession => ({
    handle: sessionHandle(s.config.sessionSecret, key, row.key),
    ...describeUserAgent(row.userAgent),
    ip: row.lastIp,
    startedAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    current: row.key === key,
  }));
  return listed.toSorted((a, b) => Number(b.current) - Number(a.current));
}

/**
 * Ends the viewer's session that `handle` names, never the viewer's own (that
 * is Exit). Returns what it was ("Chrome 140 on Linux"), or null when the
 * handle names none of the viewer's other live sessions: forged, of another
 * listing, or already ended.
 */
export async function endHolderSession(
  context: Readonly<RouterContextProvider>,
  viewer: Viewer,
  handle: string,
): Promise<string | null> {
  const { s, owner, key } = ownerAndKey(context, viewer);
  if (key === null || !HANDLE.test(handle)) return null;
  const rows = await s.sessions.listOwner(owner);
  const row = rows.find(
    (r) => r.key !== key && sameHandle(sessionHandle(s.config.sessionSecret, key, r.key), handle),
  );
  // The delete names the owner again: whatever happened since the read, no other holder's row goes.
  if (!row || !(await s.sessions.removeOwned(owner, row.key))) return null;
  log.info("session ended by its holder", { count: 1 });
  const { browser, system } = describeUserAgent(row.userAgent);
  return `${browser} on ${system}`;
}

/** Ends every session of the viewer's account but the viewer's own; how many ended. */
export async function endOtherHolderSessions(
  context: Readonly<RouterContextProvider>,
  viewer: Viewer,
): Promise<number> {
  const { s, owner, key } = ownerAndKey(context, viewer);
  if (key === null) return 0;
  const ended = await s.sessions.removeOwner(owner, { except: key });
  log.info("sessions ended by their holder", { count: ended });
  return ended;
}
