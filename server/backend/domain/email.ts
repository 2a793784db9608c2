// A holder's e-mail address and the browsers they sign in from (issue 28, record 049): whether
// the address is verified (only a verified address is mailed), asking for a verification
// link, and the "new browser" check behind the sign-in alert.
import { createHmac, hkdfSync } from "node:crypto";
import { sql } from "drizzle-orm";
import { type AppDb, rowsOf } from "../db/index.ts";
import { queueAlert, queueVerification } from "../mail/outbox.ts";
import type { TotpKeys } from "./totp.ts";

/** A link is not mailed again within this many seconds of the last one (nobody's mailbox is flooded). */
export const VERIFY_AGAIN_SECONDS = 60;
/** At most this many links in 24 hours per account: an account made with a stranger's address cannot flood them. */
export const VERIFY_PER_DAY = 5;

const date = (text: string | null | undefined) => (text ? new Date(text) : null);

export interface EmailState {
  verifiedAt: Date | null;
  /** The newest unused, unexpired link's deadline; null when none waits. */
  linkExpiresAt: Date | null;
  /** When the newest link was made (any state): the resend pause counts from it. */
  lastLinkAt: Date | null;
  /** Links made in the 24 hours before `now`. */
  linksToday: number;
}

export async function emailState(db: Pick<AppDb, "execute">, userId: string, now: Date): Promise<EmailState> {
  const [row] = rowsOf<{
    verified_at: string | null;
    link_expires_at: string | null;
    last_link_at: string | null;
    links_today: number;
  }>(
    await db.execute(sql`
      SELECT
        to_char(u.email_verified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS verified_at,
        (SELECT to_char(max(v.expires_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           FROM email_verifications v
           WHERE v.user_id = u.id AND v.used_at IS NULL AND v.email = u.email
             AND v.expires_at > ${now.toISOString()}) AS link_expires_at,
        (SELECT to_char(max(v.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           FROM email_verifications v WHERE v.user_id = u.id) AS last_link_at,
        (SELECT count(*)::int FROM email_verifications v
           WHERE v.user_id = u.id AND v.created_at > ${new Date(now.getTime() - 86_400_000).toISOString()}) AS links_today
      FROM users u WHERE u.id = ${userId}`),
  );
  return {
    verifiedAt: date(row?.verified_at),
    linkExpiresAt: date(row?.link_expires_at),
    lastLinkAt: date(row?.last_link_at),
    linksToday: Number(row?.links_today ?? 0),
  };
}

export type VerifyRequest = { ok: true } | { ok: false; reason: "verified" | "too-soon" | "daily-limit" };

/** "Verify your e-mail": a new link, mailed to the account's address, unless verified or just sent. */
export async function requestVerification(
  db: AppDb,
  keys: TotpKeys,
  user: { userId: string; email: string },
  now: Date,
): Promise<VerifyRequest> {
  return db.transaction(async (tx) => {
    // The user's row is locked, so two quick clicks make one link, not two.
    await tx.execute(sql`SELECT id FROM users WHERE id = ${user.userId} FOR UPDATE`);
    const state = await emailState(tx, user.userId, now);
    if (state.verifiedAt) return { ok: false, reason: "verified" } as const;
    if (state.lastLinkAt && now.getTime() - state.lastLinkAt.getTime() < VERIFY_AGAIN_SECONDS * 1000) {
      return { ok: false, reason: "too-soon" } as const;
    }
    if (state.linksToday >= VERIFY_PER_DAY) return { ok: false, reason: "daily-limit" } as const;
    await queueVerification(tx, keys, user, now);
    return { ok: true } as const;
  });
}

/** The key the browsers' identifiers are kept under (an HMAC: the cookie's value is never stored). */
export function browserKey(backendSecret: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", Buffer.from(backendSecret, "utf8"), Buffer.alloc(0), "coinkeep known-browsers v1", 32),
  );
}

/**
 * A sign-in from this browser: remembered, and when the account has signed in from other
 * browsers before but never this one, the "new sign-in" mail is queued (verified addresses
 * only) in the same transaction. An account's first browser is remembered without a mail.
 */
export async function noteSignIn(
  db: AppDb,
  key: Buffer,
  input: { userId: string; browserId: string; browserName: string; ip: string | null },
): Promise<{ newBrowser: boolean; mailed: boolean }> {
  const hash = createHmac("sha256", key).update(input.browserId, "utf8").digest("hex");
  return db.transaction(async (tx) => {
    const inserted = rowsOf(
      await tx.execute(sql`
        INSERT INTO known_browsers (user_id, browser_hash) VALUES (${input.userId}, ${hash})
        ON CONFLICT (user_id, browser_hash) DO NOTHING RETURNING browser_hash`),
    );
    if (inserted.length === 0) {
      await tx.execute(sql`
        UPDATE known_browsers SET last_seen_at = now() WHERE user_id = ${input.userId} AND browser_hash = ${hash}`);
      return { newBrowser: false, mailed: false };
    }
    const [others] = rowsOf<{ n: number }>(
      await tx.execute(sql`
        SELECT count(*)::int AS n FROM known_browsers WHERE user_id = ${input.userId} AND browser_hash <> ${hash}`),
    );
    if (Number(others?.n ?? 0) === 0) return { newBrowser: false, mailed: false };
    const mailed = await queueAlert(tx, input.userId, "new_sign_in", {
      // One line of text: control characters (line breaks included) become spaces.
      browser:
        input.browserName
          .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ")
          .replace(/\s+/gu, " ")
          .trim() || "An unknown browser",
      ip: input.ip,
    });
    return { newBrowser: true, mailed };
  });
}
