// The database schema, shared by both drivers (PGlite and node-postgres).
// Migrations in ./migrations are generated from this file by drizzle-kit:
//   npx drizzle-kit generate --name <change>
import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  /** Normalised: trimmed and lower-cased before it is stored or looked up. */
  email: text("email").notNull().unique(),
  /** argon2id PHC string. */
  passwordHash: text("password_hash").notNull(),
  /** Hex HMAC-SHA-256 of the normalised phrase under a key derived from the backend secret. */
  phraseHmac: text("phrase_hmac").notNull(),
  /** base64(iv[12] | tag[16] | ciphertext), AES-256-GCM; see server/domain/crypto.ts. */
  phraseCiphertext: text("phrase_ciphertext").notNull(),
  /** base64 of the per-user random 16-byte salt for the password-derived phrase key. */
  phraseKdfSalt: text("phrase_kdf_salt").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  passwordChangedAt: timestamp("password_changed_at", { withTimezone: true }).notNull().defaultNow(),
});

/** The web tier's session rows (server/web-sessions.ts). */
export const webSessions = pgTable(
  "web_sessions",
  {
    /** Hex SHA-256 of the session token; the token itself is never stored. */
    id: text("id").primaryKey(),
    data: text("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("web_sessions_expires_at_idx").on(t.expiresAt)],
);

export type User = typeof users.$inferSelect;
