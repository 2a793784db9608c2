// The honeypot's two fields, as a page without CSS or scripts shows them
// (issue 24, record 043). remix-utils' own HoneypotInputs labels both fields
// "Please leave this field blank" and shows its timestamp token in a read-only
// text field: a text browser lists both, and a person may type into the first
// and be refused as a bot. Here the token is a plain hidden input and the trap
// field sits, unlabelled, in a `hidden` container after everything a person
// fills in: no browser renders it (the attribute holds without any stylesheet),
// screen readers skip it, and a bot that fills every text input by its name
// still fills it. The server's check is remix-utils' own (forms.server.ts).
import { createContext, useContext } from "react";

export interface HoneypotFieldProps {
  nameFieldName?: string;
  validFromFieldName?: string | null;
  encryptedValidFrom?: string;
}

const HoneypotContext = createContext<HoneypotFieldProps>({});

export function HoneypotProvider({ children, ...props }: HoneypotFieldProps & { children: React.ReactNode }) {
  return <HoneypotContext.Provider value={props}>{children}</HoneypotContext.Provider>;
}

/** The trap and the token; place it last in a public form, after its buttons. */
export function HoneypotFields() {
  const {
    nameFieldName = "name__confirm",
    validFromFieldName,
    encryptedValidFrom,
  } = useContext(HoneypotContext);
  return (
    <>
      <div className="honeypot" hidden aria-hidden="true">
        <input name={nameFieldName} type="text" defaultValue="" autoComplete="off" tabIndex={-1} />
      </div>
      {validFromFieldName && encryptedValidFrom ? (
        <input type="hidden" name={validFromFieldName} value={encryptedValidFrom} />
      ) : null}
    </>
  );
}
