// The secrets every process on one database must share (record 051). Each key the backend
// derives (the phrase HMAC and encryption keys, the holder and staff TOTP keys, the mail
// tokens' keys, the known-browser key, the rate limits' key) comes from BACKEND_SECRET, and
// the web tier's cookies, session rows and session owners from SESSION_SECRET. A process
// started with another value than the database's first one would answer 500 to every user of
// the other key and write rows under its own: so the first process writes a check value of
// each, and every later one compares before it serves and refuses to start on a mismatch.
//
// The check value is HMAC-SHA-256 keyed with the secret over a fixed label: with a secret of
// at least 32 characters nothing about it follows from the value, and the value says only
// whether a candidate secret is the one (which the candidate's holder could learn anyway by
// starting a process).
import { createHmac, timingSafeEqual } from "node:crypto";
import { inArray } from "drizzle-orm";
import type { AppDb } from "./index.ts";
import { secretChecks } from "./schema.ts";

export type SecretName = "BACKEND_SECRET" | "SESSION_SECRET";

export interface CheckedSecret {
  name: SecretName;
  value: string;
  /** Where an unset variable's value came from (the file in DATA_DIR), for the refusal. */
  keptIn?: string | undefined;
}

/** A process whose secret is not the database's: one sentence naming the variable. */
export class SecretMismatchError extends Error {}

/** The check value of a secret: hex HMAC-SHA-256(secret, "coinkeep secret check v1:" + name). */
export function secretCheckValue(name: SecretName, secret: string): string {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`coinkeep secret check v1:${name}`)
    .digest("hex");
}

/**
 * Writes the check values of `secrets` the database does not hold yet and compares the
 * others, in one transaction: on any mismatch nothing is written and SecretMismatchError
 * names the first variable that differs. Two processes starting at once both try the insert;
 * the one that comes second writes nothing (ON CONFLICT DO NOTHING) and compares with the
 * first one's value.
 */
export async function checkSecrets(db: AppDb, secrets: readonly CheckedSecret[]): Promise<void> {
  if (secrets.length === 0) return;
  const wanted = new Map(secrets.map((s) => [s.name, secretCheckValue(s.name, s.value)]));
  await db.transaction(async (tx) => {
    await tx
      .insert(secretChecks)
      .values([...wanted].map(([name, checkValue]) => ({ name, checkValue })))
      .onConflictDoNothing({ target: secretChecks.name });
    // Read COMMITTED: a concurrent first insert made the one above wait for its commit, so this
    // statement sees it.
    const kept = await tx
      .select({ name: secretChecks.name, checkValue: secretChecks.checkValue })
      .from(secretChecks)
      .where(inArray(secretChecks.name, [...wanted.keys()]));
    for (const secret of secrets) {
      const found = kept.find((row) => row.name === secret.name)?.checkValue;
      if (found !== undefined && sameHex(found, wanted.get(secret.name) ?? "")) continue;
      // Thrown inside the transaction: the rows it inserted for the other secrets are undone too.
      throw new SecretMismatchError(refusal(secret));
    }
  });
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

function refusal(secret: CheckedSecret): string {
  const source =
    secret.keptIn === undefined
      ? `this process's ${secret.name} is set in its environment`
      : `this process has no ${secret.name} set and used the one generated into ${secret.keptIn}`;
  return (
    `${secret.name} does not match the one this database was first started with: give every host ` +
    `and process on this database the same ${secret.name} (${source}).`
  );
}
