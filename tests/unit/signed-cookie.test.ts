// The session cookie's own signing (node:crypto) against React Router's
// (WebCrypto): the same bytes both ways, so sessions survive the switch, and a
// cookie changed anywhere is nobody's.
import { createCookie } from "react-router";
import { describe, expect, test } from "vitest";
import { createSignedCookie } from "../../app/signed-cookie.server.ts";

const OPTIONS = { httpOnly: true, sameSite: "lax", secure: true, path: "/" } as const;
const TOKEN = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE";

const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === "A" ? "B" : "A") + s.slice(at + 1);

describe("the session cookie's signature", () => {
  const ours = createSignedCookie("__Host-ck_session", { ...OPTIONS, secrets: ["s3cret"] });
  const theirs = createCookie("__Host-ck_session", { ...OPTIONS, secrets: ["s3cret"] });

  test("writes exactly what React Router writes, and each reads the other's", async () => {
    const mine = await ours.serialize(TOKEN);
    expect(mine).toBe(await theirs.serialize(TOKEN));
    expect(mine).toMatch(/^__Host-ck_session=[^;]+\.[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/u);
    const header = mine.split(";")[0] ?? "";
    expect(await ours.parse(header)).toBe(TOKEN);
    expect(await theirs.parse(header)).toBe(TOKEN);
    // Deleting: the same expired, empty cookie.
    const gone = { expires: new Date(0) };
    expect(await ours.serialize("", gone)).toBe(await theirs.serialize("", gone));
  });

  test("a changed value, a changed or missing signature, another secret: not a session", async () => {
    const header = (await ours.serialize(TOKEN)).split(";")[0] ?? "";
    const [name, value = ""] = header.split("=");
    const raw = decodeURIComponent(value);
    const dot = raw.lastIndexOf(".");
    for (const forged of [
      flip(raw, 2),
      flip(raw, dot + 3),
      raw.slice(0, dot),
      `${raw.slice(0, dot)}.`,
      `${raw}x`,
      "",
      "e30=.c2lnbmF0dXJl",
    ]) {
      const parsed = await ours.parse(`${name}=${encodeURIComponent(forged)}`);
      expect([forged, parsed === TOKEN]).toEqual([forged, false]);
    }
    const other = createSignedCookie("__Host-ck_session", { ...OPTIONS, secrets: ["other"] });
    expect(await other.parse(header)).toBeNull();
    // Rotation: a new first secret still reads cookies signed with the old one.
    const rotated = createSignedCookie("__Host-ck_session", { ...OPTIONS, secrets: ["new", "s3cret"] });
    expect(await rotated.parse(header)).toBe(TOKEN);
    expect(await ours.parse(null)).toBeNull();
    expect(await ours.parse("other=1")).toBeNull();
  });
});
