import type { SubmissionResult } from "@conform-to/react";
import { getFormProps } from "../components/form-state.ts";
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { HoneypotFields } from "../components/honeypot.tsx";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { CopyButton } from "../components/copy-button.tsx";
import { Field, FormErrors } from "../components/field.tsx";
import { ArrowLeftIcon } from "../components/icons.tsx";
import { PhraseGrid } from "../components/phrase-grid.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { createWalletSchema } from "../forms/create-wallet.ts";
import { checkHoneypot, readForm } from "../forms.server.ts";
import { commitRotatedSession, requireAnonymous, startUserSession } from "../session.server.ts";
import { noteBrowser } from "../known-browser.server.ts";
import type { Route } from "./+types/create-wallet";

// Shows (or echoes back) a 12-word phrase: never compressed (record 035).
export const handle = { carriesSecret: true };

export function meta() {
  return [{ title: "Create wallet — Coinkeep" }];
}

// A limited attempt's Retry-After goes out with the page too (record 013).
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return retryAfterOf(actionHeaders);
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const session = await requireAnonymous(request, context);
  const created = session.get("created");
  // The phrase reaches the page only on this warning screen.
  return created ? { step: 2 as const, words: created.words } : { step: 1 as const, words: null };
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const session = await requireAnonymous(request, context);

  if (formData.get("intent") === "enter") {
    const created = session.get("created");
    if (!created) return redirect("/create-wallet");
    const sessionHeaders = await startUserSession(request, context, created);
    // The account's first browser: remembered, so a sign-in from another one is mailed (record 049).
    await noteBrowser(request, context, created, sessionHeaders);
    return redirect("/home", { headers: sessionHeaders });
  }

  await checkHoneypot(formData, context);
  const submission = parseWithZod(formData, { schema: createWalletSchema });
  const hideFields = ["password", "confirmPassword"];
  if (submission.status !== "success") {
    return data({ result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const { email = "", password = "", confirmPassword = "" } = submission.value;
  const api = backend(context);
  const created = await api.createAccount({ email, password, passwordConfirmed: confirmPassword });
  if (!created.ok) {
    const limited = limitedAnswer(created);
    if (limited) {
      return data(
        { result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    const message =
      created.kind === "network" ? "Failed to create wallet. Please try again." : created.message;
    return data({ result: submission.reply({ formErrors: [message], hideFields }) }, { status: 400 });
  }
  const check = await api.checkLoggedIn({ email, twelveWords: created.data.twelveWords });
  if (!check.ok) {
    const limited = limitedAnswer(check);
    if (limited) {
      return data(
        { result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    return data(
      {
        result: submission.reply({ formErrors: ["Failed to create wallet. Please try again."], hideFields }),
      },
      { status: 502 },
    );
  }
  // A new session id with the new account on it (session fixation, issue 12).
  session.set("created", {
    email: check.data.user.email,
    words: created.data.twelveWords,
    userId: check.data.user.userId,
  });
  return redirect("/create-wallet", {
    headers: { "Set-Cookie": await commitRotatedSession(request, session, context) },
  });
}

function StepOne({ result }: { result: SubmissionResult<string[]> | undefined }) {
  const [form, fields] = useValidatedForm(
    "create-wallet",
    () => import("../forms/create-wallet.ts").then((m) => m.createWalletSchema),
    result,
  );
  return (
    <section className="card auth-card" aria-labelledby="create-title">
      <div className="card-top">
        <Link to="/login" className="icon-button">
          <ArrowLeftIcon />
          <span className="visually-hidden">Back to log in</span>
        </Link>
      </div>
      <h1 id="create-title">Create wallet</h1>
      <Form method="post" {...getFormProps(form)} noValidate>
        <AuthenticityTokenInput />
        <Field meta={fields.email} label="Email" type="email" autoComplete="email" inputMode="email" />
        <Field meta={fields.password} label="Password" type="password" autoComplete="new-password" />
        <Field
          meta={fields.confirmPassword}
          label="Confirm password"
          type="password"
          autoComplete="new-password"
        />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton pendingLabel="Creating...">Next</SubmitButton>
        </div>
        <HoneypotFields />
      </Form>
    </section>
  );
}

function WarningStep({ words }: { words: string[] }) {
  return (
    <section className="card auth-card auth-card-wide" aria-labelledby="warning-title">
      <h1 id="warning-title" className="warning-title">
        WARNING
      </h1>
      <p>
        These 12 words are the key to your wallet.{" "}
        <strong>Do not share your 12-word phrase with anyone</strong> — not even someone who says they work
        for Coinkeep. We will never ask you for it. Beware of scammers who ask for it by e-mail, chat or
        phone. Write the words down in order and keep them somewhere safe and offline, to keep your funds
        safe: with them you can restore access to your wallet.
      </p>
      <PhraseGrid words={words} />
      <Form noValidate method="post" className="actions">
        <AuthenticityTokenInput /> <CopyButton text={words.join(" ")} />{" "}
        <SubmitButton name="intent" value="enter">
          Next
        </SubmitButton>
      </Form>
    </section>
  );
}

export default function CreateWallet({ loaderData, actionData }: Route.ComponentProps) {
  if (loaderData.step === 2) return <WarningStep words={loaderData.words} />;
  return <StepOne result={actionData && "result" in actionData ? actionData.result : undefined} />;
}
