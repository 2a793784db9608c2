// Signing in with e-mail and password (login and fast login share it): call 2
// for the words, call 3 for the user id, then a fresh session.
import type { RouterContextProvider } from "react-router";
import { backend, type BackendFailure } from "./backend.server.ts";
import { startUserSession } from "./session.server.ts";

export type SignInResult = { ok: true; headers: Headers } | BackendFailure;

export async function signIn(
  request: Request,
  context: Readonly<RouterContextProvider>,
  credentials: { email: string; password: string },
): Promise<SignInResult> {
  const api = backend(context);
  const login = await api.login(credentials);
  if (!login.ok) return login;
  const words = login.data.user.twelveWords.split(" ");
  const check = await api.checkLoggedIn({ email: login.data.user.email, twelveWords: words });
  if (!check.ok) return check;
  const headers = await startUserSession(request, context, {
    email: check.data.user.email,
    words,
    userId: check.data.user.userId,
  });
  return { ok: true, headers };
}
