// Change password (issue 27, record 048): the current password, then the new
// one twice, by the create-wallet form's rules and messages. The backend
// re-encrypts the phrase under the new password's key in the same transaction
// (updatePassword); then every other session of the account ends and this one
// moves to a new id. A refusal changes nothing: the old password and phrase
// key stay as they were.
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { Field, FormErrors } from "../components/field.tsx";
import { getFormProps } from "../components/form-state.ts";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { changePasswordSchema } from "../forms/change-password.ts";
import { readForm } from "../forms.server.ts";
import { keepOnlyThisSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/security-password";

export function meta() {
  return [{ title: "Change password — Coinkeep" }];
}

// Nothing on this page may be kept by a cache; a limited attempt's Retry-After goes out too (record 013).
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  await requireUser(request, context);
  return null;
}

/** What the holder is told once the password has changed (a flash notice on /security). */
const PASSWORD_CHANGED = "Your password has been changed. Every other session has been signed out.";

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const submission = parseWithZod(formData, { schema: changePasswordSchema });
  // No password ever comes back to the page.
  const hideFields = ["currentPassword", "password", "confirmPassword"];
  if (submission.status !== "success") {
    return data({ result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const { currentPassword = "", password = "", confirmPassword = "" } = submission.value;
  const changed = await backend(context).updatePassword({
    email: user.email,
    twelveWords: user.words,
    currentPassword,
    password,
    confirmPassword,
  });
  if (!changed.ok) {
    const limited = limitedAnswer(changed);
    if (limited) {
      return data(
        { result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    const reply =
      changed.kind === "network"
        ? submission.reply({ formErrors: ["Something went wrong!"], hideFields })
        : changed.code === "wrong_password"
          ? submission.reply({ fieldErrors: { currentPassword: ["Incorrect password"] }, hideFields })
          : changed.code === "passwords_do_not_match"
            ? submission.reply({ fieldErrors: { confirmPassword: ["Passwords do not match."] }, hideFields })
            : submission.reply({ formErrors: ["Something went wrong"], hideFields });
    return data({ result: reply }, { status: changed.kind === "network" ? 502 : 400 });
  }
  // The new password is in force: every other browser signed in to the account is signed out
  // (their rows go, their event streams close), and this one continues under a new id.
  session.flash("notice", PASSWORD_CHANGED);
  const { setCookie } = await keepOnlyThisSession(request, session, context, user.email);
  return redirect("/security", { headers: { "Set-Cookie": setCookie } });
}

export default function SecurityPassword({ actionData }: Route.ComponentProps) {
  const [form, fields] = useValidatedForm(
    "change-password",
    () => import("../forms/change-password.ts").then((m) => m.changePasswordSchema),
    actionData?.result,
  );
  return (
    <section className="card security-card" aria-labelledby="password-title">
      <h1 id="password-title">Change password</h1>
      <p>
        Your 12 word security phrase stays the same. Once the password is changed, every other browser signed
        in to your wallet is signed out.
      </p>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <Field
          meta={fields.currentPassword}
          label="Current password"
          type="password"
          autoComplete="current-password"
        />
        <Field meta={fields.password} label="New password" type="password" autoComplete="new-password" />
        <Field
          meta={fields.confirmPassword}
          label="Confirm new password"
          type="password"
          autoComplete="new-password"
        />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton pendingLabel="Changing...">Change password</SubmitButton>
        </div>
      </Form>
      <p>
        <Link to="/security">Back to Security</Link>
      </p>
    </section>
  );
}
