// A real HTTP server on 127.0.0.1 for a test: the other end of a client, an
// upstream that never answers, the API over a socket.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

export interface Served {
  server: Server;
  port: number;
  /** http://127.0.0.1:port */
  base: string;
  /** Drops the open connections and stops listening. */
  close(): Promise<void>;
}

/** Serves the listener on an ephemeral port. */
export async function serve(listener: RequestListener): Promise<Served> {
  const server = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    base: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** In the enclosing describe: serve, each server closed after its test. */
export function serveEach(): (listener: RequestListener) => Promise<Served> {
  const open: Served[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((served) => served.close()));
  });
  return async (listener) => {
    const served = await serve(listener);
    open.push(served);
    return served;
  };
}
