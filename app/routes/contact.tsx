import { parseWithZod } from "@conform-to/zod/v4";
import { data, redirect } from "react-router";
import { backend, limitedAnswer, retryAfterOf } from "../api.server";
import { contactFormSchema } from "../../common/support-message";
import { CONTACT_FAILED, ContactForm, type ContactActionData } from "../components/contact-form";
import { contactCloseUrl, contactStepUrl } from "../components/contact-popup";
import { useLegalFacts } from "../components/info-page";
import { checkHoneypot, readForm } from "../forms.server";
import { safeLocalUrl } from "../lib/safe-redirect";
import { requireAnonymous } from "../session.server";
import type { Route } from "./+types/contact";

// Where the public contact form posts, from the popup on any public page.
// Success redirects back to that page with the popup at step 3 (post →
// redirect → get: a reload never sends twice). Without scripts a refusal is
// rendered here, as a page with the same form; with scripts the popup's
// fetcher gets it and shows it in place.

const ORIGIN = "http://coinkeep.invalid";

/** Only a path on this site, without the popup's own parameters; else /contact. */
function safeReturnTo(value: FormDataEntryValue | null): string {
  const url = safeLocalUrl(value);
  return url ? contactCloseUrl(url) : "/contact";
}

export function meta() {
  return [{ title: "Contact us — Coinkeep" }];
}

// A limited attempt's Retry-After goes out with the page too (record 013).
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return retryAfterOf(actionHeaders);
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  await requireAnonymous(request, context);
  await checkHoneypot(formData, context);
  const returnTo = safeReturnTo(formData.get("returnTo"));
  const submission = parseWithZod(formData, { schema: contactFormSchema });
  if (submission.status !== "success") {
    return data<ContactActionData>({ result: submission.reply(), returnTo }, { status: 400 });
  }
  // The visitor's address (when the host knows it) goes with it: the client is the visitor's.
  const sent = await backend(context).requestMessage({
    kind: "contact",
    email: submission.value.email,
    comment: submission.value.comment,
  });
  if (!sent.ok) {
    const limited = limitedAnswer(sent);
    if (limited) {
      return data<ContactActionData>(
        { result: submission.reply({ formErrors: [limited.message] }), returnTo },
        { status: limited.status, headers: limited.headers },
      );
    }
    return data<ContactActionData>(
      { result: submission.reply({ formErrors: [CONTACT_FAILED] }), returnTo },
      { status: sent.kind === "network" ? 502 : 400 },
    );
  }
  return redirect(contactStepUrl(new URL(returnTo, ORIGIN), 3));
}

export default function Contact({ actionData }: Route.ComponentProps) {
  const { supportEmail } = useLegalFacts();
  return (
    <section className="card auth-card" aria-labelledby="contact-page-title">
      <h1 id="contact-page-title">Contact us</h1>
      <p>
        You can write to our support team at <a href={`mailto:${supportEmail}`}>{supportEmail}</a>, or send us
        a message here.
      </p>
      <ContactForm
        id="contact-page-form"
        returnTo={actionData?.returnTo ?? "/contact"}
        lastResult={actionData?.result}
      />
    </section>
  );
}
