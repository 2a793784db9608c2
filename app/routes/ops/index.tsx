// The console's first page: what waits for this member, by the roles they hold.
import { Link } from "react-router";
import { ROLE_DUTIES } from "../../../common/contract/console.ts";
import { can, listFor, requireStaff } from "../../console.server.ts";
import type { Route } from "./+types/index";

export function meta() {
  return [{ title: "Staff console — Coinkeep" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context);
  const [sends, requests, messages] = await Promise.all([
    can(staff, "sends") ? listFor<unknown[]>(context, staff, "sends").then((l) => l.length) : null,
    can(staff, "requests") ? listFor<unknown[]>(context, staff, "requests").then((l) => l.length) : null,
    can(staff, "support")
      ? listFor<unknown[]>(context, staff, "support", { options: { limit: "100" } }).then((l) => l.length)
      : null,
  ]);
  return { roles: staff.roles, sends, requests, messages };
}

export default function ConsoleHome({ loaderData }: Route.ComponentProps) {
  const { roles, sends, requests, messages } = loaderData;
  return (
    <>
      <h1>Waiting for you</h1>
      <ul className="console-counts">
        {sends !== null ? (
          <li>
            <Link to="/ops/sends">
              <span data-count="sends">{sends}</span> {sends === 1 ? "send" : "sends"} waiting for a decision
            </Link>
          </li>
        ) : null}
        {requests !== null ? (
          <li>
            <Link to="/ops/requests">
              <span data-count="requests">{requests}</span> wallet {requests === 1 ? "request" : "requests"}{" "}
              waiting for an address
            </Link>
          </li>
        ) : null}
        {messages !== null ? (
          <li>
            <Link to="/ops/messages">
              <span data-count="messages">{messages}</span> recent support and contact{" "}
              {messages === 1 ? "message" : "messages"}
            </Link>
          </li>
        ) : null}
      </ul>
      <h2>Your roles</h2>
      <dl className="console-roles">
        {roles.map((r) => (
          <div key={r}>
            <dt>{r}</dt>
            <dd>{ROLE_DUTIES[r]}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}
