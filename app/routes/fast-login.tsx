import { redirect } from "react-router";
import { backend } from "../api.server";
import { requireAnonymous, startUserSession } from "../session.server";
import type { Route } from "./+types/fast-login";

// /fast-login?email=…&password=… logs in at once (spec, section 2). Whatever
// happens, the browser is sent on to a URL without the query, so the password
// does not stay in its history, and no page here leaks it in a Referer.
const NO_REFERRER = { "Referrer-Policy": "no-referrer", "Cache-Control": "no-store" };

export function headers(): HeadersInit {
  return NO_REFERRER;
}

export function meta() {
  return [{ title: "Fast Login — Coinkeep" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const url = new URL(request.url);
  if (!url.search) {
    await requireAnonymous(request, context);
    return null;
  }
  const email = url.searchParams.get("email");
  const password = url.searchParams.get("password");
  const failed = redirect("/fast-login", { headers: NO_REFERRER });
  if (!email || !password) return failed;

  const api = backend(context);
  const login = await api.login({ email, password });
  if (!login.ok) return failed;
  const words = login.data.user.twelveWords.split(" ");
  const check = await api.checkLoggedIn({ email: login.data.user.email, twelveWords: words });
  if (!check.ok) return failed;
  const sessionHeaders = await startUserSession(request, context, {
    email: check.data.user.email,
    words,
    userId: check.data.user.userId,
  });
  for (const [name, value] of Object.entries(NO_REFERRER)) sessionHeaders.set(name, value);
  return redirect("/home", { headers: sessionHeaders });
}

export default function FastLogin() {
  return (
    <main id="main" className="fast-login">
      <p>Fast Login</p>
    </main>
  );
}
