import { useEffect, useRef } from "react";
import { Link, useLocation, useNavigate } from "react-router";

/** The URL of the current page with the `modal` search parameter removed. */
export function useCloseUrl(): string {
  const location = useLocation();
  const params = new URLSearchParams(location.search);
  params.delete("modal");
  const search = params.toString();
  return `${location.pathname}${search ? `?${search}` : ""}`;
}

/** The URL of the current page with `?modal=name` set. */
export function useOpenUrl(name: string): string {
  const location = useLocation();
  const params = new URLSearchParams(location.search);
  params.set("modal", name);
  return `${location.pathname}?${params.toString()}`;
}

/**
 * A modal whose open state lives in the URL (`?modal=name`), so it works as
 * plain links without scripts. With scripts it becomes a real modal dialog
 * (focus kept inside, Escape and a click on the backdrop close it).
 */
export function Modal({ labelledBy, children }: { labelledBy: string; children: React.ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const closeUrl = useCloseUrl();
  const navigate = useNavigate();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (dialog.open) dialog.close();
    dialog.showModal();
    const close = () => void navigate(closeUrl, { replace: true, preventScrollReset: true });
    const onCancel = (event: Event) => {
      event.preventDefault();
      close();
    };
    // A click whose target is the dialog itself landed on its backdrop.
    const onClick = (event: MouseEvent) => {
      if (event.target === dialog) close();
    };
    dialog.addEventListener("cancel", onCancel);
    dialog.addEventListener("click", onClick);
    return () => {
      dialog.removeEventListener("cancel", onCancel);
      dialog.removeEventListener("click", onClick);
    };
  }, [closeUrl, navigate]);

  return (
    <>
      <Link
        to={closeUrl}
        replace
        preventScrollReset
        className="modal-backdrop"
        aria-hidden="true"
        tabIndex={-1}
      />
      <dialog ref={ref} open className="modal" aria-labelledby={labelledBy} aria-modal="true">
        <div className="modal-body">{children}</div>
      </dialog>
    </>
  );
}
