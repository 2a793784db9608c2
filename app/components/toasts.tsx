import { useCallback, useEffect, useRef, useState } from "react";

// Toasts: success 2 s, error 4 s, at most 20 at once, bottom right, announced
// politely (one live region, present from the first render). Anything in the
// page may raise one with showToast(). A flash message from the server (a
// toast the spec shows after a redirect) comes in as `flash`: it is in the
// server-rendered page, so without scripts it is simply a message on the next
// page; with scripts it times out like any other toast.
const EVENT = "coinkeep:toast";
const MAX_TOASTS = 20;
const DURATION_MS = { success: 2_000, error: 4_000 } as const;

export type ToastKind = keyof typeof DURATION_MS;

export interface Toast {
  /** Unique per toast: a new id is a new toast, even with the same text. */
  id: string;
  message: string;
  kind: ToastKind;
}

export function showToast(message: string, kind: ToastKind = "success") {
  window.dispatchEvent(new CustomEvent(EVENT, { detail: { message, kind } }));
}

function isToastDetail(detail: unknown): detail is Pick<Toast, "message" | "kind"> {
  if (typeof detail !== "object" || detail === null) return false;
  const { message, kind } = detail as Record<string, unknown>;
  return typeof message === "string" && (kind === "success" || kind === "error");
}

export function Toasts({ flash }: { flash?: Toast | undefined }) {
  const [toasts, setToasts] = useState<Toast[]>(() => (flash ? [flash] : []));
  const timers = useRef(new Set<ReturnType<typeof setTimeout>>());
  const started = useRef(new Set<string>());

  const add = useCallback((toast: Toast) => {
    if (started.current.has(toast.id)) return;
    started.current.add(toast.id);
    setToasts((list) => [...list.filter((t) => t.id !== toast.id), toast].slice(-MAX_TOASTS));
    const timer = setTimeout(() => {
      timers.current.delete(timer);
      setToasts((list) => list.filter((t) => t.id !== toast.id));
    }, DURATION_MS[toast.kind]);
    timers.current.add(timer);
  }, []);

  // A flash message: the first one is already on the page (server-rendered);
  // this starts its timer. Later ones arrive with new loader data.
  useEffect(() => {
    if (flash) add(flash);
  }, [flash, add]);

  useEffect(() => {
    let next = 0;
    const onToast = (event: Event) => {
      const detail = (event as CustomEvent<unknown>).detail;
      if (!isToastDetail(detail)) return;
      add({ id: `toast-${++next}`, message: detail.message, kind: detail.kind });
    };
    window.addEventListener(EVENT, onToast);
    const pending = timers.current;
    const seen = started.current;
    return () => {
      window.removeEventListener(EVENT, onToast);
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      seen.clear();
    };
  }, [add]);

  return (
    <div className="toasts" role="status" aria-live="polite">
      {toasts.map((toast) => (
        <p key={toast.id} className={`toast toast-${toast.kind}`}>
          {toast.message}
        </p>
      ))}
    </div>
  );
}
