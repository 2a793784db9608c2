// The holder's sessions (issue 27, record 048): every browser signed in to the
// account, this one marked; sign out one of the others, or all of them. Plain
// forms (post → redirect → get), so it works the same with scripts off. A
// session is named in its form by an opaque handle (app/holder-sessions.server.ts),
// never by its id, token or row key.
import { data, Form, Link, redirect } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { FormErrors } from "../components/field.tsx";
import { SubmitButton } from "../components/submit-button.tsx";
import { readForm } from "../forms.server.ts";
import {
  endHolderSession,
  endOtherHolderSessions,
  listHolderSessions,
  sessionsFormSchema,
} from "../holder-sessions.server.ts";
import { formatDateTime } from "../lib/format.ts";
import { commitSession, requireUser } from "../session.server.ts";
import { log } from "../../common/log.ts";
import { backend } from "../backend.server.ts";
import type { Route } from "./+types/security-sessions";

export function meta() {
  return [{ title: "Sessions — Coinkeep" }];
}

// Addresses and the list's handles: nothing here may be kept by a cache.
export function headers(): HeadersInit {
  return { "Cache-Control": "no-store" };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await requireUser(request, context);
  return { sessions: await listHolderSessions(context, viewer) };
}

const GONE = "That session has already ended.";

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const viewer = await requireUser(request, context);
  const parsed = sessionsFormSchema.safeParse(Object.fromEntries(formData));
  if (!parsed.success) throw data("The form could not be read.", { status: 400 });
  let notice: string;
  let endedCount = 0;
  if (parsed.data.intent === "end") {
    const ended = await endHolderSession(context, viewer, parsed.data.session);
    // A forged handle, one from another listing, or a session gone meanwhile: nothing ends.
    if (ended === null) return data({ error: GONE }, { status: 404 });
    notice = `Signed out: ${ended}.`;
    endedCount = 1;
  } else {
    const count = await endOtherHolderSessions(context, viewer);
    endedCount = count;
    notice =
      count === 0
        ? "There were no other sessions to sign out."
        : `Signed out of ${count} other session${count === 1 ? "" : "s"}.`;
  }
  if (endedCount > 0) {
    // A security change: the backend audits it and mails the holder (record 049). The sessions
    // have ended whatever it answers; a failure is logged, not shown.
    const noted = await backend(context).sessionsEnded({
      email: viewer.user.email,
      twelveWords: viewer.user.words,
      count: endedCount,
    });
    if (!noted.ok) log.warn("could not note ended sessions", { kind: noted.kind });
  }
  viewer.session.flash("notice", notice);
  return redirect("/security/sessions", {
    headers: { "Set-Cookie": await commitSession(viewer.session, context) },
  });
}

export default function SecuritySessions({ loaderData, actionData }: Route.ComponentProps) {
  const { sessions } = loaderData;
  const others = sessions.filter((s) => !s.current);
  return (
    <section className="card security-card" aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <p>
        These browsers are signed in to your wallet. If you do not recognise one, sign it out and change your
        password.
      </p>
      <FormErrors id="sessions-errors" errors={actionData?.error ? [actionData.error] : undefined} />
      <ul className="session-list">
        {sessions.map((s, i) => (
          <li key={s.handle} className="session-item">
            <h2 id={`session-${i}`} className="session-name">
              {`${s.browser} on ${s.system}`}
              {s.current ? (
                <>
                  {" "}
                  <strong className="session-current">(This device)</strong>
                </>
              ) : null}
            </h2>
            <dl className="session-facts">
              <div>
                <dt>Last seen from</dt>
                <dd>{s.ip ?? "Unknown address"}</dd>
              </div>
              <div>
                <dt>Signed in</dt>
                <dd>
                  <time dateTime={s.startedAt}>{formatDateTime(s.startedAt)}</time>
                </dd>
              </div>
              <div>
                <dt>Last used</dt>
                <dd>
                  <time dateTime={s.lastSeenAt}>{formatDateTime(s.lastSeenAt)}</time>
                </dd>
              </div>
            </dl>
            {s.current ? null : (
              <Form method="post" noValidate className="actions">
                <AuthenticityTokenInput />
                {/* The intent rides in a hidden input: a text browser shows a button's value beside it. */}
                <input type="hidden" name="intent" value="end" />
                <input type="hidden" name="session" value={s.handle} />
                <button type="submit" className="button button-secondary" aria-describedby={`session-${i}`}>
                  Sign out
                </button>
              </Form>
            )}
          </li>
        ))}
      </ul>
      {others.length > 0 ? (
        <Form method="post" noValidate className="actions">
          <AuthenticityTokenInput />
          <input type="hidden" name="intent" value="end-others" />
          <SubmitButton className="button button-primary">Sign out all other sessions</SubmitButton>
        </Form>
      ) : (
        <p>No other browser is signed in.</p>
      )}
      <p>
        <Link to="/security">Back to Security</Link>
      </p>
    </section>
  );
}
