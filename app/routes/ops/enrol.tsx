// Enrolment of a staff member (issue 26): the one-time link's token moves from
// the address bar into a short-lived cookie at once (it never stays in the
// history or reaches a referrer), then one page shows the authenticator's
// secret as a QR code and as text and takes the new password and a first code;
// done, it shows the ten recovery codes once.
//
// A resource route that writes its own HTML: the page carries the TOTP secret
// and then the recovery codes, and neither may ever sit in a page script (the
// hydration data of a normal route). It needs no script at all.
import { renderToStaticMarkup } from "react-dom/server";
import { redirect, type RouterContextProvider } from "react-router";
import type { EnrolmentView } from "../../../common/contract/console.ts";
import { consoleOf, staffCookies } from "../../console.server.ts";
import { enrolSchema } from "../../forms/console.ts";
import { csrfFor, maskToken, readForm } from "../../forms.server.ts";
import { qrSvg } from "../../lib/qr.server.ts";
import { services } from "../../session.server.ts";
import consoleStyles from "../../styles/console.css?url";
import appStyles from "../../app.css?url";
import type { Route } from "./+types/enrol";

const TOKEN = /^[A-Za-z0-9_-]{43}$/u;

const NO_STORE = { "Cache-Control": "no-store", "Referrer-Policy": "same-origin" };

async function enrolToken(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Promise<string | null> {
  const value: unknown = await staffCookies(context)
    .enrol.parse(request.headers.get("Cookie"))
    .catch(() => null);
  return typeof value === "string" && TOKEN.test(value) ? value : null;
}

function page(title: string, body: React.ReactNode, status = 200, extra: HeadersInit = {}): Response {
  const html = renderToStaticMarkup(
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} — Coinkeep staff`}</title>
        <link rel="stylesheet" href={appStyles} />
        <link rel="stylesheet" href={consoleStyles} />
      </head>
      <body>
        <main id="main" className="console console-auth">
          <h1>{title}</h1>
          {body}
        </main>
      </body>
    </html>,
  );
  const headers = new Headers({ ...NO_STORE, "Content-Type": "text/html; charset=utf-8" });
  for (const [k, v] of new Headers(extra)) headers.append(k, v);
  return new Response(`<!DOCTYPE html>${html}`, { status, headers });
}

const DEAD: Record<Exclude<EnrolmentView, { ok: true }>["reason"], string> = {
  unknown: "This enrolment link is not valid. Ask an admin for a new one.",
  used: "This enrolment link has been used already. Sign in, or ask an admin for a new link.",
  expired: "This enrolment link has expired (links are valid for 24 hours). Ask an admin for a new one.",
};

function deadLink(reason: keyof typeof DEAD, status = 410): Response {
  return page(
    "Enrolment link not usable",
    <>
      <p role="alert">{DEAD[reason]}</p>
      <p>
        <a href="/ops/login">Staff sign-in</a>
      </p>
    </>,
    status,
  );
}

interface FormState {
  errors?: Partial<Record<"password" | "confirmPassword" | "code" | "form", string>>;
}

async function enrolPage(
  request: Request,
  context: Readonly<RouterContextProvider>,
  view: Extract<EnrolmentView, { ok: true }>,
  state: FormState = {},
  status = 200,
): Promise<Response> {
  const [token, csrfCookie] = await csrfFor(services(context)).commitToken(request);
  const qr = qrSvg(view.otpauthUri, { secret: true });
  const error = (field: keyof NonNullable<FormState["errors"]>) => {
    const text = state.errors?.[field];
    return text ? (
      <div id={`enrol-${field}-error`} className="field-errors" role="alert">
        <p>{text}</p>
      </div>
    ) : null;
  };
  const described = (field: "password" | "confirmPassword" | "code") =>
    state.errors?.[field] ? { "aria-invalid": true, "aria-describedby": `enrol-${field}-error` } : {};
  const grouped = view.secret.match(/.{1,4}/gu)?.join(" ") ?? view.secret;
  return page(
    "Set up your staff account",
    <>
      <p>
        You are enrolling <strong>{view.email}</strong> with the roles {view.roles.join(", ")}.
      </p>
      <h2>1. Add Coinkeep staff to your authenticator app</h2>
      <p>
        Scan this QR code with an authenticator app (for example Aegis, Google Authenticator or 1Password):
      </p>
      <div className="console-qr">
        <svg
          viewBox={`0 0 ${qr.size} ${qr.size}`}
          role="img"
          aria-label="QR code of your authenticator secret"
        >
          <path d={qr.path} />
        </svg>
      </div>
      <p>
        Or type this key into the app (time-based, 6 digits, 30 seconds):{" "}
        <code className="mono" id="totp-secret">
          {grouped}
        </code>
      </p>
      <h2>2. Choose a password and confirm a code</h2>
      <form method="post" action="/ops/enrol" noValidate>
        <input type="hidden" name="csrf" value={maskToken(token)} />
        {error("form")}
        <div className="field">
          <label htmlFor="enrol-password">Password (at least 12 characters)</label>
          <input
            id="enrol-password"
            name="password"
            type="password"
            autoComplete="new-password"
            {...described("password")}
          />
          {error("password")}
        </div>
        <div className="field">
          <label htmlFor="enrol-confirmPassword">Confirm password</label>
          <input
            id="enrol-confirmPassword"
            name="confirmPassword"
            type="password"
            autoComplete="new-password"
            {...described("confirmPassword")}
          />
          {error("confirmPassword")}
        </div>
        <div className="field">
          <label htmlFor="enrol-code">The 6-digit code your app shows now</label>
          <input
            id="enrol-code"
            name="code"
            type="text"
            inputMode="numeric"
            autoComplete="one-time-code"
            {...described("code")}
          />
          {error("code")}
        </div>
        <button type="submit" className="button button-primary">
          Finish enrolment
        </button>
      </form>
    </>,
    status,
    csrfCookie ? { "Set-Cookie": csrfCookie } : {},
  );
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const console = consoleOf(context);
  const fromLink = new URL(request.url).searchParams.get("token");
  if (fromLink !== null) {
    // Out of the address bar at once: into a cookie for this browser, valid an hour.
    if (!TOKEN.test(fromLink)) return deadLink("unknown", 404);
    const cookie = await staffCookies(context).enrol.serialize(fromLink, { maxAge: 3600 });
    return redirect("/ops/enrol", { headers: { ...NO_STORE, "Set-Cookie": cookie } });
  }
  const token = await enrolToken(request, context);
  if (token === null) return deadLink("unknown", 404);
  const view = await console.openEnrolment(token);
  if (!view.ok) return deadLink(view.reason, view.reason === "unknown" ? 404 : 410);
  return enrolPage(request, context, view);
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const console = consoleOf(context);
  const token = await enrolToken(request, context);
  if (token === null) return deadLink("unknown", 404);
  const view = await console.openEnrolment(token);
  if (!view.ok) return deadLink(view.reason, view.reason === "unknown" ? 404 : 410);
  const parsed = enrolSchema.safeParse(Object.fromEntries(formData));
  if (!parsed.success) {
    const errors: NonNullable<FormState["errors"]> = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if ((field === "password" || field === "confirmPassword" || field === "code") && !errors[field]) {
        errors[field] = issue.message;
      }
    }
    return enrolPage(request, context, view, { errors }, 400);
  }
  const done = await console.completeEnrolment({ token, ...parsed.data });
  if (!done.ok) {
    if (done.reason === "password")
      return enrolPage(request, context, view, { errors: { password: done.message } }, 400);
    if (done.reason === "code") {
      return enrolPage(
        request,
        context,
        view,
        { errors: { code: "That code is not right. Check the app's clock and enter the current code." } },
        400,
      );
    }
    return deadLink(done.reason, 410);
  }
  const clear = await staffCookies(context).enrol.serialize("", { maxAge: 0 });
  return page(
    "You are enrolled",
    <>
      <p role="status">
        {done.email} can now sign in with the password and a code from the authenticator app.
      </p>
      <h2>Your recovery codes</h2>
      <p>
        Each works once in place of a code if you lose your authenticator. Keep them somewhere safe and
        private: they are shown only now.
      </p>
      <ul className="console-codes" aria-label="Recovery codes">
        {done.recoveryCodes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <p>
        <a href="/ops/login">Go to staff sign-in</a>
      </p>
    </>,
    200,
    { "Set-Cookie": clear },
  );
}
