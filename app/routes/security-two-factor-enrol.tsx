// Turning two-factor on (issue 27, record 048), as plain HTML pages with no
// script in either mode, so the new secret and the recovery codes never sit in
// a page's hydration data: 1. the password; 2. the QR code (drawn on the
// server) and the secret as text, and the first code; 3. the ten recovery
// codes, shown once. The secret waits in the sealed session row between steps
// 2 and 3 (ENROLMENT_MINUTES); nothing is stored in the account until a right
// code comes back.
import type { ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { redirect, type RouterContextProvider } from "react-router";
import { backend, limitedAnswer } from "../backend.server.ts";
import { enrolCodeSchema, enrolPasswordSchema } from "../forms/two-factor.ts";
import { csrfFor, maskToken, readForm } from "../forms.server.ts";
import { qrSvg } from "../lib/qr.server.ts";
import { commitRotatedSession, requireUser, services, type AppSession } from "../session.server.ts";
import appStyles from "../app.css?url";
import type { Route } from "./+types/security-two-factor-enrol";

const PATH = "/security/two-factor/enrol";
const BACK = "/security/two-factor";
/** How long the secret of a started enrolment waits for its first code. */
const ENROLMENT_MINUTES = 15;
const NO_STORE = { "Cache-Control": "no-store", "Referrer-Policy": "same-origin" };

type Errors = Partial<Record<"password" | "code" | "form", string>>;

function page(title: string, body: ReactNode, status = 200, extra: Headers = new Headers()): Response {
  const html = renderToStaticMarkup(
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} — Coinkeep`}</title>
        <link rel="stylesheet" href={appStyles} />
      </head>
      <body>
        <main id="main" className="plain-page">
          <p>
            <a href="/home">Coinkeep</a> › <a href="/security">Security</a> ›{" "}
            <a href={BACK}>Two-factor authentication</a>
          </p>
          <section className="card security-card" aria-labelledby="enrol-title">
            <h1 id="enrol-title">{title}</h1>
            {body}
          </section>
        </main>
      </body>
    </html>,
  );
  const headers = new Headers({ ...NO_STORE, "Content-Type": "text/html; charset=utf-8" });
  for (const [k, v] of extra) headers.append(k, v);
  return new Response(`<!DOCTYPE html>${html}`, { status, headers });
}

function errorOf(errors: Errors, field: keyof Errors) {
  const text = errors[field];
  return text ? (
    <div id={`enrol-${field}-error`} className="field-errors" role="alert">
      <p>{text}</p>
    </div>
  ) : null;
}

function described(errors: Errors, field: "password" | "code") {
  return errors[field] ? { "aria-invalid": true, "aria-describedby": `enrol-${field}-error` } : {};
}

async function csrfField(request: Request, context: Readonly<RouterContextProvider>) {
  const [token, cookie] = await csrfFor(services(context)).commitToken(request);
  const headers = new Headers();
  if (cookie) headers.append("Set-Cookie", cookie);
  return { field: <input type="hidden" name="csrf" value={maskToken(token)} />, headers };
}

async function passwordPage(
  request: Request,
  context: Readonly<RouterContextProvider>,
  errors: Errors = {},
  status = 200,
  extra: Headers = new Headers(),
) {
  const csrf = await csrfField(request, context);
  for (const [k, v] of extra) csrf.headers.append(k, v);
  return page(
    "Turn on two-factor authentication",
    <>
      <p>
        With two-factor authentication on, signing in, sending coins and showing your 12 word security phrase
        also ask for a code from an authenticator app on your phone (for example Aegis, Google Authenticator
        or 1Password). To begin, enter your password.
      </p>
      <form method="post" action={PATH} noValidate>
        {csrf.field}
        <input type="hidden" name="intent" value="begin" />
        {errorOf(errors, "form")}
        <div className="field">
          <label htmlFor="enrol-password">Password</label>
          <input
            id="enrol-password"
            name="password"
            type="password"
            autoComplete="current-password"
            autoFocus
            {...described(errors, "password")}
          />
          {errorOf(errors, "password")}
        </div>
        <div className="actions">
          <button type="submit" className="button button-primary">
            Next
          </button>{" "}
          <a href={BACK} className="button button-secondary">
            Cancel
          </a>
        </div>
      </form>
    </>,
    status,
    csrf.headers,
  );
}

async function codePage(
  request: Request,
  context: Readonly<RouterContextProvider>,
  enrolment: { secret: string; uri: string },
  errors: Errors = {},
  status = 200,
  extra: Headers = new Headers(),
) {
  const csrf = await csrfField(request, context);
  for (const [k, v] of extra) csrf.headers.append(k, v);
  const qr = qrSvg(enrolment.uri, { secret: true });
  const grouped = enrolment.secret.match(/.{1,4}/gu)?.join(" ") ?? enrolment.secret;
  return page(
    "Turn on two-factor authentication",
    <>
      <h2>1. Add Coinkeep to your authenticator app</h2>
      <p>Scan this QR code with your authenticator app:</p>
      <div className="qr-code">
        <svg viewBox={`0 0 ${qr.size} ${qr.size}`} role="img" aria-label="QR code of your authenticator key">
          <path d={qr.path} />
        </svg>
      </div>
      <p>
        Or type this key into the app (time-based, 6 digits, every 30 seconds):{" "}
        <code className="mono" id="totp-secret">
          {grouped}
        </code>
      </p>
      <h2>2. Enter the code the app shows</h2>
      <form method="post" action={PATH} noValidate>
        {csrf.field}
        <input type="hidden" name="intent" value="enable" />
        {errorOf(errors, "form")}
        <div className="field">
          <label htmlFor="enrol-code">6-digit code</label>
          <input
            id="enrol-code"
            name="code"
            type="text"
            inputMode="numeric"
            autoComplete="one-time-code"
            autoFocus={Boolean(errors.code) || undefined}
            {...described(errors, "code")}
          />
          {errorOf(errors, "code")}
        </div>
        <div className="actions">
          <button type="submit" className="button button-primary">
            Turn on
          </button>{" "}
          <a href={BACK} className="button button-secondary">
            Cancel
          </a>
        </div>
      </form>
    </>,
    status,
    csrf.headers,
  );
}

function liveEnrolment(session: AppSession) {
  const enrolment = session.get("enrolment");
  return enrolment && enrolment.until > Date.now() ? enrolment : undefined;
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { session, user } = await requireUser(request, context);
  const status = await backend(context).twoFactorStatus({ email: user.email, twelveWords: user.words });
  if (status.ok && status.data.enabled) throw redirect(BACK);
  const enrolment = liveEnrolment(session);
  if (enrolment) return codePage(request, context, enrolment);
  return passwordPage(request, context);
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const api = backend(context);
  const who = { email: user.email, twelveWords: user.words };
  const intent = formData.get("intent");

  if (intent === "enable") {
    const enrolment = liveEnrolment(session);
    // The secret's time ran out (or another tab finished): start again.
    if (!enrolment)
      return passwordPage(request, context, { form: "That took too long. Please start again." }, 400);
    const parsed = enrolCodeSchema.safeParse(Object.fromEntries(formData));
    if (!parsed.success) {
      return codePage(request, context, enrolment, { code: parsed.error.issues[0]?.message ?? "" }, 400);
    }
    const enabled = await api.twoFactorEnable({
      ...who,
      secret: enrolment.secret,
      twoFactorCode: parsed.data.code,
    });
    if (!enabled.ok) {
      if (enabled.kind === "rejected" && enabled.code === "two_factor_already_on") throw redirect(BACK);
      const text =
        enabled.kind === "rejected" && enabled.code === "two_factor_invalid"
          ? "That code is not right. Check that your phone's time is correct and enter the code the app shows now."
          : "Something went wrong!";
      return codePage(request, context, enrolment, { code: text }, enabled.kind === "rejected" ? 400 : 502);
    }
    session.unset("enrolment");
    const headers = new Headers({ "Set-Cookie": await commitRotatedSession(request, session, context) });
    return page(
      "Two-factor authentication is on",
      <>
        <p role="status">
          From now on, signing in, sending coins and showing your phrase ask for a code from your
          authenticator app.
        </p>
        <h2>Your recovery codes</h2>
        <p>
          If you lose your phone, each of these codes works once in place of a code from the app. Write them
          down or print them and keep them somewhere safe and private: they are shown only now.
        </p>
        <ul className="recovery-codes" aria-label="Recovery codes">
          {enabled.data.recovery_codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <p>
          <a href={BACK} className="button button-primary">
            I have saved my recovery codes
          </a>
        </p>
      </>,
      200,
      headers,
    );
  }

  const parsed = enrolPasswordSchema.safeParse(Object.fromEntries(formData));
  if (!parsed.success) {
    return passwordPage(request, context, { password: parsed.error.issues[0]?.message ?? "Required" }, 400);
  }
  const begun = await api.twoFactorBegin({ ...who, password: parsed.data.password });
  if (!begun.ok) {
    const limited = limitedAnswer(begun);
    if (limited)
      return passwordPage(
        request,
        context,
        { form: limited.message },
        limited.status,
        new Headers(limited.headers),
      );
    if (begun.kind === "rejected" && begun.code === "two_factor_already_on") throw redirect(BACK);
    if (begun.kind === "rejected" && begun.code === "wrong_password") {
      return passwordPage(request, context, { password: "Incorrect password" }, 400);
    }
    return passwordPage(request, context, { form: "Something went wrong!" }, 502);
  }
  const enrolment = {
    secret: begun.data.secret,
    uri: begun.data.otpauth_uri,
    until: Date.now() + ENROLMENT_MINUTES * 60_000,
  };
  session.set("enrolment", enrolment);
  // Post, redirect, get: a reload shows the code step again instead of posting the password twice.
  throw redirect(PATH, {
    headers: { ...NO_STORE, "Set-Cookie": await commitRotatedSession(request, session, context) },
  });
}
