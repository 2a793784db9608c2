import { getFormProps } from "../components/form-state.ts";
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { HoneypotFields } from "../components/honeypot.tsx";
import { limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { awaitCode, signIn } from "../auth.server.ts";
import { Field, FormErrors } from "../components/field.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { loginSchema } from "../forms/login.ts";
import { checkHoneypot, readForm } from "../forms.server.ts";
import type { Route } from "./+types/login";

export function meta() {
  return [{ title: "Log in — Coinkeep" }];
}

// A limited attempt's Retry-After goes out with the page too (record 013).
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return retryAfterOf(actionHeaders);
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  await checkHoneypot(formData, context);
  const submission = parseWithZod(formData, { schema: loginSchema });
  const hideFields = ["password"];
  if (submission.status !== "success") {
    return data({ result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const signedIn = await signIn(request, context, submission.value);
  if (!signedIn.ok && signedIn.kind === "rejected" && signedIn.code === "two_factor_required") {
    // The password is right and the account asks for a code (issue 27): its own step.
    return redirect("/login/code", { headers: await awaitCode(request, context, submission.value) });
  }
  if (!signedIn.ok) {
    const limited = limitedAnswer(signedIn);
    if (limited) {
      return data(
        { result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    const reply =
      signedIn.kind === "network"
        ? submission.reply({ formErrors: ["Something went wrong!"], hideFields })
        : signedIn.code === "user_not_found"
          ? submission.reply({ fieldErrors: { email: ["User doesn't exist"] }, hideFields })
          : signedIn.code === "wrong_password"
            ? submission.reply({ fieldErrors: { password: ["Incorrect password"] }, hideFields })
            : submission.reply({ formErrors: ["Something went wrong"], hideFields });
    return data({ result: reply }, { status: signedIn.kind === "network" ? 502 : 400 });
  }
  return redirect("/home", { headers: signedIn.headers });
}

export default function Login({ actionData }: Route.ComponentProps) {
  const [form, fields] = useValidatedForm(
    "login",
    () => import("../forms/login.ts").then((m) => m.loginSchema),
    actionData?.result,
  );
  return (
    <section className="card auth-card" aria-labelledby="login-title">
      <h1 id="login-title">Log in</h1>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <Field meta={fields.email} label="Email" type="email" autoComplete="username" inputMode="email" />
        <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton>Log In</SubmitButton>{" "}
          <Link to="/restore-wallet" className="button button-secondary">
            Restore Wallet
          </Link>{" "}
          <Link to="/create-wallet" className="button button-secondary">
            Create Wallet
          </Link>
        </div>
        <HoneypotFields />
      </Form>
    </section>
  );
}
