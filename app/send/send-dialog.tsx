import { useDialog } from "../components/use-dialog.ts";

/**
 * The send flow's risk-warning dialog. It lives inside the send form, so its
 * buttons submit the form's values.
 *
 * Without scripts the server renders it open (a non-modal `<dialog open>`, the
 * fields behind it inert) over a full-screen backdrop that is a submit button
 * back to the form (intent "edit"), like its Cancel button: the values stay.
 * With scripts it is a real modal (useDialog: focus kept inside, the page
 * behind inert); Escape, a click on the backdrop and Cancel call `onClose`,
 * and focus returns to where it was when the dialog opened.
 */
export function SendDialog({
  scripted,
  labelledBy,
  describedBy,
  onClose,
  children,
}: {
  scripted: boolean;
  labelledBy: string;
  describedBy: string;
  onClose: () => void;
  children: React.ReactNode;
}) {
  const ref = useDialog({ onClose, enabled: scripted });

  return (
    <>
      {scripted ? null : (
        <button
          type="submit"
          name="intent"
          value="edit"
          className="modal-backdrop"
          aria-hidden="true"
          tabIndex={-1}
        >
          <span className="visually-hidden">Back to the form</span>
        </button>
      )}
      <dialog
        ref={ref}
        open
        className="modal send-dialog"
        aria-labelledby={labelledBy}
        aria-describedby={describedBy}
        aria-modal="true"
      >
        <div className="modal-body">{children}</div>
      </dialog>
    </>
  );
}
