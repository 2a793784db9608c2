import { useEffect, useState } from "react";

/**
 * A one-time notice (the spec's success toast). With scripts it disappears
 * after 2 s; without them it is a flash message on the page. Give it a `key`
 * per message so a new message starts a new timer.
 */
export function Notice({ message, ms = 2_000 }: { message: string; ms?: number }) {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    const timer = setTimeout(() => setShown(false), ms);
    return () => clearTimeout(timer);
  }, [ms]);
  return (
    <div className="toasts" role="status" aria-live="polite">
      {shown ? <p className="toast">{message}</p> : null}
    </div>
  );
}
