// The users the console's user pages show, from the operator commands' JSON.
// Until `users --find` and `user <email|id>` exist (another branch), the
// search filters `users` here and the detail is put together from `users`,
// `pauses`, `locks` and `support`; switching is one line in each function.
import type { RouterContextProvider } from "react-router";
import { can, listFor, type Staff } from "./console.server.ts";

/** One user as `users --json` gives them. */
export interface UserRow {
  userId: string;
  email: string;
  createdAt: string;
  wallets: {
    id: string;
    coin: string;
    state: "requested" | "issued";
    address: string | null;
    balance: string;
  }[];
}

/** One pause as `pauses --json` gives it. */
export interface PauseRow {
  id: string;
  what: "sends" | "deposits" | "issuing";
  coin: string | null;
  userId: string | null;
  email: string | null;
  since: string;
  actor: string;
  automatic: boolean;
  reason: string;
}

/** One account as `locks --json` gives it (only accounts with failed logins). */
export interface LockRow {
  email: string;
  failures: number;
  locked: boolean;
}

/** One message as `support --json` gives it. */
export interface SupportRow {
  id: string;
  kind: "support" | "contact";
  email: string;
  fullName: string | null;
  phone: string | null;
  comment: string;
  ip: string | null;
  userId: string | null;
  createdAt: string;
}

export const MAX_RESULTS = 50;

/** The users matching `q` (e-mail contains it, or the id is it): at most 50, and how many matched. */
export async function findUsers(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  q: string,
): Promise<{ rows: UserRow[]; matched: number }> {
  // With `users --find`: listFor<UserRow[]>(context, staff, "users", { options: { find: q } })
  const all = await listFor<UserRow[]>(context, staff, "users");
  const needle = q.trim().toLowerCase();
  const found =
    needle === ""
      ? all
      : all.filter((u) => u.userId.toLowerCase() === needle || u.email.toLowerCase().includes(needle));
  return { rows: found.slice(0, MAX_RESULTS), matched: found.length };
}

export interface UserDetail {
  user: UserRow;
  pauses: PauseRow[] | null;
  lock: LockRow | null;
  messages: SupportRow[] | null;
}

/** One user with their pauses, login lock and support messages; null when there is none. */
export async function userDetail(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  id: string,
): Promise<UserDetail | null> {
  // With `user <id>`: const user = await listFor<UserRow | null>(context, staff, "user", { args: [id] });
  const user = (await listFor<UserRow[]>(context, staff, "users")).find(
    (u) => u.userId.toLowerCase() === id.toLowerCase(),
  );
  if (!user) return null;
  const [pauses, locks, messages] = await Promise.all([
    can(staff, "pauses") ? listFor<PauseRow[]>(context, staff, "pauses") : null,
    can(staff, "locks") ? listFor<LockRow[]>(context, staff, "locks") : null,
    can(staff, "support")
      ? listFor<SupportRow[]>(context, staff, "support", { options: { limit: "1000" } })
      : null,
  ]);
  const email = user.email.toLowerCase();
  return {
    user,
    pauses: pauses?.filter((p) => p.userId === user.userId) ?? null,
    lock: locks
      ? (locks.find((l) => l.email.toLowerCase() === email) ?? { email, failures: 0, locked: false })
      : null,
    messages:
      messages
        ?.filter((m) => m.userId === user.userId || (m.userId === null && m.email.toLowerCase() === email))
        .slice(0, 20) ?? null,
  };
}
