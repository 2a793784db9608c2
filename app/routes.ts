import { index, layout, route, type RouteConfig } from "@react-router/dev/routes";

export default [
  layout("routes/public-layout.tsx", [
    index("routes/landing.tsx"),
    route("login", "routes/login.tsx"),
    route("create-wallet", "routes/create-wallet.tsx"),
    route("restore-wallet", "routes/restore-wallet.tsx"),
  ]),
  route("fast-login", "routes/fast-login.tsx"),
  layout("routes/protected-layout.tsx", [
    route("home", "routes/home.tsx"),
    route("wallet/:ticker", "routes/wallet.tsx"),
    route("history", "routes/history.tsx"),
  ]),
  route("currency", "routes/currency.tsx"),
  route("unread-count", "routes/unread-count.tsx"),
  route("logout", "routes/logout.tsx"),
  route("*", "routes/catch-all.tsx"),
] satisfies RouteConfig;
