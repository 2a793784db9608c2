// Support and contact messages (issue 26): newest first, filtered by kind and
// by whether they are answered, each shown as text (never HTML) with the
// replies it had and a reply form. A reply reaches the holder as a message in
// their Notifications (the reply command), recorded against this message.
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { When } from "../../components/console-form.tsx";
import type { SupportRow } from "../../console-users.server.ts";
import { can, listFor, pageOf, redirectWithNotice, requireStaff, runAs } from "../../console.server.ts";
import { FormErrors } from "../../components/field.tsx";
import { getFormProps } from "../../components/form-state.ts";
import { SubmitButton } from "../../components/submit-button.tsx";
import { useValidatedForm } from "../../components/use-validated-form.ts";
import { replySchema } from "../../forms/console.ts";
import { readForm } from "../../forms.server.ts";
import type { Route } from "./+types/messages";

export function meta() {
  return [{ title: "Messages — Coinkeep staff" }];
}

type SupportMessage = SupportRow;

const PAGE = 25;

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "support");
  const url = new URL(request.url);
  const kindParam = url.searchParams.get("kind");
  const kind = kindParam === "support" || kindParam === "contact" ? kindParam : "";
  const state = url.searchParams.get("state") === "unanswered" ? "unanswered" : "all";
  const all = await listFor<SupportMessage[]>(context, staff, "support", {
    options: { limit: "1000", kind: kind || undefined },
  });
  const shown = pageOf(
    state === "unanswered" ? all.filter((m) => m.replies.length === 0) : all,
    url.searchParams.get("page"),
    PAGE,
  );
  return {
    kind,
    state,
    page: shown.page,
    pages: shown.pages,
    total: shown.total,
    messages: shown.items,
    mayReply: can(staff, "reply"),
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "reply");
  const formData = await readForm(request, context);
  const submission = parseWithZod(formData, { schema: replySchema });
  if (submission.status !== "success") {
    return data(
      { for: String(formData.get("supportMessageId") ?? ""), result: submission.reply() },
      { status: 400 },
    );
  }
  const { supportMessageId, text } = submission.value;
  const sent = await runAs(context, staff, "reply", { args: [supportMessageId, text] });
  if (!sent.ok) {
    return data(
      { for: supportMessageId, result: submission.reply({ formErrors: [sent.message] }) },
      { status: 400 },
    );
  }
  const back = new URL(request.url);
  return redirectWithNotice(
    context,
    `/ops/messages${back.search}`,
    "Reply sent: it is in the holder's Notifications.",
  );
}

export default function Messages({ loaderData, actionData }: Route.ComponentProps) {
  const { kind, state, page, pages, total, messages, mayReply } = loaderData;
  const query = (p: number) =>
    `?${new URLSearchParams({ ...(kind ? { kind } : {}), state, page: String(p) })}`;
  return (
    <>
      <h1>Support and contact messages</h1>
      <Form method="get" className="console-filters" aria-label="Filter messages">
        <div className="field">
          <label htmlFor="messages-kind">Form</label>
          <select id="messages-kind" name="kind" defaultValue={kind}>
            <option value="">Both</option>
            <option value="support">Support (signed in)</option>
            <option value="contact">Contact (public)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="messages-state">Answered</label>
          <select id="messages-state" name="state" defaultValue={state}>
            <option value="all">All</option>
            <option value="unanswered">Not answered yet</option>
          </select>
        </div>
        <button type="submit" className="button button-secondary">
          Show
        </button>
      </Form>
      <p>
        {total} {total === 1 ? "message" : "messages"}, newest first. Page {page} of {pages}.
      </p>
      {messages.length === 0 ? <p>No messages.</p> : null}
      {messages.map((m) => (
        <article key={m.id} className="console-card" aria-labelledby={`message-${m.id}`}>
          <h2 id={`message-${m.id}`}>
            {m.kind === "support" ? "Support" : "Contact"} message from {m.email}
          </h2>
          <p>
            Sent <When iso={m.createdAt} />
            {m.fullName ? <>, name {m.fullName}</> : null}
            {m.phone ? <>, phone {m.phone}</> : null}
            {m.userId ? (
              <>
                {" "}
                (<Link to={`/ops/users/${m.userId}`}>account</Link>)
              </>
            ) : null}
            .
          </p>
          <p className="message-text">{m.comment}</p>
          {m.replies.length > 0 ? (
            <>
              <h3>Replies</h3>
              <ul>
                {m.replies.map((r) => (
                  <li key={`${r.at}-${r.author}`}>
                    {r.author}, <When iso={r.at} />: <span className="message-text">{r.text}</span>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {mayReply ? (
            <ReplyForm
              id={m.id}
              email={m.email}
              result={actionData?.for === m.id ? actionData.result : undefined}
            />
          ) : null}
        </article>
      ))}
      {pages > 1 ? (
        <nav aria-label="Pages">
          {page > 1 ? <Link to={query(page - 1)}>Newer messages</Link> : null}{" "}
          {page < pages ? <Link to={query(page + 1)}>Older messages</Link> : null}
        </nav>
      ) : null}
    </>
  );
}

type Result = NonNullable<Route.ComponentProps["actionData"]>["result"];

function ReplyForm({ id, email, result }: { id: string; email: string; result: Result | undefined }) {
  const [form, fields] = useValidatedForm(
    `reply-${id}`,
    () => import("../../forms/console.ts").then((m) => m.replySchema),
    result,
  );
  const errors = fields.text.errors;
  return (
    <Form method="post" {...getFormProps(form)} noValidate>
      <AuthenticityTokenInput />
      <input type="hidden" name="supportMessageId" value={id} />
      <div className="field">
        <label htmlFor={fields.text.id}>Reply to {email} (shown in their Notifications)</label>
        <textarea
          id={fields.text.id}
          name={fields.text.name}
          rows={3}
          maxLength={5000}
          defaultValue={fields.text.initialValue ?? ""}
          aria-invalid={errors?.length ? true : undefined}
          aria-describedby={errors?.length ? fields.text.errorId : undefined}
        />
        <div id={fields.text.errorId} className="field-errors" role="alert">
          {errors?.map((e) => (
            <p key={e}>{e}</p>
          ))}
        </div>
      </div>
      <FormErrors id={form.errorId} errors={form.errors} />
      <SubmitButton>Send reply</SubmitButton>
    </Form>
  );
}
