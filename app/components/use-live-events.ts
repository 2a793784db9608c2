import { useEffect, useRef, useState } from "react";
import type { LiveEventKind } from "../context.ts";

/** What the stream says changed; "ready" (sent first) and "ping" only keep it alive. */
const KINDS = [
  "messages",
  "balances",
  "sends",
  "wallets",
  "session-ended",
] as const satisfies LiveEventKind[];

export type LiveChange = (typeof KINDS)[number] | "resync";

/**
 * The signed-in page's live events (record 033), scripts on: one EventSource
 * on /events. Returns whether the stream is open; while it is not (it could
 * not open, or dropped and is reconnecting) the caller polls as the spec says.
 * After a reconnection `onChange("resync")` says that changes may have been
 * missed in between. `everyone` marks a change raised for every user at once.
 */
export function useLiveEvents(onChange: (change: LiveChange, everyone: boolean) => void): boolean {
  const [open, setOpen] = useState(false);
  const handler = useRef(onChange);
  useEffect(() => {
    handler.current = onChange;
  });
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const source = new EventSource("/events");
    let opened = false;
    source.addEventListener("open", () => {
      setOpen(true);
      if (opened) handler.current("resync", false);
      opened = true;
    });
    // A dropped stream reconnects by itself (CONNECTING); a refused one (204, no session) is CLOSED.
    source.addEventListener("error", () => setOpen(source.readyState === EventSource.OPEN));
    for (const kind of KINDS) {
      source.addEventListener(kind, (event) =>
        handler.current(kind, (event as MessageEvent).data === "everyone"),
      );
    }
    return () => source.close();
  }, []);
  return open;
}
