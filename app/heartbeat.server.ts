// The keep-alive ping of the event streams (record 033; the console's, issue 26). A proxy or
// load balancer closes a stream that stays quiet too long, so a ping comes at least every
// HEARTBEAT_MS. Each stream's first ping falls at a random point within that interval, then
// every HEARTBEAT_MS: streams opened together (a deploy, a reconnect storm, the bench) no
// longer ping in the same instant for as long as they stay open (issue 29).

/** The longest a stream stays quiet: every gap between two pings, and from the opening to the first. */
export const HEARTBEAT_MS = 25_000;

/** The delay of a stream's first ping: in (0, HEARTBEAT_MS], given `random` in [0, 1). */
export function firstHeartbeatMs(random: () => number = Math.random): number {
  return Math.max(1, Math.ceil((1 - random()) * HEARTBEAT_MS));
}

/** Calls `ping` first after a random part of the interval, then every HEARTBEAT_MS; the result stops it. */
export function startHeartbeat(ping: () => void, random: () => number = Math.random): () => void {
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    every = setInterval(ping, HEARTBEAT_MS);
    ping();
  }, firstHeartbeatMs(random));
  return () => {
    clearTimeout(first);
    if (every) clearInterval(every);
  };
}
