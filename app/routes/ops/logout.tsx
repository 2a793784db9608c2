// Staff sign-out: the session row goes and the cookie with it.
import { redirect } from "react-router";
import { clearStaffCookie, consoleOf, readStaff } from "../../console.server.ts";
import { readForm } from "../../forms.server.ts";
import type { Route } from "./+types/logout";

export async function loader() {
  return redirect("/ops");
}

export async function action({ request, context }: Route.ActionArgs) {
  await readForm(request, context);
  const staff = await readStaff(request, context);
  if (staff) await consoleOf(context).endSession(staff.token, staff.email);
  return redirect("/ops/login?signed-out=1", { headers: { "Set-Cookie": await clearStaffCookie(context) } });
}
