import { useEffect, useRef, useState } from "react";

/**
 * The scripted half of every dialog in the app (the Exit and Support modals,
 * the contact popup, the send flow's risk warning).
 *
 * Each dialog is rendered `<dialog open>` by the server, so it works without
 * scripts: the page behind it is made inert by the page, and closing it is a
 * link or a submit button (its state lives in the URL or the form). Once
 * scripts run, this hook makes it a real modal dialog with `showModal()`
 * (focus kept inside, the page behind inert); Escape and a click on the
 * backdrop call `onClose`, and when the dialog goes away focus goes back to
 * the element that opened it.
 *
 * `initialFocus` (a selector inside the dialog) names the control to start
 * from when the dialog opens, and again whenever it changes (the contact
 * popup's steps); without it `showModal()` picks the first focusable one.
 * Without scripts the dialog's `autoFocus` does that job.
 *
 * Returns the ref for the `<dialog>`. `enabled: false` leaves the dialog as
 * the server rendered it (the send form's warning before hydration).
 */
export function useDialog({
  onClose,
  enabled = true,
  initialFocus,
}: {
  onClose: () => void;
  enabled?: boolean;
  initialFocus?: string | undefined;
}): React.RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  const onCloseRef = useRef(onClose);
  useEffect(() => {
    onCloseRef.current = onClose;
  });

  // The opener is noted while the dialog first renders: by the time any effect
  // runs, React's autoFocus inside the dialog (Exit's 'No') has already moved
  // focus away from it.
  const [opener] = useState(() => (typeof document === "undefined" ? null : document.activeElement));

  useEffect(() => {
    const dialog = ref.current;
    if (!enabled || !dialog) return;
    if (dialog.open) dialog.close();
    dialog.showModal();
    const onCancel = (event: Event) => {
      event.preventDefault();
      onCloseRef.current();
    };
    // A click whose target is the dialog itself landed on its backdrop.
    const onClick = (event: MouseEvent) => {
      if (event.target === dialog) onCloseRef.current();
    };
    dialog.addEventListener("cancel", onCancel);
    dialog.addEventListener("click", onClick);
    return () => {
      dialog.removeEventListener("cancel", onCancel);
      dialog.removeEventListener("click", onClick);
      if (dialog.open) dialog.close();
      returnFocus(opener, dialog);
    };
  }, [enabled, opener]);

  // After showModal() (the effect above runs first), so it wins over the
  // dialog's own choice.
  useEffect(() => {
    if (!enabled || !initialFocus) return;
    ref.current?.querySelector<HTMLElement>(initialFocus)?.focus();
  }, [enabled, initialFocus]);

  return ref;
}

/**
 * Gives focus back to the opener. An opener that is gone, was inside the
 * dialog, or is the page itself (a dialog open on page load) has no place to
 * go back to: focus stays where closing left it. (A modal opened from the
 * mobile menu has the menu's button as its opener: see protected-layout.)
 */
function returnFocus(opener: Element | null, dialog: HTMLDialogElement) {
  if (!(opener instanceof HTMLElement) || !opener.isConnected) return;
  if (opener === document.body || dialog.contains(opener)) return;
  opener.focus();
}
