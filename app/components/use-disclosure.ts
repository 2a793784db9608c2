import { useCallback, useEffect, useRef } from "react";

/**
 * The scripted half of a `<details>` menu (the mobile menu, the currency
 * picker). Without scripts a `<details>` opens and closes on its summary, and
 * a tap outside an open one lands on its backdrop (CSS: `.disclosure[open] >
 * summary::before` covers the page), which is part of the summary and so
 * closes it; the tap never reaches the page behind. With scripts Escape closes
 * it too and gives focus back to its summary, and `close()` closes it (after
 * following one of its links, or choosing a currency).
 */
export function useDisclosure(): {
  ref: React.RefObject<HTMLDetailsElement | null>;
  close: () => void;
} {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    const details = ref.current;
    if (!details) return;
    const onKeyDown = (event: KeyboardEvent) => {
      // (No menu is open under a modal dialog: the menus close as one opens.)
      if (event.key !== "Escape" || !details.open || event.defaultPrevented) return;
      event.preventDefault();
      details.open = false;
      details.querySelector("summary")?.focus();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, []);
  const close = useCallback(() => {
    if (ref.current) ref.current.open = false;
  }, []);
  return { ref, close };
}
