// The staff console's form pieces beside Field (field.tsx): a text area, a
// select and a group of checkboxes, each labelled, its errors at the field;
// and ConsoleForm, a posted form with its CSRF token, its intent, the form's
// own errors (a command's refusal) and a submit button with visible text.
import type { SubmissionResult } from "@conform-to/react";
import type { ReactNode } from "react";
import { Form } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import type { z } from "zod";
import { useAutoHide } from "./auto-hide.ts";
import { FieldErrors, FormErrors } from "./field.tsx";
import { getFormProps, type FieldMetadata } from "./form-state.ts";
import { SubmitButton } from "./submit-button.tsx";
import { useValidatedForm } from "./use-validated-form.ts";

/** What a console action answers for a refused form: which form, and conform's reply. */
export interface ConsoleReply {
  form: string;
  result: SubmissionResult<string[]>;
}

/** The reply of `form`, when the last action answered for it. */
export function replyFor(actionData: unknown, form: string): SubmissionResult<string[]> | undefined {
  if (!actionData || typeof actionData !== "object" || !("form" in actionData)) return undefined;
  const reply = actionData as Partial<ConsoleReply>;
  return reply.form === form ? reply.result : undefined;
}

/**
 * One posted console form: `id` (unique on the page), the hidden intent the
 * server picks the schema by, and the fields as a render function of conform's
 * field metadata.
 */
export function ConsoleForm<Schema extends z.ZodType<unknown, Record<string, unknown>>>({
  id,
  intent,
  schema,
  result,
  submit,
  className,
  children,
  hidden,
}: {
  id: string;
  intent: string;
  schema: () => Promise<Schema>;
  result: SubmissionResult<string[]> | undefined;
  submit: string;
  className?: string;
  hidden?: Readonly<Record<string, string>>;
  children?: (fields: Record<keyof z.input<Schema> & string, FieldMetadata>) => ReactNode;
}) {
  const [form, fields] = useValidatedForm(id, schema, result);
  return (
    <Form method="post" {...getFormProps(form)} className={className}>
      <AuthenticityTokenInput />
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(hidden ?? {}).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children?.(fields)}
      <FormErrors id={form.errorId} errors={form.errors} />
      <SubmitButton className="button button-secondary">{submit}</SubmitButton>
    </Form>
  );
}

export function TextAreaField({
  meta,
  label,
  rows = 4,
  maxLength,
}: {
  meta: FieldMetadata;
  label: string;
  rows?: number;
  maxLength?: number;
}) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={meta.id}>{label}</label>
      <textarea
        id={meta.id}
        name={meta.name}
        key={meta.key}
        rows={rows}
        maxLength={maxLength}
        defaultValue={meta.initialValue ?? undefined}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? meta.errorId : undefined}
      />
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}

export function SelectField({
  meta,
  label,
  options,
  defaultValue,
}: {
  meta: FieldMetadata;
  label: string;
  options: readonly (string | { value: string; label: string })[];
  defaultValue?: string;
}) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={meta.id}>{label}</label>
      <select
        id={meta.id}
        name={meta.name}
        key={meta.key}
        defaultValue={meta.initialValue ?? defaultValue}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? meta.errorId : undefined}
      >
        {options.map((o) => {
          const { value, label: text } = typeof o === "string" ? { value: o, label: o } : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}

/** Checkboxes of one name in a fieldset whose legend labels the group. */
export function CheckboxGroup({
  meta,
  legend,
  options,
  checked,
}: {
  meta: FieldMetadata;
  legend: string;
  options: readonly string[];
  checked: readonly string[];
}) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  return (
    <fieldset
      className="field console-checks"
      aria-invalid={invalid || undefined}
      aria-describedby={invalid ? meta.errorId : undefined}
    >
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o} htmlFor={`${meta.id}-${o}`}>
          <input
            type="checkbox"
            id={`${meta.id}-${o}`}
            name={meta.name}
            value={o}
            defaultChecked={checked.includes(o)}
          />{" "}
          {o}{" "}
        </label>
      ))}
      <FieldErrors id={meta.errorId} errors={errors} />
    </fieldset>
  );
}

/** A moment from a command's JSON (ISO 8601), readable: "2026-05-01 14:03 UTC". */
/** An ISO time as the console writes it: "2026-11-27 18:30 UTC". */
export function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <>–</>;
  return <time dateTime={iso}>{utc(iso)}</time>;
}

/** A queue's coin filter: a GET form (a plain page load without scripts), one coin or all. */
export function CoinFilter({
  id,
  label,
  coins,
  value,
}: {
  id: string;
  /** The form's name for screen readers ("Filter sends"). */
  label: string;
  coins: readonly string[];
  value: string;
}) {
  return (
    <Form method="get" className="console-filters" aria-label={label}>
      <div className="field">
        <label htmlFor={id}>Coin</label>
        <select id={id} name="coin" defaultValue={value}>
          <option value="">All coins</option>
          {coins.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" className="button button-secondary">
        Show
      </button>
    </Form>
  );
}
