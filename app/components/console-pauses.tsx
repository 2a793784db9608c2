// The console's kill switches, as the Money page (a coin, every user) and a
// user's page (that user, every coin) both show them: the pauses in force, and
// the forms that pause and resume. One table and one form, two scopes.
import type { ReactNode } from "react";
import { COIN_CHOICES } from "../forms/console.ts";
import { ConsoleForm, replyFor, SelectField, When } from "./console-form.tsx";
import { Field } from "./field.tsx";
import type { FieldMetadata } from "./form-state.ts";

export interface PauseShown {
  id: string;
  what: string;
  since: string;
  actor: string;
  automatic: boolean;
  reason: string;
  /** Who it reaches, when the table has a scope column. */
  scope?: ReactNode;
}

/** The pauses in force, labelled by the heading `labelledBy`; a Scope column when `scoped`. */
export function PausesTable({
  labelledBy,
  pauses,
  scoped = false,
}: {
  labelledBy: string;
  pauses: readonly PauseShown[];
  scoped?: boolean;
}) {
  return (
    <table aria-labelledby={labelledBy}>
      <thead>
        <tr>
          <th scope="col">What</th>
          {scoped ? <th scope="col">Scope</th> : null}
          <th scope="col">Since</th>
          <th scope="col">By</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {pauses.map((p) => (
          <tr key={p.id}>
            <td>{p.what}</td>
            {scoped ? <td>{p.scope}</td> : null}
            <td>
              <When iso={p.since} />
            </td>
            <td>
              {p.actor}
              {p.automatic ? " (automatic)" : ""}
            </td>
            <td className="message-text">{p.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Pause or resume: what (of `whats`), the coin when `coin` (the Money page; a
 * user's page has the user already), and the reason for the audit log.
 */
export function SwitchForm({
  verb,
  title,
  note,
  whats,
  coin,
  actionData,
}: {
  verb: "pause" | "resume";
  title: string;
  note?: string;
  whats: readonly string[];
  coin: boolean;
  actionData: unknown;
}) {
  const label = verb === "pause" ? "Pause" : "Resume";
  const titleId = `${verb}-title`;
  return (
    <section aria-labelledby={titleId} className="console-card">
      <h2 id={titleId}>{title}</h2>
      {note ? <p>{note}</p> : null}
      <ConsoleForm
        id={verb}
        intent={verb}
        schema={() =>
          import("../forms/console.ts").then((m) => (coin ? m.coinSwitchSchema : m.userSwitchSchema))
        }
        result={replyFor(actionData, verb)}
        submit={label}
      >
        {(fields) => {
          // The two schemas share what and reason; only the coin's has coin.
          const f = fields as Partial<Record<"what" | "coin" | "reason", FieldMetadata>>;
          return (
            <>
              {f.what ? <SelectField meta={f.what} label={`What to ${verb}`} options={whats} /> : null}
              {coin && f.coin ? <SelectField meta={f.coin} label="Coin" options={COIN_CHOICES} /> : null}
              {f.reason ? (
                <Field meta={f.reason} label="Reason (for the audit log)" type="text" maxLength={1000} />
              ) : null}
            </>
          );
        }}
      </ConsoleForm>
    </section>
  );
}
