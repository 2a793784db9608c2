import { Form, Link, useLocation } from "react-router";
import { ContactForm } from "./contact-form.tsx";
import { useFlashedReply } from "./form-reply.ts";
import { useHydrated } from "./hydrated.ts";
import { CloseIcon } from "./icons.tsx";
import { href, Modal, paramsWithoutModal, withoutModal, type Place } from "./modal.tsx";

// The public contact popup (spec sections 2 and 4): step 1 the support
// address and 'Send message', step 2 the form, step 3 'Message sent!'.
// Its state lives in the URL (`?modal=contact&step=2`), so it works as plain
// links and forms without scripts; closing drops both parameters, which is
// what resets it to step 1.

export const CONTACT_MODAL = "contact";

export type ContactStep = 1 | 2 | 3;

/** The page behind the popup: the URL without the popup's parameters. */
export function contactCloseUrl(place: Place): string {
  return withoutModal(place, ["step"]);
}

/** The URL of the popup at `step` over the page at `place`. */
export function contactStepUrl(place: Place, step: ContactStep): string {
  const params = paramsWithoutModal(place, ["step"]);
  params.set("modal", CONTACT_MODAL);
  if (step !== 1) params.set("step", String(step));
  return href(place.pathname, params);
}

/** Opens the popup at step 1, whatever step it was left at. */
export function contactOpenUrl(place: Place): string {
  return contactStepUrl(place, 1);
}

export function contactStep(search: string): ContactStep {
  const step = new URLSearchParams(search).get("step");
  return step === "2" ? 2 : step === "3" ? 3 : 1;
}

/** Whether the URL asks for the contact popup. */
export function contactIsOpen(search: string): boolean {
  return new URLSearchParams(search).get("modal") === CONTACT_MODAL;
}

export function ContactPopup({ supportEmail }: { supportEmail: string }) {
  const location = useLocation();
  const step = contactStep(location.search);
  const closeUrl = contactCloseUrl(location);
  const returnTo = closeUrl;
  const refused = useFlashedReply("contact");

  return (
    <ContactDialog closeUrl={closeUrl} step={step}>
      {step === 1 ? (
        <>
          <h2 id="contact-title">Contact us</h2>
          <p id="contact-text">
            You can write to our support team at <a href={`mailto:${supportEmail}`}>{supportEmail}</a>, or
            send us a message from here.
          </p>
          <SendMessageButton />
        </>
      ) : step === 2 ? (
        <>
          <h2 id="contact-title">Contact us</h2>
          <p id="contact-text" className="muted">
            Leave your e-mail address and your message; we will answer by e-mail.
          </p>
          <ContactForm id="contact-popup-form" returnTo={returnTo} lastResult={refused} autoFocus />
        </>
      ) : (
        <>
          <h2 id="contact-title">Message sent!</h2>
          <p id="contact-text">Our support team will get back to you soon.</p>
        </>
      )}
    </ContactDialog>
  );
}

/**
 * 'Send message' is a real button: a GET form to the same page at step 2,
 * carrying the page's other query parameters along.
 */
function SendMessageButton() {
  const location = useLocation();
  const hydrated = useHydrated();
  const params = paramsWithoutModal(location, ["step"]);
  return (
    <Form noValidate method="get" action={location.pathname} replace preventScrollReset className="actions">
      {[...params].map(([name, value]) => (
        <input key={`${name}=${value}`} type="hidden" name={name} value={value} />
      ))}
      <input type="hidden" name="modal" value={CONTACT_MODAL} />
      <input type="hidden" name="step" value="2" />
      <button type="submit" className="button button-primary" autoFocus={!hydrated} data-autofocus="1">
        Send message
      </button>
    </Form>
  );
}

/**
 * The popup's dialog: a Modal whose closing drops both `modal` and `step`.
 * Without scripts the server renders it open (a non-modal `<dialog open>`;
 * the layout makes the page behind it inert) over a backdrop that is a link
 * to the page without the popup. With scripts it is a real modal dialog:
 * focus stays inside, and Escape or a click on the backdrop closes it and
 * gives focus back to the opener ('Contact').
 */
function ContactDialog({
  closeUrl,
  step,
  children,
}: {
  closeUrl: string;
  step: ContactStep;
  children: React.ReactNode;
}) {
  const hydrated = useHydrated();
  // Each step marks the control to start from (data-autofocus="<step>"):
  // without scripts autoFocus focuses it on page load, with scripts the dialog
  // does, after showModal() and again on each step.
  return (
    <Modal
      labelledBy="contact-title"
      describedBy="contact-text"
      className="contact-popup"
      closeUrl={closeUrl}
      initialFocus={`[data-autofocus="${step}"]`}
    >
      {children}
      {/* Last in the markup, first on screen: each step starts from its own control. */}
      <Link
        to={closeUrl}
        replace
        preventScrollReset
        className="icon-button contact-close"
        autoFocus={(step === 3 && !hydrated) || undefined}
        data-autofocus={step === 3 ? "3" : undefined}
      >
        <CloseIcon />
        <span className="visually-hidden">Close</span>
      </Link>
    </Modal>
  );
}
