import { parseWithZod } from "@conform-to/zod/v4";
import type { SubmissionResult } from "@conform-to/react";
import { redirect } from "react-router";
import { backend, limitedAnswer } from "../backend.server.ts";
import { contactFormSchema } from "../../common/support-message.ts";
import { CONTACT_FAILED, type ContactActionData } from "../components/contact-form.tsx";
import { contactCloseUrl, contactStepUrl } from "../components/contact-popup.tsx";
import { checkHoneypot, readForm, refusePopupForm } from "../forms.server.ts";
import { safeLocalUrl } from "../lib/safe-redirect.ts";
import { requireAnonymous } from "../session.server.ts";
import type { Route } from "./+types/contact";

// Where the public contact form posts, from the popup on any public page; not
// a page of its own (the spec has none: a visit is sent to /). Success
// redirects back to that page with the popup at step 3 (post → redirect → get:
// a reload never sends twice). A refusal: with scripts the popup's fetcher gets
// it and shows it in place; without, it goes back to the popup at step 2 as a
// flash, errors and values (record 037).

const ORIGIN = "http://coinkeep.invalid";

/** Only a path on this site, without the popup's own parameters; else /. */
function safeReturnTo(value: FormDataEntryValue | null): string {
  const url = safeLocalUrl(value);
  return url ? contactCloseUrl(url) : "/";
}

export function loader() {
  return redirect("/");
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const session = await requireAnonymous(request, context);
  await checkHoneypot(formData, context);
  const returnTo = safeReturnTo(formData.get("returnTo"));
  const popup = {
    formData,
    session,
    context,
    form: "contact" as const,
    backTo: contactStepUrl(new URL(returnTo, ORIGIN), 2),
  };
  const refuse = (result: SubmissionResult<string[]>, status: number, headers?: HeadersInit) =>
    refusePopupForm(popup, { result, returnTo } satisfies ContactActionData, status, headers);
  const submission = parseWithZod(formData, { schema: contactFormSchema });
  if (submission.status !== "success") return refuse(submission.reply(), 400);
  // The visitor's address (when the host knows it) goes with it: the client is the visitor's.
  const sent = await backend(context).requestMessage({ kind: "contact", ...submission.value });
  if (!sent.ok) {
    const limited = limitedAnswer(sent);
    if (limited)
      return refuse(submission.reply({ formErrors: [limited.message] }), limited.status, limited.headers);
    return refuse(submission.reply({ formErrors: [CONTACT_FAILED] }), sent.kind === "network" ? 502 : 400);
  }
  return redirect(contactStepUrl(new URL(returnTo, ORIGIN), 3));
}
