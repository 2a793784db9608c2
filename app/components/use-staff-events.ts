import { useEffect } from "react";
import { useRevalidator } from "react-router";

/**
 * The console's live queue counts (scripts on): one EventSource on /ops/events;
 * each "queues" event reloads the page's data (the counts, the queue shown).
 * Without scripts the counts are as of the page's last load.
 */
export function useStaffEvents(): void {
  const { revalidate } = useRevalidator();
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const source = new EventSource("/ops/events");
    source.addEventListener("queues", () => void revalidate());
    source.addEventListener("session-ended", () => {
      source.close();
      window.location.assign("/ops/login");
    });
    return () => source.close();
  }, [revalidate]);
}
