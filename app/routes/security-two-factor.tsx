import { parseWithZod } from "@conform-to/zod/v4";
import type { SubmissionResult } from "@conform-to/react";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { STEP_UP_MINUTES } from "../../common/literals.ts";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { getFormProps } from "../components/form-state.ts";
import { CodeField } from "../components/code-field.tsx";
import { Field, FormErrors } from "../components/field.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { twoFactorPageSchema } from "../forms/two-factor.ts";
import { readForm } from "../forms.server.ts";
import { formatDateTime } from "../lib/format.ts";
import { commitRotatedSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/security-two-factor";

// Two-factor authentication on /security (issue 27, record 048): whether it is
// on, how many recovery codes are left, turning it off (password and a code),
// and keeping it while a restore's removal waits (a code). Turning it on is a
// page of its own without scripts (security-two-factor-enrol.tsx): the new
// secret never sits in this page's data.

export function meta() {
  return [{ title: "Two-factor authentication — Coinkeep" }];
}

export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const status = await backend(context).twoFactorStatus({ email: user.email, twelveWords: user.words });
  if (!status.ok)
    throw new Response("The security settings could not be read. Please try again.", { status: 502 });
  return {
    enabled: status.data.enabled,
    removalAt: status.data.removal_at,
    recoveryCodesLeft: status.data.recovery_codes_left,
  };
}

type Intent = "disable" | "keep";

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const submission = parseWithZod(formData, { schema: twoFactorPageSchema });
  const intent: Intent = formData.get("intent") === "keep" ? "keep" : "disable";
  const hideFields = ["password", "code"];
  const refuse = (result: SubmissionResult<string[]>, status = 400, extra: HeadersInit = {}) =>
    data({ intent, result }, { status, headers: extra });
  if (submission.status !== "success") return refuse(submission.reply({ hideFields }));
  const value = submission.value;
  const api = backend(context);
  const who = { email: user.email, twelveWords: user.words };
  const answer =
    value.intent === "disable"
      ? await api.twoFactorDisable({ ...who, password: value.password, twoFactorCode: value.code })
      : value.intent === "keep"
        ? await api.twoFactorVerify({ ...who, twoFactorCode: value.code })
        : null;
  if (answer === null) throw redirect("/security/two-factor/enrol");
  if (!answer.ok) {
    const limited = limitedAnswer(answer);
    if (limited)
      return refuse(
        submission.reply({ formErrors: [limited.message], hideFields }),
        limited.status,
        limited.headers,
      );
    if (answer.kind === "network")
      return refuse(submission.reply({ formErrors: ["Something went wrong!"], hideFields }), 502);
    if (answer.code === "wrong_password") {
      return refuse(submission.reply({ fieldErrors: { password: ["Incorrect password"] }, hideFields }));
    }
    if (answer.code.startsWith("two_factor_") && answer.code !== "two_factor_off") {
      return refuse(submission.reply({ fieldErrors: { code: [answer.message] }, hideFields }));
    }
    throw redirect("/security/two-factor");
  }
  const verified = answer.data as { grant?: string; expires_at?: string };
  if (verified.grant && verified.expires_at) {
    // A code given here covers this session's next send or reveal, like any other.
    session.set("stepUp", { grant: verified.grant, until: Date.parse(verified.expires_at) - 5_000 });
  } else session.unset("stepUp");
  session.flash(
    "notice",
    value.intent === "disable" ? "Two-factor authentication is off." : "Two-factor authentication stays on.",
  );
  return redirect("/security/two-factor", {
    headers: { "Set-Cookie": await commitRotatedSession(request, session, context) },
  });
}

function DisableForm({ result }: { result: SubmissionResult<string[]> | undefined }) {
  const [form, fields] = useValidatedForm(
    "two-factor-off",
    () => import("../forms/two-factor.ts").then((m) => m.disableSchema),
    result,
  );
  return (
    <Form method="post" {...getFormProps(form)} noValidate>
      <AuthenticityTokenInput />
      <input type="hidden" name="intent" value="disable" />
      <h2>Turn off two-factor authentication</h2>
      <p>Your account is safer with it on. To turn it off, enter your password and a code.</p>
      <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
      <CodeField meta={fields.code} />
      <FormErrors id={form.errorId} errors={form.errors} />
      <div className="actions">
        <SubmitButton className="button button-secondary">Turn off</SubmitButton>
      </div>
    </Form>
  );
}

function KeepForm({ result }: { result: SubmissionResult<string[]> | undefined }) {
  const [form, fields] = useValidatedForm(
    "two-factor-keep",
    () => import("../forms/two-factor.ts").then((m) => m.keepSchema),
    result,
  );
  return (
    <Form method="post" {...getFormProps(form)} noValidate>
      <AuthenticityTokenInput />
      <input type="hidden" name="intent" value="keep" />
      <p>Still have your authenticator app or a recovery code? Enter a code to keep two-factor on.</p>
      <CodeField meta={fields.code} />
      <FormErrors id={form.errorId} errors={form.errors} />
      <div className="actions">
        <SubmitButton>Keep it on</SubmitButton>
      </div>
    </Form>
  );
}

export default function SecurityTwoFactor({ loaderData, actionData }: Route.ComponentProps) {
  const { enabled, removalAt, recoveryCodesLeft } = loaderData;
  const result = (intent: Intent) => (actionData?.intent === intent ? actionData.result : undefined);
  return (
    <section className="card security-card" aria-labelledby="two-factor-title">
      <p>
        <Link to="/security">Security</Link> › Two-factor authentication
      </p>
      <h1 id="two-factor-title">Two-factor authentication</h1>
      {!enabled ? (
        <>
          <p>
            <strong>Off.</strong> Add a second step to signing in, sending coins and showing your 12 word
            security phrase: a 6-digit code from an authenticator app on your phone.
          </p>
          <p>
            {/* A page without scripts: the new key must not sit in this page's data. */}
            <a href="/security/two-factor/enrol" className="button button-primary">
              Turn on two-factor authentication
            </a>
          </p>
        </>
      ) : (
        <>
          <p>
            <strong>On.</strong> Signing in asks for a code from your authenticator app; sending coins and
            showing your phrase ask for one unless you gave one in the last {STEP_UP_MINUTES} minutes.
          </p>
          <p>
            Recovery codes left: <strong>{recoveryCodesLeft}</strong> of 10.
            {recoveryCodesLeft <= 3
              ? " You are running low: turn two-factor off and on again to get ten new ones."
              : ""}
          </p>
          {removalAt ? (
            <div className="notice" role="status">
              <p>
                <strong>
                  After a restore without a code, two-factor authentication will be removed on{" "}
                  {formatDateTime(removalAt)}.
                </strong>{" "}
                Until then, sends are paused.
              </p>
              <KeepForm result={result("keep")} />
            </div>
          ) : (
            <DisableForm result={result("disable")} />
          )}
        </>
      )}
    </section>
  );
}
