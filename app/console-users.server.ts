// The users the console's user pages show, from the operator commands' JSON:
// the search is `users --find <text>` (every user, oldest first, without a
// text), one user is `user <id>`, and their support messages come from
// `support`, filtered to them.
import { data, type RouterContextProvider } from "react-router";
import { can, listFor, runAs, type Staff } from "./console.server.ts";

/** One user as `users --json` (and `users --find`) gives them. */
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

/** One user in full, as `user <email|id> --json` gives them (amounts are the command's decimal text). */
export interface UserDetailRow {
  userId: string;
  email: string;
  createdAt: string;
  wallets: {
    id: string;
    coin: string;
    state: "requested" | "issued";
    address: string | null;
    balance: string;
    /** Why sends from the wallet are paused: the coin's pause or the user's; null when open. */
    sendsPaused: "coin" | "user" | null;
  }[];
  /** The last transactions, newest first. */
  transactions: {
    kind: "deposit" | "send";
    id: string;
    at: string;
    walletId: string;
    coin: string;
    amount: string;
    amountUsd: string | null;
    status: string;
    address: string | null;
    destinationTag: string | null;
    txid: string | null;
  }[];
  /** The last messages the user can see, newest first. */
  messages: {
    id: string;
    createdAt: string;
    message: string;
    opened: boolean;
    openedAt: string | null;
    toAll: boolean;
  }[];
  login: { failures: number; locked: boolean };
  /** The pauses set for this user (a coin's pauses reach everyone and are on the Money page). */
  pauses: {
    id: string;
    what: "sends" | "deposits" | "issuing";
    reason: string;
    actor: string;
    automatic: boolean;
    createdAt: string;
  }[];
  /** Live web sessions signed in as the user; null when this server cannot tell. */
  sessions: number | null;
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
  /** Staff replies to it, oldest first (the reply command). */
  replies: { id: string; author: string; at: string; text: string; messageId: string }[];
}

/** At most this many users are shown (`users --find` answers at most 50). */
export const MAX_RESULTS = 50;

/**
 * The users matching `q` (e-mail contains it, or the id is it), at most 50;
 * without `q`, the first 50 users. `more`: there may be others not shown.
 */
export async function findUsers(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  q: string,
): Promise<{ rows: UserRow[]; more: boolean }> {
  const needle = q.trim();
  const found =
    needle === ""
      ? await listFor<UserRow[]>(context, staff, "users")
      : await listFor<UserRow[]>(context, staff, "users", { options: { find: needle } });
  // `users --find` stops at 50: 50 found may mean more.
  const more = needle === "" ? found.length > MAX_RESULTS : found.length >= MAX_RESULTS;
  return { rows: found.slice(0, MAX_RESULTS), more };
}

export interface UserDetail {
  user: UserDetailRow;
  supportMessages: SupportRow[] | null;
}

/** One user in full with their support messages; null when there is none. */
export async function userDetail(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  id: string,
): Promise<UserDetail | null> {
  const [found, messages] = await Promise.all([
    runAs(context, staff, "user", { args: [id] }),
    can(staff, "support")
      ? listFor<SupportRow[]>(context, staff, "support", { options: { limit: "1000" } })
      : null,
  ]);
  // The command refuses an unknown user ("No user with id …"): the page's 404. Any other refusal: 400.
  if (!found.ok) {
    if (found.message.startsWith("No user")) return null;
    throw data(found.message, { status: 400 });
  }
  const user = found.data as UserDetailRow;
  const email = user.email.toLowerCase();
  return {
    user,
    supportMessages:
      messages
        ?.filter((m) => m.userId === user.userId || (m.userId === null && m.email.toLowerCase() === email))
        .slice(0, 20) ?? null,
  };
}
