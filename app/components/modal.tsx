import { Link, useLocation, useNavigate } from "react-router";
import { useDialog } from "./use-dialog.ts";

/** A path and query with the `modal` search parameter removed: the page under the modal. */
export function withoutModal({ pathname, search }: { pathname: string; search: string }): string {
  const params = new URLSearchParams(search);
  params.delete("modal");
  const rest = params.toString();
  return `${pathname}${rest ? `?${rest}` : ""}`;
}

/** The URL of the current page with the `modal` search parameter removed. */
export function useCloseUrl(): string {
  return withoutModal(useLocation());
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
 * plain links without scripts: the server renders it open over a backdrop
 * that is a link to `closeUrl` (by default the page without `?modal=`). With
 * scripts it becomes a real modal dialog (useDialog): focus kept inside,
 * Escape and a click on the backdrop go to `closeUrl`, and focus goes back to
 * the link that opened it.
 */
export function Modal({
  labelledBy,
  describedBy,
  className,
  closeUrl: closeTo,
  initialFocus,
  children,
}: {
  labelledBy: string;
  describedBy?: string;
  /** Added to the dialog's own class, "modal". */
  className?: string;
  /** Where closing goes; the page without `?modal=` unless given. */
  closeUrl?: string;
  /** With scripts, the control to start from (a selector inside the dialog); see useDialog. */
  initialFocus?: string;
  children: React.ReactNode;
}) {
  const pageUrl = useCloseUrl();
  const closeUrl = closeTo ?? pageUrl;
  const navigate = useNavigate();
  const ref = useDialog({
    onClose: () => void navigate(closeUrl, { replace: true, preventScrollReset: true }),
    initialFocus,
  });

  return (
    <>
      <Link
        to={closeUrl}
        replace
        preventScrollReset
        className="modal-backdrop"
        aria-hidden="true"
        tabIndex={-1}
      >
        {/* Read where there is no stylesheet (a text browser): the backdrop is a link too. */}
        <span className="visually-hidden">Back to the page</span>
      </Link>
      <dialog
        ref={ref}
        open
        className={className ? `modal ${className}` : "modal"}
        aria-labelledby={labelledBy}
        aria-describedby={describedBy}
        aria-modal="true"
      >
        <div className="modal-body">{children}</div>
      </dialog>
    </>
  );
}
