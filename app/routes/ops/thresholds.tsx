// The four-eyes thresholds (issue 26): per coin, the USD value from which a
// send needs two approvers, and whether it is the configured default
// (FOUR_EYES_USD) or set here. Approvers read them; admins set them, with a
// reason, each change in the audit log (the threshold set command).
import { ConsoleForm, replyFor } from "../../components/console-form.tsx";
import { Field } from "../../components/field.tsx";
import { can, listFor, requireStaff } from "../../console.server.ts";
import { readConsoleForm, runForm } from "../../console-forms.server.ts";
import { thresholdSchema } from "../../forms/console.ts";
import type { Route } from "./+types/thresholds";

export function meta() {
  return [{ title: "Four-eyes thresholds — Coinkeep staff" }];
}

interface Threshold {
  coin: string;
  usd: string;
  source: "default" | "set";
  updatedBy: string | null;
  updatedAt: string | null;
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "thresholds");
  const thresholds = await listFor<Threshold[]>(context, staff, "thresholds");
  return { thresholds, maySet: can(staff, "threshold set") };
}

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "threshold set");
  const { formData } = await readConsoleForm(request, context);
  const coin = String(formData.get("coin") ?? "");
  return runForm(
    { context, staff, formData, form: `threshold-${coin}`, schema: thresholdSchema, to: "/ops/thresholds" },
    (v) => ({ command: "threshold set", input: { args: [v.coin, v.usd], options: { reason: v.reason } } }),
    (v) => `Sends of ${v.coin} worth ${v.usd} USD or more now need two approvers.`,
  );
}

export default function Thresholds({ loaderData, actionData }: Route.ComponentProps) {
  const { thresholds, maySet } = loaderData;
  return (
    <>
      <h1>Four-eyes thresholds</h1>
      <p>
        A send worth its coin&apos;s threshold or more (in USD when it was requested), or of unknown value,
        needs approvals by two different approvers.
      </p>
      <table>
        <caption>Thresholds per coin</caption>
        <thead>
          <tr>
            <th scope="col">Coin</th>
            <th scope="col" className="num">
              From (USD)
            </th>
            <th scope="col">Set by</th>
          </tr>
        </thead>
        <tbody>
          {thresholds.map((t) => (
            <tr key={t.coin}>
              <td>{t.coin}</td>
              <td className="num">{t.usd}</td>
              <td>
                {t.source === "default"
                  ? "the default (FOUR_EYES_USD)"
                  : `${t.updatedBy ?? ""}${t.updatedAt ? `, ${t.updatedAt.slice(0, 16).replace("T", " ")} UTC` : ""}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {maySet ? (
        <>
          <h2>Change a threshold</h2>
          {thresholds.map((t) => (
            <section key={t.coin} className="console-card" aria-labelledby={`threshold-${t.coin}-title`}>
              <h3 id={`threshold-${t.coin}-title`}>{t.coin}</h3>
              <ConsoleForm
                id={`threshold-${t.coin}`}
                intent="set"
                hidden={{ coin: t.coin }}
                schema={() => import("../../forms/console.ts").then((m) => m.thresholdSchema)}
                result={replyFor(actionData, `threshold-${t.coin}`)}
                submit={`Set the ${t.coin} threshold`}
                className="inline"
              >
                {(f) => (
                  <>
                    <Field
                      meta={f.usd}
                      label={`${t.coin} threshold in USD`}
                      type="text"
                      inputMode="decimal"
                    />
                    <Field
                      meta={f.reason}
                      label={`Reason for the ${t.coin} change`}
                      type="text"
                      maxLength={1000}
                    />
                  </>
                )}
              </ConsoleForm>
            </section>
          ))}
        </>
      ) : null}
    </>
  );
}
