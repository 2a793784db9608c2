// Messages both ways. Compliance messages go from operators to users (one user,
// or everyone), are listed by call 4, counted by call 7 and opened by call 8.
// Support and contact messages go from users and visitors to the operators
// (call 12). All of it is plain text: stored as given, never escaped or
// interpreted here; whoever displays it escapes it for its medium.
//
// Operator functions take an AppDb, which may be a transaction, so the
// operator commands can write their audit row atomically with the change.
import { queueAlert } from "../mail/outbox.ts";
import { and, asc, desc, eq, gte, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { z } from "zod";
import { firstPerField, issuesOf, type Issue } from "../../../common/contract/refusals.ts";
import { characters, MESSAGE_RULES, storable, type CheckedMessage } from "../../../common/support-message.ts";
import type { AppDb } from "../db/index.ts";
import {
  messageReads,
  messages,
  supportMessages,
  supportReplies,
  users,
  type Message,
  type SupportMessage,
} from "../db/schema.ts";
import { normaliseEmail } from "./accounts.ts";
import { isUuid } from "./ledger.ts";

/** The longest compliance message, in characters (code points). */
export const MAX_MESSAGE = 5000;
/** listSupportMessages answers at most this many rows. */
export const MAX_SUPPORT_LIST = 1000;

/** A programming or operator mistake in the arguments (the API checks its input before calling). */
export class MessageInputError extends Error {}

// ---------------------------------------------------------------------------
// Compliance messages (operators → users)
// ---------------------------------------------------------------------------

/**
 * The messages a user sees: their own, and messages to everyone sent while
 * they had an account. For queries that join users on the user's id.
 * The same rule as server/backend/domain/wallets.ts (calls 4 and 7) uses.
 */
export function visibleTo(userId: string) {
  return or(
    eq(messages.userId, userId),
    and(isNull(messages.userId), gte(messages.createdAt, users.createdAt)),
  );
}

export interface UserRef {
  userId: string;
  email: string;
  createdAt: Date;
}

/** The account with this e-mail (normalised first), or undefined. */
export async function findUserByEmail(db: AppDb, email: string): Promise<UserRef | undefined> {
  const [row] = await db
    .select({ userId: users.id, email: users.email, createdAt: users.createdAt })
    .from(users)
    .where(eq(users.email, normaliseEmail(email)))
    .limit(1);
  return row;
}

export interface SendMessageInput {
  /** One user, or every user who has an account when it is sent. */
  to: { userId: string } | "all";
  /** Plain text, 1..5000 characters once surrounding white space is trimmed (it is stored trimmed). */
  message: string;
}

export type SendMessageResult = { ok: true; message: Message } | { ok: false; reason: "user-not-found" };

/**
 * Sends a compliance message. It shows unread (open_status 0) in call 4 and
 * counts in call 7 until the user opens it (call 8). A message to "all"
 * reaches the users who exist when it is sent, not those created later.
 * Throws MessageInputError when the text is empty, too long or not storable.
 */
export async function sendMessage(db: AppDb, input: SendMessageInput): Promise<SendMessageResult> {
  const text = input.message.trim();
  const length = characters(text);
  if (length < 1 || length > MAX_MESSAGE) {
    throw new MessageInputError(`message must be 1 to ${MAX_MESSAGE} characters after trimming`);
  }
  if (!storable(text)) throw new MessageInputError("message contains characters that cannot be stored");

  let userId: string | null = null;
  if (input.to !== "all") {
    userId = input.to.userId;
    if (!isUuid(userId)) return { ok: false, reason: "user-not-found" };
    // Users are never deleted, so a user found here is still there for the insert.
    const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId));
    if (!user) return { ok: false, reason: "user-not-found" };
  }
  const [row] = await db.insert(messages).values({ userId, message: text }).returning();
  if (!row) throw new Error("message not inserted");
  return { ok: true, message: row };
}

export type OpenMessageResult =
  | { ok: true; openedAt: Date; alreadyOpen: boolean }
  /** Not a message this user can see: another user's, unknown, or not even an id. */
  | { ok: false; reason: "not-found" };

/**
 * Call 8: marks a message the user can see as opened (open_status 1), once.
 * Opening it again changes nothing and keeps the first opened_at.
 */
export async function openMessage(db: AppDb, userId: string, messageId: string): Promise<OpenMessageResult> {
  if (!isUuid(userId) || !isUuid(messageId)) return { ok: false, reason: "not-found" };
  const [visible] = await db
    .select({ id: messages.id })
    .from(messages)
    .innerJoin(users, eq(users.id, userId))
    .where(and(eq(messages.id, messageId), visibleTo(userId)));
  if (!visible) return { ok: false, reason: "not-found" };

  // Messages are never deleted, so the one seen above is still there; two
  // concurrent opens insert one row, and the loser reads the winner's.
  const [inserted] = await db
    .insert(messageReads)
    .values({ messageId, userId })
    .onConflictDoNothing({ target: [messageReads.messageId, messageReads.userId] })
    .returning({ openedAt: messageReads.openedAt });
  if (inserted) return { ok: true, openedAt: inserted.openedAt, alreadyOpen: false };
  const [existing] = await db
    .select({ openedAt: messageReads.openedAt })
    .from(messageReads)
    .where(and(eq(messageReads.messageId, messageId), eq(messageReads.userId, userId)));
  if (!existing) throw new Error("message read neither inserted nor found");
  return { ok: true, openedAt: existing.openedAt, alreadyOpen: true };
}

// ---------------------------------------------------------------------------
// Support and contact messages (users and visitors → operators)
// ---------------------------------------------------------------------------

export type SupportKind = "support" | "contact";

/** A field of a message refused by its rules, by the form's name (fullName), with the sender's text. */
export type SupportIssue = Issue;

/**
 * Checks a support or contact message by the field rules both tiers share
 * (common/support-message.ts) — call 12's decode has run them already; this is
 * for the operators' tools and tests that store a message directly. Issues
 * come in body order (email, fullName, phone, comment), at most one per field:
 * the first rule the field breaks.
 */
export function checkSupportMessage(
  message: z.input<typeof MESSAGE_RULES>,
): { ok: true; value: CheckedMessage } | { ok: false; issues: SupportIssue[] } {
  const checked = MESSAGE_RULES.safeParse(message);
  if (checked.success) return { ok: true, value: checked.data };
  return { ok: false, issues: firstPerField(issuesOf(checked.error)) };
}

export interface StoreSupportMessageOptions {
  /** The sender's IP address (already checked and normalised by the caller), or null when unknown. */
  ip: string | null;
  /** The sender's account, only when the sender proved it. */
  userId?: string | null;
}

export type StoreSupportMessageResult =
  { ok: true; message: SupportMessage } | { ok: false; issues: SupportIssue[] };

/** Call 12: checks a support or contact message and stores it for the operators. */
export async function storeSupportMessage(
  db: AppDb,
  input: z.input<typeof MESSAGE_RULES>,
  opts: StoreSupportMessageOptions,
): Promise<StoreSupportMessageResult> {
  const checked = checkSupportMessage(input);
  if (!checked.ok) return checked;
  const userId = opts.userId ?? null;
  if (userId !== null && !isUuid(userId)) throw new MessageInputError("userId must be a uuid");
  const [row] = await db
    .insert(supportMessages)
    .values({ ...checked.value, ip: opts.ip, userId })
    .returning();
  if (!row) throw new Error("support message not inserted");
  return { ok: true, message: row };
}

export interface ListSupportMessagesOptions {
  /** Only this kind; default both. */
  kind?: SupportKind;
  /** 1..1000, default 100. */
  limit?: number;
  /** Only messages strictly older than this (paging: pass the last row's createdAt). */
  before?: Date;
}

/** Support and contact messages, newest first (ties by id). */
export async function listSupportMessages(
  db: AppDb,
  opts: ListSupportMessagesOptions = {},
): Promise<SupportMessage[]> {
  const limit = opts.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SUPPORT_LIST) {
    throw new MessageInputError(`limit must be a whole number from 1 to ${MAX_SUPPORT_LIST}`);
  }
  if (opts.kind !== undefined && opts.kind !== "support" && opts.kind !== "contact") {
    throw new MessageInputError("kind must be support or contact");
  }
  return db
    .select()
    .from(supportMessages)
    .where(
      and(
        opts.kind ? eq(supportMessages.kind, opts.kind) : undefined,
        opts.before ? lt(supportMessages.createdAt, opts.before) : undefined,
      ),
    )
    .orderBy(desc(supportMessages.createdAt), desc(supportMessages.id))
    .limit(limit);
}

/**
 * Forgets the sender addresses of messages older than the cut-off (record 011:
 * kept 90 days for abuse handling). Returns how many were cleared.
 */
export async function forgetSenderAddresses(db: AppDb, olderThan: Date): Promise<number> {
  const cleared = await db
    .update(supportMessages)
    .set({ ip: null })
    .where(and(lt(supportMessages.createdAt, olderThan), isNotNull(supportMessages.ip)))
    .returning({ id: supportMessages.id });
  return cleared.length;
}

// ---------------------------------------------------------------------------
// Replies to support and contact messages (staff → the holder)
// ---------------------------------------------------------------------------

export interface SupportReplyInput {
  supportMessageId: string;
  /** Who answers: a staff member's e-mail, or an operator command's --as. */
  author: string;
  /** The reply, by the rules of a compliance message (sendMessage checks them). */
  text: string;
}

export type SupportReplyResult =
  | { ok: true; replyId: string; message: Message; to: UserRef; createdAt: Date }
  | { ok: false; reason: "support-message-not-found" }
  /** Nobody holds an account with the message's e-mail: a reply could reach no one. */
  | { ok: false; reason: "no-account"; email: string };

/**
 * Answers a support or contact message: the reply reaches the holder as a
 * compliance message (unread in their Notifications; the messages table's
 * trigger raises the live event that updates their badge) and is recorded
 * against the message it answers. The holder is the sender's account when
 * they proved it, else the account whose e-mail is the message's (normalised).
 * Throws MessageInputError when the text breaks a compliance message's rules.
 * db may be a transaction (the command writes its audit row in it).
 */
export async function replyToSupportMessage(
  db: AppDb,
  input: SupportReplyInput,
): Promise<SupportReplyResult> {
  const author = input.author.trim();
  if (author === "") throw new MessageInputError("author is empty");
  if (!isUuid(input.supportMessageId)) return { ok: false, reason: "support-message-not-found" };
  const [asked] = await db
    .select({ email: supportMessages.email, userId: supportMessages.userId })
    .from(supportMessages)
    .where(eq(supportMessages.id, input.supportMessageId));
  if (!asked) return { ok: false, reason: "support-message-not-found" };
  let to: UserRef | undefined;
  if (asked.userId !== null) {
    [to] = await db
      .select({ userId: users.id, email: users.email, createdAt: users.createdAt })
      .from(users)
      .where(eq(users.id, asked.userId));
  }
  to ??= await findUserByEmail(db, asked.email);
  if (!to) return { ok: false, reason: "no-account", email: asked.email };
  const sent = await sendMessage(db, { to: { userId: to.userId }, message: input.text });
  // Users are never deleted: the account found above is still there.
  if (!sent.ok) throw new Error("the holder of a support message vanished");
  const [reply] = await db
    .insert(supportReplies)
    .values({ supportMessageId: input.supportMessageId, messageId: sent.message.id, author })
    .returning({ id: supportReplies.id, createdAt: supportReplies.createdAt });
  if (!reply) throw new Error("support reply not inserted");
  // The holder's "support replied" mail, with the reply (issue 28, record 049).
  await queueAlert(db, to.userId, "support_reply", {});
  return { ok: true, replyId: reply.id, message: sent.message, to, createdAt: reply.createdAt };
}

export interface SupportReply {
  id: string;
  author: string;
  at: Date;
  text: string;
  messageId: string;
}

/** The replies to these support messages, oldest first per message. */
export async function repliesOf(
  db: AppDb,
  supportMessageIds: readonly string[],
): Promise<Map<string, SupportReply[]>> {
  const found = new Map<string, SupportReply[]>();
  const ids = supportMessageIds.filter(isUuid);
  if (ids.length === 0) return found;
  const rows = await db
    .select({
      supportMessageId: supportReplies.supportMessageId,
      id: supportReplies.id,
      author: supportReplies.author,
      at: supportReplies.createdAt,
      text: messages.message,
      messageId: supportReplies.messageId,
    })
    .from(supportReplies)
    .innerJoin(messages, eq(messages.id, supportReplies.messageId))
    .where(inArray(supportReplies.supportMessageId, ids))
    .orderBy(asc(supportReplies.createdAt), asc(supportReplies.id));
  for (const { supportMessageId, ...reply } of rows) {
    const list = found.get(supportMessageId) ?? [];
    list.push(reply);
    found.set(supportMessageId, list);
  }
  return found;
}
