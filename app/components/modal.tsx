import { Link, useLocation, useNavigate } from "react-router";
import { useDialog } from "./use-dialog.ts";

// A modal's state lives in the URL (`?modal=name`, and any parameters of its own such as the
// contact popup's `step`): the helpers below are the one place that reads and writes them.

/** A page: a path and its query. */
export type Place = { pathname: string; search: string };

/** A path with a query, without a bare "?". */
export function href(pathname: string, params: URLSearchParams): string {
  const search = params.toString();
  return search ? `${pathname}?${search}` : pathname;
}

/** The page's query without `modal` and the modal's own parameters (`own`). */
export function paramsWithoutModal(place: Place, own: readonly string[] = []): URLSearchParams {
  const params = new URLSearchParams(place.search);
  for (const name of ["modal", ...own]) params.delete(name);
  return params;
}

/** The page under a modal: `place` without `modal` and the modal's own parameters. */
export function withoutModal(place: Place, own: readonly string[] = []): string {
  return href(place.pathname, paramsWithoutModal(place, own));
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
  return href(location.pathname, params);
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
