// Kill switches (issue 16, record 039): a pause of sends, deposits or issuing
// for one coin (every user) or one user (every coin). A row in `pauses` is a
// pause in force; resuming deletes it. Operators set and lift them with
// `ops pause` / `ops resume` (server/ops/commands/controls.ts), and
// reconciliation pauses a coin's sends by itself on a shortfall.
import { and, eq, or } from "drizzle-orm";
import { isTicker, type Ticker } from "../../../common/coins.ts";
import type { AppDb } from "../db/index.ts";
import { pauses } from "../db/schema.ts";
import { isUuid } from "./ledger.ts";

export type PauseWhat = "sends" | "deposits" | "issuing";
export const PAUSE_WHATS: readonly PauseWhat[] = ["sends", "deposits", "issuing"];

export interface ActivePause {
  id: string;
  what: PauseWhat;
  /** Set for a coin's pause (every user), else null. */
  coin: Ticker | null;
  /** Set for a user's pause (every coin), else null. */
  userId: string | null;
  reason: string;
  actor: string;
  /** Set by reconciliation, not by a person. */
  automatic: boolean;
  createdAt: Date;
}

function toPause(row: typeof pauses.$inferSelect): ActivePause {
  if (row.what !== "sends" && row.what !== "deposits" && row.what !== "issuing") {
    throw new Error(`unknown pause in the database: ${row.what}`);
  }
  if (row.coin !== null && !isTicker(row.coin)) throw new Error(`unknown coin in the database: ${row.coin}`);
  return { ...row, what: row.what, coin: row.coin };
}

/**
 * The pause that stops `what` for this coin and user, or undefined: the
 * coin's pause when there is one, else the user's. Read inside the caller's
 * transaction when given one.
 */
export async function activePause(
  db: AppDb,
  what: PauseWhat,
  scope: { coin: Ticker; userId?: string | null | undefined },
): Promise<ActivePause | undefined> {
  const userId = scope.userId != null && isUuid(scope.userId) ? scope.userId : undefined;
  const rows = await db
    .select()
    .from(pauses)
    .where(
      and(
        eq(pauses.what, what),
        userId === undefined
          ? eq(pauses.coin, scope.coin)
          : or(eq(pauses.coin, scope.coin), eq(pauses.userId, userId)),
      ),
    );
  const found = rows.map(toPause);
  return found.find((p) => p.coin !== null) ?? found[0];
}

/** Every pause in force, newest first. */
export async function listPauses(db: AppDb): Promise<ActivePause[]> {
  const rows = await db.select().from(pauses);
  return rows.map(toPause).toSorted((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}
