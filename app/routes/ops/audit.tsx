// The audit log (issue 26): every change with who (and their roles), what, on
// whom and why, newest first; filtered by staff member, holder, action and
// dates; a page at a time by id (no offset, so any size pages alike); and the
// same filter as a CSV download (a plain link).
import { Form, Link } from "react-router";
import { listFor, requireStaff } from "../../console.server.ts";
import type { Route } from "./+types/audit";

export function meta() {
  return [{ title: "Audit log — Coinkeep staff" }];
}

interface Entry {
  id: number;
  at: string;
  actor: string;
  actorRoles: string[] | null;
  action: string;
  subject: string | null;
  userId: string | null;
  reason: string | null;
  details: unknown;
}

const FILTERS = ["actor", "user", "action", "from", "to"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The page's filters from its query: each trimmed, at most 254 characters. */
export function auditFilters(url: URL): Filters {
  const f = {} as Filters;
  for (const name of FILTERS) f[name] = (url.searchParams.get(name) ?? "").trim().slice(0, 254);
  return f;
}

/** The audit command's options for these filters. */
export function auditOptions(f: Filters): Record<string, string | undefined> {
  return Object.fromEntries(FILTERS.map((name) => [name, f[name] === "" ? undefined : f[name]]));
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "audit");
  const url = new URL(request.url);
  const filters = auditFilters(url);
  const before = url.searchParams.get("before") ?? "";
  const page = await listFor<{ entries: Entry[]; nextBefore: number | null }>(context, staff, "audit", {
    options: {
      ...auditOptions(filters),
      limit: "50",
      before: /^\d{1,15}$/u.test(before) ? before : undefined,
    },
  });
  const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ""));
  return {
    filters,
    entries: page.entries,
    nextBefore: page.nextBefore,
    query: query.toString(),
    paged: before !== "",
  };
}

function when(iso: string): string {
  return `${iso.slice(0, 19).replace("T", " ")} UTC`;
}

/** The details without what the other columns show, as one line of text. */
function detailsText(details: unknown): string {
  if (!details || typeof details !== "object") return "";
  const rest = Object.entries(details).filter(([k]) => k !== "reason" && k !== "userId");
  return rest.map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("; ");
}

export default function Audit({ loaderData }: Route.ComponentProps) {
  const { filters, entries, nextBefore, query, paged } = loaderData;
  const csv = `/ops/audit.csv${query ? `?${query}` : ""}`;
  return (
    <>
      <h1>Audit log</h1>
      <Form method="get" className="console-filters" aria-label="Filter the audit log">
        <div className="field">
          <label htmlFor="audit-actor">Staff member or operator</label>
          <input id="audit-actor" name="actor" type="text" defaultValue={filters.actor} />
        </div>
        <div className="field">
          <label htmlFor="audit-user">Holder (e-mail or id)</label>
          <input id="audit-user" name="user" type="text" defaultValue={filters.user} />
        </div>
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <input
            id="audit-action"
            name="action"
            type="text"
            defaultValue={filters.action}
            placeholder="send.approve"
          />
        </div>
        <div className="field">
          <label htmlFor="audit-from">From (date, UTC)</label>
          <input id="audit-from" name="from" type="date" defaultValue={filters.from} />
        </div>
        <div className="field">
          <label htmlFor="audit-to">To (date, UTC, included)</label>
          <input id="audit-to" name="to" type="date" defaultValue={filters.to} />
        </div>
        <button type="submit" className="button button-secondary">
          Show
        </button>
      </Form>
      <p>
        <a href={csv} download>
          Download CSV
        </a>{" "}
        (every row that matches these filters)
      </p>
      <table>
        <caption>
          {entries.length === 0
            ? "No rows match."
            : `${entries.length} rows, newest first${paged ? " (an older page)" : ""}`}
        </caption>
        <thead>
          <tr>
            <th scope="col" className="num">
              Id
            </th>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Subject</th>
            <th scope="col">Why</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td className="num">{e.id}</td>
              <td>{when(e.at)}</td>
              <td>
                {e.actor}
                {e.actorRoles ? ` (${e.actorRoles.join(", ")})` : " (command line)"}
              </td>
              <td>{e.action}</td>
              <td className="mono">
                {e.userId ? (
                  <Link to={`/ops/users/${e.userId}`}>{e.subject ?? e.userId}</Link>
                ) : (
                  (e.subject ?? "")
                )}
              </td>
              <td className="message-text">{e.reason ?? ""}</td>
              <td className="message-text">{detailsText(e.details)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav aria-label="Pages">
        {paged ? <Link to={`/ops/audit${query ? `?${query}` : ""}`}>Newest</Link> : null}{" "}
        {nextBefore === null ? null : (
          <Link
            to={`/ops/audit?${new URLSearchParams([...new URLSearchParams(query), ["before", String(nextBefore)]])}`}
          >
            Older
          </Link>
        )}
      </nav>
    </>
  );
}
