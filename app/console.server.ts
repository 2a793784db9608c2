// The staff console's web side (issue 26, record 047): its own cookies (never
// the holders' session), the guard every console page and action passes, and
// a one-shot notice after a form (post → redirect → get).
import { data, redirect, type RouterContextProvider } from "react-router";
import { memoize } from "../common/memo.ts";
import {
  mayRun,
  rolesNeeded,
  type CommandInput,
  type ConsoleCommand,
  type ConsoleServices,
  type ConsoleSession,
  type StaffRole,
} from "../common/contract/console.ts";
import type { AppServices } from "./context.ts";
import { services } from "./session.server.ts";
import { createSignedCookie } from "./signed-cookie.server.ts";

const cookies = memoize((s: AppServices) => {
  const secure = s.config.cookieSecure;
  const make = (name: string) =>
    createSignedCookie(secure ? `__Host-${name}` : name, {
      httpOnly: true,
      // Strict: no other site's link or form ever carries a staff cookie.
      sameSite: "strict",
      secure,
      path: "/",
      secrets: [s.config.sessionSecret],
    });
  return { session: make("ck_staff"), enrol: make("ck_staff_enrol"), notice: make("ck_staff_notice") };
});

export function consoleOf(context: Readonly<RouterContextProvider>): ConsoleServices {
  const c = services(context).console;
  if (!c) {
    throw data("The staff console is served by the server that runs the backend and its database.", {
      status: 404,
    });
  }
  return c;
}

export function staffCookies(context: Readonly<RouterContextProvider>) {
  return cookies(services(context));
}

async function tokenOf(request: Request, context: Readonly<RouterContextProvider>): Promise<string | null> {
  const value: unknown = await staffCookies(context)
    .session.parse(request.headers.get("Cookie"))
    .catch(() => null);
  return typeof value === "string" && value !== "" ? value : null;
}

/** The Set-Cookie header that ends the staff cookie. */
export async function clearStaffCookie(context: Readonly<RouterContextProvider>): Promise<string> {
  return staffCookies(context).session.serialize("", { maxAge: 0 });
}

export async function staffCookie(context: Readonly<RouterContextProvider>, token: string): Promise<string> {
  return staffCookies(context).session.serialize(token);
}

export interface Staff extends ConsoleSession {
  token: string;
}

/** The session behind the staff cookie at any stage, or null. */
export async function readStaff(
  request: Request,
  context: Readonly<RouterContextProvider>,
  { activity = request.method !== "HEAD" }: { activity?: boolean } = {},
): Promise<Staff | null> {
  const token = await tokenOf(request, context);
  if (token === null) return null;
  const session = await consoleOf(context).readSession(token, activity);
  return session ? { ...session, token } : null;
}

/**
 * The guard of every console page and action: a signed-in member, else the
 * sign-in page (a gone session's cookie is cleared). With `command`, the
 * member must hold one of its roles: else 403, with a page naming the role.
 */
export async function requireStaff(
  request: Request,
  context: Readonly<RouterContextProvider>,
  command?: ConsoleCommand,
): Promise<Staff> {
  const staff = await readStaff(request, context);
  if (!staff || staff.stage !== "signed-in") {
    throw redirect("/ops/login", { headers: { "Set-Cookie": await clearStaffCookie(context) } });
  }
  if (command && !mayRun(staff.roles, command)) throw forbidden(command);
  return staff;
}

export function forbidden(command: ConsoleCommand) {
  const needs = rolesNeeded(command);
  return data(`This page needs the ${needs} role. Ask an admin if you need it.`, { status: 403 });
}

export function can(staff: { roles: readonly StaffRole[] }, command: ConsoleCommand): boolean {
  return mayRun(staff.roles, command);
}

/**
 * The lists read during one request, by command and input: the layout's queue
 * counts and the page's own list (the Sends page, the first page) are the same
 * command, run once. A change (runAs) forgets them.
 */
const listedIn = new WeakMap<Readonly<RouterContextProvider>, Map<string, Promise<unknown>>>();

/** Runs a command as the member; a refusal comes back as its sentence. */
export async function runAs(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  command: ConsoleCommand,
  input?: CommandInput,
): Promise<{ ok: true; data: unknown } | { ok: false; message: string }> {
  listedIn.delete(context);
  return run(context, staff, command, input);
}

async function run(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  command: ConsoleCommand,
  input?: CommandInput,
): Promise<{ ok: true; data: unknown } | { ok: false; message: string }> {
  const outcome = await consoleOf(context).run({ email: staff.email, roles: staff.roles }, command, input);
  if (outcome.ok) return outcome;
  if (outcome.kind === "forbidden") throw forbidden(command);
  return { ok: false, message: outcome.message };
}

/** A list a page shows: the command's JSON, or the refusal as a 400 page. */
export async function listFor<T>(
  context: Readonly<RouterContextProvider>,
  staff: Staff,
  command: ConsoleCommand,
  input?: CommandInput,
): Promise<T> {
  let lists = listedIn.get(context);
  if (!lists) listedIn.set(context, (lists = new Map()));
  const key = JSON.stringify([command, input ?? {}]);
  let listed = lists.get(key);
  if (!listed) {
    listed = run(context, staff, command, input).then((result) => {
      if (!result.ok) throw data(result.message, { status: 400 });
      return result.data;
    });
    lists.set(key, listed);
  }
  return (await listed) as T;
}

/** Redirects to `to` with a notice shown once there. */
export async function redirectWithNotice(
  context: Readonly<RouterContextProvider>,
  to: string,
  notice: string,
): Promise<Response> {
  return redirect(to, {
    headers: {
      "Set-Cookie": await staffCookies(context).notice.serialize(notice.slice(0, 1000), { maxAge: 60 }),
    },
  });
}

/** The notice a redirect left, and the Set-Cookie that clears it. */
export async function takeNotice(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Promise<{ notice: string | null; setCookie: string | null }> {
  const jar = staffCookies(context).notice;
  const value: unknown = await jar.parse(request.headers.get("Cookie")).catch(() => null);
  if (typeof value !== "string" || value === "") return { notice: null, setCookie: null };
  return { notice: value, setCookie: await jar.serialize("", { maxAge: 0 }) };
}

/** A `?page=` value: a whole number from 1, anything else the first page. */
export function pageNumber(pageText: string | null): number {
  return /^[1-9]\d{0,5}$/u.test(pageText ?? "") ? Number(pageText) : 1;
}

/**
 * One page of a queue the loader holds whole: `?page=` as given (anything but
 * a whole number from 1 is the first page; past the end, the last), `size` to a page.
 */
export function pageOf<T>(items: readonly T[], pageText: string | null, size: number) {
  const wanted = pageNumber(pageText);
  const pages = Math.max(1, Math.ceil(items.length / size));
  const page = Math.min(wanted, pages);
  return {
    items: items.slice((page - 1) * size, page * size),
    page,
    pages,
    total: items.length,
    /** The position of the page's first item, from 1. */
    first: (page - 1) * size + 1,
  };
}
