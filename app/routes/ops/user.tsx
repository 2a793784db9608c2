// One user (issue 26), from `user <id>`: their wallets with addresses,
// balances and whether sends are paused, the last transactions, the
// compliance messages they can see (opened or not), their login lock, the
// pauses set for them, their live sessions, and their support messages; and,
// as the member's roles allow, a compliance message, pausing or resuming
// them, and lifting their login lock.
import { data } from "react-router";
import type { ConsoleCommand } from "../../../common/contract/console.ts";
import { PausesTable, SwitchForm } from "../../components/console-pauses.tsx";
import { ConsoleForm, replyFor, TextAreaField, When } from "../../components/console-form.tsx";
import { readConsoleForm, refusedForm, runForm } from "../../console-forms.server.ts";
import { can, requireStaff } from "../../console.server.ts";
import { userDetail, type UserDetailRow } from "../../console-users.server.ts";
import { PAUSE_WHATS, unlockSchema, userMessageSchema, userSwitchSchema } from "../../forms/console.ts";
import type { Route } from "./+types/user";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

export function meta({ loaderData }: Route.MetaArgs) {
  return [{ title: `${loaderData?.user.email ?? "User"} — Coinkeep staff console` }];
}

async function find(request: Request, context: Route.LoaderArgs["context"], id: string) {
  const staff = await requireStaff(request, context, "user");
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

const SENDS_TEXT: Record<"coin" | "user", string> = {
  coin: "paused (the coin, for everyone)",
  user: "paused (this user)",
};

/** Where a transaction went (a send's address and tag) or came from (a deposit's txid). */
function Where({ t }: { t: UserDetailRow["transactions"][number] }) {
  if (t.kind === "deposit") {
    return t.txid ? (
      <>
        txid <span className="mono">{t.txid}</span>
      </>
    ) : (
      <>–</>
    );
  }
  return (
    <>
      to <span className="mono">{t.address ?? "–"}</span>
      {t.destinationTag ? (
        <>
          {" "}
          tag <span className="mono">{t.destinationTag}</span>
        </>
      ) : null}
    </>
  );
}

export default function User({ loaderData, actionData }: Route.ComponentProps) {
  const { user, supportMessages, may } = loaderData;
  const { login, pauses } = user;
  const paused = new Set(pauses.map((p) => p.what));
  return (
    <>
      <h1>{user.email}</h1>
      <p>
        User id <span className="mono">{user.userId}</span>, created <When iso={user.createdAt} />.
      </p>
      <p>
        Live sessions:{" "}
        {user.sessions === null
          ? "unknown (the web tier keeps them on another server)"
          : `${user.sessions} signed in now`}
        .
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
              <th scope="col">Sends</th>
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
                <td>{w.sendsPaused ? SENDS_TEXT[w.sendsPaused] : "open"}</td>
                <td className="mono">{w.id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2 id="user-transactions">Last transactions</h2>
      {user.transactions.length === 0 ? (
        <p>No transactions.</p>
      ) : (
        <table aria-labelledby="user-transactions">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Coin</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col" className="num">
                USD
              </th>
              <th scope="col">Status</th>
              <th scope="col">Address or txid</th>
            </tr>
          </thead>
          <tbody>
            {user.transactions.map((t) => (
              <tr key={`${t.kind}-${t.id}`}>
                <td>
                  <When iso={t.at} />
                </td>
                <td>{t.kind}</td>
                <td>{t.coin}</td>
                <td className="num">
                  {t.amount} {t.coin}
                </td>
                <td className="num">{t.amountUsd ?? "–"}</td>
                <td>{t.status}</td>
                <td>
                  <Where t={t} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2 id="user-compliance">Compliance messages they can see</h2>
      {user.messages.length === 0 ? (
        <p>None.</p>
      ) : (
        <table aria-labelledby="user-compliance">
          <thead>
            <tr>
              <th scope="col">Sent</th>
              <th scope="col">To</th>
              <th scope="col">Opened</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {user.messages.map((m) => (
              <tr key={m.id}>
                <td>
                  <When iso={m.createdAt} />
                </td>
                <td>{m.toAll ? "everyone" : "this user"}</td>
                <td>
                  {m.opened ? (
                    <>
                      opened <When iso={m.openedAt} />
                    </>
                  ) : (
                    "not opened"
                  )}
                </td>
                <td className="message-text">{m.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Login</h2>
      <p>
        {login.locked
          ? `Password login is locked after ${login.failures} failed logins.`
          : login.failures > 0
            ? `Open; ${login.failures} failed logins since the last successful one.`
            : "Open; no failed logins."}
      </p>
      {may.unlock && login.failures > 0 ? (
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

      <h2 id="user-pauses">Pauses</h2>
      {pauses.length === 0 ? (
        <p>Nothing is paused for this user. (Pauses of a whole coin are on the Money page.)</p>
      ) : (
        <PausesTable labelledBy="user-pauses" pauses={pauses.map((p) => ({ ...p, since: p.createdAt }))} />
      )}

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
        <SwitchForm
          verb="pause"
          title="Pause this user"
          whats={PAUSE_WHATS.filter((w) => !paused.has(w))}
          coin={false}
          actionData={actionData}
        />
      ) : null}

      {may.resume && paused.size > 0 ? (
        <SwitchForm
          verb="resume"
          title="Resume this user"
          whats={[...paused]}
          coin={false}
          actionData={actionData}
        />
      ) : null}

      {supportMessages !== null ? (
        <>
          <h2 id="user-messages">Support messages from this user</h2>
          {supportMessages.length === 0 ? (
            <p>None.</p>
          ) : (
            <ul className="console-messages">
              {supportMessages.map((m) => (
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
