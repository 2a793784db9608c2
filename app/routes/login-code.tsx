import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { signIn } from "../auth.server.ts";
import { getFormProps } from "../components/form-state.ts";
import { Field, FormErrors } from "../components/field.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { signInCodeSchema } from "../forms/two-factor.ts";
import { readForm } from "../forms.server.ts";
import { commitRotatedSession, getSession, type AppSession } from "../session.server.ts";
import type { Route } from "./+types/login-code";

// Sign-in's second step (issue 27, record 048): after a right password, a
// holder with two-factor on gives a code of their authenticator app or a
// recovery code. The password waits in the sealed session row for 5 minutes.

export function meta() {
  return [{ title: "Two-factor authentication — Coinkeep" }];
}

export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

function pendingOf(session: AppSession) {
  const pending = session.get("pendingSignIn");
  return pending && pending.until > Date.now() ? pending : undefined;
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const session = await getSession(request, context);
  if (session.get("user")) throw redirect("/home");
  if (!pendingOf(session)) throw redirect("/login");
  return null;
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const session = await getSession(request, context);
  if (session.get("user")) throw redirect("/home");
  const pending = pendingOf(session);
  if (!pending) throw redirect("/login");
  const submission = parseWithZod(formData, { schema: signInCodeSchema });
  const hideFields = ["code"];
  if (submission.status !== "success") {
    return data({ result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const signedIn = await signIn(request, context, {
    email: pending.email,
    password: pending.password,
    twoFactorCode: submission.value.code,
  });
  if (signedIn.ok) return redirect("/home", { headers: signedIn.headers });
  const limited = limitedAnswer(signedIn);
  if (limited) {
    // Waiting or locked: said on this page (its loader still finds the step, which ends on its own).
    return data(
      { result: submission.reply({ formErrors: [limited.message], hideFields }) },
      { status: limited.status, headers: limited.headers },
    );
  }
  if (signedIn.kind === "rejected" && signedIn.code.startsWith("two_factor_")) {
    return data(
      { result: submission.reply({ fieldErrors: { code: [signedIn.message] }, hideFields }) },
      { status: 400 },
    );
  }
  if (signedIn.kind === "rejected") {
    // The password no longer opens the account (changed meanwhile): start again.
    session.unset("pendingSignIn");
    throw redirect("/login", {
      headers: { "Set-Cookie": await commitRotatedSession(request, session, context) },
    });
  }
  return data(
    { result: submission.reply({ formErrors: ["Something went wrong!"], hideFields }) },
    { status: 502 },
  );
}

export default function LoginCode({ actionData }: Route.ComponentProps) {
  const [form, fields] = useValidatedForm(
    "login-code",
    () => import("../forms/two-factor.ts").then((m) => m.signInCodeSchema),
    actionData?.result,
  );
  return (
    <section className="card auth-card" aria-labelledby="login-code-title">
      <h1 id="login-code-title">Two-factor authentication</h1>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <p id="login-code-help">
          Enter the 6-digit code your authenticator app shows for Coinkeep. Lost your phone? Enter one of your
          recovery codes instead.
        </p>
        <Field
          meta={fields.code}
          label="Authentication code"
          type="text"
          inputMode="text"
          autoComplete="one-time-code"
          autoCapitalize="none"
          spellCheck={false}
          autoFocus
        />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton>Verify</SubmitButton>{" "}
          <Link to="/login" className="button button-secondary">
            Cancel
          </Link>
        </div>
      </Form>
    </section>
  );
}
