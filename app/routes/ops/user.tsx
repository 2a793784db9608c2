// One user (issue 26): their wallets with addresses and balances, the pauses
// that reach them, their login lock, their recent support messages; and, as
// the member's roles allow, a compliance message, pausing or resuming them,
// and lifting their login lock.
import { data } from "react-router";
import type { ConsoleCommand } from "../../../common/contract/console.ts";
import { Field } from "../../components/field.tsx";
import { ConsoleForm, replyFor, SelectField, TextAreaField, When } from "../../components/console-form.tsx";
import { readConsoleForm, refusedForm, runForm } from "../../console-forms.server.ts";
import { can, requireStaff } from "../../console.server.ts";
import { userDetail } from "../../console-users.server.ts";
import { PAUSE_WHATS, unlockSchema, userMessageSchema, userSwitchSchema } from "../../forms/console.ts";
import type { Route } from "./+types/user";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

export function meta({ loaderData }: Route.MetaArgs) {
  return [{ title: `${loaderData?.user.email ?? "User"} — Coinkeep staff console` }];
}

async function find(request: Request, context: Route.LoaderArgs["context"], id: string) {
  const staff = await requireStaff(request, context, "users");
  const detail = UUID.test(id) ? await userDetail(context, staff, id) : null;
  if (!detail) throw data(`No user with id ${id}.`, { status: 404 });
  return { staff, detail };
}

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { staff, detail } = await find(request, context, params.id);
  const may = (command: ConsoleCommand) => can(staff, command);
  return {
    ...detail,
    may: {
      message: may("message --to"),
      pause: may("pause --user"),
      resume: may("resume --user"),
      unlock: may("unlock"),
    },
  };
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const { staff, detail } = await find(request, context, params.id);
  const { formData, intent } = await readConsoleForm(request, context);
  const { email, userId } = detail.user;
  const args = { context, staff, formData, to: `/ops/users/${userId}` };
  switch (intent) {
    case "message":
      return runForm(
        { ...args, form: "message", schema: userMessageSchema },
        (v) => ({ command: "message --to", input: { options: { to: email }, args: [v.text] } }),
        () => `Message sent to ${email}.`,
      );
    case "pause":
    case "resume":
      return runForm(
        { ...args, form: intent, schema: userSwitchSchema },
        (v) => ({
          command: v.intent === "pause" ? "pause --user" : "resume --user",
          input: { options: { user: userId, reason: v.reason }, args: [v.what] },
        }),
        (v) => `${v.intent === "pause" ? "Paused" : "Resumed"} ${v.what} for ${email}.`,
      );
    case "unlock":
      return runForm(
        { ...args, form: "unlock", schema: unlockSchema },
        () => ({ command: "unlock", input: { args: [email] } }),
        (_v, json) => {
          const cleared = (json as { clearedFailures?: number }).clearedFailures ?? 0;
          return cleared === 0
            ? `${email} had no failed logins: nothing to unlock.`
            : `Unlocked the login of ${email} (${cleared} failed logins cleared).`;
        },
      );
    default:
      return refusedForm("", { status: "error", error: { "": ["Unknown action."] } });
  }
}

export default function User({ loaderData, actionData }: Route.ComponentProps) {
  const { user, pauses, lock, messages, may } = loaderData;
  const paused = new Set(pauses?.map((p) => p.what) ?? []);
  return (
    <>
      <h1>{user.email}</h1>
      <p>
        User id <span className="mono">{user.userId}</span>, created <When iso={user.createdAt} />.
      </p>

      <h2 id="user-wallets">Wallets</h2>
      {user.wallets.length === 0 ? (
        <p>No wallets.</p>
      ) : (
        <table aria-labelledby="user-wallets">
          <thead>
            <tr>
              <th scope="col">Coin</th>
              <th scope="col">State</th>
              <th scope="col">Address</th>
              <th scope="col" className="num">
                Available balance
              </th>
              <th scope="col">Wallet id</th>
            </tr>
          </thead>
          <tbody>
            {user.wallets.map((w) => (
              <tr key={w.id}>
                <td>{w.coin}</td>
                <td>{w.state === "issued" ? "issued" : "waiting for an address"}</td>
                <td className="mono">{w.address ?? "–"}</td>
                <td className="num">
                  {w.balance} {w.coin}
                </td>
                <td className="mono">{w.id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {pauses !== null ? (
        <>
          <h2 id="user-pauses">Pauses</h2>
          {pauses.length === 0 ? (
            <p>Nothing is paused for this user. (Pauses of a whole coin are on the Money page.)</p>
          ) : (
            <table aria-labelledby="user-pauses">
              <thead>
                <tr>
                  <th scope="col">What</th>
                  <th scope="col">Since</th>
                  <th scope="col">By</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {pauses.map((p) => (
                  <tr key={p.id}>
                    <td>{p.what}</td>
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
          )}
        </>
      ) : null}

      {lock !== null ? (
        <>
          <h2>Login</h2>
          <p>
            {lock.locked
              ? `Password login is locked after ${lock.failures} failed logins.`
              : lock.failures > 0
                ? `Open; ${lock.failures} failed logins since the last successful one.`
                : "Open; no failed logins."}
          </p>
          {may.unlock && lock.failures > 0 ? (
            <ConsoleForm
              id="unlock"
              intent="unlock"
              schema={() => import("../../forms/console.ts").then((m) => m.unlockSchema)}
              result={replyFor(actionData, "unlock")}
              submit="Unlock login"
            >
              {() => <p>Check first that the person asking owns the account.</p>}
            </ConsoleForm>
          ) : null}
        </>
      ) : null}

      {may.message ? (
        <section aria-labelledby="message-title" className="console-card">
          <h2 id="message-title">Send a compliance message</h2>
          <p>The user sees it unread in their notifications.</p>
          <ConsoleForm
            id="message"
            intent="message"
            schema={() => import("../../forms/console.ts").then((m) => m.userMessageSchema)}
            result={replyFor(actionData, "message")}
            submit="Send message"
          >
            {(f) => <TextAreaField meta={f.text} label="Message" maxLength={5000} />}
          </ConsoleForm>
        </section>
      ) : null}

      {may.pause && paused.size < PAUSE_WHATS.length ? (
        <section aria-labelledby="pause-title" className="console-card">
          <h2 id="pause-title">Pause this user</h2>
          <ConsoleForm
            id="pause"
            intent="pause"
            schema={() => import("../../forms/console.ts").then((m) => m.userSwitchSchema)}
            result={replyFor(actionData, "pause")}
            submit="Pause"
          >
            {(f) => (
              <>
                <SelectField
                  meta={f.what}
                  label="What to pause"
                  options={PAUSE_WHATS.filter((w) => !paused.has(w))}
                />
                <Field meta={f.reason} label="Reason (for the audit log)" type="text" maxLength={1000} />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}

      {may.resume && paused.size > 0 ? (
        <section aria-labelledby="resume-title" className="console-card">
          <h2 id="resume-title">Resume this user</h2>
          <ConsoleForm
            id="resume"
            intent="resume"
            schema={() => import("../../forms/console.ts").then((m) => m.userSwitchSchema)}
            result={replyFor(actionData, "resume")}
            submit="Resume"
          >
            {(f) => (
              <>
                <SelectField meta={f.what} label="What to resume" options={[...paused]} />
                <Field meta={f.reason} label="Reason (for the audit log)" type="text" maxLength={1000} />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}

      {messages !== null ? (
        <>
          <h2 id="user-messages">Support messages from this user</h2>
          {messages.length === 0 ? (
            <p>None.</p>
          ) : (
            <ul className="console-messages">
              {messages.map((m) => (
                <li key={m.id}>
                  <p>
                    <When iso={m.createdAt} /> ({m.kind}){m.fullName ? ` from ${m.fullName}` : ""}
                    {m.phone ? `, phone ${m.phone}` : ""}
                  </p>
                  <p className="message-text">{m.comment}</p>
                </li>
              ))}
            </ul>
          )}
        </>
      ) : null}
    </>
  );
}
