import { useEffect, useState } from "react";
import { useHydrated } from "./hydrated";
import { showToast } from "./toasts";

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
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2_000);
    return () => clearTimeout(timer);
  }, [copied]);
  if (!hydrated) return null;
  const onClick = () => {
    navigator.clipboard.writeText(text).then(
      () => {
        setCopied(true);
        if (toast) showToast(toast);
      },
      () => showToast("Could not copy to the clipboard.", "error"),
    );
  };
  if (compact) {
    return (
      <button type="button" className="icon-button icon-button-small" onClick={onClick} aria-label={label}>
        <CopyIcon />
      </button>
    );
  }
  return (
    <button type="button" className="button button-secondary" onClick={onClick}>
      <span aria-live="polite">{copied ? "Copied" : label}</span>
    </button>
  );
}

function CopyIcon() {
  return (
    <svg
      className="icon"
      viewBox="0 0 24 24"
      width="20"
      height="20"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <rect x="9" y="9" width="12" height="12" rx="2" />
      <path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1" />
    </svg>
  );
}
