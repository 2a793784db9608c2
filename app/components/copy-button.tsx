import { useEffect, useState } from "react";
import { useHydrated } from "./hydrated.ts";
import { CopyIcon } from "./icons.tsx";
import { showToast } from "./toasts.tsx";

/** Copies `text` on `copy()`; `copied` is true for 2 s after (and a toast is raised when asked). */
export function useCopy(text: string, toast: string | undefined) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2_000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => {
        setCopied(true);
        if (toast) showToast(toast);
      },
      () => showToast("Could not copy to the clipboard.", "error"),
    );
  };
  return { copied, copy };
}

/**
 * 'Copy' that turns into 'Copied' for 2 s (and raises a toast when asked).
 * It exists only once scripts run; without them the text beside it is plain,
 * selectable text.
 */
export function CopyButton({
  text,
  label = "Copy",
  toast,
  compact = false,
}: {
  text: string;
  label?: string;
  toast?: string;
  compact?: boolean;
}) {
  const hydrated = useHydrated();
  const { copied, copy } = useCopy(text, toast);
  if (!hydrated) return null;
  if (compact) {
    return (
      <button type="button" className="icon-button icon-button-small" onClick={copy}>
        <CopyIcon />
        <span className="visually-hidden">{label}</span>
      </button>
    );
  }
  return (
    <button type="button" className="button button-secondary" onClick={copy}>
      <span aria-live="polite">{copied ? "Copied" : label}</span>
    </button>
  );
}
