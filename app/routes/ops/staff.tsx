// Staff (issue 26, admin): the console's members — roles, enrolled, locked,
// sessions; adding one (their one-time enrolment link is shown once, in this
// answer only: never in a notice or a URL), and per member setting roles,
// ending sessions, lifting a sign-in lock, removing them, a new link.
import { data } from "react-router";
import { Field } from "../../components/field.tsx";
import { CheckboxGroup, ConsoleForm, replyFor, When } from "../../components/console-form.tsx";
import { readConsoleForm, refusedForm, runForm, runFormShowing } from "../../console-forms.server.ts";
import { can, listFor, requireStaff } from "../../console.server.ts";
import {
  addStaffSchema,
  ROLE_NAMES,
  staffLinkSchema,
  staffReasonSchema,
  staffRolesSchema,
} from "../../forms/console.ts";
import type { Route } from "./+types/staff";

/** As `staff --json`. */
interface MemberRow {
  email: string;
  roles: string[];
  enrolled: boolean;
  locked: boolean;
  failedSignIns: number;
  sessions: number;
  createdAt: string;
  createdBy: string | null;
}

/** What an add or a new link answers, once. */
interface Enrolment {
  added: boolean;
  email: string;
  roles: string[] | null;
  url: string;
  expiresAt: string;
}

export function meta() {
  return [{ title: "Staff — Coinkeep staff console" }];
}

export function headers() {
  // An answer may carry an enrolment link: never stored, never sent on.
  return { "Cache-Control": "no-store", "Referrer-Policy": "same-origin" };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "staff");
  const members = await listFor<MemberRow[]>(context, staff, "staff");
  return {
    me: staff.email,
    members,
    may: {
      add: can(staff, "staff add"),
      link: can(staff, "staff link"),
      roles: can(staff, "staff roles"),
      remove: can(staff, "staff remove"),
      endSessions: can(staff, "staff end-sessions"),
      unlock: can(staff, "staff unlock"),
    },
  };
}

const REASON_COMMANDS = {
  remove: "staff remove",
  "end-sessions": "staff end-sessions",
  unlock: "staff unlock",
} as const;

const REASON_DONE = {
  remove: (email: string) => `Removed ${email}: they can no longer sign in; their sessions ended.`,
  "end-sessions": (email: string, json: unknown) =>
    `Ended ${(json as { ended?: number }).ended ?? 0} session(s) of ${email}.`,
  unlock: (email: string, json: unknown) =>
    (json as { cleared?: number }).cleared
      ? `Lifted the sign-in lock of ${email}.`
      : `${email} had no failed sign-ins; nothing to unlock.`,
} as const;

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "staff");
  const { formData, intent } = await readConsoleForm(request, context);
  const email = formData.get("email");
  const member = typeof email === "string" ? email : "";
  const args = { context, staff, formData, to: "/ops/staff" };
  switch (intent) {
    case "add":
    case "link": {
      const form = intent === "add" ? "add" : `link-${member}`;
      const ran =
        intent === "add"
          ? await runFormShowing({ ...args, form, schema: addStaffSchema }, (v) => ({
              command: "staff add",
              input: { args: [v.email], options: { role: v.roles.join(",") } },
            }))
          : await runFormShowing({ ...args, form, schema: staffLinkSchema }, (v) => ({
              command: "staff link",
              input: { args: [v.email] },
            }));
      if (!ran.ok) return ran.response;
      const json = ran.json as { email: string; roles?: string[]; enrolmentUrl: string; expiresAt: string };
      return data({
        form,
        result: ran.result,
        enrolment: {
          added: intent === "add",
          email: json.email,
          roles: json.roles ?? null,
          url: json.enrolmentUrl,
          expiresAt: json.expiresAt,
        },
      });
    }
    case "roles":
      return runForm(
        { ...args, form: `roles-${member}`, schema: staffRolesSchema },
        (v) => ({
          command: "staff roles",
          input: { args: [v.email], options: { role: v.roles.join(","), reason: v.reason } },
        }),
        (_v, json) => {
          const m = json as { email: string; roles: string[] };
          return `${m.email} now has the roles ${m.roles.join(", ")}; their sessions ended.`;
        },
      );
    case "remove":
    case "end-sessions":
    case "unlock":
      return runForm(
        { ...args, form: `${intent}-${member}`, schema: staffReasonSchema },
        (v) => ({
          command: REASON_COMMANDS[v.intent],
          input: { args: [v.email], options: { reason: v.reason } },
        }),
        (v, json) => REASON_DONE[v.intent](v.email, json),
      );
    default:
      return refusedForm("", { status: "error", error: { "": ["Unknown action."] } });
  }
}

export default function Staff({ loaderData, actionData }: Route.ComponentProps) {
  const { me, members, may } = loaderData;
  const enrolment =
    actionData && "enrolment" in actionData ? (actionData.enrolment as Enrolment | undefined) : null;
  return (
    <>
      <h1>Staff</h1>
      {enrolment ? (
        <section aria-labelledby="enrolment-title" className="console-card console-secret" role="status">
          <h2 id="enrolment-title">
            {enrolment.added ? `Added ${enrolment.email}` : `New enrolment link for ${enrolment.email}`}
          </h2>
          {enrolment.roles ? <p>Roles: {enrolment.roles.join(", ")}.</p> : null}
          <p>
            Their one-time enrolment link, valid until <When iso={enrolment.expiresAt} />:
          </p>
          <p className="mono">{enrolment.url}</p>
          <p>
            <strong>Hand it over privately</strong> (in person or through a channel only they read): whoever
            opens it first sets the password and the authenticator. It is shown only this once; if it is lost,
            issue a new link below.
          </p>
        </section>
      ) : null}

      <table>
        <caption>Staff members</caption>
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Roles</th>
            <th scope="col">Enrolled</th>
            <th scope="col">Sign-in</th>
            <th scope="col" className="num">
              Sessions
            </th>
            <th scope="col">Added</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.email}>
              <td>
                {m.email}
                {m.email === me ? " (you)" : ""}
              </td>
              <td>{m.roles.join(", ")}</td>
              <td>{m.enrolled ? "yes" : "no"}</td>
              <td>{m.locked ? `locked (${m.failedSignIns} failures)` : "open"}</td>
              <td className="num">{m.sessions}</td>
              <td>
                <When iso={m.createdAt} />
                {m.createdBy ? ` by ${m.createdBy}` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      {may.add ? (
        <section aria-labelledby="add-title" className="console-card">
          <h2 id="add-title">Add a member</h2>
          <ConsoleForm
            id="add"
            intent="add"
            schema={() => import("../../forms/console.ts").then((m) => m.addStaffSchema)}
            result={replyFor(actionData, "add")}
            submit="Add member"
          >
            {(f) => (
              <>
                <Field meta={f.email} label="E-mail" type="email" autoComplete="off" />
                <CheckboxGroup meta={f.roles} legend="Roles" options={ROLE_NAMES} checked={[]} />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}

      <h2>Manage members</h2>
      {members.map((m) => (
        <section key={m.email} aria-labelledby={`member-${m.email}`} className="console-card">
          <h3 id={`member-${m.email}`}>{m.email}</h3>
          {may.roles ? (
            <ConsoleForm
              id={`roles-${m.email}`}
              intent="roles"
              hidden={{ email: m.email }}
              schema={() => import("../../forms/console.ts").then((s) => s.staffRolesSchema)}
              result={replyFor(actionData, `roles-${m.email}`)}
              submit="Set roles"
            >
              {(f) => (
                <>
                  <CheckboxGroup
                    meta={f.roles}
                    legend={`Roles of ${m.email}`}
                    options={ROLE_NAMES}
                    checked={m.roles}
                  />
                  <Field meta={f.reason} label="Reason for the role change" type="text" maxLength={1000} />
                </>
              )}
            </ConsoleForm>
          ) : null}
          {may.link && !m.enrolled ? (
            <ConsoleForm
              id={`link-${m.email}`}
              intent="link"
              hidden={{ email: m.email }}
              schema={() => import("../../forms/console.ts").then((s) => s.staffLinkSchema)}
              result={replyFor(actionData, `link-${m.email}`)}
              submit="New enrolment link"
            >
              {() => <p>Not enrolled yet. A new link stops the earlier one.</p>}
            </ConsoleForm>
          ) : null}
          {(
            [
              [
                "end-sessions",
                may.endSessions && m.sessions > 0,
                "End sessions",
                "Reason for ending the sessions",
              ],
              ["unlock", may.unlock && m.locked, "Unlock sign-in", "Reason for unlocking"],
              ["remove", may.remove, "Remove member", "Reason for removing"],
            ] as const
          ).map(([intent, shown, submit, label]) =>
            shown ? (
              <ConsoleForm
                key={intent}
                id={`${intent}-${m.email}`}
                intent={intent}
                hidden={{ email: m.email }}
                schema={() => import("../../forms/console.ts").then((s) => s.staffReasonSchema)}
                result={replyFor(actionData, `${intent}-${m.email}`)}
                submit={submit}
              >
                {(f) => <Field meta={f.reason} label={label} type="text" maxLength={1000} />}
              </ConsoleForm>
            ) : null,
          )}
        </section>
      ))}
    </>
  );
}
