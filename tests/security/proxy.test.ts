// TRUST_PROXY with a real nginx from Debian in front of the host (record 014).
// nginx runs from its own config, prefix and port (never as a service), binds
// its upstream connections to 127.0.0.2 and appends the visitor to
// X-Forwarded-For; the test's "visitor" connects from 127.0.0.9. The address
// the host believed is read back where it is recorded: the sender IP of a
// contact message (call 12), listed by the operator command `support --json`.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { raw, sendContact, recordedIps, rawCall } from "./support/http.ts";
import { built, startHost, type RunningHost } from "../../scripts/host.ts";

const NGINX = "/usr/sbin/nginx";
const NGINX_ADDRESS = "127.0.0.2";
const VISITOR = "127.0.0.9";

const skipReason = !existsSync(NGINX)
  ? "nginx is not installed (apt-get install -y nginx; .ci/run installs it)"
  : !built
    ? "no production build (npx react-router build)"
    : undefined;
if (skipReason) console.warn(`proxy.test.ts skipped: ${skipReason}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

interface Nginx {
  stop(): Promise<void>;
}

/** nginx in the foreground with one server block per upstream; resolves once it answers. */
async function startNginx(dir: string, routes: { listen: number; upstream: number }[]): Promise<Nginx> {
  for (const sub of ["logs", "tmp"]) mkdirSync(path.join(dir, sub), { recursive: true });
  const servers = routes
    .map(
      ({ listen, upstream }) => `
    server {
      listen 127.0.0.1:${listen};
      location / {
        proxy_pass http://127.0.0.1:${upstream};
        proxy_bind ${NGINX_ADDRESS};
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        # TLS would end here in production; the host must learn it from this header.
        proxy_set_header X-Forwarded-Proto https;
      }
    }`,
    )
    .join("\n");
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
${servers}
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ["-p", dir, "-c", conf, "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = routes[0];
  if (!first) throw new Error("no route");
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      const log = existsSync(path.join(dir, "logs/error.log"))
        ? readFileSync(path.join(dir, "logs/error.log"), "utf8")
        : "";
      throw new Error(`nginx exited: ${stderr}${log}`);
    }
    try {
      await raw(first.listen, { path: "/favicon.svg" });
      break;
    } catch (error) {
      if (i > 100) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGQUIT");
        await exited;
      }
    },
  };
}

/** Sends a contact message (call 12) and returns the sender IP the host recorded for it. */
async function recordedSender(port: number, dataDir: string, headers: Record<string, string> = {}) {
  const email = `proxy-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const answer = await sendContact(port, email, { from: VISITOR, headers });
  const [ip] = await recordedIps(dataDir, email);
  return { ip, answer };
}

describe.skipIf(skipReason !== undefined)("behind a real nginx", () => {
  let dir: string;
  let loopbackHost: RunningHost;
  let untrustingHost: RunningHost;
  let exactHost: RunningHost;
  let nginx: Nginx;
  const ports = { loopback: 0, untrusting: 0, exact: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "coinkeep-nginx-"));
    [loopbackHost, untrustingHost, exactHost] = await Promise.all([
      startHost({ env: { TRUST_PROXY: "loopback" } }),
      startHost(),
      startHost({ env: { TRUST_PROXY: NGINX_ADDRESS } }),
    ]);
    ports.loopback = await freePort();
    ports.untrusting = await freePort();
    ports.exact = await freePort();
    nginx = await startNginx(dir, [
      { listen: ports.loopback, upstream: loopbackHost.port },
      { listen: ports.untrusting, upstream: untrustingHost.port },
      { listen: ports.exact, upstream: exactHost.port },
    ]);
  }, 180_000);
  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([loopbackHost?.close(), untrustingHost?.close(), exactHost?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("TRUST_PROXY=loopback: the visitor nginx names is believed, and its https", async () => {
    const { ip, answer } = await recordedSender(ports.loopback, loopbackHost.dataDir);
    expect(ip).toBe(VISITOR);
    expect(answer.headers["strict-transport-security"]).toBe("max-age=63072000; includeSubDomains");
    // Pages through nginx carry the CSP untouched.
    const page = await raw(ports.loopback, { path: "/login", localAddress: VISITOR });
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toMatch(/script-src 'self' 'nonce-/u);
  });

  test("TRUST_PROXY=<nginx's address>: a visitor's spoofed X-Forwarded-For stays to the left, ignored", async () => {
    const { ip } = await recordedSender(ports.exact, exactHost.dataDir, {
      "x-forwarded-for": "6.6.6.6",
    });
    expect(ip).toBe(VISITOR);
  });

  test("TRUST_PROXY off: nginx's X-Forwarded-* are not believed (the peer is recorded, no HSTS)", async () => {
    const { ip, answer } = await recordedSender(ports.untrusting, untrustingHost.dataDir);
    expect(ip).toBe(NGINX_ADDRESS);
    expect(answer.headers["strict-transport-security"]).toBeUndefined();
  });

  test.each([
    ["TRUST_PROXY off: a direct client's spoofed X-Forwarded-For / -Proto are ignored", () => untrustingHost],
    ["a direct client that is not the trusted proxy is not believed either", () => exactHost],
  ])("%s", async (_title, hostOf) => {
    const host = hostOf();
    const { ip, answer } = await recordedSender(host.port, host.dataDir, {
      "x-forwarded-for": "6.6.6.6",
      "x-forwarded-proto": "https",
    });
    expect(ip).toBe(VISITOR);
    expect(answer.headers["strict-transport-security"]).toBeUndefined();
  });

  test("cross-site posts through the proxy are refused too; same-origin ones (https, our Host) pass", async () => {
    const evil = await rawCall(
      ports.loopback,
      "/request-message",
      { email: "a@b.co", comment: "cross-site" },
      { headers: { origin: "https://evil.example" }, from: VISITOR },
    );
    expect(evil.status).toBe(403);
    // The browser's origin is https://<host>; the host learns the https from nginx.
    const own = await rawCall(
      ports.loopback,
      "/request-message",
      { email: "a@b.co", comment: "same origin" },
      { headers: { origin: `https://127.0.0.1:${ports.loopback}` }, from: VISITOR },
    );
    expect(own.status).toBe(200);
  });
});
