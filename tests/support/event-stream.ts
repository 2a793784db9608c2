// A signed-in browser's event stream (`GET /events`, record 033) as the tests
// hold one: opened with a session cookie on a host's port, every event it
// receives kept in order, and `next` to wait for one.
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from "node:http";
import { eventReader, type ServerEvent } from "../../scripts/event-stream.ts";

export interface OpenEventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every event received so far, in order. */
  events: ServerEvent[];
  /** Settles when the server ends the stream or the connection goes. */
  ended: Promise<void>;
  /** The first event of that name at or after index `from`; rejects after `ms` (default: the stream's). */
  next(event: string, from?: number, ms?: number): Promise<ServerEvent>;
  close(): void;
}

/** Opens `/events` on 127.0.0.1:`port` with `cookie`; `waitMs`: how long `next` waits by default. */
export function openEventStream(
  port: number,
  cookie: string,
  { waitMs = 10_000 }: { waitMs?: number } = {},
): Promise<OpenEventStream> {
  return new Promise((resolve, reject) => {
    const events: ServerEvent[] = [];
    const waiters = new Set<() => void>();
    const req: ClientRequest = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/events",
        headers: { accept: "text/event-stream", cookie },
        agent: false,
      },
      (res) => {
        const ended = new Promise<void>((done) => {
          res.on("end", () => done());
          res.on("close", () => done());
          res.on("error", () => done());
        });
        res.setEncoding("utf8");
        res.on(
          "data",
          eventReader((received) => {
            events.push(received);
            for (const wake of Array.from(waiters)) wake();
          }),
        );
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          ended,
          next(event, from = 0, ms = waitMs) {
            return new Promise((found, fail) => {
              const look = () => {
                const hit = events.slice(from).find((e) => e.event === event);
                if (!hit) return false;
                waiters.delete(look);
                clearTimeout(timer);
                found(hit);
                return true;
              };
              const timer = setTimeout(() => {
                waiters.delete(look);
                fail(
                  new Error(
                    `no "${event}" event within ${ms} ms; got ${events.map((e) => e.event).join(", ")}`,
                  ),
                );
              }, ms);
              if (!look()) waiters.add(look);
            });
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
