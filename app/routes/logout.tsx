import { redirect } from "react-router";
import { readForm } from "../forms.server.ts";
import { destroySession, getSession } from "../session.server.ts";
import type { Route } from "./+types/logout";

export async function action({ request, context }: Route.ActionArgs) {
  await readForm(request, context);
  const session = await getSession(request, context);
  return redirect("/", { headers: { "Set-Cookie": await destroySession(session, context) } });
}

export function loader() {
  return redirect("/home");
}
