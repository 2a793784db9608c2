import type { SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod/v4";
import { redirect } from "react-router";
import { backend, limitedAnswer } from "../backend.server.ts";
import { SUPPORT_TEXTS, supportFormSchema } from "../../common/support-message.ts";
import type { SupportActionData } from "../components/support-modal.tsx";
import { readForm, refusePopupForm } from "../forms.server.ts";
import { safeLocalUrl } from "../lib/safe-redirect.ts";
import { commitSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/support";

const FALLBACK = "/home";

/**
 * Where to go back to: a path on this site only ("/x", never "//host",
 * "https://…" or anything the URL parser turns into another origin), without
 * `?modal=` (a sent message closes the modal) and never /support itself.
 */
function safeReturnPath(value: FormDataEntryValue | string | null): string {
  const url = safeLocalUrl(value);
  if (!url || url.pathname === "/support") return FALLBACK;
  url.searchParams.delete("modal");
  return `${url.pathname}${url.search}`;
}

// The modal lives on the page it was opened on (`?modal=support`); /support
// is where its form posts, not a page of its own (a visit is sent to /).
export function loader() {
  return redirect("/");
}

// Call 12 with the signed-in user's e-mail (never a posted one). Success
// redirects back with the flash 'Message sent!' (a toast with scripts);
// errors come back as field errors (status 400).
export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const returnTo = safeReturnPath(formData.get("returnTo"));
  const modal = new URL(returnTo, "http://coinkeep.invalid");
  modal.searchParams.set("modal", "support");
  const popup = {
    formData,
    session,
    context,
    form: "support" as const,
    backTo: `${modal.pathname}${modal.search}`,
  };
  const refuse = (result: SubmissionResult<string[]>, status: number, headers?: HeadersInit) =>
    refusePopupForm(popup, { result, returnTo } satisfies SupportActionData, status, headers);
  const submission = parseWithZod(formData, { schema: supportFormSchema });
  if (submission.status !== "success") return refuse(submission.reply(), 400);
  // The visitor's address (when the host knows it) goes with it, for abuse handling: the client is the visitor's.
  const sent = await backend(context).requestMessage({
    kind: "support",
    email: user.email,
    ...submission.value,
  });
  if (!sent.ok) {
    const limited = limitedAnswer(sent);
    if (limited)
      return refuse(submission.reply({ formErrors: [limited.message] }), limited.status, limited.headers);
    const fieldErrors: Record<string, string[]> = {};
    const formErrors: string[] = [];
    if (sent.kind === "rejected") {
      // A refused field comes back by the form's own name (fullName); the e-mail is the account's.
      for (const issue of sent.issues ?? []) {
        if (Object.hasOwn(supportFormSchema.shape, issue.path))
          fieldErrors[issue.path] = [...(fieldErrors[issue.path] ?? []), issue.message];
        else formErrors.push(issue.message);
      }
      if (Object.keys(fieldErrors).length === 0 && formErrors.length === 0) formErrors.push(sent.message);
    } else {
      formErrors.push("Something went wrong");
    }
    return refuse(submission.reply({ fieldErrors, formErrors }), sent.kind === "rejected" ? 400 : 502);
  }
  session.flash("notice", SUPPORT_TEXTS.sent);
  return redirect(returnTo, { headers: { "Set-Cookie": await commitSession(session, context) } });
}
