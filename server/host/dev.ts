// `npm run dev`: the same host as `npm start` (edge checks, security headers,
// the API and prices feeds in-process, sessions, the embedded database), with
// the web tier taken from Vite instead of the production build. Vite runs in
// middleware mode inside the host: it serves app/'s modules and the HMR socket
// on the host's own port, and each page request renders with Vite's current
// server build, so an edit of app/ shows on the next request (and in the open
// page through hot reload) without a restart. The backend and the host itself
// are loaded once: an edit of server/ or common/ needs a restart (`node
// --watch` in the npm script does it). See record 031.
import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerBuild } from "react-router";
import { createServer as createViteServer, isRunnableDevEnvironment, type ViteDevServer } from "vite";
import type { Config } from "../config.ts";
import { contentSecurityPolicy } from "./edge.ts";
import { main } from "./host.ts";
import type { WebTierSource } from "./web-tier.ts";

const root = path.resolve(import.meta.dirname, "../..");
// React Router's virtual module: the server build of app/ as Vite compiles it now.
const SERVER_BUILD = "virtual:react-router/server-build";

/**
 * Development only, one loosening (record 031): inline styles, for Vite's error
 * overlay, which draws itself with a <style> element that carries no nonce.
 * Pages and hot reload need nothing more than the production policy: scripts
 * carry this response's nonce (React Router puts it on its dev scripts too),
 * CSS updates swap the <link>, and the HMR socket is same-origin.
 */
export function devContentSecurityPolicy(nonce: string): string {
  return contentSecurityPolicy(nonce).replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");
}

/** The web tier as Vite builds it on demand; created when the host's server exists. */
export function viteWebTier(config: Config): WebTierSource {
  let vite: ViteDevServer | undefined;
  const running = (): ViteDevServer => {
    if (!vite) throw new Error("Vite is not started yet");
    return vite;
  };
  return {
    mode: "development",
    async attach(server) {
      vite = await createViteServer({
        root,
        appType: "custom",
        server: {
          middlewareMode: true,
          // The HMR socket upgrades on the host's port: one port, as in production.
          hmr: { server },
          // The database folder changes all the time and is no source.
          watch: { ignored: [`${config.dataDir}/**`, `${path.join(root, "build")}/**`] },
          // Vite serves (and compiles for the server) any file it is allowed to read, by its
          // path: only what the web tier is made of, so the data folder's secrets and database,
          // server/ and the rest of the checkout are not for the asking (403).
          fs: {
            allow: ["app", "common", "public", "node_modules"].map((dir) => path.join(root, dir)),
            deny: [
              ".env",
              ".env.*",
              "*.{crt,pem,key,p12,pfx,cer,der}",
              ".npmrc",
              "**/.git/**",
              `${config.dataDir}/**`,
            ],
          },
        },
      });
    },
    async build() {
      const ssr = running().environments.ssr;
      if (!isRunnableDevEnvironment(ssr)) throw new Error("Vite's ssr environment cannot run modules");
      // The module runner keeps what did not change and re-runs what an edit invalidated.
      return (await ssr.runner.import(SERVER_BUILD)) as ServerBuild;
    },
    assets(req: IncomingMessage, res: ServerResponse, _pathname: string, next: () => void) {
      running().middlewares(req, res, (error?: unknown) => {
        if (error === undefined) return next();
        // Vite has logged it; the page shows only the status.
        res.statusCode = 500;
        res.end();
      });
    },
    devCsp: devContentSecurityPolicy,
    async close() {
      await vite?.close();
    },
  };
}

if (import.meta.main) {
  // The environment as given, with dev's defaults: a data folder of its own (a dev
  // run never opens `npm start`'s ./data) and one process (Vite lives in it).
  await main({
    env: { ...process.env, DATA_DIR: process.env.DATA_DIR || "./data-dev", WORKERS: "1" },
    web: async (config) => viteWebTier(config),
  });
}
