import { useEffect } from "react";
import { Form, useFetcher } from "react-router";
import { AuthenticityTokenInput, useAuthenticityToken } from "remix-utils/csrf/react";
import type { ClientBalancesData } from "../backend.server.ts";
import { formatDate } from "../lib/format.ts";
import { useHydrated } from "./hydrated.ts";
import { showToast } from "./toasts.tsx";

/** A compliance message as call 4 answers it. */
export type MessageItem = ClientBalancesData["messages"][number];

/** The `intent` of a post that opens a message (the shell counts those in flight for its badge). */
export const OPEN_MESSAGE_INTENT = "open-message";

/** What the open action answers a fetcher. */
export type OpenMessageReply =
  { ok: true; messageId: string } | { ok: false; messageId: string; error: string };

function RowCells({ message, unread }: { message: MessageItem; unread: boolean }) {
  return (
    <>
      <span className="message-cell-dot">
        {unread ? (
          <>
            <span className="message-dot" aria-hidden="true" />
            <span className="visually-hidden">Unread: </span>
          </>
        ) : null}
      </span>
      <span className="message-preview">
        <span className="visually-hidden">Message: </span>
        {message.message}
      </span>
      <span className="message-date">
        <span className="visually-hidden">, Date: </span>
        {formatDate(message.created_at)}
      </span>
    </>
  );
}

/**
 * One message. Read, it is a native disclosure. Unread and without scripts,
 * its toggle is a submit button: the post marks it opened and comes back with
 * it expanded (`?open=id`). With scripts it is a disclosure whose first
 * opening posts through a fetcher: no reload, the dot goes at once and the
 * revalidation that follows brings the badge down.
 */
function NotificationRow({ message, expanded }: { message: MessageItem; expanded: boolean }) {
  const hydrated = useHydrated();
  const csrf = useAuthenticityToken();
  const fetcher = useFetcher<OpenMessageReply>();
  const badge = useFetcher({ key: "unread-count" });
  const { load } = badge;
  const reply = fetcher.data;
  const opened = message.open_status === 1 || fetcher.state !== "idle" || reply?.ok === true;
  const unread = !opened;

  useEffect(() => {
    if (fetcher.state !== "idle" || !reply) return;
    // A fresh count for the badge (it also supersedes a poll already under way).
    if (reply.ok) void load("/unread-count");
    else showToast(reply.error, "error");
  }, [fetcher.state, reply, load]);

  const rowId = `message-${message.id}`;
  if (unread && !hydrated) {
    return (
      <li id={rowId} className="message-unread">
        <Form noValidate method="post" action="/notifications">
          <AuthenticityTokenInput />
          <input type="hidden" name="intent" value={OPEN_MESSAGE_INTENT} />
          <input type="hidden" name="messageId" value={message.id} />
          <button type="submit" className="message-row" aria-expanded="false">
            <RowCells message={message} unread />
          </button>
        </Form>
      </li>
    );
  }
  return (
    <li id={rowId} className={unread ? "message-unread" : undefined}>
      <details
        open={expanded || undefined}
        onToggle={(event) => {
          if (!event.currentTarget.open || !unread || fetcher.state !== "idle") return;
          void fetcher.submit(
            { csrf, intent: OPEN_MESSAGE_INTENT, messageId: message.id, via: "fetcher" },
            { method: "post", action: "/notifications" },
          );
        }}
      >
        <summary className="message-row">
          <RowCells message={message} unread={unread} />
        </summary>
        <p className="message-body">{message.message}</p>
      </details>
    </li>
  );
}

/** Notifications: Message and Date columns, newest first; unread ones with a dot. */
export function NotificationList({ messages, openId }: { messages: MessageItem[]; openId: string | null }) {
  if (messages.length === 0) return <p className="empty-state">Your Messages will appear here</p>;
  return (
    <div className="message-list">
      <div className="message-row message-head" aria-hidden="true">
        <span /> <span>Message</span> <span className="message-date">Date</span>
      </div>
      <ul>
        {messages.map((message) => (
          <NotificationRow key={message.id} message={message} expanded={message.id === openId} />
        ))}
      </ul>
    </div>
  );
}
