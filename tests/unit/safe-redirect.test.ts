// The one safe-redirect check (app/lib/safe-redirect.ts, issue 12 hole 4):
// what a browser would follow off-site, or what would break a Location header,
// always becomes the fallback; a path on this site is kept, as the URL parser
// writes it.
import { describe, expect, test } from "vitest";
import { safeLocalUrl, safeRedirect } from "../../app/lib/safe-redirect.ts";

/** Where a browser on https://coinkeep.example goes with this Location. */
function followed(location: string): string {
  // Browsers strip tabs and newlines and read "\" as "/" before resolving.
  const browserly = location.replace(/[\t\n\r]/gu, "").replaceAll("\\", "/");
  return new URL(browserly, "https://coinkeep.example/home").origin;
}

describe("safeRedirect", () => {
  const offSite = [
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/\r/evil.example",
    "\t//evil.example",
    "\n//evil.example",
    " //evil.example",
    "//evil.example",
    "//evil.example/path",
    "///evil.example",
    "////evil.example",
    "/\\evil.example",
    "/\\/evil.example",
    "\\/evil.example",
    "\\\\evil.example",
    "/.//evil.example",
    "/./\\evil.example",
    "https://evil.example",
    "https:/evil.example",
    "https:evil.example",
    "HTTPS://evil.example",
    "javascript:alert(1)",
    " javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox",
    "%2F%2Fevil.example",
    "evil.example",
    "home",
    "",
    "/\u0000/evil.example",
    "/\u007f/evil.example",
    "/\u00a0/evil.example",
    "/\u2028/evil.example",
    "/\u3000/evil.example",
    "/\ufeff/evil.example",
    `/${"a".repeat(3000)}`,
  ];

  test.each(offSite)("%j goes to the fallback", (target) => {
    expect(safeRedirect(target, "/home")).toBe("/home");
    expect(safeLocalUrl(target)).toBeNull();
  });

  test("anything not a string goes to the fallback", () => {
    for (const target of [null, undefined, 42, {}, ["/home"], new File([], "x")]) {
      expect(safeRedirect(target, "/fallback")).toBe("/fallback");
    }
  });

  test.each([
    ["/home", "/home"],
    ["/history?page=2", "/history?page=2"],
    ["/wallet/btc?modal=support#top", "/wallet/btc?modal=support#top"],
    // Encoded forms stay encoded: a browser does not decode them into a host.
    ["/%2F%2Fevil.example", "/%2F%2Fevil.example"],
    ["/%09/evil.example", "/%09/evil.example"],
    ["/%5Cevil.example", "/%5Cevil.example"],
    // The parser's own form: dot segments resolved, non-ASCII percent-encoded.
    ["/a/../history", "/history"],
    ["/wallet/é", "/wallet/%C3%A9"],
  ])("%j is kept as %j", (target, expected) => {
    expect(safeRedirect(target)).toBe(expected);
    expect(followed(expected)).toBe("https://coinkeep.example");
  });

  test("whatever it returns, a browser stays on this site and Node accepts it as a header", () => {
    const samples = [
      "/ok",
      "/\t/x",
      "/%0d%0aSet-Cookie:x",
      "/\u2029x",
      "/\\x",
      "//x",
      "/.//x",
      "/..//x",
      "/../..//x",
    ];
    for (const target of samples) {
      const location = safeRedirect(target, "/home");
      expect(followed(location)).toBe("https://coinkeep.example");
      expect(() => new Headers({ Location: location })).not.toThrow();
      expect(location.startsWith("//")).toBe(false);
    }
  });
});
