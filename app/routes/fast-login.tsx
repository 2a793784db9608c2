import { redirect } from "react-router";
import { signIn } from "../auth.server";
import { requireAnonymous } from "../session.server";
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

  const signedIn = await signIn(request, context, { email, password });
  if (!signedIn.ok) return failed;
  for (const [name, value] of Object.entries(NO_REFERRER)) signedIn.headers.set(name, value);
  return redirect("/home", { headers: signedIn.headers });
}

export default function FastLogin() {
  return (
    <main id="main" className="fast-login">
      <p>Fast Login</p>
    </main>
  );
}
