import { FieldErrors } from "../components/field.tsx";
import type { AddressOffer } from "./rules.ts";
import { IDS, type FieldAria } from "./use-send-form.ts";

/**
 * The receiver's address: typed as is (the backend checks it, per network).
 * The holder's saved addresses of the coin, when there are any, are offered
 * as suggestions (a datalist: the browser's own, with scripts off too); typing
 * stays exactly as it is.
 */
export function AddressField({
  value,
  onChange,
  aria,
  errors,
  offers = [],
  autoFocus,
}: {
  value: string;
  onChange: (text: string) => void;
  aria: FieldAria;
  errors: string[] | undefined;
  offers?: readonly AddressOffer[];
  autoFocus: boolean;
}) {
  const listId = offers.length ? `${IDS.address}-saved` : undefined;
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
        list={listId}
        {...aria}
      />
      {listId ? (
        <datalist id={listId}>
          {offers.map((offer) => (
            <option key={offer.value} value={offer.value}>
              {offer.label}
            </option>
          ))}
        </datalist>
      ) : null}
      <FieldErrors id={`${IDS.address}-error`} errors={errors} />
    </div>
  );
}
