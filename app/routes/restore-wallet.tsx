import type { SubmissionResult } from "@conform-to/react";
import { useState } from "react";
import { getFormProps } from "../components/form-state.ts";
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { HoneypotFields } from "../components/honeypot.tsx";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { CodeField } from "../components/code-field.tsx";
import { formatDateTime } from "../lib/format.ts";
import { Field, FormErrors } from "../components/field.tsx";
import { ArrowLeftIcon, CloseIcon } from "../components/icons.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { emailSchema, passwordSchema, wordsSchema } from "../forms/restore-wallet.ts";
import { splitPhrase, WORD_FIELDS } from "../forms/words.ts";
import { notPhraseWord } from "../forms/phrase-words.server.ts";
import { checkHoneypot, readForm } from "../forms.server.ts";
import {
  commitRotatedSession,
  commitSession,
  endSessionsOf,
  requireAnonymous,
  type AppSession,
} from "../session.server.ts";
import type { Route } from "./+types/restore-wallet";

/**
 * Pasting the whole phrase into the first box spreads it across the boxes.
 * With scripts that happens on paste; without them, here.
 */
function spreadWords(formData: FormData): FormData {
  const pasted = splitPhrase(String(formData.get("word1") ?? ""));
  if (pasted.length < 2) return formData;
  pasted.slice(0, 12).forEach((word, i) => formData.set(`word${i + 1}`, word));
  return formData;
}

// Shows (or echoes back) a 12-word phrase: never compressed (record 035).
export const handle = { carriesSecret: true };

export function meta() {
  return [{ title: "Restore wallet — Coinkeep" }];
}

// A limited attempt's Retry-After goes out with the page too (record 013).
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return retryAfterOf(actionHeaders);
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const session = await requireAnonymous(request, context);
  const restore = session.get("restore");
  return { step: restore?.step ?? 1, email: restore?.email ?? null, twoFactor: restore?.twoFactor === true };
}

// Each step's state goes out under a new session id (session fixation, issue 12).
async function saveAndReload(request: Request, session: AppSession, context: Route.ActionArgs["context"]) {
  return redirect("/restore-wallet", {
    headers: { "Set-Cookie": await commitRotatedSession(request, session, context) },
  });
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const session = await requireAnonymous(request, context);
  const restore = session.get("restore");
  const intent = String(formData.get("intent") ?? "");
  const api = backend(context);

  if (intent === "close") {
    session.unset("restore");
    return redirect("/", { headers: { "Set-Cookie": await commitSession(session, context) } });
  }
  if (intent === "back") {
    // Back keeps what was typed before: step 2 goes back to step 1 with the e-mail filled in.
    if (restore?.step === 3) session.set("restore", { step: 2, email: restore.email });
    else if (restore?.step === 2) session.set("restore", { step: 1, email: restore.email });
    else session.unset("restore");
    return saveAndReload(request, session, context);
  }

  await checkHoneypot(formData, context);
  if (intent === "email" || !restore || restore.step === 1) {
    const submission = parseWithZod(formData, { schema: emailSchema });
    if (submission.status !== "success") {
      return data({ step: 1, result: submission.reply() }, { status: 400 });
    }
    // A login with a throw-away password tells whether the e-mail is
    // registered (spec section 7, call 2 notes).
    const probe = await api.login({
      email: submission.value.email,
      password: `probe-${crypto.randomUUID()}`,
      // Audited as the restore's lookup, not as a failed sign-in (record 015).
      purpose: "restore",
    });
    const limited = probe.ok ? null : limitedAnswer(probe);
    // A locked password login (423) is exactly what a restore is for: on to the phrase.
    if (limited && limited.status === 429) {
      return data(
        { step: 1, result: submission.reply({ formErrors: [limited.message] }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    const registered =
      probe.ok ||
      (probe.kind === "rejected" && (probe.code === "wrong_password" || probe.code === "account_locked"));
    if (!registered) {
      const message =
        probe.kind === "rejected" && probe.code === "user_not_found"
          ? "This email is not registered"
          : "Something went wrong.";
      return data(
        { step: 1, result: submission.reply({ fieldErrors: { email: [message] } }) },
        { status: 400 },
      );
    }
    session.set("restore", { step: 2, email: submission.value.email.toLowerCase() });
    return saveAndReload(request, session, context);
  }

  if (intent === "words" || restore.step === 2) {
    const submission = parseWithZod(spreadWords(formData), { schema: wordsSchema });
    if (submission.status !== "success") {
      return data({ step: 2, result: submission.reply() }, { status: 400 });
    }
    const words = WORD_FIELDS.map((name) => (submission.value[name] ?? "").toLowerCase());
    // A word that no phrase can hold is named by its box (a typo), before any check is made.
    const unknown = notPhraseWord(words);
    if (unknown !== null) {
      const field = WORD_FIELDS[unknown] ?? "word1";
      return data(
        {
          step: 2,
          result: submission.reply({
            fieldErrors: {
              [field]: [`Word ${unknown + 1} is not a word a 12-word phrase can hold: check its spelling.`],
            },
          }),
        },
        { status: 400 },
      );
    }
    const check = await api.checkPhrase({ email: restore.email, twelveWords: words });
    if (!check.ok) {
      const limited = limitedAnswer(check);
      if (limited) {
        return data(
          { step: 2, result: submission.reply({ formErrors: [limited.message] }) },
          { status: limited.status, headers: limited.headers },
        );
      }
      const message = check.kind === "rejected" ? "Wrong 12 word phrase" : "Something went wrong.";
      return data({ step: 2, result: submission.reply({ formErrors: [message] }) }, { status: 400 });
    }
    session.set("restore", {
      step: 3,
      email: restore.email,
      words,
      ...(check.data.two_factor ? { twoFactor: true } : {}),
    });
    return saveAndReload(request, session, context);
  }

  const submission = parseWithZod(formData, { schema: passwordSchema });
  const hideFields = ["password", "confirmPassword", "code"];
  if (submission.status !== "success") {
    return data({ step: 3, result: submission.reply({ hideFields }) }, { status: 400 });
  }
  const changed = await api.changePassword({
    email: restore.email,
    twelveWords: restore.words ?? [],
    password: submission.value.password ?? "",
    confirmPassword: submission.value.confirmPassword ?? "",
    ...(submission.value.code ? { twoFactorCode: submission.value.code } : {}),
  });
  if (!changed.ok && changed.kind === "rejected" && changed.code.startsWith("two_factor_")) {
    return data(
      { step: 3, result: submission.reply({ fieldErrors: { code: [changed.message] }, hideFields }) },
      { status: 400 },
    );
  }
  if (!changed.ok) {
    const limited = limitedAnswer(changed);
    if (limited) {
      return data(
        { step: 3, result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    return data(
      { step: 3, result: submission.reply({ formErrors: ["Failed to change password."], hideFields }) },
      { status: 400 },
    );
  }
  // The password changed: every session of the account ends (record 015). This
  // browser is not signed in to it (the flow is for visitors), so all of them go.
  await endSessionsOf(context, restore.email);
  session.unset("restore");
  const removal = changed.data.two_factor_removal_at;
  session.flash(
    "notice",
    removal
      ? `Your password has been changed. Log in with your new password. Two-factor authentication will be removed on ${formatDateTime(removal)}; until then, sends are paused.`
      : "Your password has been changed. Log in with your new password.",
  );
  return redirect("/login", {
    headers: { "Set-Cookie": await commitRotatedSession(request, session, context) },
  });
}

function StepNav({ step }: { step: number }) {
  return (
    <div className="card-top">
      {step === 1 ? (
        <Link to="/login" className="icon-button">
          <ArrowLeftIcon />
          <span className="visually-hidden">Back to log in</span>
        </Link>
      ) : (
        <Form noValidate method="post">
          <AuthenticityTokenInput />
          <button type="submit" name="intent" value="back" className="icon-button">
            <ArrowLeftIcon />
            <span className="visually-hidden">Back to the previous step</span>
          </button>
        </Form>
      )}
      <Form noValidate method="post">
        <AuthenticityTokenInput />
        <button type="submit" name="intent" value="close" className="icon-button">
          <CloseIcon />
          <span className="visually-hidden">Close</span>
        </button>
      </Form>
    </div>
  );
}

type Result = SubmissionResult<string[]> | undefined;

function EmailStep({ result, email }: { result: Result; email: string | null }) {
  // Back from step 2: the e-mail typed before is filled in again.
  const [typedBefore] = useState<Result>(() => (email ? { initialValue: { email } } : undefined));
  const [form, fields] = useValidatedForm(
    "restore-email",
    () => import("../forms/restore-wallet.ts").then((m) => m.emailSchema),
    result ?? typedBefore,
  );
  return (
    <Form method="post" {...getFormProps(form)} noValidate>
      <AuthenticityTokenInput />
      <p>Enter the e-mail address of the wallet you want to restore.</p>
      <Field meta={fields.email} label="Email" type="email" autoComplete="username" inputMode="email" />
      <FormErrors id={form.errorId} errors={form.errors} />
      <div className="actions">
        <SubmitButton name="intent" value="email">
          Next
        </SubmitButton>
      </div>
      <HoneypotFields />
    </Form>
  );
}

// Pasting several words into any box spreads them from that box on (a numbered list too).
function onPaste(event: React.ClipboardEvent<HTMLInputElement>, start: number) {
  const words = splitPhrase(event.clipboardData.getData("text"));
  if (words.length < 2) return;
  event.preventDefault();
  const formEl = event.currentTarget.form;
  if (!formEl) return;
  words.slice(0, 12 - start).forEach((word, i) => {
    const input = formEl.elements.namedItem(`word${start + i + 1}`);
    if (input instanceof HTMLInputElement) input.value = word.toLowerCase();
  });
  const last = formEl.elements.namedItem(`word${Math.min(12, start + words.length)}`);
  if (last instanceof HTMLInputElement) last.focus();
}

function WordsStep({ result }: { result: Result }) {
  const [form, fields] = useValidatedForm(
    "restore-words",
    () => import("../forms/restore-wallet.ts").then((m) => m.wordsSchema),
    result,
    { revalidate: "onSubmit" },
  );

  // A box whose word no phrase can hold (the server names it) is marked, and its message shown with the form's.
  const wordErrors = WORD_FIELDS.flatMap(
    (name) => (fields[name as keyof typeof fields] as (typeof fields)["word1"]).errors ?? [],
  );
  const errors = [...(form.errors ?? []), ...wordErrors];
  return (
    <Form method="post" {...getFormProps(form)} noValidate aria-describedby={form.errorId}>
      <AuthenticityTokenInput />
      <p id="words-help">
        Enter your 12-word phrase, one word per box, in order. You can paste the whole phrase into the first
        box.
      </p>
      <fieldset className="word-inputs">
        <legend className="visually-hidden">Your 12-word phrase</legend>
        {WORD_FIELDS.map((name, i) => {
          const field = fields[name as keyof typeof fields] as (typeof fields)["word1"];
          return (
            <div className="word-input" key={name}>
              <label htmlFor={field.id} className="visually-hidden">
                Word {i + 1}
              </label>
              <input
                id={field.id}
                name={field.name}
                key={field.key}
                defaultValue={typeof field.initialValue === "string" ? field.initialValue : undefined}
                placeholder={`${i + 1}.`}
                autoComplete="off"
                autoCapitalize="none"
                autoCorrect="off"
                spellCheck={false}
                autoFocus={i === 0 || undefined}
                aria-invalid={form.errors?.length || field.errors?.length ? true : undefined}
                aria-describedby={
                  [i === 0 ? "words-help" : "", field.errors?.length ? form.errorId : ""].join(" ").trim() ||
                  undefined
                }
                onPaste={(event) => onPaste(event, i)}
              />
            </div>
          );
        })}
      </fieldset>
      <FormErrors id={form.errorId} errors={errors.length ? errors : undefined} />
      <div className="actions">
        <SubmitButton name="intent" value="words" pendingLabel="Checking...">
          Next
        </SubmitButton>
      </div>
      <HoneypotFields />
    </Form>
  );
}

function PasswordStep({ result, twoFactor }: { result: Result; twoFactor: boolean }) {
  const [form, fields] = useValidatedForm(
    "restore-password",
    () => import("../forms/restore-wallet.ts").then((m) => m.passwordSchema),
    result,
  );
  return (
    <Form method="post" {...getFormProps(form)} noValidate>
      <AuthenticityTokenInput />
      <p>Your phrase is correct. Choose a new password for your wallet.</p>
      <Field
        meta={fields.password}
        label="New password"
        type="password"
        autoComplete="new-password"
        autoFocus
      />
      <Field
        meta={fields.confirmPassword}
        label="Confirm password"
        type="password"
        autoComplete="new-password"
      />
      {twoFactor ? (
        <>
          <p id="restore-code-help">
            Two-factor authentication is on for this wallet: enter the code from your authenticator app, or
            one of your recovery codes. Lost both? Leave it empty: your password still changes, and two-factor
            authentication is removed after 48 hours, while sends are paused.
          </p>
          <CodeField meta={fields.code} label="Authentication code (if you have one)" />
        </>
      ) : null}
      <FormErrors id={form.errorId} errors={form.errors} />
      <div className="actions">
        <SubmitButton name="intent" value="password" pendingLabel="Restoring...">
          Confirm
        </SubmitButton>
      </div>
      <HoneypotFields />
    </Form>
  );
}

export default function RestoreWallet({ loaderData, actionData }: Route.ComponentProps) {
  const step = loaderData.step;
  const result = actionData && actionData.step === step ? (actionData.result as Result) : undefined;
  return (
    <section className="card auth-card" aria-labelledby="restore-title">
      <StepNav step={step} />
      <h1 id="restore-title">Restore wallet</h1>
      <p className="step-indicator">Step {step} of 3</p>
      {step === 1 ? <EmailStep result={result} email={loaderData.email} /> : null}
      {step === 2 ? <WordsStep result={result} /> : null}
      {step === 3 ? <PasswordStep result={result} twoFactor={loaderData.twoFactor} /> : null}
    </section>
  );
}
