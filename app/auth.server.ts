// Signing in with e-mail and password (login and fast login share it): call 2
// for the words, call 3 for the user id, then a fresh session. With two-factor
// on (issue 27, record 048) call 2 also takes the code of sign-in's second
// step, and its grant rides into the new session (step-up for 5 minutes).
import type { RouterContextProvider } from "react-router";
import { STEP_UP_MINUTES } from "../common/literals.ts";
import { backend, type BackendFailure } from "./backend.server.ts";
import { noteBrowser } from "./known-browser.server.ts";
import {
  commitRotatedSession,
  getSession,
  SIGN_IN_CODE_MINUTES,
  startUserSession,
} from "./session.server.ts";

export type SignInResult = { ok: true; headers: Headers } | BackendFailure;

export async function signIn(
  request: Request,
  context: Readonly<RouterContextProvider>,
  credentials: { email: string; password: string; twoFactorCode?: string },
): Promise<SignInResult> {
  const api = backend(context);
  const login = await api.login(credentials);
  if (!login.ok) return login;
  const words = login.data.user.twelveWords.split(" ");
  const check = await api.checkLoggedIn({ email: login.data.user.email, twelveWords: words });
  if (!check.ok) return check;
  const grant = login.data.two_factor_grant;
  const headers = await startUserSession(
    request,
    context,
    { email: check.data.user.email, words, userId: check.data.user.userId },
    grant ? { grant, until: Date.now() + STEP_UP_MINUTES * 60_000 - 5_000 } : undefined,
  );
  // A browser this account has not used before is mailed to the holder (record 049).
  await noteBrowser(request, context, { email: check.data.user.email, words }, headers);
  return { ok: true, headers };
}

/**
 * The password was right and the account asks for a code: the sign-in waits
 * for it (SIGN_IN_CODE_MINUTES) in the session, under a new id. Returns the
 * headers that set the cookie.
 */
export async function awaitCode(
  request: Request,
  context: Readonly<RouterContextProvider>,
  credentials: { email: string; password: string },
): Promise<Headers> {
  const session = await getSession(request, context);
  session.set("pendingSignIn", {
    email: credentials.email,
    password: credentials.password,
    until: Date.now() + SIGN_IN_CODE_MINUTES * 60_000,
  });
  return new Headers({ "Set-Cookie": await commitRotatedSession(request, session, context) });
}
