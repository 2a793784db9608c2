// The staff console's frame: who is signed in, the sections their roles open
// (no link to a page they cannot open), sign-out, and a notice left by the
// last form. Every page under it checks the member and the role again.
import { useState } from "react";
import { Form, NavLink, Outlet, data, isRouteErrorResponse, Link, useLocation } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import type { ConsoleCommand } from "../../../common/contract/console.ts";
import { can, listFor, requireStaff, takeNotice } from "../../console.server.ts";
import { useStaffEvents } from "../../components/use-staff-events.ts";
import consoleStyles from "../../styles/console.css?url";
import type { Route } from "./+types/layout";

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: consoleStyles }];

/** The console's sections, each behind the command its page lists. */
const SECTIONS: readonly { to: string; label: string; command: ConsoleCommand }[] = [
  { to: "/ops/sends", label: "Sends", command: "sends" },
  { to: "/ops/requests", label: "Wallet requests", command: "requests" },
  { to: "/ops/messages", label: "Messages", command: "support" },
  { to: "/ops/users", label: "Users", command: "users" },
  { to: "/ops/money", label: "Money", command: "reconcile" },
  { to: "/ops/thresholds", label: "Thresholds", command: "thresholds" },
  { to: "/ops/audit", label: "Audit log", command: "audit" },
  { to: "/ops/staff", label: "Staff", command: "staff" },
];

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context);
  const { notice, setCookie } = await takeNotice(request, context);
  // The queues' sizes beside their links (kept live by /ops/events with scripts on).
  const counted: Partial<Record<ConsoleCommand, number>> = {};
  await Promise.all(
    (["sends", "requests"] as const)
      .filter((c) => can(staff, c))
      .map(async (c) => {
        counted[c] = (await listFor<unknown[]>(context, staff, c)).length;
      }),
  );
  const sections = SECTIONS.filter((s) => can(staff, s.command)).map(({ to, label, command }) => ({
    to,
    label,
    count: counted[command] ?? null,
  }));
  return data(
    { email: staff.email, roles: staff.roles, sections, notice },
    { headers: setCookie ? { "Set-Cookie": setCookie } : {} },
  );
}

export function headers() {
  // Console pages hold people's data: never cached, never sent on as a referrer.
  return { "Cache-Control": "no-store", "Referrer-Policy": "same-origin" };
}

export default function ConsoleLayout({ loaderData }: Route.ComponentProps) {
  const { email, roles, sections } = loaderData;
  const notice = useKeptNotice(loaderData.notice);
  useStaffEvents();
  return (
    <div className="console">
      <header className="console-header">
        <p className="console-brand">
          <Link to="/ops">Coinkeep staff console</Link>
        </p>
        <p className="console-who">
          Signed in as <strong>{email}</strong> ({roles.join(", ")}).{" "}
        </p>
        <Form method="post" action="/ops/logout" className="console-signout">
          <AuthenticityTokenInput />
          <button type="submit" className="button button-secondary">
            Sign out
          </button>
        </Form>
        <nav aria-label="Console">
          <ul>
            {sections.map((s) => (
              <li key={s.to}>
                <NavLink to={s.to}>
                  {s.label}
                  {s.count === null ? null : (
                    <>
                      {" "}
                      (<span data-queue={s.to}>{s.count}</span>)
                    </>
                  )}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" className="console-main">
        {notice ? (
          <p className="console-notice" role="status">
            {notice}
          </p>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}

/**
 * The notice a form left, kept while the member stays on the page it was shown on. The notice is
 * read once (takeNotice), so a live update's reload of the page's data (useStaffEvents: another
 * member's decision, this member's own) would otherwise wipe "Approved the send …: Confirmed."
 * moments after it appeared. Going to another page, or another notice, replaces it.
 */
function useKeptNotice(notice: string | null | undefined): string | null {
  const { key } = useLocation();
  const [kept, setKept] = useState<{ text: string; at: string } | null>(
    notice ? { text: notice, at: key } : null,
  );
  if (notice && (kept?.text !== notice || kept.at !== key)) setKept({ text: notice, at: key });
  return notice ?? (kept?.at === key ? kept.text : null);
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  const status = isRouteErrorResponse(error) ? error.status : 500;
  const detail =
    isRouteErrorResponse(error) && typeof error.data === "string" && status < 500
      ? error.data
      : "Something went wrong. Try again.";
  const title =
    status === 403 ? "Not allowed" : status === 404 ? "Not found" : status < 500 ? "Refused" : "Error";
  return (
    <main id="main" className="console-main console-error">
      <h1>{title}</h1>
      <p>{detail}</p>
      <p>
        <Link to="/ops">Back to the console</Link>
      </p>
    </main>
  );
}
