// The signed-in pages' refreshes (spec section 9's polling, record 033's push): balances,
// prices and rates every 60 s while the holder is active, the unread count every 10 s or
// when the live-event stream says so, and a reload when the stream reports a change.
import { useEffect, useRef, useState } from "react";
import { useFetcher, useFetchers, useLocation, useNavigation, useRevalidator } from "react-router";
import { OPEN_MESSAGE_INTENT } from "./notification-list.tsx";
import { useLiveEvents } from "./use-live-events.ts";

/** What counts as the user touching the page (not merely having it open). */
const INTERACTIONS = ["pointerdown", "keydown", "wheel", "touchstart", "scroll", "input"] as const;

/**
 * Balances, prices and rates refresh every 60 s while the page is visible
 * (scripts on) and the user has touched the page within the session's idle
 * timeout. A refresh is a page-data request, which the server counts as
 * activity; a tab left alone therefore stops asking, its session runs out
 * (record 015), and the next unread-count poll (a background request) takes
 * it to the sign-in page.
 */
export function usePolling(idleMs: number, ms = 60_000) {
  const revalidator = useRevalidator();
  const lastTouched = useRef(0);
  useEffect(() => {
    lastTouched.current = Date.now();
    const touched = () => {
      lastTouched.current = Date.now();
    };
    for (const type of INTERACTIONS) window.addEventListener(type, touched, { passive: true, capture: true });
    return () => {
      for (const type of INTERACTIONS) window.removeEventListener(type, touched, { capture: true });
    };
  }, []);
  useEffect(() => {
    const timer = setInterval(() => {
      const recent = Date.now() - lastTouched.current < idleMs;
      if (recent && document.visibilityState === "visible" && revalidator.state === "idle")
        void revalidator.revalidate();
    }, ms);
    return () => clearInterval(timer);
  }, [revalidator, ms, idleMs]);
}

/**
 * The unread count. While the live-event stream is open (record 033) it is
 * fetched when the stream says it changed; otherwise it is polled every 10 s
 * while the page is visible (scripts on), as the spec says. Whichever answered
 * last wins: this loader (revalidated after opening a message) or the fetch.
 * A message being opened already counts as read.
 */
export function useUnreadCount(loaderData: { unread: number }, live: boolean, ms = 10_000) {
  const fetcher = useFetcher<{ count: number | null }>({ key: "unread-count" });
  const { load } = fetcher;
  useEffect(() => {
    if (live) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void load("/unread-count");
    }, ms);
    return () => clearInterval(timer);
  }, [load, ms, live]);
  // Every revalidation brings a new loader object, every poll a new data object:
  // the one that changed most recently holds the count.
  const polled = fetcher.data;
  const [latest, setLatest] = useState({ loaderData, polled, count: loaderData.unread });
  if (latest.loaderData !== loaderData) {
    setLatest({ loaderData, polled, count: loaderData.unread });
  } else if (latest.polled !== polled) {
    setLatest({ loaderData, polled, count: typeof polled?.count === "number" ? polled.count : latest.count });
  }
  const opening = useFetchers().filter(
    (f) => f.state !== "idle" && f.formData?.get("intent") === OPEN_MESSAGE_INTENT,
  ).length;
  return { count: Math.max(0, latest.count - opening), refresh: () => void load("/unread-count") };
}

/** A change raised for every user at once is taken up within this long, spread at random. */
const EVERYONE_SPREAD_MS = 3_000;

/**
 * What the page does when the live-event stream says something changed: the
 * unread count is fetched again (and the list, on the notifications page); a
 * balance, a send or a wallet reloads the page's data (balances, transactions,
 * wallet states); a session that ended reloads too, which takes the visitor to
 * the landing page. Reloads asked for together run once.
 */
export function useLiveUpdates(refreshCount: () => void): boolean {
  const revalidator = useRevalidator();
  const navigation = useNavigation();
  const { pathname } = useLocation();
  const pending = useRef<{ reload?: ReturnType<typeof setTimeout>; count?: ReturnType<typeof setTimeout> }>(
    {},
  );
  // A change that arrives while the page is submitting or loading (most often
  // the change its own form just made) waits for that to finish: a refresh in
  // the middle would cancel the loads the submission started, whose answers
  // carry its result (the "Wallet requested." toast was lost that way).
  const busy = navigation.state !== "idle" || revalidator.state !== "idle";
  const busyRef = useRef(busy);
  const deferredRef = useRef(false);
  useEffect(() => {
    busyRef.current = busy;
    if (busy || !deferredRef.current) return;
    deferredRef.current = false;
    void revalidator.revalidate();
  }, [busy, revalidator]);
  useEffect(() => {
    const timers = pending.current;
    return () => {
      clearTimeout(timers.reload);
      clearTimeout(timers.count);
    };
  }, []);
  return useLiveEvents((change, everyone) => {
    const timers = pending.current;
    const delay = everyone ? Math.random() * EVERYONE_SPREAD_MS : 50;
    const reload = () => {
      if (timers.reload) return;
      timers.reload = setTimeout(() => {
        timers.reload = undefined;
        if (busyRef.current) deferredRef.current = true;
        else void revalidator.revalidate();
      }, delay);
    };
    if (change === "messages" || change === "resync") {
      if (!timers.count) {
        timers.count = setTimeout(() => {
          timers.count = undefined;
          refreshCount();
        }, delay);
      }
      if (change === "resync" || pathname === "/notifications") reload();
    } else {
      reload();
    }
  });
}
