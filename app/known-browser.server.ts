// "Sign-in from a browser not seen on this account before" (issue 28, record 049): each browser
// gets a long-lived random identifier in an HttpOnly cookie, set at its first sign-in; the
// backend keeps its HMAC per account (signInSeen) and mails the holder when an account they
// have used before is signed in to from a browser it has not. The identifier is not a
// credential (it signs nobody in) but is kept like one: never in a page, a URL or a log.
import { randomBytes } from "node:crypto";
import type { RouterContextProvider } from "react-router";
import { log } from "../common/log.ts";
import { backend } from "./backend.server.ts";
import { describeUserAgent } from "./holder-sessions.server.ts";
import { services } from "./session.server.ts";

const ID = /^[A-Za-z0-9_-]{43}$/u;
const MAX_AGE_SECONDS = 400 * 24 * 3600;

function cookieName(secure: boolean): string {
  return secure ? "__Host-ck_browser" : "ck_browser";
}

function readId(request: Request, name: string): string | null {
  for (const part of (request.headers.get("Cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) {
      const value = rest.join("=");
      return ID.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * After a sign-in or an account's creation: the browser's identifier (made, and its cookie
 * added to `headers`, when it has none) is reported to the backend with the browser's name.
 * A failure here never stops the sign-in: it is logged and the holder goes on.
 */
export async function noteBrowser(
  request: Request,
  context: Readonly<RouterContextProvider>,
  user: { email: string; words: readonly string[] },
  headers: Headers,
): Promise<void> {
  const secure = services(context).config.cookieSecure;
  const name = cookieName(secure);
  let id = readId(request, name);
  if (!id) {
    id = randomBytes(32).toString("base64url");
    headers.append(
      "Set-Cookie",
      `${name}=${id}; Path=/; Max-Age=${MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`,
    );
  }
  const { browser, system } = describeUserAgent(request.headers.get("User-Agent"));
  const seen = await backend(context).signInSeen({
    email: user.email,
    twelveWords: [...user.words],
    browserId: id,
    browserName: `${browser} on ${system}`.slice(0, 200),
  });
  if (!seen.ok) log.warn("could not note the sign-in's browser", { kind: seen.kind });
}
