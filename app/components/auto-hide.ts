import { useEffect, useState } from "react";

/** The spec's error flags clear themselves after 5 s (when scripts run). */
export const ERROR_HIDE_MS = 5_000;

/**
 * Returns `errors` until `ms` after they last changed or the user last
 * submitted a form, then nothing. A new submission counts as new errors even
 * when they read the same, so pressing the button again shows them again.
 * Without scripts the effects never run and the errors simply stay on the page.
 */
export function useAutoHide<T>(errors: T[] | undefined, ms = ERROR_HIDE_MS): T[] | undefined {
  const signature = errors?.length ? JSON.stringify(errors) : "";
  const [attempt, setAttempt] = useState(0);
  const [hidden, setHidden] = useState<string | null>(null);
  useEffect(() => {
    const onSubmit = () => setAttempt((n) => n + 1);
    document.addEventListener("submit", onSubmit, true);
    return () => document.removeEventListener("submit", onSubmit, true);
  }, []);
  const key = signature ? `${attempt}:${signature}` : "";
  useEffect(() => {
    if (!key) return;
    const timer = setTimeout(() => setHidden(key), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return key && hidden !== key ? errors : undefined;
}
