import { data } from "react-router";
import { backend } from "../backend.server.ts";
import { requireUser } from "../session.server.ts";
import type { Route } from "./+types/unread-count";

// The unread-messages count (call 7), polled every 10 s by the signed-in shell.
export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const answer = await backend(context).newMessagesCount({ email: user.email, twelvewords: user.words });
  return data(
    { count: answer.ok ? answer.data.newMessagesCount : null },
    { headers: { "Cache-Control": "no-store" } },
  );
}
