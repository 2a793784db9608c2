// The session rows behind the web tier's cookies (see app/session.server.ts).
// The host owns the database and hands the web tier only this key-value view.
//
// Timeouts (record 015) are enforced here, on the row: `expires_at` is the idle
// deadline, moved forward by activity but never past created_at + the absolute
// lifetime, and a read finds only a row whose two deadlines are both ahead.
//
// The sessions list (issue 27, record 048): a sign-in's row starts with the
// browser's User-Agent (at most 512 characters) and the address; the address
// and the time last seen move with the idle deadline, in the same once-a-minute
// UPDATE, so a busy session still costs one write a minute (a save or a
// rotation, writes of their own that also move the deadline, move the time too).
import { and, desc, eq, gt, lt, ne, sql } from "drizzle-orm";
import type { OwnedSession, SessionKV, SessionSeen } from "../../app/context.ts";
import type { AppDb } from "../backend/db/index.ts";
import { webSessions } from "../backend/db/schema.ts";

// The web tier declares the store it needs (app/context.ts); the process, which hosts the web
// tier, implements it. rekey moves a live row to a new key with new data, keeping its created_at
// (the absolute lifetime still counts from sign-in): a session's id is rotated without extending it.
export type { SessionKV };

export interface SessionPolicy {
  /** A session ends after this long without activity. */
  idleMs: number;
  /** …and this long after it was created (sign-in rotates it), whatever happens. */
  maxMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 };

/** Activity moves the idle deadline at most once a minute: one write per minute per session, not per request. */
const TOUCH_GRANULARITY_MS = 60_000;

/** The longest User-Agent kept (the column's contract, migration 0012). */
export const MAX_USER_AGENT_LENGTH = 512;
/** No address is longer (an IPv6 address with a zone is well under it). */
const MAX_IP_LENGTH = 64;

// oxlint-disable-next-line no-control-regex -- control characters are exactly what goes.
const CONTROL = /[\u0000-\u001f\u007f]/gu;

/** What a row may hold of a header: no control characters (PostgreSQL text takes no NUL), capped. */
function kept(value: string | undefined, max: number): string | null {
  if (value === undefined) return null;
  const text = value.replace(CONTROL, "").trim().slice(0, max);
  return text === "" ? null : text;
}

export interface SessionStore extends SessionKV {
  purgeExpired(): Promise<void>;
}

export function createSessionKV(db: AppDb, policy: SessionPolicy = DEFAULT_SESSION_POLICY): SessionStore {
  const idleMs = Math.min(policy.idleMs, policy.maxMs);
  const maxSeconds = policy.maxMs / 1000;
  // The idle deadline from now, capped by the row's own absolute deadline.
  const nextExpiry = (now: number) =>
    sql`LEAST(${new Date(now + idleMs).toISOString()}::timestamptz, ${webSessions.createdAt} + make_interval(secs => ${maxSeconds}))`;
  const live = (key: string, now: number) =>
    and(
      eq(webSessions.id, key),
      gt(webSessions.expiresAt, new Date(now)),
      gt(webSessions.createdAt, new Date(now - policy.maxMs)),
    );

  // Every signed-in request reads its session: prepared once (built once, planned once per connection).
  const readLive = db
    .select({
      data: webSessions.data,
      expiresAt: webSessions.expiresAt,
      createdAt: webSessions.createdAt,
    })
    .from(webSessions)
    .where(
      and(
        eq(webSessions.id, sql.placeholder("key")),
        sql`${webSessions.expiresAt} > ${sql.placeholder("now")}::timestamptz`,
        sql`${webSessions.createdAt} > ${sql.placeholder("createdAfter")}::timestamptz`,
      ),
    )
    .limit(1)
    .prepare("coinkeep_web_sessions_read");

  /** The session's row while it is live at `now`, else undefined. */
  async function readRow(key: string, now: number) {
    const rows = await readLive.execute({
      key,
      now: new Date(now).toISOString(),
      createdAfter: new Date(now - policy.maxMs).toISOString(),
    });
    return rows[0];
  }

  // The address and time last seen ride on the deadline's own once-a-minute write.
  async function touch(key: string, ip?: string): Promise<void> {
    const now = Date.now();
    const lastIp = kept(ip, MAX_IP_LENGTH);
    await db
      .update(webSessions)
      .set({ expiresAt: nextExpiry(now), lastSeenAt: new Date(now), ...(lastIp === null ? {} : { lastIp }) })
      .where(and(live(key, now), lt(webSessions.expiresAt, new Date(now + idleMs - TOUCH_GRANULARITY_MS))));
  }

  return {
    async insert(key, blob, owner, seen: SessionSeen = {}) {
      const now = Date.now();
      await db.insert(webSessions).values({
        id: key,
        data: blob,
        owner,
        createdAt: new Date(now),
        updatedAt: new Date(now),
        expiresAt: new Date(now + idleMs),
        userAgent: kept(seen.userAgent, MAX_USER_AGENT_LENGTH),
        lastIp: kept(seen.ip, MAX_IP_LENGTH),
        lastSeenAt: new Date(now),
      });
    },
    async get(key, opts = {}) {
      const now = Date.now();
      const row = await readRow(key, now);
      if (!row) return null;
      // Activity: the idle deadline moves at most once a minute, so most reads write nothing.
      const target = Math.min(now + idleMs, row.createdAt.getTime() + policy.maxMs);
      if (opts.touch && row.expiresAt.getTime() < target - TOUCH_GRANULARITY_MS) await touch(key, opts.ip);
      return row.data;
    },
    async update(key, blob, owner) {
      const now = Date.now();
      // Only a live row is updated: a destroyed or timed-out session stays gone.
      await db
        .update(webSessions)
        .set({
          data: blob,
          owner,
          expiresAt: nextExpiry(now),
          updatedAt: new Date(now),
          lastSeenAt: new Date(now),
        })
        .where(live(key, now));
    },
    async rekey(oldKey, newKey, blob, owner) {
      const now = Date.now();
      const moved = await db
        .update(webSessions)
        .set({
          id: newKey,
          data: blob,
          owner,
          expiresAt: nextExpiry(now),
          updatedAt: new Date(now),
          lastSeenAt: new Date(now),
        })
        .where(live(oldKey, now))
        .returning({ id: webSessions.id });
      return moved.length > 0;
    },
    touch,
    async deadline(key) {
      const row = await readRow(key, Date.now());
      return row ? Math.min(row.expiresAt.getTime(), row.createdAt.getTime() + policy.maxMs) : null;
    },
    async remove(key) {
      await db.delete(webSessions).where(eq(webSessions.id, key));
    },
    async removeOwner(owner, opts = {}) {
      const gone = await db
        .delete(webSessions)
        .where(
          opts.except === undefined
            ? eq(webSessions.owner, owner)
            : and(eq(webSessions.owner, owner), ne(webSessions.id, opts.except)),
        )
        .returning({ id: webSessions.id });
      return gone.length;
    },
    async listOwner(owner) {
      const now = Date.now();
      const seen = sql<Date>`COALESCE(${webSessions.lastSeenAt}, ${webSessions.createdAt})`;
      const rows = await db
        .select({
          key: webSessions.id,
          userAgent: webSessions.userAgent,
          lastIp: webSessions.lastIp,
          createdAt: webSessions.createdAt,
          lastSeenAt: webSessions.lastSeenAt,
        })
        .from(webSessions)
        .where(
          and(
            eq(webSessions.owner, owner),
            gt(webSessions.expiresAt, new Date(now)),
            gt(webSessions.createdAt, new Date(now - policy.maxMs)),
          ),
        )
        .orderBy(desc(seen), desc(webSessions.createdAt), webSessions.id);
      return rows.map((row): OwnedSession => ({ ...row, lastSeenAt: row.lastSeenAt ?? row.createdAt }));
    },
    async removeOwned(owner, key) {
      // The owner is part of the key the row is found by: another holder's row is never touched.
      const gone = await db
        .delete(webSessions)
        .where(and(eq(webSessions.id, key), eq(webSessions.owner, owner)))
        .returning({ id: webSessions.id });
      return gone.length > 0;
    },
    async purgeExpired() {
      const now = Date.now();
      await db
        .delete(webSessions)
        .where(
          sql`${webSessions.expiresAt} < ${new Date(now).toISOString()}::timestamptz OR ${webSessions.createdAt} < ${new Date(now - policy.maxMs).toISOString()}::timestamptz`,
        );
    },
  };
}
