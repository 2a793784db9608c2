// GET /history/statement.csv?from=YYYY-MM-DD&to=YYYY-MM-DD&coin=all|BTC…&currency=USD…
// (issue 28, record 050): the signed-in holder's statement, made by the backend
// and streamed through as it is read. The /history form's action: a plain GET,
// so it works with scripts off. A request the rules refuse goes back to
// /history with the fields and their messages; a visitor goes to /login.
import { parseWithZod } from "@conform-to/zod/v4";
import { redirect } from "react-router";
import { backend } from "../backend.server.ts";
import { statementSchema } from "../forms/statement.ts";
import { getUser } from "../session.server.ts";
import type { Route } from "./+types/history-statement";

/** /history with the form's fields as sent (only ours, bounded) and why it came back. */
function backToHistory(url: URL, why: "check" | "failed"): Response {
  const back = new URLSearchParams();
  for (const name of ["from", "to", "coin", "currency"]) {
    const value = url.searchParams.get(name);
    if (value !== null) back.set(name, value.slice(0, 64));
  }
  back.set("statement", why);
  return redirect(`/history?${back.toString()}#statement`, 303);
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await getUser(request, context);
  if (!user) throw redirect("/login");
  const url = new URL(request.url);
  const submission = parseWithZod(url.searchParams, { schema: statementSchema() });
  if (submission.status !== "success") return backToHistory(url, "check");
  const answer = await backend(context).statement({
    email: user.email,
    twelveWords: user.words,
    ...submission.value,
  });
  if (!answer.ok) return backToHistory(url, answer.kind === "rejected" && answer.issues ? "check" : "failed");
  return new Response(answer.data.body, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      // The name is the backend's, made of the checked fields only (statementFilename).
      "Content-Disposition": `attachment; filename="${answer.data.filename}"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "same-origin",
    },
  });
}
