import type { FieldMetadata } from "./form-state.ts";
import { Field } from "./field.tsx";

/** A code of the holder's authenticator app, or a recovery code (issue 27). */
export function CodeField({ meta, label = "Authentication code" }: { meta: FieldMetadata; label?: string }) {
  return (
    <Field
      meta={meta}
      label={label}
      type="text"
      autoComplete="one-time-code"
      autoCapitalize="none"
      spellCheck={false}
    />
  );
}
