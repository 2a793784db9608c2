import type { SubmissionResult } from "@conform-to/react";
import { getFormProps, type FieldMetadata } from "./form-state.ts";
import { Fragment, useState } from "react";
import { useFetcher } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { HoneypotFields } from "./honeypot.tsx";
import { MAX_COMMENT } from "../../common/support-limits.ts";
import { useAutoHide } from "./auto-hide.ts";
import { FieldErrors } from "./field.tsx";
import { useHydrated } from "./hydrated.ts";
import { useValidatedForm } from "./use-validated-form.ts";

/** Spec section 8: any unsuccessful answer. */
export const CONTACT_FAILED = "Something went wrong";

/** What /contact answers a scripted post it refuses (with status 400, 429 or 502). */
export interface ContactActionData {
  result: SubmissionResult<string[]>;
  returnTo: string;
}

/**
 * The contact form (step 2 of the popup). It posts to /contact: with scripts
 * through a fetcher (errors come back in place, success is a redirect to the
 * page at step 3), without scripts as a plain form (a refusal comes back to the
 * popup as a flash: `lastResult`).
 */
export function ContactForm({
  id,
  returnTo,
  lastResult,
  autoFocus = false,
}: {
  id: string;
  /** The page to come back to, at step 3, once the message is sent. */
  returnTo: string;
  /** The reply to a refused submission posted without scripts (a flash). */
  lastResult?: SubmissionResult<string[]> | undefined;
  /** Start here: the popup's step 2. */
  autoFocus?: boolean;
}) {
  const fetcher = useFetcher<ContactActionData>();
  const pending = fetcher.state !== "idle";
  const hydrated = useHydrated();
  const [form, fields] = useValidatedForm(
    id,
    () => import("../forms/support.ts").then((m) => m.contactFormSchema),
    fetcher.data?.result ?? lastResult,
  );
  const formProps = getFormProps(form);
  // Errors hide themselves after 5 s; the same errors after another press
  // of Send are news again, so each press counts as a new attempt.
  const [attempt, setAttempt] = useState(0);
  const emailInvalid = Boolean(fields.email.errors?.length);
  const commentInvalid = Boolean(fields.comment.errors?.length);
  const formErrors = useFreshErrors(form.errors, attempt);

  return (
    <fetcher.Form
      method="post"
      action="/contact"
      {...formProps}
      onSubmit={(event) => {
        // One message per press, however often it is pressed.
        if (pending) {
          event.preventDefault();
          return;
        }
        setAttempt((n) => n + 1);
        formProps.onSubmit(event);
      }}
      aria-busy={pending || undefined}
    >
      <AuthenticityTokenInput />
      <input type="hidden" name="returnTo" value={returnTo} />
      {/* Tells /contact to answer in place; a plain post is sent back to the popup. */}
      {hydrated ? <input type="hidden" name="scripted" value="1" /> : null}
      <ContactField
        meta={fields.email}
        label="Email"
        attempt={attempt}
        // Without scripts the browser focuses it (unless another field comes back refused); with them
        // the popup does (see contact-popup.tsx).
        autoFocus={(autoFocus && !hydrated && !commentInvalid) || emailInvalid}
        start={autoFocus ? "2" : undefined}
        render={(props) => (
          <input {...props} type="email" autoComplete="email" inputMode="email" maxLength={254} />
        )}
      />
      <ContactField
        meta={fields.comment}
        label="Comment"
        attempt={attempt}
        autoFocus={!emailInvalid && commentInvalid}
        render={(props) => <textarea {...props} rows={5} maxLength={MAX_COMMENT} />}
      />
      <div id={form.errorId} className="form-errors" role="alert">
        {formErrors?.map((error) => (
          <p key={error}>{error}</p>
        ))}
      </div>
      <div className="actions">
        <button type="submit" className="button button-primary" aria-disabled={pending || undefined}>
          Send
        </button>
      </div>
      <HoneypotFields />
    </fetcher.Form>
  );
}

/** `errors` as useAutoHide shows them, counting each attempt as new. */
function useFreshErrors(errors: string[] | undefined, attempt: number): string[] | undefined {
  return useAutoHide(errors?.map((text) => ({ text, attempt })))?.map((error) => error.text);
}

type ControlProps = {
  id: string;
  name: string;
  defaultValue: string | undefined;
  autoFocus: boolean | undefined;
  "data-autofocus": string | undefined;
  "aria-invalid": true | undefined;
  "aria-describedby": string | undefined;
};

/** A labelled input or textarea with its errors, wired as the shared Field is. */
function ContactField({
  meta,
  label,
  attempt,
  autoFocus,
  start,
  render,
}: {
  meta: FieldMetadata;
  label: string;
  attempt: number;
  autoFocus: boolean;
  /** The popup step this control starts (data-autofocus). */
  start?: string | undefined;
  render: (props: ControlProps) => React.ReactNode;
}) {
  const errors = useFreshErrors(meta.errors, attempt);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={meta.id}>{label}</label>
      <Fragment key={meta.key}>
        {render({
          id: meta.id,
          name: meta.name,
          defaultValue: meta.initialValue ?? undefined,
          autoFocus: autoFocus || undefined,
          "data-autofocus": start,
          "aria-invalid": invalid || undefined,
          "aria-describedby": invalid ? meta.errorId : undefined,
        })}
      </Fragment>
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}
