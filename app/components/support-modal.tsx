import type { SubmissionResult } from "@conform-to/react";
import { getFormProps, type FieldMetadata } from "./form-state.ts";
import { type ChangeEvent } from "react";
import { Link, useFetcher } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { onlyPhoneCharacters } from "../../common/support-limits.ts";
import { useAutoHide } from "./auto-hide.ts";
import { Field, FieldErrors, FormErrors } from "./field.tsx";
import { CloseIcon } from "./icons.tsx";
import { useFlashedReply } from "./form-reply.ts";
import { useHydrated } from "./hydrated.ts";
import { Modal, useCloseUrl } from "./modal.tsx";
import { useValidatedForm } from "./use-validated-form.ts";

/** What /support answers a post it refuses (with status 400, 429 or 502). */
export interface SupportActionData {
  result: SubmissionResult<string[]>;
  returnTo: string;
}

type Meta = FieldMetadata;

/** With scripts, a character the phone may not hold is taken out as soon as it is typed or pasted. */
function refuseNonPhoneCharacters(event: ChangeEvent<HTMLInputElement>) {
  const input = event.currentTarget;
  const clean = onlyPhoneCharacters(input.value);
  if (clean === input.value) return;
  const caret = Math.max(0, (input.selectionStart ?? clean.length) - (input.value.length - clean.length));
  input.value = clean;
  input.setSelectionRange(caret, caret);
}

function PhoneField({ meta }: { meta: Meta }) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  const hintId = `${meta.id}-hint`;
  return (
    <div className="field">
      <label htmlFor={meta.id}>Phone</label>
      <input
        id={meta.id}
        name={meta.name}
        form={meta.formId}
        key={meta.key}
        type="tel"
        inputMode="tel"
        autoComplete="tel"
        defaultValue={meta.initialValue ?? undefined}
        onChange={refuseNonPhoneCharacters}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? `${hintId} ${meta.errorId}` : hintId}
        autoFocus={(meta.errors?.length && meta.valid === false) || undefined}
      />
      <p id={hintId} className="support-hint">
        Optional. Digits only, with an optional leading +.
      </p>
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}

function CommentField({ meta }: { meta: Meta }) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={meta.id}>Comment</label>
      <textarea
        id={meta.id}
        name={meta.name}
        form={meta.formId}
        key={meta.key}
        rows={5}
        defaultValue={meta.initialValue ?? undefined}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? meta.errorId : undefined}
        autoFocus={(meta.errors?.length && meta.valid === false) || undefined}
      />
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}

/**
 * The support form: Full name, Email (the user's, shown disabled), Phone,
 * Comment, Send. It posts to /support, which redirects to `returnTo` with the
 * flash 'Message sent!'. With scripts it posts through a fetcher, so errors
 * show in place (400) and the redirect closes the modal without a page load;
 * without, a refusal comes back to the modal as a flash (`result`).
 */
function SupportForm({
  email,
  returnTo,
  closeUrl,
  result,
  Heading,
}: {
  email: string;
  returnTo: string;
  closeUrl: string;
  result: SubmissionResult<string[]> | undefined;
  Heading: "h1" | "h2";
}) {
  const fetcher = useFetcher<SupportActionData>();
  const lastResult = fetcher.data && "result" in fetcher.data ? fetcher.data.result : result;
  const [form, fields] = useValidatedForm(
    "support",
    () => import("../forms/support.ts").then((m) => m.supportFormSchema),
    lastResult,
  );
  const pending = fetcher.state !== "idle";
  const hydrated = useHydrated();
  return (
    <>
      <div className="modal-head">
        <Heading id="support-title">Start Here</Heading>
        <Link to={closeUrl} replace preventScrollReset className="icon-button">
          <CloseIcon />
          <span className="visually-hidden">Close</span>
        </Link>
      </div>
      <p id="support-text">Please, enter your email where we can contact you</p>
      <fetcher.Form
        method="post"
        action="/support"
        className="support-form"
        {...getFormProps(form)}
        noValidate
        onSubmit={(event) => {
          if (pending) {
            event.preventDefault();
            return;
          }
          form.onSubmit(event);
        }}
      >
        <AuthenticityTokenInput />
        <input type="hidden" name="returnTo" value={returnTo} />
        {/* Tells /support to answer in place; a plain post is sent back to the modal. */}
        {hydrated ? <input type="hidden" name="scripted" value="1" /> : null}
        <Field meta={fields.fullName} label="Full name" autoComplete="name" />
        <div className="field">
          <label htmlFor="support-email">Email</label>
          <input id="support-email" type="email" value={email} disabled readOnly autoComplete="email" />
        </div>
        <PhoneField meta={fields.phone} />
        <CommentField meta={fields.comment} />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <button type="submit" className="button button-primary" aria-disabled={pending || undefined}>
            Send
          </button>
        </div>
      </fetcher.Form>
    </>
  );
}

/** The Support modal (`?modal=support` on any signed-in page). */
export function SupportModal({ email }: { email: string }) {
  const closeUrl = useCloseUrl();
  // A refusal of a post made without scripts comes back here as a flash (record 037).
  const refused = useFlashedReply("support");
  // Opened with scripts, the cursor starts in Full name (the dialog would focus the close link).
  return (
    <Modal labelledBy="support-title" initialFocus="input[name='fullName']">
      <SupportForm email={email} returnTo={closeUrl} closeUrl={closeUrl} result={refused} Heading="h2" />
    </Modal>
  );
}
