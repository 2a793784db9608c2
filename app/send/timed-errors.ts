import { useEffect, useState } from "react";
import type { SendErrors } from "./rules.ts";
import { ERROR_HIDE_MS } from "../components/auto-hide.ts";

function hasErrors(errors: SendErrors): boolean {
  return Object.values(errors).some((list) => list && list.length > 0);
}

/**
 * The spec's error flags clear themselves after 5 s (with scripts). Each
 * attempt counts anew, so the same message shows again on the next press.
 */
export function useTimedErrors(errors: SendErrors, attempt: number): SendErrors {
  const signature = hasErrors(errors) ? `${attempt}:${JSON.stringify(errors)}` : "";
  const [hidden, setHidden] = useState<string | null>(null);
  useEffect(() => {
    if (!signature) return;
    const timer = setTimeout(() => setHidden(signature), ERROR_HIDE_MS);
    return () => clearTimeout(timer);
  }, [signature]);
  return signature && hidden !== signature ? errors : {};
}
