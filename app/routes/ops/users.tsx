// Users (issue 26): find a user by e-mail or id; each result opens their page.
import { Form, Link } from "react-router";
import { When } from "../../components/console-form.tsx";
import { requireStaff } from "../../console.server.ts";
import { findUsers, MAX_RESULTS } from "../../console-users.server.ts";
import type { Route } from "./+types/users";

export function meta() {
  return [{ title: "Users — Coinkeep staff console" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "users");
  const q = (new URL(request.url).searchParams.get("q") ?? "").trim().slice(0, 254);
  const { rows, more } = await findUsers(context, staff, q);
  return {
    q,
    more,
    limit: MAX_RESULTS,
    users: rows.map((u) => ({
      id: u.userId,
      email: u.email,
      createdAt: u.createdAt,
      wallets: u.wallets.length,
    })),
  };
}

export default function Users({ loaderData }: Route.ComponentProps) {
  const { q, more, limit, users } = loaderData;
  return (
    <>
      <h1>Users</h1>
      <Form method="get" role="search" aria-label="Find a user" className="console-filters">
        <div className="field">
          <label htmlFor="users-q">E-mail or user id</label>
          <input id="users-q" name="q" type="search" defaultValue={q} maxLength={254} />
        </div>
        <button type="submit" className="button button-secondary">
          Find
        </button>
      </Form>
      <h2 id="users-results">{q === "" ? "All users" : `Users matching “${q}”`}</h2>
      <p role="status">
        {users.length === 0
          ? q === ""
            ? "No users yet."
            : "No user matches."
          : more
            ? `The first ${limit} are shown; there may be more. Narrow the search.`
            : `${users.length} ${users.length === 1 ? "user" : "users"}.`}
      </p>
      {users.length > 0 ? (
        <table aria-labelledby="users-results">
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">User id</th>
              <th scope="col" className="num">
                Wallets
              </th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>
                  <Link to={`/ops/users/${u.id}`}>{u.email}</Link>
                </td>
                <td className="mono">{u.id}</td>
                <td className="num">{u.wallets}</td>
                <td>
                  <When iso={u.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
