// The one check for every redirect target that comes from input (a form's
// redirectTo / returnTo, a query parameter). STYLE.md: "Every redirect target
// from user input goes through a safe-redirect check."
//
// Prefix checks alone are not enough (issue 12, hole 4): browsers strip tabs
// and newlines from a URL and read "\" as "/", so "/\t/evil.example" or
// "/\\evil.example" becomes "//evil.example", another host; and a raw CR/LF in
// a Location header makes Node throw (a 500 that echoed the value into the
// log). So a target is refused when it holds any control character,
// whitespace or backslash, must be a path ("/x", never "//x"), and is parsed
// with the URL parser against a placeholder origin: only a result on that
// origin passes, and what is returned is the parser's own serialisation
// (percent-encoded, never the raw input).

const ORIGIN = "http://coinkeep.invalid";

/** Control characters (C0, DEL, C1), any whitespace, and the backslash. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff\\]/u;

/** Longer targets are not ours (our own paths are short): refused, not truncated. */
const MAX_LENGTH = 2048;

/** The target as a URL on our own origin, or null when it is not a safe local path. */
export function safeLocalUrl(target: unknown): URL | null {
  if (typeof target !== "string" || target.length === 0 || target.length > MAX_LENGTH) return null;
  if (UNSAFE.test(target)) return null;
  if (!target.startsWith("/") || target.startsWith("//")) return null;
  let url: URL;
  try {
    url = new URL(target, ORIGIN);
  } catch {
    return null;
  }
  if (url.origin !== ORIGIN) return null;
  // "/.//evil.example" parses to the path "//evil.example": as a Location that is another host.
  if (url.pathname.startsWith("//")) return null;
  return url;
}

/** A path on this site ("/x?y#z", as the URL parser writes it), else the fallback. */
export function safeRedirect(target: unknown, fallback = "/home"): string {
  const url = safeLocalUrl(target);
  return url ? `${url.pathname}${url.search}${url.hash}` : fallback;
}
