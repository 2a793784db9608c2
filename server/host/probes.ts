// Health probes for load balancers and Kubernetes (record 021): GET /healthz
// says the process is up and answering; GET /readyz says it can serve: the
// database answers within 2 s and every migration this build ships is applied.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ServerResponse } from "node:http";
import { sql } from "drizzle-orm";
import { migrationsFolder, type Database } from "../backend/db/index.ts";

const READY_TIMEOUT_MS = 2_000;

/** The migrations this build ships (drizzle's journal). */
const shipped: number = (
  JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")) as {
    entries: unknown[];
  }
).entries.length;

export type Readiness = { ready: true } | { ready: false; reason: string };

export async function readiness(database: Pick<Database, "db">): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: "the database did not answer within 2 s" }),
      READY_TIMEOUT_MS,
    );
  });
  const check = (async (): Promise<Readiness> => {
    try {
      // drizzle's migrator records each applied migration here (both drivers).
      const result = (await database.db.execute(
        sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`,
      )) as unknown as { rows?: Array<{ n: number }> } | Array<{ n: number }>;
      const rows = Array.isArray(result) ? result : (result.rows ?? []);
      const applied = Number(rows[0]?.n ?? 0);
      if (applied < shipped) return { ready: false, reason: `migrations applied: ${applied} of ${shipped}` };
      return { ready: true };
    } catch {
      return { ready: false, reason: "the database is not answering" };
    }
  })();
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function answerProbe(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "no-store",
  });
  res.end(`${text}\n`);
}
