import { data, redirect } from "react-router";
import { readForm } from "../forms.server";
import { isCurrency } from "../lib/format";
import { commitSession, requireUser } from "../session.server";
import type { Route } from "./+types/currency";

/** Only a path on this site: "/x", never "//host" or "https://…". */
function safeRedirect(target: FormDataEntryValue | null, fallback = "/home"): string {
  if (
    typeof target !== "string" ||
    !target.startsWith("/") ||
    target.startsWith("//") ||
    target.startsWith("/\\")
  ) {
    return fallback;
  }
  return target;
}

// Choosing a currency sets the preferred currency (spec section 4, currency picker).
export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session } = await requireUser(request, context);
  const currency = formData.get("currency");
  if (!isCurrency(currency)) throw data("Unknown currency.", { status: 400 });
  session.set("currency", currency);
  return redirect(safeRedirect(formData.get("redirectTo")), {
    headers: { "Set-Cookie": await commitSession(session, context) },
  });
}

export function loader() {
  return redirect("/home");
}
