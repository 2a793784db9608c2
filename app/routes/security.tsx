import type { SubmissionResult } from "@conform-to/react";
import { getFormProps } from "../components/form-state.ts";
import { parseWithZod } from "@conform-to/zod/v4";
import { useCallback, useEffect, useRef, useState } from "react";
import { data, Form, useNavigation } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { backend, limitedAnswer, retryAfterOf } from "../backend.server.ts";
import { useAutoHide } from "../components/auto-hide.ts";
import { CopyButton } from "../components/copy-button.tsx";
import { Field, FieldErrors, FormErrors } from "../components/field.tsx";
import { useHydrated } from "../components/hydrated.ts";
import { PhraseGrid } from "../components/phrase-grid.tsx";
import { SecurityLinks } from "../components/security-links.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { securitySchema } from "../forms/security.ts";
import { readForm } from "../forms.server.ts";
import { STEP_UP_MINUTES } from "../../common/literals.ts";
import { CodeField } from "../components/code-field.tsx";
import { CODE_REQUIRED } from "../forms/two-factor.ts";
import { commitRotatedSession, liveGrant, requireUser, type AppSession } from "../session.server.ts";
import type { Route } from "./+types/security";

const WARNING = "IMPORTANT! Do not share your 12 word security phrase to anyone.";
// Shows (or echoes back) a 12-word phrase: never compressed (record 035).
export const handle = { carriesSecret: true };

export function meta() {
  return [{ title: "Security — Coinkeep" }];
}

// Nothing on this page may be kept by a cache: step 2 carries the phrase.
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  // A limited attempt's Retry-After goes out with the page too (record 013).
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

// Step 1 only: the phrase is never in a loader (a reload or Back shows step 1).
export async function loader({ request, context }: Route.LoaderArgs) {
  const { session, user } = await requireUser(request, context);
  const [codeNeeded, email] = await Promise.all([
    asksForCode(context, session, user),
    backend(context).emailStatus({ email: user.email, twelveWords: user.words }),
  ]);
  // Unverified (or unknown): the settings offer "Verify your e-mail" (record 049).
  return { codeNeeded, emailVerified: email.ok && email.data.verified_at !== null };
}

/**
 * Whether the reveal asks for a code (issue 27, record 048): two-factor is on
 * (and no restore's removal waits) and no code was given in this session in
 * the last 5 minutes.
 */
async function asksForCode(
  context: Route.LoaderArgs["context"],
  session: AppSession,
  user: { email: string; words: string[] },
): Promise<boolean> {
  if (liveGrant(session)) return false;
  const status = await backend(context).twoFactorStatus({ email: user.email, twelveWords: user.words });
  return status.ok && status.data.enabled && status.data.removal_at === null;
}

// The password is checked by the backend (call 2), which answers the words:
// they go to the page in this response only (step 2), never into the session.
export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const submission = parseWithZod(formData, { schema: securitySchema });
  const hideFields = ["password", "code"];
  if (submission.status !== "success") {
    return data({ step: 1 as const, result: submission.reply({ hideFields }) }, { status: 400 });
  }
  // `purpose` tells the backend's audit log a reveal from a sign-in (record 015). With
  // two-factor on, the session's grant or the code typed here (issue 27).
  const code = submission.value.code;
  const grant = liveGrant(session);
  const login = await backend(context).login({
    email: user.email,
    password: submission.value.password,
    purpose: "reveal",
    ...(code ? { twoFactorCode: code } : grant ? { twoFactorGrant: grant } : {}),
  });
  if (!login.ok && login.kind === "rejected" && login.code.startsWith("two_factor_")) {
    const text = login.code === "two_factor_required" ? CODE_REQUIRED : login.message;
    return data(
      {
        step: 1 as const,
        result: submission.reply({ fieldErrors: { code: [text] }, hideFields }),
        codeNeeded: true,
      },
      { status: 400 },
    );
  }
  if (!login.ok) {
    const limited = limitedAnswer(login);
    if (limited) {
      return data(
        { step: 1 as const, result: submission.reply({ formErrors: [limited.message], hideFields }) },
        { status: limited.status, headers: limited.headers },
      );
    }
    const reply =
      login.kind === "network"
        ? submission.reply({ formErrors: ["Something went wrong!"], hideFields })
        : login.code === "wrong_password"
          ? submission.reply({ fieldErrors: { password: ["Incorrect password"] }, hideFields })
          : submission.reply({ formErrors: ["Something went wrong"], hideFields });
    return data({ step: 1 as const, result: reply }, { status: login.kind === "network" ? 502 : 400 });
  }
  // A new session id once the password is proven again (issue 12): whoever held
  // the old id before this reveal holds nothing now. A code given here covers 5 minutes.
  const newGrant = login.data.two_factor_grant;
  if (newGrant)
    session.set("stepUp", { grant: newGrant, until: Date.now() + STEP_UP_MINUTES * 60_000 - 5_000 });
  return data(
    { step: 2 as const, words: login.data.user.twelveWords.split(" ") },
    { headers: { "Set-Cookie": await commitRotatedSession(request, session, context) } },
  );
}

function StepOne({
  result,
  codeNeeded,
}: {
  result: SubmissionResult<string[]> | undefined;
  codeNeeded: boolean;
}) {
  const [form, fields] = useValidatedForm(
    "security",
    () => import("../forms/security.ts").then((m) => m.securitySchema),
    result,
  );
  const hydrated = useHydrated();
  const navigation = useNavigation();
  const ref = useRef<HTMLFormElement>(null);
  const [filled, setFilled] = useState(false);
  const [ticked, setTicked] = useState(false);
  // The DOM is the truth (a reply may reset the password field): read it on every change.
  const sync = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    const password = el.elements.namedItem("password");
    const box = el.elements.namedItem("acknowledged");
    setFilled(password instanceof HTMLInputElement && password.value !== "");
    setTicked(box instanceof HTMLInputElement && box.checked);
  }, []);
  useEffect(sync, [sync, result]);

  const box = fields.acknowledged;
  const boxErrors = useAutoHide(box.errors);
  const passwordErrors = useAutoHide(fields.password.errors);
  const formErrors = useAutoHide(form.errors);
  const errorShowing = Boolean(boxErrors?.length || passwordErrors?.length || formErrors?.length);
  const ready = filled && ticked && !errorShowing;
  const submitting = navigation.state === "submitting" && navigation.formAction === "/security";
  const boxInvalid = Boolean(boxErrors?.length);

  return (
    <section className="card security-card" aria-labelledby="security-title">
      <h1 id="security-title">Security</h1>
      <Form method="post" {...getFormProps(form)} noValidate ref={ref} onChange={sync} onInput={sync}>
        <AuthenticityTokenInput />
        <p>In order to reveal your 12 word security phrase, please enter your password</p>
        <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
        {codeNeeded || fields.code.errors?.length ? <CodeField meta={fields.code} /> : null}
        <p className="security-warning" id="security-warning">
          {WARNING}
        </p>
        <div className="checkbox-field">
          <label htmlFor={box.id}>
            <input
              type="checkbox"
              id={box.id}
              name={box.name}
              form={box.formId}
              key={box.key}
              value="on"
              defaultChecked={box.initialValue === "on"}
              aria-invalid={boxInvalid || undefined}
              aria-describedby={boxInvalid ? `security-warning ${box.errorId}` : "security-warning"}
              autoFocus={(box.errors?.length && box.valid === false && fields.password.valid) || undefined}
            />
            I have read important note.
          </label>
          <FieldErrors id={box.errorId} errors={boxErrors} />
        </div>
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <button
            type="submit"
            className="button button-primary"
            disabled={(hydrated && !ready) || undefined}
            aria-disabled={submitting || undefined}
          >
            Next
          </button>
        </div>
      </Form>
    </section>
  );
}

function Reveal({ words }: { words: string[] }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // With scripts the page changes in place: take the reader to the phrase.
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="card security-card" aria-labelledby="security-title">
      <h1 id="security-title">Security</h1>
      <h2 id="phrase-title" tabIndex={-1} ref={heading}>
        Your 12 word security phrase
      </h2>
      <p className="security-warning">{WARNING}</p>
      <PhraseGrid words={words} label="Your 12 word security phrase" />
      <div className="actions">
        <CopyButton text={words.join(" ")} />
      </div>
    </section>
  );
}

export default function Security({ loaderData, actionData }: Route.ComponentProps) {
  // The phrase stays on screen while the page is open: a revalidation (a live
  // event, the session's new id after the reveal, the 60 s refresh) drops
  // React Router's action data, not what the user is reading. A reload or
  // leaving the page starts again at step 1.
  const [words, setWords] = useState(actionData?.step === 2 ? actionData.words : null);
  const [seen, setSeen] = useState(actionData);
  if (actionData !== seen) {
    setSeen(actionData);
    if (actionData) setWords(actionData.step === 2 ? actionData.words : null);
  }
  return (
    <>
      {words ? (
        <Reveal words={words} />
      ) : (
        <StepOne
          result={actionData?.step === 1 ? actionData.result : undefined}
          codeNeeded={loaderData.codeNeeded || Boolean(actionData?.step === 1 && "codeNeeded" in actionData)}
        />
      )}
      <SecurityLinks emailVerified={loaderData.emailVerified} />
    </>
  );
}
