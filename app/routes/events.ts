import { redirect } from "react-router";
import { eventStream } from "remix-utils/sse/server";
import type { LiveEvent } from "../context.ts";
import { startHeartbeat } from "../heartbeat.server.ts";
import { liveSession, services } from "../session.server.ts";
import type { Route } from "./+types/events";

/** A deadline check is never scheduled further than this ahead (setTimeout's limit is about 24 days). */
const MAX_WAIT_MS = 3_600_000;

/**
 * The signed-in page's live events (record 033), as server-sent events: what
 * changed for this user (unread count, balances, a send, a wallet), never the
 * data itself; the page then refreshes what changed. Opening or holding the
 * stream is not activity (record 015), and the stream ends when its session
 * does: Exit, a restore, a rotation (the database says so at once) or the idle
 * or absolute timeout (checked at the session's own deadline). 204 when there is
 * nothing to stream (nobody signed in, or a host without events): EventSource
 * then stops, and the page polls as the spec says.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  // Not a page: a browser that navigates here goes to the landing page like any unknown path.
  if (!(request.headers.get("Accept") ?? "").includes("text/event-stream")) throw redirect("/");
  const hub = services(context).events;
  const live = hub ? await liveSession(request, context) : null;
  if (!hub || !live) return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });

  return eventStream(
    request.signal,
    (send, close) => {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        send({ event: "session-ended", data: "" });
        close();
      };
      const unsubscribe = hub.subscribe(
        { userId: live.user.userId, sessionKey: live.key },
        (event: LiveEvent) => {
          if (event.kind === "session-ended") return end();
          if (event.kind === "closing") {
            ended = true;
            return close();
          }
          send({ event: event.kind, data: event.everyone ? "everyone" : "you" });
        },
      );
      // A ping at least every 25 s keeps proxies and load balancers from closing a quiet stream;
      // its phase is random per stream, so streams opened together do not ping together.
      const stopHeartbeat = startHeartbeat(() => send({ event: "ping", data: "" }));

      // The idle and absolute timeouts: look at the row when its deadline comes, and again at the
      // new one if activity elsewhere moved it. Nothing is read in between.
      let check: NodeJS.Timeout | undefined;
      const watch = (deadline: number | null) => {
        if (ended) return;
        if (deadline === null || deadline <= Date.now()) return end();
        check = setTimeout(
          () => void live.deadline().then(watch, () => watch(Date.now() + 60_000)),
          Math.min(deadline - Date.now() + 1_000, MAX_WAIT_MS),
        );
      };
      void live.deadline().then(watch, () => watch(Date.now() + 60_000));

      // Sent at once, so the browser knows the stream is open without waiting for an event.
      send({ event: "ready", data: "" });
      return () => {
        ended = true;
        unsubscribe();
        stopHeartbeat();
        if (check) clearTimeout(check);
      };
    },
    { headers: { "X-Accel-Buffering": "no" } },
  );
}
