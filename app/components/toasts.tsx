import { useEffect, useState } from "react";

// Toasts (scripts only): success 2 s, error 4 s, at most 20 at once, announced
// politely. Anything in the page may raise one with showToast().
const EVENT = "coinkeep:toast";
const MAX_TOASTS = 20;

type Kind = "success" | "error";

export function showToast(message: string, kind: Kind = "success") {
  window.dispatchEvent(new CustomEvent(EVENT, { detail: { message, kind } }));
}

export function Toasts() {
  const [toasts, setToasts] = useState<{ id: number; message: string; kind: Kind }[]>([]);
  useEffect(() => {
    let next = 0;
    const onToast = (event: Event) => {
      const { message, kind } = (event as CustomEvent<{ message: string; kind: Kind }>).detail;
      const id = ++next;
      setToasts((list) => [...list, { id, message, kind }].slice(-MAX_TOASTS));
      setTimeout(
        () => setToasts((list) => list.filter((t) => t.id !== id)),
        kind === "error" ? 4_000 : 2_000,
      );
    };
    window.addEventListener(EVENT, onToast);
    return () => window.removeEventListener(EVENT, onToast);
  }, []);
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
