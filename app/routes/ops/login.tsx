// Staff sign-in (issue 26): the e-mail and password, then a code from the
// authenticator (or a recovery code). The first step's session opens nothing
// but the second step; the second replaces it with a new one (a new token).
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { clearStaffCookie, consoleOf, readStaff, staffCookie } from "../../console.server.ts";
import { Field, FormErrors } from "../../components/field.tsx";
import { getFormProps } from "../../components/form-state.ts";
import { SubmitButton } from "../../components/submit-button.tsx";
import { useValidatedForm } from "../../components/use-validated-form.ts";
import { staffCodeSchema, staffLoginSchema } from "../../forms/console.ts";
import { readForm } from "../../forms.server.ts";
import consoleStyles from "../../styles/console.css?url";
import type { Route } from "./+types/login";

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: consoleStyles }];

export function meta() {
  return [{ title: "Staff sign-in — Coinkeep" }];
}

export function headers() {
  return { "Cache-Control": "no-store", "Referrer-Policy": "same-origin" };
}

const LOCKED =
  "Sign-in is locked after too many wrong passwords or codes. Ask an admin to unlock it (staff unlock).";

export async function loader({ request, context }: Route.LoaderArgs) {
  consoleOf(context);
  const staff = await readStaff(request, context);
  if (staff?.stage === "signed-in") throw redirect("/ops");
  const signedOut = new URL(request.url).searchParams.has("signed-out");
  return { step: staff?.stage === "password" ? ("code" as const) : ("password" as const), signedOut };
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const console = consoleOf(context);
  const staff = await readStaff(request, context);
  if (formData.get("intent") === "start-again") {
    if (staff) await console.endSession(staff.token);
    return redirect("/ops/login", { headers: { "Set-Cookie": await clearStaffCookie(context) } });
  }
  if (staff?.stage === "password" && formData.has("code")) {
    const submission = parseWithZod(formData, { schema: staffCodeSchema });
    if (submission.status !== "success") {
      return data(
        { step: "code" as const, result: submission.reply({ hideFields: ["code"] }) },
        { status: 400 },
      );
    }
    const signed = await console.signInWithCode({ token: staff.token, code: submission.value.code });
    if (signed.ok)
      return redirect("/ops", { headers: { "Set-Cookie": await staffCookie(context, signed.token) } });
    if (signed.reason === "start-again" || signed.reason === "locked") {
      const message =
        signed.reason === "locked"
          ? LOCKED
          : "Your sign-in took too long. Enter your e-mail and password again.";
      return data(
        { step: "password" as const, result: submission.reply({ formErrors: [message], resetForm: true }) },
        {
          status: signed.reason === "locked" ? 423 : 400,
          headers: { "Set-Cookie": await clearStaffCookie(context) },
        },
      );
    }
    const message =
      signed.reason === "replayed"
        ? "That code was used already. Wait for the next one."
        : "That code is not right. Try the current one.";
    return data(
      {
        step: "code" as const,
        result: submission.reply({ fieldErrors: { code: [message] }, hideFields: ["code"] }),
      },
      { status: 400 },
    );
  }
  const submission = parseWithZod(formData, { schema: staffLoginSchema });
  const hideFields = ["password"];
  if (submission.status !== "success") {
    return data({ step: "password" as const, result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const first = await console.signInWithPassword(submission.value);
  if (!first.ok) {
    const message = first.reason === "locked" ? LOCKED : "The e-mail or the password is not right.";
    return data(
      { step: "password" as const, result: submission.reply({ formErrors: [message], hideFields }) },
      { status: first.reason === "locked" ? 423 : 400 },
    );
  }
  // The first step's token: it opens only the code step.
  if (staff) await console.endSession(staff.token);
  return redirect("/ops/login", { headers: { "Set-Cookie": await staffCookie(context, first.token) } });
}

export default function StaffLogin({ loaderData, actionData }: Route.ComponentProps) {
  const step = actionData?.step ?? loaderData.step;
  return (
    <main id="main" className="console console-auth">
      <h1>Coinkeep staff console</h1>
      {loaderData.signedOut && step === "password" && !actionData ? (
        <p className="console-notice" role="status">
          You are signed out.
        </p>
      ) : null}
      {step === "code" ? (
        <CodeForm result={actionData?.result} />
      ) : (
        <PasswordForm result={actionData?.result} />
      )}
    </main>
  );
}

type Result = NonNullable<Route.ComponentProps["actionData"]>["result"];

function PasswordForm({ result }: { result: Result | undefined }) {
  const [form, fields] = useValidatedForm(
    "staff-login",
    () => import("../../forms/console.ts").then((m) => m.staffLoginSchema),
    result,
  );
  return (
    <section aria-labelledby="staff-login-title">
      <h2 id="staff-login-title">Sign in</h2>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <Field meta={fields.email} label="E-mail" type="email" autoComplete="username" inputMode="email" />
        <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
        <FormErrors id={form.errorId} errors={form.errors} />
        <SubmitButton>Continue</SubmitButton>
      </Form>
    </section>
  );
}

function CodeForm({ result }: { result: Result | undefined }) {
  const [form, fields] = useValidatedForm(
    "staff-code",
    () => import("../../forms/console.ts").then((m) => m.staffCodeSchema),
    result,
  );
  return (
    <section aria-labelledby="staff-code-title">
      <h2 id="staff-code-title">Enter your code</h2>
      <p>
        Open your authenticator app and enter the 6-digit code it shows for Coinkeep staff. A recovery code
        works too.
      </p>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <Field
          meta={fields.code}
          label="Code"
          type="text"
          inputMode="numeric"
          autoComplete="one-time-code"
          autoFocus
        />
        <FormErrors id={form.errorId} errors={form.errors} />
        <SubmitButton>Sign in</SubmitButton>
      </Form>
      <Form method="post">
        <AuthenticityTokenInput />
        <button type="submit" name="intent" value="start-again" className="button button-secondary">
          Start again
        </button>
      </Form>
    </section>
  );
}
