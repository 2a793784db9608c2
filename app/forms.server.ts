// Every form post passes through here: the CSRF token (double-submit cookie,
// signed) and, on public forms, the honeypot. A failure is a plain 403/400.
import { randomBytes } from "node:crypto";
import type { SubmissionResult } from "@conform-to/react";
import { data, redirect, type RouterContextProvider } from "react-router";
import { CSRF, CSRFError } from "remix-utils/csrf/server";
import { Honeypot, SpamError } from "remix-utils/honeypot/server";
import { memoize } from "../common/memo.ts";
import type { AppServices } from "./context.ts";
import { commitSession, services, type AppSession, type FlashData } from "./session.server.ts";
import { createSignedCookie } from "./signed-cookie.server.ts";

const HONEYPOT_FIELD_NAME = "ck_name__confirm";
/** One CSRF checker per host's services. */
export const csrfFor: (s: AppServices) => CSRF = memoize(
  (s) =>
    new CSRF({
      cookie: createSignedCookie(s.config.cookieSecure ? "__Host-ck_csrf" : "ck_csrf", {
        httpOnly: true,
        sameSite: "lax",
        secure: s.config.cookieSecure,
        path: "/",
        secrets: [s.config.sessionSecret],
      }),
      secret: s.config.sessionSecret,
    }),
);

/** One honeypot per host's services. */
export const honeypotFor: (s: AppServices) => Honeypot = memoize(
  (s) =>
    new Honeypot({
      nameFieldName: HONEYPOT_FIELD_NAME,
      validFromFieldName: "ck_from__confirm",
      // Stable across processes, so a form rendered by one process validates on another.
      encryptionSeed: s.config.sessionSecret,
    }),
);

const MASKED = "m.";

/**
 * The CSRF token as a page carries it: XORed with a fresh random pad of its
 * own length, the pad sent beside it ("m.<pad>.<token XOR pad>", base64url).
 * Every response carries different bytes for the same token, so a compressed
 * page gives a BREACH-style length oracle nothing to converge on (record 035).
 */
export function maskToken(token: string): string {
  const bytes = Buffer.from(token, "utf8");
  const pad = randomBytes(bytes.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = bytes[i]! ^ pad[i]!;
  return `${MASKED}${pad.toString("base64url")}.${bytes.toString("base64url")}`;
}

/**
 * The token a form posted: unmasked, or as it came when it is not masked (a
 * page rendered before masking; it proves the same as the masked form). A
 * malformed masked value unmasks to "", which no cookie matches.
 */
export function unmaskToken(value: string): string {
  if (!value.startsWith(MASKED)) return value;
  const [padText, xoredText, extra] = value.slice(MASKED.length).split(".");
  if (padText === undefined || xoredText === undefined || extra !== undefined) return "";
  const pad = Buffer.from(padText, "base64url");
  const bytes = Buffer.from(xoredText, "base64url");
  if (pad.length !== bytes.length || pad.length === 0) return "";
  for (let i = 0; i < bytes.length; i++) bytes[i] = bytes[i]! ^ pad[i]!;
  return bytes.toString("utf8");
}

/** Reads the posted form and checks its CSRF token. */
export async function readForm(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Promise<FormData> {
  const s = services(context);
  let formData: FormData;
  try {
    formData = await request.formData();
  } catch {
    throw data("The form could not be read.", { status: 400 });
  }
  const sent = formData.get("csrf");
  if (typeof sent === "string") formData.set("csrf", unmaskToken(sent));
  try {
    await csrfFor(s).validate(formData, request.headers);
  } catch (error) {
    if (error instanceof CSRFError) {
      throw data("This form has expired. Go back, reload the page and try again.", { status: 403 });
    }
    throw error;
  }
  return formData;
}

/**
 * The honeypot on public forms that create or check accounts. The library
 * skips its check when the fields are absent, so their absence fails here.
 */
export async function checkHoneypot(formData: FormData, context: Readonly<RouterContextProvider>) {
  try {
    if (!formData.has(HONEYPOT_FIELD_NAME)) throw new SpamError("Missing honeypot input");
    await honeypotFor(services(context)).check(formData);
  } catch {
    // A SpamError, or a timestamp field that does not decrypt (the library then throws
    // whatever its decryption threw): either way the posted form is at fault, never us.
    throw data("The form could not be accepted.", { status: 400 });
  }
}

/**
 * A refused post of a form that lives in a popup or modal (the contact popup,
 * the support modal; record 037): a scripted post (the form's fetcher sends
 * `scripted=1`) is answered in place with `answer`; a plain one has its reply
 * flashed and goes back to `backTo`, where the popup shows it once.
 */
export async function refusePopupForm<T extends { result: SubmissionResult<string[]> }>(
  {
    formData,
    session,
    context,
    form,
    backTo,
  }: {
    formData: FormData;
    session: AppSession;
    context: Readonly<RouterContextProvider>;
    form: FlashData["formReply"]["form"];
    backTo: string;
  },
  answer: T,
  status: number,
  headers?: HeadersInit,
) {
  if (formData.get("scripted") === "1") return data(answer, { status, headers });
  session.flash("formReply", { form, result: answer.result });
  const back = new Headers(headers);
  back.append("Set-Cookie", await commitSession(session, context));
  return redirect(backTo, { headers: back });
}
