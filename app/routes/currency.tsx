import { data, redirect } from "react-router";
import { readForm } from "../forms.server.ts";
import { isCurrency } from "../lib/format.ts";
import { safeRedirect } from "../lib/safe-redirect.ts";
import { commitSession, requireUser } from "../session.server.ts";
import type { Route } from "./+types/currency";

// Choosing a currency sets the preferred currency (spec section 4, currency picker).
export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session } = await requireUser(request, context);
  const currency = formData.get("currency");
  if (!isCurrency(currency)) throw data("Unknown currency.", { status: 400 });
  session.set("currency", currency);
  return redirect(safeRedirect(formData.get("redirectTo"), "/home"), {
    headers: { "Set-Cookie": await commitSession(session, context) },
  });
}

export function loader() {
  return redirect("/home");
}
