// E-mail on /security (issue 28, record 049): the account's address, whether it is verified,
// what we mail, and "Verify your e-mail", which mails a single-use link (24 hours). Alerts go
// only to a verified address. A plain form: it works with scripts off.
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { FormErrors } from "../components/field.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { readForm } from "../forms.server.ts";
import { formatDateTime } from "../lib/format.ts";
import { commitSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/security-email";

export function meta() {
  return [{ title: "E-mail alerts — Coinkeep" }];
}

export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const status = await backend(context).emailStatus({ email: user.email, twelveWords: user.words });
  if (!status.ok)
    throw new Response("The security settings could not be read. Please try again.", { status: 502 });
  return {
    email: status.data.email,
    verifiedAt: status.data.verified_at,
    linkExpiresAt: status.data.link_expires_at,
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  if (formData.get("intent") !== "verify") throw data("The form could not be read.", { status: 400 });
  const asked = await backend(context).emailVerify({ email: user.email, twelveWords: user.words });
  if (!asked.ok) {
    const limited = limitedAnswer(asked);
    if (limited)
      return data({ error: limited.message }, { status: limited.status, headers: limited.headers });
    if (asked.kind === "network") return data({ error: "Something went wrong!" }, { status: 502 });
    if (asked.code === "email_already_verified") throw redirect("/security/email");
    return data({ error: asked.message }, { status: asked.status });
  }
  session.flash("notice", asked.data.message);
  return redirect("/security/email", { headers: { "Set-Cookie": await commitSession(session, context) } });
}

export default function SecurityEmail({ loaderData, actionData }: Route.ComponentProps) {
  const { email, verifiedAt, linkExpiresAt } = loaderData;
  return (
    <section className="card security-card" aria-labelledby="email-title">
      <p>
        <Link to="/security">Security</Link> › E-mail alerts
      </p>
      <h1 id="email-title">E-mail alerts</h1>
      <p>
        Your e-mail address: <strong>{email}</strong>
      </p>
      {verifiedAt ? (
        <p>
          <strong>Verified</strong> on {formatDateTime(verifiedAt)}. We mail you here when your account is
          signed in to from a new browser, when you send coins and a send is confirmed or declined, when a
          deposit is credited, when a security setting changes, and when our support replies.
        </p>
      ) : (
        <>
          <p>
            <strong>Not verified.</strong> We mail alerts only to an address you have verified: when your
            account is signed in to from a new browser, when you send coins and a send is confirmed or
            declined, when a deposit is credited, when a security setting changes, and when our support
            replies.
          </p>
          {linkExpiresAt ? (
            <p role="status">
              We sent a link to {email}. It works once, until {formatDateTime(linkExpiresAt)}.
            </p>
          ) : null}
          <Form method="post" noValidate aria-labelledby="verify-title">
            <AuthenticityTokenInput />
            <h2 id="verify-title">Verify your e-mail</h2>
            <p>We will mail you a link. Open it to verify this address.</p>
            <FormErrors id="verify-errors" errors={actionData?.error ? [actionData.error] : undefined} />
            <div className="actions">
              <SubmitButton name="intent" value="verify">
                {linkExpiresAt ? "Send the link again" : "Verify your e-mail"}
              </SubmitButton>
            </div>
          </Form>
        </>
      )}
    </section>
  );
}
