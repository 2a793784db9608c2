// The capacity benchmark's request mix: what one signed-in user's browser
// asks the server for, with scripts on and the page visible. Checked against
// the real client with scripts/bench/record-client.ts (Chromium, 70 s on /home,
// then one link followed); update this table when the client changes.
//
// Recorded (issue 14, with the event stream; record 033), 30 s on /home with an operator's
// message at 15 s:
//   once         GET /events                                            (EventSource, held open)
//   at 15.2 s    GET /unread-count.data?_routes=routes%2Funread-count   (the "messages" event's fetch)
//   no poll; the 60 s refresh as below. The capacity levels model this with streams.ts holding
//   one stream per user and the fetch after each event; the 10 s poll row runs only with
//   BENCH_CAPACITY_STREAMS=0 (the client's fallback when no stream can be had).
//
// Recorded (issue 7, build of that session):
//   every 10 s   GET /unread-count.data?_routes=routes%2Funread-count   (fetcher.load("/unread-count"))
//   every 60 s   GET /home.data?_routes=root                            (useRevalidator().revalidate())
//   a link       GET /wallet/btc.data, plus route modules and icons (cached by the browser after the first)
//
// The 60 s refresh is meant to bring balances, prices and rates (spec), but
// today the protected layout's shouldRevalidate answers "no" for an unchanged
// URL, so only the root loader runs. The table below models the refresh the
// spec asks for (every loader of the page: `<page>.data`), which costs more.
// When the refresh becomes a fetcher poll of its own resource route (planned:
// /wallet-view), change the "refresh" row's `url` to it.

export interface SimUser {
  /** The page the user is on, e.g. "/home" or "/wallet/btc". */
  page: string;
}

/** Where users navigate to: their wallet overview and the wallets the capacity accounts have. */
export const PAGES = ["/home", "/home", "/home", "/wallet/btc", "/wallet/eth", "/wallet/usdt"] as const;

export interface MixEntry {
  name: string;
  /** Fixed period (each user's own random phase), or a Poisson process with this mean. */
  schedule: { every: number } | { meanEvery: number };
  /** The request's path (and query); a navigation also moves the user. */
  url(user: SimUser, pick: () => number): string;
  /** Full page loads send the document request a browser sends. */
  document?: boolean;
  /** Only while the page has no event stream (record 033): the spec's poll, the client's fallback. */
  withoutStream?: boolean;
}

function navigate(user: SimUser, pick: () => number): string {
  user.page = PAGES[Math.floor(pick() * PAGES.length)] ?? "/home";
  return user.page;
}

export const MIX: readonly MixEntry[] = [
  {
    name: "unread count",
    schedule: { every: 10 },
    url: () => "/unread-count.data?_routes=routes%2Funread-count",
    withoutStream: true,
  },
  {
    name: "refresh",
    schedule: { every: 60 },
    url: (user) => `${user.page}.data`,
  },
  {
    // A link followed in the app: the target's loaders (assets are cached by then).
    name: "navigation",
    schedule: { meanEvery: 225 },
    url: (user, pick) => `${navigate(user, pick)}.data`,
  },
  {
    // A new tab, a bookmark or a reload: the server-rendered document.
    name: "page load",
    schedule: { meanEvery: 900 },
    url: (user, pick) => navigate(user, pick),
    document: true,
  },
];

/** Requests per user per minute, by entry (with event streams: the poll is off). */
export function perUserPerMinute(streams = false): Array<{ name: string; perMinute: number }> {
  return MIX.filter((entry) => !(streams && entry.withoutStream)).map((entry) => ({
    name: entry.name,
    perMinute: 60 / ("every" in entry.schedule ? entry.schedule.every : entry.schedule.meanEvery),
  }));
}
