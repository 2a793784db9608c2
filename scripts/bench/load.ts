// The capacity benchmark's load generator, run as a child process of run.ts
// (so its CPU is its own and measurable). Open loop: every simulated user's
// requests fire on that user's own schedule (mix.ts, random phase), whether or
// not earlier requests have been answered, over a pool of keep-alive sockets.
// A request's latency runs from the moment it was due, so waiting for a socket
// or for this process counts against the server's figure, never for it.
//
// Messages from the parent: init (base URL, pool size), cookies (appended, one
// per user), run (users, seconds); answers: result.
import http from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { MIX, type SimUser } from "./mix.ts";

export interface LoadInit {
  type: "init";
  base: string;
  sockets: number;
}
export interface LoadCookies {
  type: "cookies";
  cookies: string[];
}
export interface LoadRun {
  type: "run";
  users: number;
  warmupSeconds: number;
  seconds: number;
  /** Give up on the level when this many requests are outstanding (the server has fallen behind). */
  maxOutstanding: number;
  /** The users hold event streams (streams.ts): the entries for pages without one are left out. */
  streams: boolean;
}
export type LoadCommand = LoadInit | LoadCookies | LoadRun;

export interface EntryStats {
  name: string;
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  type: "result";
  users: number;
  seconds: number;
  requests: number;
  perSecond: number;
  errors: Record<string, number>;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  byEntry: EntryStats[];
  /** The level was cut short: the server fell too far behind. */
  overloaded: boolean;
  /** CPU time this process used during the level, in ms. */
  cpuMs: number;
  wallMs: number;
  /**
   * This process's own event-loop delay over the recorded part (and the drain), ms: a
   * generator that lags sends late and reads late, latency the server did not cause.
   */
  lag: { p99: number; max: number };
}

interface Event {
  at: number;
  user: number;
  entry: number;
}

/** A binary min-heap of events by due time. */
class Schedule {
  private items: Event[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): Event | undefined {
    return this.items[0];
  }
  push(event: Event): void {
    const items = this.items;
    items.push(event);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as Event;
      if (p.at <= event.at) break;
      items[i] = p;
      i = parent;
    }
    items[i] = event;
  }
  pop(): Event | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length && (items[right] as Event).at < (items[left] as Event).at ? right : left;
      if ((items[child] as Event).at >= last.at) break;
      items[i] = items[child] as Event;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return Math.round((sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? Number.NaN) * 10) / 10;
}

/** A delay histogram's nanoseconds as ms (0.1); 0 when it recorded nothing. */
function lagMs(ns: number): number {
  return Number.isFinite(ns) ? Math.round(ns / 100_000) / 10 : 0;
}

function nextDelayMs(entry: number, first: boolean): number {
  const schedule = MIX[entry]?.schedule;
  if (!schedule) throw new Error(`no mix entry ${entry}`);
  if ("every" in schedule) return (first ? Math.random() : 1) * schedule.every * 1000;
  return -Math.log(1 - Math.random()) * schedule.meanEvery * 1000;
}

let base = "";
let agent: http.Agent | undefined;
let sockets = 256;
const cookies: string[] = [];
const users: SimUser[] = [];

function send(path: string, cookie: string, document: boolean, done: (error: string | null) => void): void {
  let finished = false;
  const finish = (error: string | null) => {
    if (finished) return;
    finished = true;
    done(error);
  };
  const request = http.request(
    `${base}${path}`,
    {
      agent,
      headers: {
        cookie,
        accept: document ? "text/html,application/xhtml+xml" : "*/*",
        "accept-encoding": "identity",
        "sec-fetch-site": "same-origin",
        "sec-fetch-mode": document ? "navigate" : "cors",
      },
      timeout: 10_000,
    },
    (response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      response.once("end", () => finish(status === 200 ? null : String(status)));
      response.once("error", (error: NodeJS.ErrnoException) => finish(error.code ?? "response error"));
    },
  );
  request.once("timeout", () => request.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
  request.once("error", (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
  request.end();
}

async function runLevel(command: LoadRun): Promise<LoadResult> {
  if (command.users > cookies.length)
    throw new Error(`only ${cookies.length} sessions for ${command.users} users`);
  agent?.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  while (users.length < command.users) users.push({ page: "/home" });

  const schedule = new Schedule();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const recordFrom = started + command.warmupSeconds * 1000;
  const lagFrom = setTimeout(() => lag.reset(), command.warmupSeconds * 1000);
  const stopAt = recordFrom + command.seconds * 1000;
  for (let user = 0; user < command.users; user++) {
    for (let entry = 0; entry < MIX.length; entry++) {
      if (command.streams && MIX[entry]?.withoutStream) continue;
      schedule.push({ at: started + nextDelayMs(entry, true), user, entry });
    }
  }

  const latencies: number[] = [];
  const byEntry = MIX.map(() => ({ latencies: [] as number[], errors: 0 }));
  const errors: Record<string, number> = {};
  let outstanding = 0;
  let overloaded = false;

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (let next = schedule.peek(); next && next.at <= now && next.at < stopAt; next = schedule.peek()) {
        schedule.pop();
        const entry = MIX[next.entry];
        const user = users[next.user];
        const cookie = cookies[next.user];
        if (!entry || !user || cookie === undefined) continue;
        const due = next.at;
        const recorded = due >= recordFrom;
        const stats = byEntry[next.entry];
        outstanding++;
        send(entry.url(user, Math.random), cookie, entry.document === true, (error) => {
          outstanding--;
          if (!recorded || !stats) return;
          const ms = performance.now() - due;
          latencies.push(ms);
          stats.latencies.push(ms);
          if (error !== null) {
            errors[error] = (errors[error] ?? 0) + 1;
            stats.errors++;
          }
        });
        schedule.push({ at: due + nextDelayMs(next.entry, false), user: next.user, entry: next.entry });
      }
      if (outstanding > command.maxOutstanding) overloaded = true;
      const first = schedule.peek();
      if (overloaded || !first || first.at >= stopAt) {
        resolve();
        return;
      }
      setTimeout(tick, Math.max(0, Math.min(5, first.at - performance.now())));
    };
    tick();
  });

  // Let the answers still on their way arrive (at most 10 s, the request timeout).
  const drainUntil = performance.now() + 11_000;
  for (;;) {
    if (outstanding === 0 || overloaded || performance.now() >= drainUntil) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (outstanding > 0) {
    errors.unanswered = (errors.unanswered ?? 0) + outstanding;
    agent.destroy();
    agent = undefined;
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  clearTimeout(lagFrom);
  lag.disable();
  const sorted = Float64Array.from(latencies).toSorted();
  const measuredSeconds = Math.max(0.001, (Math.min(performance.now(), stopAt) - recordFrom) / 1000);
  return {
    type: "result",
    users: command.users,
    seconds: Math.round(measuredSeconds * 10) / 10,
    requests: latencies.length,
    perSecond: Math.round(latencies.length / measuredSeconds),
    errors,
    latencyMs: { p50: pct(sorted, 50), p95: pct(sorted, 95), p99: pct(sorted, 99), max: pct(sorted, 100) },
    byEntry: byEntry.map((stats, i) => {
      const s = Float64Array.from(stats.latencies).toSorted();
      return {
        name: MIX[i]?.name ?? String(i),
        requests: s.length,
        errors: stats.errors,
        p50: pct(s, 50),
        p99: pct(s, 99),
        max: pct(s, 100),
      };
    }),
    overloaded,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    wallMs: Math.round(wallMs),
    lag: { p99: lagMs(lag.percentile(99)), max: lagMs(lag.max) },
  };
}

process.on("message", (message: LoadCommand) => {
  if (message.type === "init") {
    base = message.base;
    sockets = message.sockets;
  } else if (message.type === "cookies") {
    cookies.push(...message.cookies);
  } else if (message.type === "run") {
    runLevel(message).then(
      (result) => process.send?.(result),
      (error: unknown) => process.send?.({ type: "error", message: String(error) }),
    );
  }
});
process.on("disconnect", () => process.exit(0));
