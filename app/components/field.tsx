import type { FieldMetadata } from "./form-state.ts";
import type { InputHTMLAttributes } from "react";
import { useAutoHide } from "./auto-hide.ts";

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, "name" | "id" | "defaultValue" | "form">;

/**
 * One accessible field: a label, the input, and its errors wired through
 * aria-describedby / aria-invalid and announced when they appear.
 */
export function Field({
  meta,
  label,
  hideLabel = false,
  autoFocusOnError = true,
  ...input
}: {
  meta: FieldMetadata;
  label: string;
  hideLabel?: boolean;
  autoFocusOnError?: boolean;
} & InputProps) {
  const errors = useAutoHide(meta.errors);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={meta.id} className={hideLabel ? "visually-hidden" : undefined}>
        {label}
      </label>
      <input
        {...input}
        id={meta.id}
        name={meta.name}
        form={meta.formId}
        key={meta.key}
        defaultValue={input.type === "password" ? undefined : (meta.initialValue ?? undefined)}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? meta.errorId : undefined}
        autoFocus={
          (autoFocusOnError && meta.errors?.length && meta.valid === false) || input.autoFocus || undefined
        }
      />
      <FieldErrors id={meta.errorId} errors={errors} />
    </div>
  );
}

export function FieldErrors({ id, errors }: { id: string; errors: string[] | undefined }) {
  return (
    <div id={id} className="field-errors" role="alert">
      {errors?.map((error) => (
        <p key={error}>{error}</p>
      ))}
    </div>
  );
}

/** Errors that belong to the whole form rather than one field. */
export function FormErrors({ id, errors }: { id: string; errors: string[] | undefined }) {
  const visible = useAutoHide(errors);
  return (
    <div id={id} className="form-errors" role="alert">
      {visible?.map((error) => (
        <p key={error}>{error}</p>
      ))}
    </div>
  );
}
