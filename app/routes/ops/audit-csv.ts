// The audit log as CSV (issue 26): the audit page's filters, every matching
// row, written by the audit command itself (`audit --csv`: cells a spreadsheet
// would run as a formula are defused there). A plain link: no script needed.
import { consoleOf, forbidden, requireStaff } from "../../console.server.ts";
import { auditFilters, auditOptions } from "./audit.tsx";
import type { Route } from "./+types/audit-csv";

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "audit");
  const filters = auditFilters(new URL(request.url));
  const outcome = await consoleOf(context).run(staff, "audit", {
    options: { ...auditOptions(filters), csv: true },
    format: "text",
  });
  if (!outcome.ok) {
    if (outcome.kind === "forbidden") throw forbidden("audit");
    return new Response(`${outcome.message}\n`, {
      status: 400,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
    });
  }
  const day = new Date().toISOString().slice(0, 10);
  return new Response(`${String(outcome.data)}\n`, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="coinkeep-audit-${day}.csv"`,
      "Cache-Control": "no-store",
      "Referrer-Policy": "same-origin",
    },
  });
}
