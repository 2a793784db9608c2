import { useEffect } from "react";
import {
  data,
  isRouteErrorResponse,
  Link,
  Links,
  Meta,
  Outlet,
  Scripts,
  useLocation,
  useNavigation,
  type LinksFunction,
} from "react-router";
import { AuthenticityTokenProvider } from "remix-utils/csrf/react";
import type { Route } from "./+types/root";
import stylesheet from "./app.css?url";
import { HoneypotProvider } from "./components/honeypot.tsx";
import { Toasts, type Toast } from "./components/toasts.tsx";
import { csrfFor, honeypotFor, maskToken } from "./forms.server.ts";
import { commitSession, getSession, services, type FlashData } from "./session.server.ts";

// zod reaches the browser only with a form's checks, configured there (app/forms/z.ts).

export const links: LinksFunction = () => [
  { rel: "stylesheet", href: stylesheet },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

export async function loader({ request, context }: Route.LoaderArgs) {
  const s = services(context);
  const headers = new Headers();
  const [csrfToken, csrfCookie] = await csrfFor(s).commitToken(request);
  if (csrfCookie) headers.append("Set-Cookie", csrfCookie);
  const honeypotInputProps = await honeypotFor(s).getInputProps();

  // A flash notice (a toast, in the spec) is shown once, on the next page. Its
  // id makes the same text twice in a row two toasts.
  let flash: Toast | undefined;
  // A refused no-script form's reply, for the popup or modal it came from (record 037).
  let formReply: FlashData["formReply"] | undefined;
  if (request.headers.get("Cookie")?.includes("ck_session")) {
    const session = await getSession(request, context);
    const notice = session.get("notice");
    formReply = session.get("formReply");
    if (notice) flash = { id: crypto.randomUUID(), message: notice, kind: "success" };
    if (notice || formReply) headers.append("Set-Cookie", await commitSession(session, context));
  }
  // Masked afresh for every response (record 035): the page may be compressed.
  return data({ csrfToken: maskToken(csrfToken), honeypotInputProps, flash, formReply }, { headers });
}

export function Layout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
      </head>
      <body>
        {children}
        <Scripts />
      </body>
    </html>
  );
}

/** A full-screen loader while a navigation or submission is under way (scripts only). */
function GlobalLoader() {
  const navigation = useNavigation();
  if (navigation.state === "idle") return null;
  return (
    <div className="global-loader" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span className="visually-hidden">Loading…</span>
    </div>
  );
}

/** Scrolls to the top on every path change (smoothly, unless motion is reduced). */
function ScrollToTop() {
  const { pathname } = useLocation();
  // The path is the trigger, not an input: every change of it scrolls.
  // oxlint-disable-next-line react/exhaustive-deps
  useEffect(() => {
    const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    window.scrollTo({ top: 0, behavior: reduce ? "auto" : "smooth" });
  }, [pathname]);
  return null;
}

function Hydrated() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}

export default function App({ loaderData }: Route.ComponentProps) {
  return (
    <AuthenticityTokenProvider token={loaderData.csrfToken}>
      <HoneypotProvider {...loaderData.honeypotInputProps}>
        <a className="skip-link" href="#main">
          Skip to content
        </a>{" "}
        <Outlet />
        <Toasts flash={loaderData.flash} />
        <GlobalLoader />
        <ScrollToTop />
        <Hydrated />
      </HoneypotProvider>
    </AuthenticityTokenProvider>
  );
}

export function meta() {
  return [{ title: "Coinkeep" }];
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  let title = "Something went wrong";
  let detail = "An unexpected error occurred. Please try again.";
  if (isRouteErrorResponse(error)) {
    title = error.status === 404 ? "Page not found" : `Error ${error.status}`;
    if (typeof error.data === "string" && error.status < 500) detail = error.data;
  }
  return (
    <main id="main" className="error-page">
      <h1>{title}</h1>
      <p>{detail}</p>
      <p>
        <Link to="/">Back to Coinkeep</Link>
      </p>
    </main>
  );
}
