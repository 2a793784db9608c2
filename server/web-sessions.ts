// The session rows behind the web tier's cookies (see app/session.server.ts).
// The host owns the database and hands the web tier only this key-value view.
import { and, eq, gt, lt } from "drizzle-orm";
import type { AppDb } from "./db/index.ts";
import { webSessions } from "./db/schema.ts";

export interface SessionKV {
  insert(key: string, blob: string, expiresAt: Date): Promise<void>;
  get(key: string): Promise<string | null>;
  update(key: string, blob: string, expiresAt: Date): Promise<void>;
  remove(key: string): Promise<void>;
  purgeExpired(): Promise<void>;
}

export function createSessionKV(db: AppDb): SessionKV {
  return {
    async insert(key, blob, expiresAt) {
      await db.insert(webSessions).values({ id: key, data: blob, expiresAt });
    },
    async get(key) {
      const rows = await db
        .select({ data: webSessions.data })
        .from(webSessions)
        .where(and(eq(webSessions.id, key), gt(webSessions.expiresAt, new Date())))
        .limit(1);
      return rows[0]?.data ?? null;
    },
    async update(key, blob, expiresAt) {
      // Only a live row is updated: a destroyed session stays destroyed.
      await db
        .update(webSessions)
        .set({ data: blob, expiresAt, updatedAt: new Date() })
        .where(eq(webSessions.id, key));
    },
    async remove(key) {
      await db.delete(webSessions).where(eq(webSessions.id, key));
    },
    async purgeExpired() {
      await db.delete(webSessions).where(lt(webSessions.expiresAt, new Date()));
    },
  };
}
