// Shared pieces of the security suite: a state snapshot of the tables that
// hold money, accounts and messages, the checks every answer must pass, and
// fixtures (accounts with a funded wallet and a message).
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Ticker } from "../../common/coins.ts";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import {
  changePasswordBody,
  clientBalancesBody,
  createAccountBody,
  loginBody,
  messageOpenBody,
  newMessagesCountBody,
  phraseBody,
  requestMessageBody,
  requestTransactionBody,
  updatePasswordBody,
  emailStatusBody,
  emailVerifyBody,
  emailConfirmBody,
  signInSeenBody,
  sessionsEndedBody,
  walletRequestBody,
} from "../../common/contract/calls.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { createAccount } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { sendMessage } from "../../server/backend/domain/messages.ts";
import { expectApiAnswer } from "../backend/api-suite.ts";
import { statementBody } from "../../common/contract/statement.ts";
import { BACKEND_SECRET, PLATFORM, ROUTES, uniqueEmail, fundedWallet } from "../backend/helpers.ts";

const KEYS = deriveServerKeys(BACKEND_SECRET);

export type Route = (typeof ROUTES)[number];

/** The tables whose contents a refused request must leave exactly as they were. */
export const WATCHED_TABLES = [
  "users",
  "wallets",
  "withdrawals",
  "ledger_transfers",
  "messages",
  "message_reads",
  "support_messages",
  "send_requests",
] as const;
export type WatchedTable = (typeof WATCHED_TABLES)[number];

// The columns hashed per table: the ones a request could change. Named, so a
// column added later (a failure counter, a last-seen time) does not make a
// refused login look like a state change.
const HASHED_COLUMNS: Record<WatchedTable, readonly string[]> = {
  users: [
    "id",
    "email",
    "password_hash",
    "phrase_hmac",
    "phrase_ciphertext",
    "phrase_kdf_salt",
    "password_changed_at",
  ],
  wallets: ["id", "user_id", "coin", "address", "issued_at"],
  withdrawals: ["id", "wallet_id", "amount", "amount_usd", "destination", "status", "decided_at"],
  ledger_transfers: ["id", "coin", "debit_account_id", "credit_account_id", "amount", "kind", "pending_id"],
  messages: ["id", "user_id", "message"],
  message_reads: ["message_id", "user_id", "opened_at"],
  support_messages: ["id", "kind", "email", "full_name", "phone", "comment", "ip", "user_id"],
  send_requests: ["user_id", "idempotency_key", "request_hash", "withdrawal_id"],
};

/** "<row count>:<md5 of the sorted rows>" per table. */
export type Snapshot = Record<WatchedTable, string>;

// One statement for all tables: table and column names are constants of this file.
const SNAPSHOT_QUERY = sql.raw(
  `select ${WATCHED_TABLES.map((table) => {
    const row = `concat_ws('|', ${HASHED_COLUMNS[table].map((c) => `${c}::text`).join(", ")})`;
    return `(select count(*)::text || ':' || coalesce(md5(string_agg(${row}, ',' order by ${row})), '') from ${table}) as ${table}`;
  }).join(", ")}`,
);

export async function snapshot(db: AppDb): Promise<Snapshot> {
  const result: unknown = await db.execute<Record<string, string>>(SNAPSHOT_QUERY);
  // node-postgres answers { rows }, PGlite's drizzle driver too; an array is taken as the rows.
  const rows = Array.isArray(result)
    ? (result as Record<string, string>[])
    : (result as { rows: Record<string, string>[] }).rows;
  const row = rows[0];
  if (!row) throw new Error("snapshot query returned no row");
  const out = {} as Snapshot;
  for (const table of WATCHED_TABLES) {
    const value = row[table];
    if (typeof value !== "string") throw new Error(`snapshot: no value for ${table}`);
    out[table] = value;
  }
  return out;
}

export function changedTables(before: Snapshot, after: Snapshot): WatchedTable[] {
  return WATCHED_TABLES.filter((table) => before[table] !== after[table]);
}

/** What a route may write when it answers 2xx; everything else must stay as it was. */
export const MAY_WRITE: Record<Route, readonly WatchedTable[]> = {
  "/api/aml-authentication": ["users"],
  "/api/aml-authorization": [],
  "/api/check-if-logged-in": [],
  "/api/request-change-password": [],
  "/api/aml-client-change-password": ["users"],
  "/api/aml-client-balances": [],
  "/api/request-nonbtc-wallet": ["wallets"],
  "/api/aml-new-messages-count": [],
  "/api/request-transaction": ["withdrawals", "ledger_transfers", "send_requests"],
  "/api/aml-message-open-status": ["message_reads"],
  "/api/request-message": ["support_messages"],
  "/api/change-password": ["users"],
  // E-mail (record 049): what they write (links, the outbox, known browsers, the audit log) is in
  // tables the fuzzer does not watch; users only through a link's confirmation.
  "/api/email": [],
  "/api/email/verify": [],
  "/api/email/confirm": ["users"],
  "/api/sign-in-seen": [],
  "/api/sessions-ended": [],
  "/api/statement": [],
};

/** What the fuzzer needs of a body schema: its fields and a check. */
interface BodySchema {
  shape: Record<string, unknown>;
  safeParse(value: unknown): { success: boolean };
}

/** The schema the handler checks each route's body with (server/backend/api/handler.ts). */
export const ROUTE_SCHEMAS: Record<Route, BodySchema> = {
  "/api/aml-authentication": createAccountBody,
  "/api/aml-authorization": loginBody,
  "/api/check-if-logged-in": phraseBody,
  "/api/request-change-password": phraseBody,
  "/api/aml-client-change-password": changePasswordBody,
  "/api/aml-client-balances": clientBalancesBody,
  "/api/request-nonbtc-wallet": walletRequestBody,
  "/api/aml-new-messages-count": newMessagesCountBody,
  "/api/request-transaction": requestTransactionBody,
  "/api/aml-message-open-status": messageOpenBody,
  "/api/request-message": requestMessageBody,
  "/api/change-password": updatePasswordBody,
  "/api/email": emailStatusBody,
  "/api/email/verify": emailVerifyBody,
  "/api/email/confirm": emailConfirmBody,
  "/api/sign-in-seen": signInSeenBody,
  "/api/sessions-ended": sessionsEndedBody,
  "/api/statement": statementBody,
};

/**
 * Whether the bytes sent are a body the route may accept: UTF-8 JSON, an
 * object, the right platform, and the route's schema accepts its known fields
 * (so the check holds whether unknown fields are refused or ignored).
 */
export function isValidBody(route: Route, bytes: Uint8Array): boolean {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const body = value as Record<string, unknown>;
  if (!Object.hasOwn(body, "platform") || body.platform !== PLATFORM) return false;
  const schema = ROUTE_SCHEMAS[route];
  const known = Object.fromEntries(Object.entries(body).filter(([key]) => Object.hasOwn(schema.shape, key)));
  return schema.safeParse(known).success;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** Sends the request and checks what every answer must be (expectApiAnswer). */
export async function answerOf(handler: ApiHandler, request: Request): Promise<Answer> {
  const response = await handler(request);
  const text = await response.text();
  const body = expectApiAnswer(request, response, text);
  return { status: response.status, headers: response.headers, text, body };
}

/** The request the routes' bodies are sent in, as curl or a browser would send it. */
export function rawRequest(
  pathname: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Uint8Array | ReadableStream<Uint8Array> | null;
  } = {},
): Request {
  const { method = "POST", headers = { "content-type": "application/json" }, body = null } = init;
  const options: RequestInit & { duplex?: "half" } = { method, headers };
  if (body !== null) {
    options.body =
      typeof body === "string" || body instanceof ReadableStream ? body : new Blob([Uint8Array.from(body)]);
    if (body instanceof ReadableStream) options.duplex = "half";
  }
  const request = new Request(`http://backend.test${pathname}`, options);
  // fetch adds text/plain for a string body; a test that sends none removes it.
  if (!("content-type" in headers)) request.headers.delete("content-type");
  return request;
}

/** An account (as call 1 makes it) with a funded ETH wallet and a message from the operators. */
export interface Holder {
  email: string;
  password: string;
  words: string;
  userId: string;
  walletId: string;
  walletAddress: string;
  messageId: string;
}

export async function createHolder(
  db: AppDb,
  opts: { label?: string; coin?: Ticker; deposit?: string } = {},
): Promise<Holder> {
  const coin = opts.coin ?? "ETH";
  const email = uniqueEmail(opts.label ?? "sec");
  const password = `pw-${randomBytes(6).toString("hex")}`;
  // Made through the domain, not call 1: the per-address creation limit is not what these tests are about.
  const created = await createAccount({ db, keys: KEYS }, email, password);
  if (!created.ok) throw new Error("account creation failed");
  const userId = created.userId;
  const wallet = await fundedWallet(db, userId, coin, { deposit: opts.deposit ?? "1000000" });
  const sent = await sendMessage(db, { to: { userId }, message: "A compliance notice." });
  if (!sent.ok) throw new Error("message failed");
  return {
    email,
    password,
    words: created.words.join(" "),
    userId,
    walletId: wallet.walletId,
    walletAddress: wallet.address,
    messageId: sent.message.id,
  };
}

/** A body each route accepts for the holder (the send uses a fixed idempotency key). */
export function validBody(route: Route, holder: Holder): Record<string, unknown> {
  const base = { platform: PLATFORM, email: holder.email };
  switch (route) {
    case "/api/aml-authentication":
      return { ...base, password: holder.password, passwordConfirmed: holder.password };
    case "/api/aml-authorization":
      return { ...base, password: holder.password };
    case "/api/check-if-logged-in":
    case "/api/request-change-password":
    case "/api/aml-client-balances":
      return { ...base, twelveWords: holder.words };
    case "/api/aml-client-change-password":
      return {
        ...base,
        twelveWords: holder.words,
        password: holder.password,
        confirmPassword: holder.password,
      };
    case "/api/request-nonbtc-wallet":
      return { ...base, twelveWords: holder.words, request_text: "eth" };
    case "/api/aml-new-messages-count":
      return { ...base, twelvewords: holder.words };
    case "/api/request-transaction":
      return {
        ...base,
        twelveWords: holder.words,
        amount: "0.0001",
        amount_in_usd: "0.3",
        receiver_wallet_address: "0x52908400098527886e0f7030069857d2e4169ee7",
        wallet_id: holder.walletId,
        idempotency_key: `fuzz-${holder.userId}`,
      };
    case "/api/aml-message-open-status":
      return { ...base, twelveWords: holder.words, messageId: holder.messageId };
    case "/api/request-message":
      return { ...base, full_name: "Fuzz Holder", phone: "+4412345678", comment: "A support message." };
    // To the same password: the holder's password stays what the other routes' bodies say.
    case "/api/change-password":
      return {
        ...base,
        twelveWords: holder.words,
        current_password: holder.password,
        password: holder.password,
        confirm_password: holder.password,
      };
    case "/api/email":
    case "/api/email/verify":
      return { ...base, twelveWords: holder.words };
    case "/api/email/confirm":
      return { platform: PLATFORM, token: "t".repeat(43) };
    case "/api/sign-in-seen":
      return {
        ...base,
        twelveWords: holder.words,
        browser_id: "f".repeat(43),
        browser_name: "Fuzz 1 on Linux",
      };
    case "/api/sessions-ended":
      return { ...base, twelveWords: holder.words, count: 1 };
    case "/api/statement": {
      const today = new Date().toISOString().slice(0, 10);
      return {
        ...base,
        twelveWords: holder.words,
        from: `${today.slice(0, 4)}-01-01`,
        to: today,
        coin: "all",
      };
    }
  }
}
