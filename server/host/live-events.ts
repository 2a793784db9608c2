// The hub of live events (record 033): one LISTEN per process on the database's
// notifications (raised by triggers in the same transaction as each change,
// migration 0007), handed to the event streams open in this process. Any
// process that changes the data (another server process, an operator's
// command) reaches every process listening on the same database; nothing
// is brokered here beyond this process's own streams.
import type { LiveEvent, LiveEventKind, LiveEvents } from "../../app/context.ts";
import type { Database, Listening } from "../backend/db/index.ts";
import { log } from "../../common/log.ts";

const USER_CHANNEL = "coinkeep_events";
const SESSION_CHANNEL = "coinkeep_sessions";
const USER_KINDS: ReadonlySet<string> = new Set<LiveEventKind>(["messages", "balances", "sends", "wallets"]);
/** '<kind>:<user uuid>' or '<kind>:*'. */
const PAYLOAD = /^([a-z]+):(\*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/u;

type Listener = (event: LiveEvent) => void;

export interface LiveEventHub extends LiveEvents {
  /** Ends every stream ("closing": their browsers reconnect elsewhere) and stops listening. */
  close(): Promise<void>;
}

export async function createLiveEvents(database: Pick<Database, "listen">): Promise<LiveEventHub> {
  const byUser = new Map<string, Set<Listener>>();
  const bySession = new Map<string, Set<Listener>>();
  const all = new Set<Listener>();
  // The staff console's streams: every user's sends and wallets (the queues).
  const queues = new Set<Listener>();

  const deliver = (listeners: Iterable<Listener> | undefined, event: LiveEvent) => {
    if (!listeners) return;
    // A copy: a listener may unsubscribe (its stream ends) while being told.
    for (const listener of Array.from(listeners)) {
      try {
        listener(event);
      } catch (error) {
        log.warn("live event listener failed", { error: error instanceof Error ? error.name : "unknown" });
      }
    }
  };

  const onNotify = (channel: string, payload: string) => {
    if (channel === SESSION_CHANNEL) return deliver(bySession.get(payload), { kind: "session-ended" });
    const match = PAYLOAD.exec(payload);
    if (!match || !USER_KINDS.has(match[1] ?? "")) return;
    const kind = match[1] as LiveEventKind;
    if (kind === "sends" || kind === "wallets") deliver(queues, { kind });
    if (match[2] === "*") deliver(all, { kind, everyone: true });
    else deliver(byUser.get(match[2] ?? ""), { kind });
  };

  const listening: Listening = await database.listen([USER_CHANNEL, SESSION_CHANNEL], onNotify, () =>
    deliver(all, { kind: "resync" }),
  );

  const add = (map: Map<string, Set<Listener>>, key: string, listener: Listener) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(listener);
  };
  const remove = (map: Map<string, Set<Listener>>, key: string, listener: Listener) => {
    const set = map.get(key);
    if (!set) return;
    set.delete(listener);
    if (set.size === 0) map.delete(key);
  };

  return {
    subscribe({ userId, sessionKey }, listener) {
      // Each subscription is its own function object, so one listener may be subscribed twice.
      const own: Listener = (event) => listener(event);
      all.add(own);
      add(byUser, userId.toLowerCase(), own);
      add(bySession, sessionKey, own);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        all.delete(own);
        remove(byUser, userId.toLowerCase(), own);
        remove(bySession, sessionKey, own);
      };
    },
    watchQueues(listener) {
      const own: Listener = (event) => listener(event);
      queues.add(own);
      return () => void queues.delete(own);
    },
    open: () => all.size + queues.size,
    async close() {
      deliver(all, { kind: "closing" });
      deliver(queues, { kind: "closing" });
      await listening.close();
    },
  };
}
