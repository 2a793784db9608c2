// The link of a "Verify your e-mail" mail (issue 28, record 049): /verify-email?token=….
// The token is spent at once and the browser is sent to the same page without it
// (?result=…), so it leaves the address bar and the history and reaches no page, script or
// Referer. The link proves the mailbox; it works whether or not this browser is signed in.
import { Link, redirect } from "react-router";
import { backend } from "../backend.server.ts";
import { getSession } from "../session.server.ts";
import type { Route } from "./+types/verify-email";

export function meta() {
  return [{ title: "Verify your e-mail — Coinkeep" }, { name: "referrer", content: "no-referrer" }];
}

export function headers(): HeadersInit {
  return { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" };
}

const RESULTS = {
  verified: {
    title: "Your e-mail address is verified.",
    text: "Alerts of sign-ins from new browsers, sends, deposits, security changes and support replies will reach you there.",
  },
  invalid: { title: "This link is not valid.", text: "Ask for a new one on your Security page." },
  expired: {
    title: "This link has expired or was used already.",
    text: "Ask for a new one on your Security page.",
  },
  error: { title: "Something went wrong!", text: "Please open the link again in a moment." },
} as const;
type Result = keyof typeof RESULTS;

export async function loader({ request, context }: Route.LoaderArgs) {
  const url = new URL(request.url);
  const token = url.searchParams.get("token");
  if (token !== null) {
    const confirmed = /^[A-Za-z0-9_-]{20,128}$/u.test(token)
      ? await backend(context).emailConfirm({ token })
      : null;
    const result: Result = confirmed?.ok
      ? "verified"
      : confirmed === null ||
          (confirmed.kind === "rejected" && confirmed.code === "verification_link_invalid")
        ? "invalid"
        : confirmed.kind === "rejected" && confirmed.code === "verification_link_expired"
          ? "expired"
          : "error";
    throw redirect(`/verify-email?result=${result}`);
  }
  const result = url.searchParams.get("result");
  if (result === null || !Object.hasOwn(RESULTS, result)) throw redirect("/security/email");
  const session = await getSession(request, context);
  return { result: result as Result, signedIn: Boolean(session.get("user")) };
}

export default function VerifyEmail({ loaderData }: Route.ComponentProps) {
  const { result, signedIn } = loaderData;
  const shown = RESULTS[result];
  return (
    <main id="main" className="verify-email">
      <section className="card security-card" aria-labelledby="verify-email-title">
        <p>
          <strong>Coinkeep</strong>
        </p>
        <h1 id="verify-email-title">{shown.title}</h1>
        <p>{shown.text}</p>
        <p>
          {signedIn ? (
            <Link to="/security/email">Back to your e-mail settings</Link>
          ) : (
            <Link to="/login">Sign in</Link>
          )}
        </p>
      </section>
    </main>
  );
}
