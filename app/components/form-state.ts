// The forms' state in the browser: errors per field, which fields have been
// checked, the values a server reply brings back. It reads conform's
// submission results (the server replies with `submission.reply()`) and runs
// the zod checks that useLazyValidation loads, with conform's semantics as far
// as our forms use them: check on submit, then again as you type in a checked
// field (or on the next submit), the first field in error focused after a
// refused submit. Our own small hook rather than conform's `useForm`, whose
// 9.7 KB gzip were in the first load of every page with a form (record 034).
import type { Submission, SubmissionResult } from "@conform-to/react";
import { useEffect, useState, type FormEvent } from "react";

type Errors = Record<string, string[]>;

/** One field's metadata, named as conform names it. */
export interface FieldMetadata {
  /** The input's id: `<form id>-<name>`. */
  id: string;
  name: string;
  formId: string;
  errorId: string;
  /** The value a server reply sent back (the input's defaultValue). */
  initialValue: string | undefined;
  /** Shown errors: only once the field has been checked. */
  errors: string[] | undefined;
  valid: boolean;
  /** Changes when the form is reset, so the input starts again from its initial value. */
  key: string | undefined;
}

export interface FormMetadata {
  id: string;
  errorId: string;
  /** The form's own errors (conform's "" key). */
  errors: string[] | undefined;
  valid: boolean;
  noValidate: boolean;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
}

export type Validate = (formData: FormData) => Submission<unknown, string[], unknown>;

export interface FormOptions {
  id: string;
  lastResult: SubmissionResult<string[]> | undefined;
  /** When a checked field is checked again: as you type, or on the next submit. */
  shouldRevalidate?: "onInput" | "onSubmit";
  /** The browser's checks, once loaded; without them a submit goes to the server. */
  onValidate?: Validate | undefined;
  /** After the browser's checks passed (or did not run): the submit may go on, or be taken over. */
  onSubmit?: (
    event: FormEvent<HTMLFormElement>,
    context: { formData: FormData; submission: Submission<unknown, string[], unknown> | undefined },
  ) => void;
}

interface State {
  errors: Errors;
  validated: Record<string, boolean>;
  initialValue: Record<string, unknown>;
  resets: number;
}

/** The errors of a result, without empty lists. */
function errorsOf(error: Record<string, string[] | null> | null | undefined): Errors {
  const out: Errors = {};
  for (const [name, list] of Object.entries(error ?? {})) if (list?.length) out[name] = list;
  return out;
}

/** Only checked fields keep their errors (as conform does). */
function checkedOnly(errors: Errors, validated: Record<string, boolean>): Errors {
  return Object.fromEntries(Object.entries(errors).filter(([name]) => validated[name]));
}

function fromResult(
  result: SubmissionResult<string[]> | undefined,
  resets: number,
  before: Record<string, boolean> = {},
): State {
  const errors = errorsOf(result?.error);
  const validated: Record<string, boolean> = { ...before, ...result?.state?.validated };
  // A reply to a real submit (no intent) counts every field it names, and every field in error, as checked.
  if (result && !result.intent) {
    for (const name of [...Object.keys(errors), ...(result.fields ?? [])]) validated[name] = true;
  }
  const initialValue = result?.initialValue;
  return {
    errors: checkedOnly(errors, validated),
    validated,
    initialValue: initialValue && typeof initialValue === "object" ? initialValue : {},
    resets,
  };
}

/** A submission's errors: none for a success. */
function errorOf(submission: Submission<unknown, string[], unknown>): Record<string, string[] | null> | null {
  return submission.status === "success" ? {} : submission.error;
}

function shown(state: State, name: string): string[] | undefined {
  return state.errors[name];
}

/** The submitted values: the form's, and the pressed button's name and value. */
function formDataOf(form: HTMLFormElement, submitter: HTMLElement | null): FormData {
  const data = new FormData(form);
  if (
    (submitter instanceof HTMLButtonElement || submitter instanceof HTMLInputElement) &&
    submitter.name &&
    !submitter.disabled
  ) {
    data.append(submitter.name, submitter.value);
  }
  return data;
}

/**
 * The state of one form: `[form, fields]`, where `fields.<name>` is that
 * field's metadata. Works on the server too (the errors of `lastResult` render
 * without scripts).
 */
export function useForm<Name extends string = string>({
  id,
  lastResult,
  shouldRevalidate = "onSubmit",
  onValidate,
  onSubmit,
}: FormOptions): [FormMetadata, Record<Name, FieldMetadata>] {
  const [state, setState] = useState<State>(() => fromResult(lastResult, 0));
  const [seen, setSeen] = useState(lastResult);
  const [focusFirstError, setFocusFirstError] = useState(0);

  // A new reply from the server replaces the errors and values; a reset reply starts over.
  if (lastResult !== seen) {
    setSeen(lastResult);
    if (lastResult) {
      if (lastResult.initialValue === null) {
        setState((current) => fromResult(undefined, current.resets + 1));
      } else {
        setState(fromResult(lastResult, state.resets, state.validated));
        if (lastResult.status === "error") setFocusFirstError((n) => n + 1);
      }
    }
  }

  // After a refused submit, the first field (in the form's order) that shows an error takes the focus.
  useEffect(() => {
    if (!focusFirstError) return;
    const form = document.forms.namedItem(id);
    if (!form) return;
    for (const element of Array.from(form.elements)) {
      const name = (element as HTMLInputElement).name;
      if (name && shown(state, name)?.length && element instanceof HTMLElement) {
        element.focus();
        break;
      }
    }
    // Only a new refusal moves the focus.
    // oxlint-disable-next-line react/exhaustive-deps
  }, [focusFirstError]);

  // As you type in a checked field, the form is checked again (its checked fields show the new errors).
  useEffect(() => {
    if (shouldRevalidate !== "onInput" || !onValidate) return;
    const onInput = (event: Event) => {
      const target = event.target as HTMLInputElement | null;
      const form = target?.form;
      if (!form || form.id !== id || !target.name) return;
      setState((current) => {
        if (!current.validated[target.name]) return current;
        const errors = errorsOf(errorOf(onValidate(formDataOf(form, null))));
        return { ...current, errors: checkedOnly(errors, current.validated) };
      });
    };
    document.addEventListener("input", onInput, true);
    return () => document.removeEventListener("input", onInput, true);
  }, [id, shouldRevalidate, onValidate]);

  function submit(event: FormEvent<HTMLFormElement>) {
    const form = event.currentTarget;
    const formData = formDataOf(form, (event.nativeEvent as SubmitEvent).submitter);
    if (!onValidate) {
      onSubmit?.(event, { formData, submission: undefined });
      return;
    }
    const submission = onValidate(formData);
    const errors = errorsOf(errorOf(submission));
    const validated = { ...state.validated };
    for (const name of [...formData.keys(), ...Object.keys(errors)]) validated[name] = true;
    setState({ ...state, errors: checkedOnly(errors, validated), validated });
    if (submission.status === "success" || errorOf(submission) === null) {
      onSubmit?.(event, { formData, submission });
    } else {
      event.preventDefault();
      setFocusFirstError((n) => n + 1);
    }
  }

  const formErrors = shown(state, "");
  const form: FormMetadata = {
    id,
    errorId: `${id}-error`,
    errors: formErrors,
    valid: Object.keys(state.errors).length === 0,
    // Always: the server validates every form and answers in the spec's words; the
    // browser's own check (a native bubble, no scripts) would stop it (issue 24).
    noValidate: true,
    onSubmit: submit,
  };
  const fields = new Proxy({} as Record<Name, FieldMetadata>, {
    get(_, name) {
      if (typeof name !== "string") return undefined;
      const fieldId = `${id}-${name}`;
      const initial = state.initialValue[name];
      return {
        id: fieldId,
        name,
        formId: id,
        errorId: `${fieldId}-error`,
        initialValue: typeof initial === "string" ? initial : undefined,
        errors: shown(state, name),
        valid: !state.errors[name]?.length,
        key: state.resets ? String(state.resets) : undefined,
      } satisfies FieldMetadata;
    },
  });
  return [form, fields];
}

/** The form element's props: id, submit handler, noValidate, and its errors' description. */
export function getFormProps(form: FormMetadata) {
  return {
    id: form.id,
    onSubmit: form.onSubmit,
    noValidate: form.noValidate,
    ...(form.errors?.length ? { "aria-describedby": form.errorId } : {}),
  };
}
