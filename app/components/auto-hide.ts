import { useEffect, useState } from "react";

/** The spec's error flags clear themselves after 5 s (when scripts run). */
export const ERROR_HIDE_MS = 5_000;

/**
 * Returns `errors` until `ms` after they last changed, then nothing. Without
 * scripts the effect never runs and the errors simply stay on the page.
 */
export function useAutoHide<T>(errors: T[] | undefined, ms = ERROR_HIDE_MS): T[] | undefined {
  const signature = errors?.length ? JSON.stringify(errors) : "";
  const [hidden, setHidden] = useState<string | null>(null);
  useEffect(() => {
    if (!signature) return;
    const timer = setTimeout(() => setHidden(signature), ms);
    return () => clearTimeout(timer);
  }, [signature, ms]);
  return signature && hidden !== signature ? errors : undefined;
}
