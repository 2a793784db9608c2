// The console's live queue counts (issue 26), as server-sent events: "queues"
// whenever any user's sends or wallets change (a send requested or decided, a
// wallet requested or issued), at most once a second; the page then reloads
// its counts. Only for a signed-in staff member; the stream ends when the
// member's session does (looked at once a minute, never as activity).
import { redirect } from "react-router";
import { eventStream } from "remix-utils/sse/server";
import { consoleOf, readStaff } from "../../console.server.ts";
import { startHeartbeat } from "../../heartbeat.server.ts";
import { services } from "../../session.server.ts";
import type { Route } from "./+types/events";

const SESSION_CHECK_MS = 60_000;
const THROTTLE_MS = 1_000;

export async function loader({ request, context }: Route.LoaderArgs) {
  if (!(request.headers.get("Accept") ?? "").includes("text/event-stream")) throw redirect("/ops");
  const hub = services(context).events;
  const console = consoleOf(context);
  // Opening the stream is not activity: read without moving the idle deadline.
  const staff = await readStaff(request, context, { activity: false });
  const token = staff?.token;
  if (!hub || !token || staff.stage !== "signed-in") {
    return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
  }
  return eventStream(
    request.signal,
    (send, close) => {
      let ended = false;
      let pending: NodeJS.Timeout | undefined;
      const unwatch = hub.watchQueues((event) => {
        if (event.kind === "closing") {
          ended = true;
          return close();
        }
        if (pending) return;
        pending = setTimeout(() => {
          pending = undefined;
          if (!ended) send({ event: "queues", data: "" });
        }, THROTTLE_MS);
      });
      // At least every 25 s, at a random phase per stream (app/heartbeat.server.ts).
      const stopHeartbeat = startHeartbeat(() => send({ event: "ping", data: "" }));
      const check = setInterval(() => {
        void console.readSession(token, false).then(
          (live) => {
            if (live?.stage === "signed-in" || ended) return;
            ended = true;
            send({ event: "session-ended", data: "" });
            close();
          },
          () => {},
        );
      }, SESSION_CHECK_MS);
      send({ event: "ready", data: "" });
      return () => {
        ended = true;
        unwatch();
        stopHeartbeat();
        clearInterval(check);
        if (pending) clearTimeout(pending);
      };
    },
    { headers: { "X-Accel-Buffering": "no" } },
  );
}
