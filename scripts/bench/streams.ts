// The capacity benchmark's event-stream holder, a child process of capacity.ts
// (several of them: one process can hold only so many sockets). It keeps one
// open GET /events per simulated user for the whole level, as the real client
// does with scripts on (record 033), reacts to a "messages" event as the
// client does (one fetch of the unread count; a change for everyone within
// 3 s at random), and measures each event's delivery: from the moment the
// harness started the change that raised it to the moment it arrived here.
//
// Messages from the parent: init, cookies (user index → cookie), hold (the
// users whose streams are open), expect (a change to one account is under
// way), record (start/stop); answers: held, recorded.
import http from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { eventReader } from "../event-stream.ts";

export interface StreamsInit {
  type: "init";
  base: string;
  /** User i belongs to account i mod accounts (the users share the seeded accounts). */
  accounts: number;
}
export interface StreamsCookies {
  type: "cookies";
  entries: Array<[number, string]>;
}
export interface StreamsHold {
  type: "hold";
  from: number;
  to: number;
}
export interface StreamsExpect {
  type: "expect";
  account: number;
  /** Date.now() when the change was started. */
  at: number;
}
export interface StreamsRecord {
  type: "record";
  on: boolean;
}
export type StreamsCommand = StreamsInit | StreamsCookies | StreamsHold | StreamsExpect | StreamsRecord;

export interface StreamsHeld {
  type: "held";
  open: number;
  /** Streams this hold opened (the others were open already). */
  opened: number;
  refused: number;
  ms: number;
}
export interface StreamsRecorded {
  type: "recorded";
  /** Delivery delays of the events that arrived, in ms. */
  deliveries: number[];
  /** Events that arrived more than `lateMs` after their change started, or never. */
  late: number;
  missing: number;
  /** The client's reaction: fetches of the unread count. */
  fetches: number[];
  fetchErrors: Record<string, number>;
  /** Streams that ended or failed during the recording. */
  dropped: number;
  /** This process's own event-loop delay during the recording, ms (it lagging delays events the server sent in time). */
  lag: { p99: number; max: number };
}

/** An event later than this counts as an error (the limit). */
const LATE_MS = 2_000;
const EVERYONE_SPREAD_MS = 3_000;

let base = "";
let accounts = 200;
const cookies = new Map<number, string>();
const open = new Map<number, http.ClientRequest>();
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Expectation {
  at: number;
  pending: Set<number>;
}
const expected = new Map<number, Expectation[]>();
/** Events that arrived before their expectation (the two travel separately), by account. */
const early = new Map<number, Array<{ user: number; arrived: number }>>();

let recording = false;
let stats: Omit<StreamsRecorded, "type" | "lag"> = fresh();
function fresh(): Omit<StreamsRecorded, "type" | "lag"> {
  return { deliveries: [], late: 0, missing: 0, fetches: [], fetchErrors: {}, dropped: 0 };
}
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const lagMs = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 100_000) / 10 : 0);

function deliver(account: number, user: number, arrived: number): boolean {
  const list = expected.get(account);
  const hit = list?.find((e) => e.pending.has(user) && e.at <= arrived);
  if (!hit) return false;
  hit.pending.delete(user);
  const ms = arrived - hit.at;
  if (recording) {
    stats.deliveries.push(ms);
    if (ms > LATE_MS) stats.late++;
  }
  return true;
}

function fetchCount(user: number): void {
  const cookie = cookies.get(user);
  if (cookie === undefined) return;
  const started = performance.now();
  const done = (error: string | null) => {
    if (!recording) return;
    stats.fetches.push(performance.now() - started);
    if (error !== null) stats.fetchErrors[error] = (stats.fetchErrors[error] ?? 0) + 1;
  };
  const request = http.request(
    `${base}/unread-count.data?_routes=routes%2Funread-count`,
    { agent, headers: { cookie, accept: "*/*", "sec-fetch-site": "same-origin" }, timeout: 10_000 },
    (response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      response.once("end", () => done(status === 200 ? null : String(status)));
    },
  );
  request.once("timeout", () => request.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
  request.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  request.end();
}

function onEvent(user: number, event: string, data: string): void {
  if (event !== "messages") return;
  const arrived = Date.now();
  const account = user % accounts;
  if (!deliver(account, user, arrived)) {
    const list = early.get(account) ?? [];
    list.push({ user, arrived });
    early.set(account, list);
  }
  const delay = data === "everyone" ? Math.random() * EVERYONE_SPREAD_MS : 0;
  setTimeout(() => fetchCount(user), delay);
}

/** Opens user's stream; resolves true once its "ready" event arrived, false when refused. */
function openStream(user: number): Promise<boolean> {
  const cookie = cookies.get(user);
  if (cookie === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    let ready = false;
    const request = http.request(`${base}/events`, {
      agent: false,
      headers: { cookie, accept: "text/event-stream", "sec-fetch-site": "same-origin" },
    });
    request.once("response", (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        resolve(false);
        return;
      }
      open.set(user, request);
      response.setEncoding("utf8");
      response.on(
        "data",
        eventReader(({ event, data }) => {
          if (event === "ready" && !ready) {
            ready = true;
            resolve(true);
          } else onEvent(user, event, data);
        }),
      );
      response.once("close", () => {
        if (open.get(user) === request) {
          open.delete(user);
          if (recording) stats.dropped++;
        }
        if (!ready) resolve(false);
      });
    });
    request.once("error", () => {
      if (open.get(user) === request) open.delete(user);
      if (!ready) resolve(false);
    });
    request.end();
  });
}

async function hold(from: number, to: number): Promise<StreamsHeld> {
  const started = performance.now();
  for (const [user, request] of open) {
    if (user < from || user >= to) {
      open.delete(user);
      request.destroy();
    }
  }
  const missing: number[] = [];
  for (let user = from; user < to; user++) if (!open.has(user)) missing.push(user);
  let refused = 0;
  // A bounded number of stream openings at once, as browsers opening pages would.
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const user = missing[next++] as number;
      if (!(await openStream(user))) refused++;
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return {
    type: "held",
    open: open.size,
    opened: missing.length - refused,
    refused,
    ms: Math.round(performance.now() - started),
  };
}

function finishRecording(): StreamsRecorded {
  const now = Date.now();
  for (const list of expected.values()) {
    for (const e of list) if (now - e.at > LATE_MS) stats.missing += e.pending.size;
  }
  expected.clear();
  early.clear();
  const result: StreamsRecorded = {
    type: "recorded",
    ...stats,
    lag: { p99: lagMs(lag.percentile(99)), max: lagMs(lag.max) },
  };
  stats = fresh();
  return result;
}

process.on("message", (message: StreamsCommand) => {
  switch (message.type) {
    case "init":
      base = message.base;
      accounts = message.accounts;
      break;
    case "cookies":
      for (const [user, cookie] of message.entries) cookies.set(user, cookie);
      break;
    case "hold":
      void hold(message.from, message.to).then((held) => process.send?.(held));
      break;
    case "expect": {
      if (!recording) break;
      const pending = new Set<number>();
      for (const user of open.keys()) if (user % accounts === message.account) pending.add(user);
      if (pending.size === 0) break;
      const expectation = { at: message.at, pending };
      const list = expected.get(message.account) ?? [];
      list.push(expectation);
      expected.set(message.account, list);
      // Events that were here first.
      const arrivedEarly = early.get(message.account) ?? [];
      early.set(
        message.account,
        arrivedEarly.filter((a) => !(a.arrived >= message.at && deliver(message.account, a.user, a.arrived))),
      );
      break;
    }
    case "record":
      if (message.on) {
        stats = fresh();
        lag.reset();
        recording = true;
      } else {
        recording = false;
        process.send?.(finishRecording());
      }
      break;
  }
});
process.on("disconnect", () => process.exit(0));
