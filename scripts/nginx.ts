// nginx in front of several hosts (record 051), as the README's "Running more than one host"
// sets it up: one `upstream` over the hosts (round robin), HTTP/1.1 with keep-alive to them,
// the event stream unbuffered and read for longer than its 25 s heartbeat. It runs from its
// own config and prefix in a temp folder, in the foreground, as a child of this process
// (never as a service). Used by tests/backend/two-hosts.test.ts and scripts/bench/hosts.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";

export interface NginxOptions {
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** The hosts' ports (127.0.0.1). */
  upstreams: number[];
  /**
   * Connections per nginx worker (a proxied request holds two: the client's and the host's);
   * default 1024. Keep it under the process's open-files limit (`ulimit -Hn`).
   */
  workerConnections?: number;
  /** nginx worker processes; default 1. */
  workers?: number;
}

export interface RunningNginx {
  port: number;
  base: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startNginx(options: NginxOptions): Promise<RunningNginx> {
  const dir = mkdtempSync(path.join(tmpdir(), "coinkeep-nginx-"));
  for (const sub of ["logs", "tmp"]) mkdirSync(path.join(dir, sub), { recursive: true });
  const connections = options.workerConnections ?? 1024;
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes ${options.workers ?? 1};
worker_rlimit_nofile ${connections + 64};
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections ${connections}; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  upstream coinkeep {
${options.upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=30s;`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${options.port} backlog=4096${(options.workers ?? 1) > 1 ? " reuseport" : ""};
    location / {
      proxy_pass http://coinkeep;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # The event stream: nothing buffered, and read for longer than its 25 s heartbeat.
      proxy_buffering off;
      proxy_read_timeout 60s;
      # Which host answered (tests read it; not needed in production).
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ["-p", dir, "-c", conf, "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGQUIT");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${options.port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      const log = existsSync(path.join(dir, "logs/error.log"))
        ? readFileSync(path.join(dir, "logs/error.log"), "utf8")
        : "";
      await stop();
      throw new Error(`nginx exited: ${stderr}${log}`);
    }
    try {
      const answer = await fetch(`${base}/healthz`);
      await answer.arrayBuffer();
      if (answer.status === 200) break;
    } catch {
      // not up yet
    }
    if (i > 200) {
      await stop();
      throw new Error("nginx did not answer /healthz");
    }
    await sleep(50);
  }
  return { port: options.port, base, pid: child.pid ?? -1, stop };
}
