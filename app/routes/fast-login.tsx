import { redirect } from "react-router";
import { awaitCode, signIn } from "../auth.server.ts";
import { getUser, services } from "../session.server.ts";
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

/**
 * Whether this navigation may sign a visitor in (login CSRF, issue 12, record
 * 030). Another site's page could otherwise send a visitor here with the
 * attacker's credentials, and the visitor would deposit into the attacker's
 * wallet. A navigation the browser marks as coming from another site
 * (Sec-Fetch-Site: cross-site), or whose Referer names another origin, signs
 * in only when that origin is listed in FAST_LOGIN_ORIGINS. Same-origin and
 * same-site links, a typed or bookmarked URL (Sec-Fetch-Site: none) and
 * clients that send neither header keep the spec's behaviour.
 */
function mayFastLogin(request: Request, allowed: readonly string[]): boolean {
  const own = new URL(request.url).origin;
  let from: string | null = null;
  const referer = request.headers.get("Referer");
  if (referer) {
    try {
      from = new URL(referer).origin;
    } catch {
      from = "null";
    }
  }
  const site = request.headers.get("Sec-Fetch-Site")?.trim().toLowerCase();
  if (site === "cross-site") return from !== null && allowed.includes(from);
  if (site === "same-origin" || site === "same-site" || site === "none") return true;
  return from === null || from === own || allowed.includes(from);
}

export async function loader({ request, context }: Route.LoaderArgs) {
  // A signed-in user is sent to /home, query or not: a link can never swap
  // the account this browser is signed in to (spec section 2, issue 12).
  const { user } = await getUser(request, context);
  if (user) return redirect("/home", { headers: NO_REFERRER });
  const url = new URL(request.url);
  if (!url.search) return null;
  const email = url.searchParams.get("email");
  const password = url.searchParams.get("password");
  const failed = redirect("/fast-login", { headers: NO_REFERRER });
  if (!email || !password) return failed;
  // Refused like a failed attempt: nothing visible (spec section 8), nothing checked.
  if (!mayFastLogin(request, services(context).config.fastLoginOrigins)) return failed;

  const signedIn = await signIn(request, context, { email, password });
  if (!signedIn.ok && signedIn.kind === "rejected" && signedIn.code === "two_factor_required") {
    // Two-factor on (issue 27): the code step, on a URL without the password.
    const pending = await awaitCode(request, context, { email, password });
    for (const [name, value] of Object.entries(NO_REFERRER)) pending.set(name, value);
    return redirect("/login/code", { headers: pending });
  }
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
