import { data, redirect } from "react-router";
import { backend } from "../backend.server.ts";
import {
  NotificationList,
  OPEN_MESSAGE_INTENT,
  type OpenMessageReply,
} from "../components/notification-list.tsx";
import { readForm } from "../forms.server.ts";
import { commitSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/notifications";

export function meta() {
  return [{ title: "Notifications — Coinkeep" }];
}

// The messages come with the client balances (call 4), newest first.
export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const answer = await backend(context).clientBalances({
    email: user.email,
    twelveWords: user.words,
    transactionsLimit: 1,
    includeTransactions: false,
  });
  return {
    messages: answer.ok ? answer.data.messages : [],
    unavailable: !answer.ok,
    // After opening a message without scripts: that message, expanded.
    openId: new URL(request.url).searchParams.get("open"),
  };
}

// Opening a message marks it opened (call 8, only the user's own). A fetcher
// gets the answer as data; a plain form post is redirected back with the
// message expanded (post/redirect/get).
export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const messageId = formData.get("messageId");
  if (formData.get("intent") !== OPEN_MESSAGE_INTENT || typeof messageId !== "string" || !messageId) {
    throw data("The form could not be read.", { status: 400 });
  }
  const answer = await backend(context).openMessage({
    email: user.email,
    twelveWords: user.words,
    messageId,
  });
  const error = answer.ok
    ? null
    : answer.kind === "rejected"
      ? answer.message
      : "The message could not be opened just now. Please try again.";

  if (formData.get("via") === "fetcher") {
    const reply: OpenMessageReply =
      error === null ? { ok: true, messageId } : { ok: false, messageId, error };
    return data(reply, { status: answer.ok ? 200 : answer.kind === "rejected" ? answer.status : 502 });
  }
  if (error !== null) {
    session.flash("notice", error);
    return redirect("/notifications", { headers: { "Set-Cookie": await commitSession(session, context) } });
  }
  const id = encodeURIComponent(messageId);
  return redirect(`/notifications?open=${id}#message-${id}`);
}

export default function Notifications({ loaderData }: Route.ComponentProps) {
  return (
    <section aria-labelledby="notifications-title">
      <h1 id="notifications-title">Notifications</h1>
      {loaderData.unavailable ? (
        <p className="empty-state">Your messages could not be loaded just now. They will refresh shortly.</p>
      ) : (
        <NotificationList messages={loaderData.messages} openId={loaderData.openId} />
      )}
    </section>
  );
}
