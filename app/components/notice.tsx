import { useEffect, useState } from "react";

/**
 * A one-time notice (the spec's success toast). With scripts it disappears
 * after 2 s; without them it is a flash message on the page.
 */
export function Notice({ message, ms = 2_000 }: { message: string; ms?: number }) {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    setShown(true);
    const timer = setTimeout(() => setShown(false), ms);
    return () => clearTimeout(timer);
  }, [message, ms]);
  return (
    <div className="toasts" role="status" aria-live="polite">
      {shown ? <p className="toast">{message}</p> : null}
    </div>
  );
}
