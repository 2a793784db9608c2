import { FieldErrors } from "../components/field.tsx";
import { IDS, type FieldAria } from "./use-send-form.ts";

/** The receiver's address: typed as is (the backend checks it, per network). */
export function AddressField({
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
      <label htmlFor={IDS.address}>Receiver address</label>
      <input
        id={IDS.address}
        name="address"
        className="mono"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        autoComplete="off"
        autoCapitalize="none"
        autoCorrect="off"
        spellCheck={false}
        autoFocus={autoFocus || undefined}
        {...aria}
      />
      <FieldErrors id={`${IDS.address}-error`} errors={errors} />
    </div>
  );
}
