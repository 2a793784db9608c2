// The database schema, shared by both drivers (PGlite and node-postgres).
// Migrations in ./migrations are generated from this file by drizzle-kit:
//   npx drizzle-kit generate --name <change>
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  inet,
  bigserial,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  /** Normalised: trimmed and lower-cased before it is stored or looked up. */
  email: text("email").notNull().unique(),
  /** argon2id PHC string. */
  passwordHash: text("password_hash").notNull(),
  /** Hex HMAC-SHA-256 of the normalised phrase under a key derived from the backend secret. */
  phraseHmac: text("phrase_hmac").notNull(),
  /** base64(iv[12] | tag[16] | ciphertext), AES-256-GCM; see server/backend/domain/crypto.ts. */
  phraseCiphertext: text("phrase_ciphertext").notNull(),
  /** base64 of the per-user random 16-byte salt for the password-derived phrase key. */
  phraseKdfSalt: text("phrase_kdf_salt").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  passwordChangedAt: timestamp("password_changed_at", { withTimezone: true }).notNull().defaultNow(),
  /** "Only send to saved addresses" (issue 27, record 048): on at once. */
  allowlistOnly: boolean("allowlist_only").notNull().default(false),
  /** A turn-off of allowlistOnly waiting for its hold: the allowlist stops applying at this instant. */
  allowlistOffAt: timestamp("allowlist_off_at", { withTimezone: true, precision: 3 }),
  /** When the holder proved they read this address (issue 28, record 049); NULL: unverified, no alerts. */
  emailVerifiedAt: timestamp("email_verified_at", { withTimezone: true, precision: 3 }),
});

/** The web tier's session rows (server/host/web-sessions.ts). */
export const webSessions = pgTable(
  "web_sessions",
  {
    /** Hex SHA-256 of the session token; the token itself is never stored. */
    id: text("id").primaryKey(),
    data: text("data").notNull(),
    /**
     * Whose session this is, so a restore can end them all: hex HMAC-SHA-256 of
     * the normalised e-mail under the session secret (never the e-mail itself).
     * NULL while nobody is signed in on it.
     */
    owner: text("owner"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    /** The idle deadline, never later than created_at + the absolute lifetime. */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    /** The browser's User-Agent when it signed in, at most 512 characters (the sessions list, issue 27). */
    userAgent: text("user_agent"),
    /** The address the session was last seen from, and when (moved with the idle deadline). */
    lastIp: text("last_ip"),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index("web_sessions_expires_at_idx").on(t.expiresAt),
    index("web_sessions_owner_idx")
      .on(t.owner)
      .where(sql`owner IS NOT NULL`),
  ],
);

export type User = typeof users.$inferSelect;

// ---------------------------------------------------------------------------
// Wallets and the ledger. Amounts are integers of the coin's base unit
// (COINS[coin].decimals in common/coins.ts) in numeric(78,0) columns, read as
// bigint; USD values are decimal strings (text), never floats.
// ---------------------------------------------------------------------------

/** Up to 78 decimal digits: any uint256 amount fits. */
const units = (name: string) => numeric(name, { precision: 78, scale: 0, mode: "bigint" });
/** Millisecond precision, so an ISO date handed out round-trips exactly (paging by date). */
const createdAt = () => timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();

/**
 * One wallet per (user, coin). States (spec section 4): no row = hasNoWallet;
 * address NULL = walletIsRequested ('Not added yet'); address set = hasWallet.
 */
export const wallets = pgTable(
  "wallets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** A ticker of common/coins.ts TICKERS. */
    coin: text("coin").notNull(),
    /** The deposit address; NULL until one is issued (derived, taken from a pool, or by an operator). */
    address: text("address"),
    requestedAt: timestamp("requested_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    issuedAt: timestamp("issued_at", { withTimezone: true, precision: 3 }),
    /** How the address came (issue 16): 'manual' (ops issue-address), 'derived' (watch-only key), 'pool'; NULL while requested or issued before issue 16. */
    addressSource: text("address_source"),
    /** A derived address: which account key (custody_index_counters.key_id) and its index (receive chain). */
    derivationKey: text("derivation_key"),
    derivationIndex: bigint("derivation_index", { mode: "number" }),
  },
  (t) => [
    unique("wallets_user_coin_unique").on(t.userId, t.coin),
    // The target of the ledger accounts' (wallet_id, coin) foreign key: an account has its wallet's coin.
    unique("wallets_id_coin_unique").on(t.id, t.coin),
    // A deposit address belongs to one wallet of its coin, so a deposit is never ambiguous.
    uniqueIndex("wallets_coin_address_unique")
      .on(t.coin, t.address)
      .where(sql`address IS NOT NULL`),
    index("wallets_pending_requests_idx")
      .on(t.requestedAt)
      .where(sql`address IS NULL`),
    check("wallets_issued_consistent", sql`(address IS NULL) = (issued_at IS NULL)`),
    check(
      "wallets_address_source_valid",
      sql`address_source IS NULL OR (address IS NOT NULL AND address_source IN ('manual', 'derived', 'pool'))`,
    ),
    check(
      "wallets_derivation_consistent",
      sql`(derivation_key IS NULL) = (derivation_index IS NULL) AND (address_source IS NOT DISTINCT FROM 'derived') = (derivation_index IS NOT NULL)`,
    ),
    // An index of one account key is handed out once per coin.
    uniqueIndex("wallets_coin_derivation_unique")
      .on(t.coin, t.derivationKey, t.derivationIndex)
      .where(sql`derivation_index IS NOT NULL`),
  ],
);

/**
 * The ledger's accounts. A 'wallet' account belongs to one wallet (its balance is
 * the wallet's available balance); the other kinds are one system account per
 * coin: 'deposits' (the outside world's side of every deposit, so it runs
 * negative), 'withdrawals_pending' (held sends) and 'withdrawals_settled'.
 *
 * `balance` is the running balance of a wallet account (record 017): credits −
 * debits of its transfers, kept by a trigger on ledger_transfers (migration
 * 0006) in the same statement as each transfer, and never below zero. The
 * transfers stay the source of truth; system accounts keep no running balance
 * (NULL: every send of a coin would otherwise queue on one row).
 */
export const ledgerAccounts = pgTable(
  "ledger_accounts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    coin: text("coin").notNull(),
    kind: text("kind").notNull(),
    walletId: uuid("wallet_id").unique("ledger_accounts_wallet_unique"),
    /** Wallet accounts: the available balance in base units, maintained by the database. System accounts: NULL. */
    balance: units("balance"),
    createdAt: createdAt(),
  },
  (t) => [
    // The target of the transfers' (account, coin) foreign keys: both sides of a transfer have its coin.
    unique("ledger_accounts_id_coin_unique").on(t.id, t.coin),
    foreignKey({
      name: "ledger_accounts_wallet_coin_fk",
      columns: [t.walletId, t.coin],
      foreignColumns: [wallets.id, wallets.coin],
    }),
    uniqueIndex("ledger_accounts_system_unique")
      .on(t.coin, t.kind)
      .where(sql`wallet_id IS NULL`),
    check(
      "ledger_accounts_kind_valid",
      sql`kind IN ('wallet', 'deposits', 'withdrawals_pending', 'withdrawals_settled')`,
    ),
    check("ledger_accounts_wallet_kind", sql`(kind = 'wallet') = (wallet_id IS NOT NULL)`),
    // Only wallet accounts keep a running balance, and a wallet never spends more than it holds.
    check("ledger_accounts_balance_wallet_only", sql`(kind = 'wallet') = (balance IS NOT NULL)`),
    check("ledger_accounts_balance_nonnegative", sql`balance >= 0`),
  ],
);

/**
 * The ledger: append-only (no UPDATE, DELETE or TRUNCATE; a trigger in the
 * migration refuses them). Each row moves `amount` from the debit account to
 * the credit account; an account's balance is its credits minus its debits.
 *   deposit          deposits            → wallet
 *   withdrawal_hold  wallet              → withdrawals_pending
 *   withdrawal_post  withdrawals_pending → withdrawals_settled  (pending_id = the hold)
 *   withdrawal_void  withdrawals_pending → wallet               (pending_id = the hold)
 */
export const ledgerTransfers = pgTable(
  "ledger_transfers",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    coin: text("coin").notNull(),
    debitAccountId: uuid("debit_account_id").notNull(),
    creditAccountId: uuid("credit_account_id").notNull(),
    amount: units("amount").notNull(),
    kind: text("kind").notNull(),
    /** The on-chain transaction id of a deposit. */
    externalTxId: text("external_tx_id"),
    /** A post or void names the hold it resolves. */
    pendingId: uuid("pending_id"),
    /** The USD value at the time, as a decimal string. */
    amountUsd: text("amount_usd"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: "ledger_transfers_debit_fk",
      columns: [t.debitAccountId, t.coin],
      foreignColumns: [ledgerAccounts.id, ledgerAccounts.coin],
    }),
    foreignKey({
      name: "ledger_transfers_credit_fk",
      columns: [t.creditAccountId, t.coin],
      foreignColumns: [ledgerAccounts.id, ledgerAccounts.coin],
    }),
    foreignKey({ name: "ledger_transfers_pending_fk", columns: [t.pendingId], foreignColumns: [t.id] }),
    check("ledger_transfers_amount_positive", sql`amount > 0`),
    check("ledger_transfers_distinct_accounts", sql`debit_account_id <> credit_account_id`),
    check(
      "ledger_transfers_kind_valid",
      sql`kind IN ('deposit', 'withdrawal_hold', 'withdrawal_post', 'withdrawal_void')`,
    ),
    check("ledger_transfers_deposit_txid", sql`(kind = 'deposit') = (external_tx_id IS NOT NULL)`),
    check(
      "ledger_transfers_resolution_pending",
      sql`(kind IN ('withdrawal_post', 'withdrawal_void')) = (pending_id IS NOT NULL)`,
    ),
    // A chain output is credited once: chain_deposits' (coin, txid, output_index) key and its
    // unique transfer_id (issue 16; one transaction may pay several of our addresses).
    index("ledger_transfers_coin_external_tx_idx")
      .on(t.coin, t.externalTxId)
      .where(sql`external_tx_id IS NOT NULL`),
    // A hold is posted or voided exactly once.
    uniqueIndex("ledger_transfers_pending_unique")
      .on(t.pendingId)
      .where(sql`pending_id IS NOT NULL`),
    index("ledger_transfers_debit_idx").on(t.debitAccountId),
    // A wallet's deposits newest first (ties by id) straight from the index, with no sort.
    index("ledger_transfers_credit_idx").on(t.creditAccountId, t.createdAt, t.id),
  ],
);

/** Send requests; the money side is the hold transfer and, once decided, its post or void. */
export const withdrawals = pgTable(
  "withdrawals",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    walletId: uuid("wallet_id")
      .notNull()
      .references(() => wallets.id),
    amount: units("amount").notNull(),
    /** The USD value when requested, as a decimal string. */
    amountUsd: text("amount_usd"),
    destination: text("destination").notNull(),
    /** XRP's destination tag (0..4294967295: bigint, PostgreSQL's integer is signed 32-bit), or null. */
    destinationTag: bigint("destination_tag", { mode: "number" }),
    /** 'pending' | 'Confirmed' | 'Declined', spelled as the clients show them. */
    status: text("status").notNull().default("pending"),
    holdTransferId: uuid("hold_transfer_id")
      .notNull()
      .unique("withdrawals_hold_transfer_unique")
      .references(() => ledgerTransfers.id),
    decidedAt: timestamp("decided_at", { withTimezone: true, precision: 3 }),
    /** Who decided it (a staff member's e-mail, or an operator command's --as); null before issue 26. */
    decidedBy: text("decided_by"),
    declineReason: text("decline_reason"),
    createdAt: createdAt(),
  },
  (t) => [
    // A wallet's sends newest first (ties by id) straight from the index, with no sort.
    index("withdrawals_wallet_created_idx").on(t.walletId, t.createdAt, t.id),
    check("withdrawals_amount_positive", sql`amount > 0`),
    check("withdrawals_status_valid", sql`status IN ('pending', 'Confirmed', 'Declined')`),
    check(
      "withdrawals_destination_tag_range",
      sql`destination_tag IS NULL OR destination_tag BETWEEN 0 AND 4294967295`,
    ),
    check("withdrawals_decided_consistent", sql`(status = 'pending') = (decided_at IS NULL)`),
    // The operators' queue of sends waiting for a decision.
    index("withdrawals_pending_idx")
      .on(t.createdAt)
      .where(sql`status = 'pending'`),
  ],
);

/**
 * Idempotency keys of sends (call 6): one row per (user, key), written in the
 * same transaction as the send it created. The same key again answers
 * `response` and creates nothing; the same key with another request
 * (request_hash) is refused. Only sends that were created are recorded: a
 * refused request leaves its key free, so the corrected form goes through.
 */
export const sendRequests = pgTable(
  "send_requests",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    idempotencyKey: text("idempotency_key").notNull(),
    /** SHA-256 (hex) of the canonical request: wallet, amount in base units, destination. */
    requestHash: text("request_hash").notNull(),
    withdrawalId: uuid("withdrawal_id")
      .notNull()
      .unique("send_requests_withdrawal_unique")
      .references(() => withdrawals.id),
    /** The first answer's body, returned again on a replay. */
    response: jsonb("response").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.idempotencyKey] })],
);

/** Compliance messages to one user, or (user_id NULL) to every user. */
export const messages = pgTable(
  "messages",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** NULL: a message to every user. */
    userId: uuid("user_id").references(() => users.id),
    message: text("message").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("messages_user_created_idx").on(t.userId, t.createdAt)],
);

/**
 * Who opened which message: a row means open_status 1 for that user, no row 0.
 * One row per recipient, so a message to everyone is opened per user.
 */
export const messageReads = pgTable(
  "message_reads",
  {
    messageId: uuid("message_id")
      .notNull()
      .references(() => messages.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    openedAt: timestamp("opened_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.messageId, t.userId] })],
);

/**
 * Support-modal and contact-form messages (call 12), for operators to read.
 * Plain text, stored as received: nothing is escaped or interpreted here.
 * `ip` is the sender's address for abuse handling (record 011 says how long
 * it is kept and when a forwarded one is believed).
 */
export const supportMessages = pgTable(
  "support_messages",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** 'support' (the signed-in modal) | 'contact' (the public form). */
    kind: text("kind").notNull(),
    /** Normalised like an account's: trimmed, lower-cased. */
    email: text("email").notNull(),
    /** Support only: trimmed. */
    fullName: text("full_name"),
    /** Support only, optional: an optional leading + and digits. */
    phone: text("phone"),
    comment: text("comment").notNull(),
    ip: inet("ip"),
    /** The sender's account, only when the sender proved it (call 12 carries no credentials). */
    userId: uuid("user_id").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [
    check("support_messages_kind_valid", sql`kind IN ('support', 'contact')`),
    check("support_messages_full_name_support", sql`(kind = 'support') = (full_name IS NOT NULL)`),
    check("support_messages_phone_support", sql`phone IS NULL OR kind = 'support'`),
    check("support_messages_email_length", sql`char_length(email) BETWEEN 3 AND 254`),
    check("support_messages_full_name_length", sql`char_length(full_name) BETWEEN 2 AND 200`),
    check("support_messages_phone_format", sql`phone ~ '^[+]?[0-9]+$' AND char_length(phone) <= 32`),
    check("support_messages_comment_length", sql`char_length(comment) BETWEEN 1 AND 5000`),
    // What operators list: newest first, all kinds or one.
    index("support_messages_created_idx").on(t.createdAt, t.id),
    index("support_messages_kind_created_idx").on(t.kind, t.createdAt, t.id),
  ],
);

/** What operators (and the system) did: append-only, never holds secrets. */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    actor: text("actor").notNull(),
    /** The staff member's roles when they acted (console); null for an operator command. */
    actorRoles: text("actor_roles").array(),
    action: text("action").notNull(),
    subject: text("subject"),
    /** The holder the action concerns, when there is one (the audit viewer filters by it). */
    userId: uuid("user_id"),
    /** Why, as the actor gave it, when the action takes a reason. */
    reason: text("reason"),
    details: jsonb("details").notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    index("audit_log_created_idx").on(t.createdAt),
    index("audit_log_subject_idx").on(t.subject),
    index("audit_log_actor_created_idx").on(t.actor, t.createdAt),
    index("audit_log_user_created_idx")
      .on(t.userId, t.createdAt)
      .where(sql`user_id IS NOT NULL`),
  ],
);

// ---------------------------------------------------------------------------
// The back office (issue 26, record 047): staff members, kept apart from holders.
// ---------------------------------------------------------------------------

export { STAFF_ROLES } from "../../../common/contract/console.ts";

/**
 * A staff member: a person with roles, a password and TOTP. Made by an admin
 * (the command line or the console) with an enrolment link; enrolled once the
 * password and the authenticator are set. `removed_at`: no longer staff (kept
 * for the audit log's sake; a removed member's sessions are gone).
 */
export const staffMembers = pgTable(
  "staff_members",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Normalised: trimmed, NFKC, lower-cased. */
    email: text("email").notNull().unique("staff_members_email_unique"),
    roles: text("roles").array().notNull(),
    /** argon2id PHC string; null until enrolled. */
    passwordHash: text("password_hash"),
    /** The TOTP secret, AES-256-GCM under a key derived from the backend secret; null until enrolled. */
    totpSecret: text("totp_secret"),
    /** The last TOTP time step accepted: a code of this step or an earlier one is refused (replay). */
    totpLastStep: bigint("totp_last_step", { mode: "number" }),
    /** Consecutive wrong passwords and codes; at the lock limit sign-in is refused until an admin unlocks. */
    failedSignIns: integer("failed_sign_ins").notNull().default(0),
    enrolledAt: timestamp("enrolled_at", { withTimezone: true, precision: 3 }),
    removedAt: timestamp("removed_at", { withTimezone: true, precision: 3 }),
    createdBy: text("created_by").notNull(),
    createdAt: createdAt(),
  },
  () => [
    check(
      "staff_members_roles_valid",
      sql`cardinality(roles) >= 1 AND roles <@ ARRAY['support','compliance','approver','treasury','admin']::text[]`,
    ),
    check("staff_members_enrolled_consistent", sql`(enrolled_at IS NULL) = (password_hash IS NULL)`),
  ],
);

/** One-time enrolment links: the token's SHA-256 only; valid 24 h, used once. */
export const staffEnrolments = pgTable(
  "staff_enrolments",
  {
    tokenHash: text("token_hash").primaryKey(),
    staffId: uuid("staff_id")
      .notNull()
      .references(() => staffMembers.id),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, precision: 3 }),
    createdBy: text("created_by").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("staff_enrolments_staff_idx").on(t.staffId)],
);

/** Recovery codes: an HMAC of each under the backend secret; each usable once. */
export const staffRecoveryCodes = pgTable(
  "staff_recovery_codes",
  {
    staffId: uuid("staff_id")
      .notNull()
      .references(() => staffMembers.id),
    codeHash: text("code_hash").notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [primaryKey({ columns: [t.staffId, t.codeHash] })],
);

/**
 * Staff sessions, apart from the holders' web_sessions. Keyed by the token's
 * SHA-256. 'password': the password was right, the code is awaited (no page
 * opens); 'signed-in': both factors given. Idle and absolute deadlines are
 * checked on every read.
 */
export const staffSessions = pgTable(
  "staff_sessions",
  {
    id: text("id").primaryKey(),
    staffId: uuid("staff_id")
      .notNull()
      .references(() => staffMembers.id),
    stage: text("stage").notNull(),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    absoluteExpiresAt: timestamp("absolute_expires_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    check("staff_sessions_stage_valid", sql`stage IN ('password', 'signed-in')`),
    index("staff_sessions_staff_idx").on(t.staffId),
  ],
);

/**
 * Four-eyes approvals (record 047): one row per (send, approver). A send at or
 * above its coin's threshold is posted only at its second approval by another
 * approver; below it, the first approval posts it. A decline ends it either way.
 */
export const sendApprovals = pgTable(
  "send_approvals",
  {
    withdrawalId: uuid("withdrawal_id")
      .notNull()
      .references(() => withdrawals.id),
    /** The approver: a staff member's e-mail, or an operator command's --as. */
    approver: text("approver").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.withdrawalId, t.approver] })],
);

/** The four-eyes threshold per coin in USD (plain decimal); no row: the configured default. */
export const fourEyesThresholds = pgTable("four_eyes_thresholds", {
  coin: text("coin").primaryKey(),
  usd: text("usd").notNull(),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/**
 * Staff replies to support and contact messages: each reaches the holder as a
 * compliance message (their Notifications) and is recorded against the
 * message it answers.
 */
export const supportReplies = pgTable(
  "support_replies",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    supportMessageId: uuid("support_message_id")
      .notNull()
      .references(() => supportMessages.id),
    messageId: uuid("message_id")
      .notNull()
      .references(() => messages.id),
    author: text("author").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("support_replies_support_message_idx").on(t.supportMessageId)],
);

// ---------------------------------------------------------------------------
// Custody operations (issue 16; records 039 issuing, 040 deposits, 041 reconciliation and kill switches)
// ---------------------------------------------------------------------------

/**
 * The next unused receive index per (coin, account key). Incremented in the
 * transaction that records the derived address, so the row lock orders
 * concurrent requests (any process) and a rolled-back request gives its index back.
 */
export const custodyIndexCounters = pgTable(
  "custody_index_counters",
  {
    coin: text("coin").notNull(),
    /** Fingerprint of the configured account key (hex, see domain/issuing.ts). */
    keyId: text("key_id").notNull(),
    nextIndex: bigint("next_index", { mode: "number" }).notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.coin, t.keyId] }),
    // BIP-32 non-hardened indexes: 0 .. 2^31 - 1.
    check("custody_index_counters_range", sql`next_index BETWEEN 0 AND 2147483648`),
  ],
);

/** Addresses loaded by operators (SOL: public keys made offline); a row with a wallet is taken. */
export const addressPool = pgTable(
  "address_pool",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    coin: text("coin").notNull(),
    address: text("address").notNull(),
    addedBy: text("added_by").notNull(),
    addedAt: createdAt(),
    walletId: uuid("wallet_id")
      .unique("address_pool_wallet_unique")
      .references(() => wallets.id),
    takenAt: timestamp("taken_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    unique("address_pool_coin_address_unique").on(t.coin, t.address),
    check("address_pool_taken_consistent", sql`(wallet_id IS NULL) = (taken_at IS NULL)`),
    // The free addresses of a coin, oldest loaded first.
    index("address_pool_free_idx")
      .on(t.coin, t.addedAt, t.id)
      .where(sql`wallet_id IS NULL`),
  ],
);

/** Per-coin issuing policy set by an operator; no row: automatic when the coin has a key or a pool. */
export const custodySettings = pgTable(
  "custody_settings",
  {
    coin: text("coin").primaryKey(),
    /** 'auto' | 'manual'. */
    issuing: text("issuing").notNull().default("auto"),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  () => [check("custody_settings_issuing_valid", sql`issuing IN ('auto', 'manual')`)],
);

/**
 * Kill switches: a row pauses sends, deposits or issuing for one coin (every
 * user) or one user (every coin). Resuming deletes the row; the audit log
 * keeps both. `automatic`: set by reconciliation (a shortfall), not by a person.
 */
export const pauses = pgTable(
  "pauses",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** 'sends' | 'deposits' | 'issuing'. */
    what: text("what").notNull(),
    coin: text("coin"),
    userId: uuid("user_id").references(() => users.id),
    reason: text("reason").notNull(),
    actor: text("actor").notNull(),
    automatic: boolean("automatic").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    check("pauses_what_valid", sql`what IN ('sends', 'deposits', 'issuing')`),
    check("pauses_one_scope", sql`(coin IS NULL) <> (user_id IS NULL)`),
    check("pauses_reason_length", sql`char_length(reason) BETWEEN 1 AND 1000`),
    uniqueIndex("pauses_coin_unique")
      .on(t.what, t.coin)
      .where(sql`coin IS NOT NULL`),
    uniqueIndex("pauses_user_unique")
      .on(t.what, t.userId)
      .where(sql`user_id IS NOT NULL`),
  ],
);

/**
 * Deposits as the chain names them: one row per (coin, transaction id, output
 * or log index), credited at most once. 'pending' until it has the coin's
 * confirmations (shown to the user as 'Unconfirmed'); 'credited' names its
 * ledger transfer, whose id is this row's id.
 */
export const chainDeposits = pgTable(
  "chain_deposits",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    coin: text("coin").notNull(),
    txid: text("txid").notNull(),
    /** The output index (UTXO coins) or log / event index (account coins); 0 when the chain has one payment per transaction. */
    outputIndex: bigint("output_index", { mode: "number" }).notNull(),
    /** Our address it paid (canonical form). */
    address: text("address").notNull(),
    walletId: uuid("wallet_id")
      .notNull()
      .references(() => wallets.id),
    amount: units("amount").notNull(),
    /** As last reported; NULL when an operator vouched for the deposit (ops credit). */
    confirmations: bigint("confirmations", { mode: "number" }),
    /** 'pending' | 'credited'. */
    status: text("status").notNull(),
    transferId: uuid("transfer_id")
      .unique("chain_deposits_transfer_unique")
      .references(() => ledgerTransfers.id),
    amountUsd: text("amount_usd"),
    createdAt: createdAt(),
    creditedAt: timestamp("credited_at", { withTimezone: true, precision: 3 }),
    /**
     * Where a chain watcher saw it (issue 30, record 053): the network ('ETH' | 'BNB'), the
     * block's number and hash. NULL for an output reported by hand (ops deposit, the CSV).
     */
    network: text("network"),
    blockNumber: bigint("block_number", { mode: "number" }),
    blockHash: text("block_hash"),
    /** Credited, then its block was reorganised away: the coin's deposits are paused until an operator decides. */
    orphanedAt: timestamp("orphaned_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    check(
      "chain_deposits_block_complete",
      sql`(network IS NULL) = (block_number IS NULL) AND (network IS NULL) = (block_hash IS NULL)`,
    ),
    // The watcher's reorganisation and confirmation steps read a network's deposits by block.
    index("chain_deposits_block_idx")
      .on(t.network, t.blockNumber)
      .where(sql`network IS NOT NULL`),
    unique("chain_deposits_output_unique").on(t.coin, t.txid, t.outputIndex),
    check("chain_deposits_status_valid", sql`status IN ('pending', 'credited')`),
    check(
      "chain_deposits_credited_consistent",
      sql`(status = 'credited') = (transfer_id IS NOT NULL) AND (status = 'credited') = (credited_at IS NOT NULL)`,
    ),
    check("chain_deposits_amount_positive", sql`amount > 0`),
    check("chain_deposits_output_nonnegative", sql`output_index >= 0`),
    check("chain_deposits_confirmations_nonnegative", sql`confirmations IS NULL OR confirmations >= 0`),
    // A wallet's unconfirmed deposits, newest first (call 4 lists them).
    index("chain_deposits_pending_idx")
      .on(t.walletId, t.createdAt, t.id)
      .where(sql`status = 'pending'`),
  ],
);

/** What the provider holds per coin (its node, its custodian's statement); the newest row counts. */
export const custodyHoldings = pgTable(
  "custody_holdings",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    coin: text("coin").notNull(),
    amount: units("amount").notNull(),
    source: text("source").notNull(),
    actor: text("actor").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    check("custody_holdings_amount_nonnegative", sql`amount >= 0`),
    check("custody_holdings_source_length", sql`char_length(source) BETWEEN 1 AND 500`),
    index("custody_holdings_coin_idx").on(t.coin, t.createdAt, t.id),
  ],
);

export type Wallet = typeof wallets.$inferSelect;
export type LedgerAccount = typeof ledgerAccounts.$inferSelect;
export type LedgerTransfer = typeof ledgerTransfers.$inferSelect;
export type Withdrawal = typeof withdrawals.$inferSelect;
export type Message = typeof messages.$inferSelect;
export type AuditEntry = typeof auditLog.$inferSelect;
export type SupportMessage = typeof supportMessages.$inferSelect;

/**
 * Abuse limits shared by every process (server/backend/domain/rate-limits.ts, record
 * 013). One row per counter. `key` is hex HMAC-SHA-256 of the counter's scope
 * and subject (normalised e-mail and/or IP address) under a key derived from
 * the backend secret, so the table holds no e-mail and no address.
 */
export const rateLimits = pgTable(
  "rate_limits",
  {
    key: text("key").primaryKey(),
    /** Which limit: 'login-account', 'login-account-ip', 'words-account-ip', 'ip-failures', … */
    scope: text("scope").notNull(),
    /** Consecutive failures, or attempts in the current window. */
    hits: bigint("hits", { mode: "number" }).notNull(),
    windowStartedAt: timestamp("window_started_at", { withTimezone: true, precision: 3 }).notNull(),
    /** No attempt is even checked before this instant (a backoff); NULL: none. */
    blockedUntil: timestamp("blocked_until", { withTimezone: true, precision: 3 }),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    check("rate_limits_hits_nonnegative", sql`hits >= 0`),
    // The purge of idle counters.
    index("rate_limits_scope_updated_idx").on(t.scope, t.updatedAt),
  ],
);

/**
 * A holder's two-factor authentication (issue 27, record 048): one row while
 * enrolled. The TOTP secret is sealed (AES-256-GCM under a key derived from the
 * backend secret, the user id as associated data); last_step is the last time
 * step accepted, so a code is taken once. removal_due_at: a restore without a
 * code asked for two-factor to go; it goes at that instant, and sends wait.
 */
export const holderTwoFactor = pgTable("holder_two_factor", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  secretSealed: text("secret_sealed").notNull(),
  enrolledAt: timestamp("enrolled_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  lastStep: bigint("last_step", { mode: "number" }),
  removalDueAt: timestamp("removal_due_at", { withTimezone: true, precision: 3 }),
});

/** A holder's single-use recovery codes, as an HMAC under a key derived from the backend secret. */
export const holderRecoveryCodes = pgTable(
  "holder_recovery_codes",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

/**
 * A holder's saved withdrawal addresses (the allowlist, issue 27). An address
 * is usable from usable_from (added + the hold); removing deletes the row.
 */
export const withdrawalAddresses = pgTable(
  "withdrawal_addresses",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    coin: text("coin").notNull(),
    address: text("address").notNull(),
    /** XRP only: the destination tag the address is saved with; NULL: none. */
    destinationTag: bigint("destination_tag", { mode: "number" }),
    label: text("label").notNull(),
    createdAt: createdAt(),
    usableFrom: timestamp("usable_from", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex("withdrawal_addresses_unique_idx").on(
      t.userId,
      t.coin,
      t.address,
      sql`coalesce(${t.destinationTag}, -1)`,
    ),
  ],
);

// ---------------------------------------------------------------------------
// E-mail (issue 28, record 049).
// ---------------------------------------------------------------------------

/**
 * "Verify your e-mail" links: the SHA-256 of the token (the token itself is only in
 * the mail), the address it proves, and its 24 h deadline. Used once.
 */
export const emailVerifications = pgTable(
  "email_verifications",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("email_verifications_user_idx").on(t.userId)],
);

/**
 * The transactional outbox: a mail is a row written in the transaction of the change it
 * reports (so a rolled-back change mails nothing); the sender renders it from its kind and
 * data, delivers it and marks it sent. `locked_until` is a sender's lease on the row.
 */
export const mailOutbox = pgTable(
  "mail_outbox",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userId: uuid("user_id").references(() => users.id, { onDelete: "set null" }),
    toAddress: text("to_address").notNull(),
    /** One template per kind (server/backend/mail/templates.ts). */
    kind: text("kind").notNull(),
    /** What the template needs: never a password, phrase, code, session id or balance. */
    data: jsonb("data").notNull(),
    /** 'queued' | 'sent'. */
    status: text("status").notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lockedUntil: timestamp("locked_until", { withTimezone: true, precision: 3 }),
    lastError: text("last_error"),
    createdAt: createdAt(),
    sentAt: timestamp("sent_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    check("mail_outbox_status_valid", sql`status IN ('queued', 'sent')`),
    check("mail_outbox_sent_consistent", sql`(status = 'sent') = (sent_at IS NOT NULL)`),
    index("mail_outbox_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'queued'`),
  ],
);

/**
 * The browsers an account has signed in from (a long-lived random cookie, kept here as its
 * HMAC): a sign-in from one not listed is mailed as a new browser.
 */
export const knownBrowsers = pgTable(
  "known_browsers",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    browserHash: text("browser_hash").notNull(),
    firstSeenAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.browserHash] })],
);
/**
 * Currency rates as they were fetched (issue 28, record 050): one row per ECB
 * reference day and currency, the multiplier from USD as decimal text (as the
 * feed answers it). Written whenever the rates are fetched (or imported by an
 * operator), never changed afterwards, so a statement of an old day is
 * answered with that day's rate.
 */
export const fxRateDays = pgTable(
  "fx_rate_days",
  {
    /** The ECB's reference day, YYYY-MM-DD. */
    day: text("day").notNull(),
    /** 'EUR' | 'GBP' | 'CAD' (USD is 1 and needs no row). */
    currency: text("currency").notNull(),
    /** Multiplier from USD: a positive plain decimal, e.g. "0.8686587908". */
    multiplier: text("multiplier").notNull(),
    /** Where it came from: 'ECB' (the daily feed) or 'ECB import' (an operator's backfill). */
    source: text("source").notNull(),
    fetchedAt: timestamp("fetched_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "fx_rate_days_pk", columns: [t.currency, t.day] }),
    check("fx_rate_days_day_format", sql`day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`),
    check("fx_rate_days_multiplier_format", sql`multiplier ~ '^[0-9]+(\\.[0-9]+)?$'`),
  ],
);
/**
 * A check value of each secret every process on this database must share (record 051):
 * HMAC-SHA-256 keyed with the secret over a fixed label, written by the first process that
 * starts on the database and compared by every later one, which refuses to start on a
 * mismatch. Never the secret itself, nor anything it follows from.
 */
export const secretChecks = pgTable("secret_checks", {
  /** The variable: 'BACKEND_SECRET' | 'SESSION_SECRET'. */
  name: text("name").primaryKey(),
  /** Hex HMAC-SHA-256(secret, "coinkeep secret check v1:" + name). */
  checkValue: text("check_value").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/**
 * A chain watcher's place on its network (issue 30, record 053): the last block read and
 * recorded, moved in the transaction that records what that block paid us; the head last
 * seen and the last error, for `ops chains` and the metrics.
 */
export const chainCursors = pgTable("chain_cursors", {
  /** 'ETH' | 'BNB'. */
  network: text("network").primaryKey(),
  blockNumber: bigint("block_number", { mode: "number" }).notNull(),
  /** NULL where the watcher started, before it had read a block. */
  blockHash: text("block_hash"),
  head: bigint("head", { mode: "number" }),
  lastError: text("last_error"),
  lastErrorAt: timestamp("last_error_at", { withTimezone: true, precision: 3 }),
  updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/** The hashes of the blocks a watcher has read, back to the deepest confirmations policy: what a reorganisation is told by. */
export const chainBlocks = pgTable(
  "chain_blocks",
  {
    network: text("network").notNull(),
    number: bigint("number", { mode: "number" }).notNull(),
    hash: text("hash").notNull(),
    parentHash: text("parent_hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.network, t.number] })],
);
