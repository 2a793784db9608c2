import { FieldErrors } from "../components/field.tsx";
import { IDS, type FieldAria } from "./use-send-form.ts";

/**
 * XRP's destination tag (issue 15): optional, digits only, checked on 'Send'
 * (0 to 4294967295). An exchange's deposit address usually needs one; an
 * X-address carries its own, so the field may stay empty then.
 */
export function TagField({
  value,
  onChange,
  aria,
  errors,
  autoFocus,
}: {
  value: string;
  onChange: (text: string) => void;
  aria: FieldAria;
  errors: string[] | undefined;
  autoFocus: boolean;
}) {
  return (
    <div className="field">
      <label htmlFor={IDS.tag}>Destination tag (optional)</label>
      <input
        id={IDS.tag}
        name="tag"
        className="mono"
        inputMode="numeric"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        autoComplete="off"
        spellCheck={false}
        autoFocus={autoFocus || undefined}
        {...aria}
      />
      <p id={IDS.tagHint} className="muted small field-hint">
        Exchanges often require a destination tag for XRP deposits: copy it exactly as they give it. Sent
        without it, coins can be lost.
      </p>
      <FieldErrors id={`${IDS.tag}-error`} errors={errors} />
    </div>
  );
}
