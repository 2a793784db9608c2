import { getFormProps, useForm } from "@conform-to/react";
import { getZodConstraint, parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { HoneypotInputs } from "remix-utils/honeypot/react";
import { z } from "zod";
import { backend } from "../api.server";
import { Field, FormErrors } from "../components/field";
import { SubmitButton } from "../components/submit-button";
import { checkHoneypot, readForm } from "../forms.server";
import { startUserSession } from "../session.server";
import type { Route } from "./+types/login";

const schema = z.object({
  email: z.string({ error: "Required" }).trim().min(1, "Required"),
  password: z.string({ error: "Required" }).min(1, "Required"),
});

// The backend's messages, and what the spec shows for them (section 8).
const USER_NOT_FOUND = "User not found with this email address.";
const WRONG_PASSWORD = "Password is inccorect";

export function meta() {
  return [{ title: "Log in — Coinkeep" }];
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  await checkHoneypot(formData, context);
  const submission = parseWithZod(formData, { schema });
  const hideFields = ["password"];
  if (submission.status !== "success") {
    return data({ result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const api = backend(context);
  const login = await api.login(submission.value);
  if (!login.ok) {
    const reply =
      login.kind === "network"
        ? submission.reply({ formErrors: ["Something went wrong!"], hideFields })
        : login.message === USER_NOT_FOUND
          ? submission.reply({ fieldErrors: { email: ["User doesn't exist"] }, hideFields })
          : login.message === WRONG_PASSWORD
            ? submission.reply({ fieldErrors: { password: ["Incorrect password"] }, hideFields })
            : submission.reply({ formErrors: ["Something went wrong"], hideFields });
    return data({ result: reply }, { status: login.kind === "network" ? 502 : 400 });
  }
  const words = login.data.user.twelveWords.split(" ");
  const check = await api.checkLoggedIn({ email: login.data.user.email, twelveWords: words });
  if (!check.ok) {
    return data(
      { result: submission.reply({ formErrors: ["Something went wrong"], hideFields }) },
      { status: 502 },
    );
  }
  const headers = await startUserSession(request, context, {
    email: check.data.user.email,
    words,
    userId: check.data.user.userId,
  });
  return redirect("/home", { headers });
}

export default function Login({ actionData }: Route.ComponentProps) {
  const [form, fields] = useForm({
    id: "login",
    lastResult: actionData?.result,
    constraint: getZodConstraint(schema),
    shouldValidate: "onSubmit",
    shouldRevalidate: "onInput",
    onValidate: ({ formData }) => parseWithZod(formData, { schema }),
  });
  return (
    <section className="card auth-card" aria-labelledby="login-title">
      <h1 id="login-title">Log in</h1>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <HoneypotInputs />
        <Field meta={fields.email} label="Email" type="email" autoComplete="username" inputMode="email" />
        <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton>Log In</SubmitButton>
          <Link to="/restore-wallet" className="button button-secondary">
            Restore Wallet
          </Link>
          <Link to="/create-wallet" className="button button-secondary">
            Create Wallet
          </Link>
        </div>
      </Form>
    </section>
  );
}
