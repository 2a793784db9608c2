// The embedded database (PGlite) serves one process. So that operators can
// run `npm run ops -- …` while the server is up, the server listens on a Unix
// socket in its data folder (mode 0600: only the server's own user can reach
// it, and nothing on the network can) and runs operator commands itself, one
// at a time. This is the server's side; the protocol and the client that the
// command line tries first are server/ops/socket.ts.
import { chmodSync, existsSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { callOpsSocket, type OpsResult } from "../ops/socket.ts";

export type OpsRunner = (argv: string[]) => Promise<OpsResult>;

const MAX_REQUEST_BYTES = 64 * 1024;

/** Serves operator commands on the socket; commands run one after another. */
export async function serveOpsSocket(socketPath: string, run: OpsRunner): Promise<Server> {
  let queue: Promise<unknown> = Promise.resolve();
  const server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/run") return reply(404, { error: "not found" });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        reply(413, { error: "too large" });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      let argv: unknown;
      try {
        argv = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { argv?: unknown }).argv;
      } catch {
        return reply(400, { error: "malformed request" });
      }
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === "string")) {
        return reply(400, { error: "argv must be a list of strings" });
      }
      const job = queue.then(() => run(argv));
      queue = job.catch(() => {});
      job.then(
        (result) => reply(200, result),
        (error: unknown) =>
          reply(200, {
            code: 1,
            stdout: "",
            stderr: `error: ${error instanceof Error ? error.message : "failed"}\n`,
          }),
      );
    });
  });
  // A socket file left by a server that died is removed; a live one is not ours to take.
  if (existsSync(socketPath)) {
    if (await callOpsSocket(socketPath, ["--help"]).catch(() => undefined)) {
      throw new Error(`Another server is using ${path.dirname(socketPath)}.`);
    }
    rmSync(socketPath, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  server.on("close", () => rmSync(socketPath, { force: true }));
  return server;
}
