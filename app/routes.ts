import { index, layout, prefix, route, type RouteConfig } from "@react-router/dev/routes";

export default [
  layout("routes/public-layout.tsx", [
    index("routes/landing.tsx"),
    route("login", "routes/login.tsx"),
    // Sign-in's code step with two-factor on (issue 27, record 048).
    route("login/code", "routes/login-code.tsx"),
    route("create-wallet", "routes/create-wallet.tsx"),
    route("restore-wallet", "routes/restore-wallet.tsx"),
    route("how-it-works", "routes/how-it-works.tsx"),
    route("cookies", "routes/cookies.tsx"),
    route("terms-and-conditions", "routes/terms-and-conditions.tsx"),
    route("privacy-policy", "routes/privacy-policy.tsx"),
    route("about-us", "routes/about-us.tsx"),
  ]),
  // Form endpoints, not pages: a visit is sent to / (issue 15).
  route("contact", "routes/contact.tsx"),
  route("fast-login", "routes/fast-login.tsx"),
  layout("routes/protected-layout.tsx", [
    route("home", "routes/home.tsx"),
    route("wallet/:ticker", "routes/wallet.tsx"),
    route("history", "routes/history.tsx"),
    route("notifications", "routes/notifications.tsx"),
    route("security", "routes/security.tsx"),
    // Holder security settings (issue 27, record 048).
    // -- two-factor routes
    route("security/two-factor", "routes/security-two-factor.tsx"),
    // -- allowlist routes
    route("security/addresses", "routes/security-addresses.tsx"),
    // -- password and sessions routes
    route("security/sessions", "routes/security-sessions.tsx"),
    route("security/password", "routes/security-password.tsx"),
    // E-mail (issue 28, record 049).
    route("security/email", "routes/security-email.tsx"),
  ]),
  // A "Verify your e-mail" link: signed in or not (record 049).
  route("verify-email", "routes/verify-email.tsx"),
  // Turning two-factor on: plain pages without scripts (the new secret is in no page's data).
  route("security/two-factor/enrol", "routes/security-two-factor-enrol.tsx"),
  route("support", "routes/support.tsx"),
  route("currency", "routes/currency.tsx"),
  // The statement download of /history (issue 28, record 050): a resource route, streamed.
  route("history/statement.csv", "routes/history-statement.ts"),
  route("unread-count", "routes/unread-count.tsx"),
  route("events", "routes/events.ts"),
  route("logout", "routes/logout.tsx"),
  // The staff console (issue 26, record 047): its own cookie, never a holder's session.
  ...prefix("ops", [
    route("enrol", "routes/ops/enrol.tsx"),
    route("login", "routes/ops/login.tsx"),
    route("logout", "routes/ops/logout.tsx"),
    route("events", "routes/ops/events.ts"),
    route("audit.csv", "routes/ops/audit-csv.ts"),
    layout("routes/ops/layout.tsx", [
      index("routes/ops/index.tsx"),
      route("sends", "routes/ops/sends.tsx"),
      route("requests", "routes/ops/requests.tsx"),
      route("messages", "routes/ops/messages.tsx"),
      route("users", "routes/ops/users.tsx"),
      route("users/:id", "routes/ops/user.tsx"),
      route("money", "routes/ops/money.tsx"),
      route("thresholds", "routes/ops/thresholds.tsx"),
      route("audit", "routes/ops/audit.tsx"),
      route("staff", "routes/ops/staff.tsx"),
    ]),
  ]),
  route("*", "routes/catch-all.tsx"),
] satisfies RouteConfig;
