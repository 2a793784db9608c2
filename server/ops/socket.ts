// The operator socket's protocol and its client. The embedded database (PGlite) serves one
// process, so while the server holds it, `npm run ops -- …` hands the command to the server
// through a Unix socket in the data folder: POST /run with {"argv": [...]}, answered with the
// command's exit code and output (OpsResult). The server's side is server/host/ops-socket.ts.
import { existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import path from "node:path";

/** A command's outcome, as the CLI would have printed it. */
export interface OpsResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function opsSocketPath(dataDir: string): string {
  return path.join(dataDir, "ops.sock");
}

/**
 * Runs a command through a running server's socket. Undefined when no server
 * is listening there (no socket file, or a stale one).
 */
export function callOpsSocket(socketPath: string, argv: string[]): Promise<OpsResult | undefined> {
  if (!existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { socketPath, path: "/run", method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as OpsResult);
          } catch (error) {
            reject(error instanceof Error ? error : new Error("bad answer from the server"));
          }
        });
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" || error.code === "ENOENT") resolve(undefined);
      else reject(error);
    });
    req.end(JSON.stringify({ argv }));
  });
}
