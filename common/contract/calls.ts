// The spec's API contract (section 7), written once: each call's path, its
// request body and its answer. The backend's HTTP handler and its in-process
// services parse bodies with these schemas; the web tier's client builds
// bodies with `wire` and checks answers with `answer`, over either transport.
//
// Request bodies: unknown fields are ignored (record 004, issue 6): zod's
// plain objects strip them, so the parsed output only ever holds known keys,
// and "__proto__", "constructor" and "prototype" are dropped by the JSON
// parser before any schema runs. Wrong types and missing fields are still
// refused. Issue messages never repeat the submitted values.
import { z } from "zod";
import { isTicker } from "../coins.ts";
import { MAX_DESTINATION_TAG } from "../literals.ts";
import { normalisePhrase, PHRASE_WORDS } from "../phrase.ts";

const platform = z.string();

export const email = z
  .string()
  .max(1024, "Must be at most 254 characters.")
  .trim()
  .toLowerCase()
  .pipe(z.email("Must be a valid email address.").max(254, "Must be at most 254 characters."));

export const password = z.string().min(1, "Must not be empty.").max(1024, "Must be at most 1024 characters.");

/** A space-joined string or a list of 12 strings; normalised to 12 lower-case words. */
export const twelveWords = z
  .union([z.string().max(1024), z.array(z.string().max(1024)).max(64)], {
    error: "Must be a string of 12 words or a list of 12 words.",
  })
  .transform((value) => normalisePhrase(value))
  .superRefine((value, ctx) => {
    const words = value === "" ? [] : value.split(" ");
    if (words.length !== PHRASE_WORDS) {
      ctx.addIssue({ code: "custom", message: `Must be exactly ${PHRASE_WORDS} words.` });
    } else if (!words.every((word) => /^[a-z]{1,16}$/u.test(word))) {
      ctx.addIssue({ code: "custom", message: "Each word must be 1 to 16 letters." });
    }
  });

export const createAccountBody = z.object({
  platform,
  email,
  password,
  passwordConfirmed: password,
});

/**
 * Call 2. `purpose` is our addition (record 015): "reveal" (the security page)
 * or "restore" (the restore flow's e-mail lookup) name the audit event; absent
 * is a sign-in. It changes nothing else about the answer.
 */
export const loginBody = z.object({
  platform,
  email,
  password,
  purpose: z.enum(["reveal", "restore"], 'Must be "reveal" or "restore".').optional(),
});

export const phraseBody = z.object({ platform, email, twelveWords });

export const changePasswordBody = z.object({
  platform,
  email,
  twelveWords,
  password,
  confirmPassword: password,
});

/** Call 4: optional paging of the transactions (newest first). */
export const clientBalancesBody = z.object({
  platform,
  email,
  twelveWords,
  transactions_limit: z
    .number("Must be a whole number from 1 to 1000.")
    .int("Must be a whole number from 1 to 1000.")
    .min(1, "Must be a whole number from 1 to 1000.")
    .max(1000, "Must be a whole number from 1 to 1000.")
    .optional(),
  transactions_before: z.iso
    .datetime({ offset: true, error: "Must be an ISO 8601 date and time, like 2025-01-31T12:00:00.000Z." })
    .transform((value) => new Date(value))
    .optional(),
  // false: no transactions at all (answered as []), for a page that shows only balances (record 033).
  include_transactions: z.boolean("Must be true or false.").optional(),
  // false: no messages (answered as []), for a page that does not list them.
  include_messages: z.boolean("Must be true or false.").optional(),
  // Only this coin's transactions (a wallet page); any case. Balances and wallets stay whole.
  transactions_coin: z
    .string("Must be one of the coins' tickers, like BTC.")
    .transform((value) => value.toUpperCase())
    .refine(isTicker, "Must be one of the coins' tickers, like BTC.")
    .optional(),
});

/** Call 5: request_text is the ticker, in any case; an unknown one is answered by the route. */
export const walletRequestBody = z.object({
  platform,
  email,
  twelveWords,
  request_text: z.string().max(64, "Must be at most 64 characters."),
});

/** Call 7: the words arrive as `twelvewords`, all lower-case (spec section 7 notes). */
export const newMessagesCountBody = z.object({ platform, email, twelvewords: twelveWords });

/** A decimal amount as the clients send it: a string, or a JSON number (read by its shortest decimal text). */
const decimalInput = z.union([z.string().max(256, "Must be at most 256 characters."), z.number()], {
  error: 'Must be a decimal number, as a string like "0.5" or a JSON number.',
});

const DESTINATION_TAG_NUMBER = `Must be a whole number from 0 to ${MAX_DESTINATION_TAG}, as a JSON number.`;

/** An XRP destination tag: a JSON number, an integer 0..4294967295 (record 022); null is none. */
const destinationTag = z
  .number(DESTINATION_TAG_NUMBER)
  .int(DESTINATION_TAG_NUMBER)
  .min(0, DESTINATION_TAG_NUMBER)
  .max(MAX_DESTINATION_TAG, DESTINATION_TAG_NUMBER)
  .nullable();

/**
 * Call 6. The amount is checked by the route (digits, one dot, at most 4
 * decimals, positive) so its answer can say what is wrong; amount_in_usd is
 * the client's figure and is only type-checked (the server prices the send
 * itself). idempotency_key is our addition: the same key again answers the
 * first answer and creates nothing.
 */
export const requestTransactionBody = z.object({
  platform,
  email,
  twelveWords,
  amount: decimalInput,
  amount_in_usd: decimalInput.optional(),
  receiver_wallet_address: z.string().max(256, "Must be at most 256 characters."),
  wallet_id: z.string().max(64, "Must be at most 64 characters."),
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,128}$/u, "Must be 16 to 128 letters, digits, '-' or '_'.")
    .optional(),
  // Our addition (issue 15, record 022): XRP only (the route refuses it for other coins).
  destination_tag: destinationTag.optional(),
});

/**
 * Call 8: the spec's body is only messageId; we also require the caller's
 * email and twelveWords (record 011). Any string is accepted as the id: one
 * that names no message the caller can see (malformed included) is answered
 * by the route, the same way as another user's message.
 */
export const messageOpenBody = z.object({
  platform,
  email,
  twelveWords,
  messageId: z.string("Must be a string."),
});

/**
 * Call 12, a support message (full_name present, phone optional) or a contact
 * message (email and comment only). The presence of full_name picks the kind
 * (record 011); every other field is then read by that kind's shape, so a
 * contact body with a stray `phone` is still a contact message and the phone
 * is ignored like any unknown field. Only types are checked here; the field
 * rules and their texts (spec section 5) are the route's, so a refusal names
 * the field with the text the sender sees.
 */
const supportMessageBody = z.object({
  platform,
  email: z.string("Must be a string."),
  full_name: z.string("Must be a string."),
  phone: z.string("Must be a string.").optional(),
  comment: z.string("Must be a string."),
});
const contactMessageBody = z.object({
  platform,
  email: z.string("Must be a string."),
  comment: z.string("Must be a string."),
});

export type RequestMessageBody =
  | z.output<typeof supportMessageBody>
  | (z.output<typeof contactMessageBody> & { full_name?: undefined; phone?: undefined });

const pickMessageKind = z.unknown().transform((body, ctx): RequestMessageBody => {
  const isSupport = typeof body === "object" && body !== null && Object.hasOwn(body, "full_name");
  const parsed = (isSupport ? supportMessageBody : contactMessageBody).safeParse(body);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  return z.NEVER;
});

/** `shape` lists every field either kind reads, as the other bodies' objects do. */
export const requestMessageBody = Object.assign(pickMessageKind, { shape: supportMessageBody.shape });

// ---------------------------------------------------------------------------
// Answers (spec section 7), as the backend sends them and the client checks them.

const messageAnswer = z.object({ success: z.literal(true), message: z.string() });

const createAccountAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  newUserId: z.string(),
  twelveWords: z.array(z.string()),
});

const loginAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  user: z.object({ email: z.string(), twelveWords: z.string() }),
});

const checkLoggedInAnswer = z.object({
  success: z.literal(true),
  user: z.object({ email: z.string(), userId: z.string() }),
});

const decimalText = z.string().regex(/^\d+(\.\d+)?$/u);

const sentTransaction = z.object({
  id: z.string(),
  date: z.string(),
  wallet_id: z.string(),
  recipient_wallet: z.string(),
  amount_in_crypto: z.string(),
  amount_in_dollar: z.string().nullable(),
  transaction_crypto: z.string(),
  status: z.string(),
  /** XRP sends with a destination tag only (issue 15). */
  destination_tag: z.number().int().optional(),
});

const requestTransactionAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  transaction: sentTransaction,
});

const newMessagesCountAnswer = z.object({ newMessagesCount: z.number().int().min(0) });

const openMessageAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  open_status: z.literal(1),
});

const clientBalancesAnswer = z.object({
  balances: z.record(z.string(), decimalText),
  wallets: z.array(
    z.object({
      id: z.string(),
      wallet_crypto: z.string(),
      wallet_address: z.string(),
      /** Our addition (record 041): present only while sends are paused, for the coin or the user. */
      sends_paused: z.enum(["coin", "user"]).optional(),
    }),
  ),
  transactions: z.array(
    z.object({
      id: z.string(),
      date: z.string(),
      wallet_id: z.string(),
      recipient_wallet: z.string(),
      amount_in_crypto: decimalText,
      amount_in_dollar: z.string().nullable(),
      transaction_id: z.string(),
      transaction_crypto: z.string(),
      status: z.string(),
      /** XRP sends with a destination tag only (issue 15). */
      destination_tag: z.number().int().optional(),
    }),
  ),
  messages: z.array(
    z.object({ id: z.string(), created_at: z.string(), message: z.string(), open_status: z.number() }),
  ),
});

export type CreateAccountData = z.infer<typeof createAccountAnswer>;
export type LoginData = z.infer<typeof loginAnswer>;
export type CheckLoggedInData = z.infer<typeof checkLoggedInAnswer>;
export type MessageData = z.infer<typeof messageAnswer>;
export type CheckPhraseData = MessageData;
export type ChangePasswordData = MessageData;
export type RequestWalletData = MessageData;
export type RequestMessageData = MessageData;
export type ClientBalancesData = z.infer<typeof clientBalancesAnswer>;
export type NewMessagesCountData = z.infer<typeof newMessagesCountAnswer>;
export type RequestTransactionData = z.infer<typeof requestTransactionAnswer>;
export type SentTransaction = z.infer<typeof sentTransaction>;
export type OpenMessageData = z.infer<typeof openMessageAnswer>;

// ---------------------------------------------------------------------------
// What a caller of the client passes (camelCase, phrases as word lists).

export interface CreateAccountInput {
  email: string;
  password: string;
  passwordConfirmed: string;
}

export interface LoginInput {
  email: string;
  password: string;
  /**
   * Our addition to call 2 (record 015): why the password is checked, for the
   * audit log — the security page's phrase reveal, or the restore flow's
   * e-mail lookup. Absent: a sign-in.
   */
  purpose?: "reveal" | "restore";
}

export interface PhraseInput {
  email: string;
  twelveWords: string[];
}

export interface ChangePasswordInput extends PhraseInput {
  password: string;
  confirmPassword: string;
}

export interface ClientBalancesInput extends PhraseInput {
  /** Newest first; at most this many transactions (1..1000). */
  transactionsLimit?: number;
  /** Only transactions older than this ISO date (paging). */
  transactionsBefore?: string;
  /** Only this coin's transactions (a wallet page). */
  transactionsCoin?: string;
  /** false: no transactions, no messages (a page that shows neither; the lists come back empty). */
  includeTransactions?: boolean;
  includeMessages?: boolean;
}

export interface RequestWalletInput extends PhraseInput {
  ticker: string;
}

export interface RequestTransactionInput extends PhraseInput {
  walletId: string;
  /** Decimal text, at most SEND_DECIMALS decimals. */
  amount: string;
  /** The client's USD figure (the server prices the send itself). */
  amountInUsd: string;
  receiverWalletAddress: string;
  /** Issued with the form: the same key again answers the first answer and sends nothing. */
  idempotencyKey?: string;
  /** XRP only: the destination tag, 0..4294967295. */
  destinationTag?: number;
}

export interface OpenMessageInput extends PhraseInput {
  messageId: string;
}

/** Call 12: the support modal's message, or the public contact form's. */
export type RequestMessageInput =
  | { kind: "support"; email: string; fullName: string; phone: string; comment: string }
  | { kind: "contact"; email: string; comment: string };

// ---------------------------------------------------------------------------
// The calls: path, body schema, answer schema, and the body a client input becomes.

const words = (input: PhraseInput) => input.twelveWords.join(" ");

/** One call of the contract. `wire` builds the JSON body (without `platform`) from the client's input. */
export interface CallSpec<I, B extends z.ZodType, A extends z.ZodType> {
  path: string;
  body: B;
  answer: A;
  wire(input: I): Record<string, unknown>;
}

function call<I, B extends z.ZodType, A extends z.ZodType>(spec: CallSpec<I, B, A>): CallSpec<I, B, A> {
  return spec;
}

/** Our base path: the calls are mounted at `${API_BASE}${path}`. */
export const API_BASE = "/api";

export const CALLS = {
  createAccount: call({
    path: "/aml-authentication",
    body: createAccountBody,
    answer: createAccountAnswer,
    wire: (input: CreateAccountInput) => ({
      email: input.email,
      password: input.password,
      passwordConfirmed: input.passwordConfirmed,
    }),
  }),
  login: call({
    path: "/aml-authorization",
    body: loginBody,
    answer: loginAnswer,
    wire: (input: LoginInput) => ({
      email: input.email,
      password: input.password,
      ...(input.purpose !== undefined ? { purpose: input.purpose } : {}),
    }),
  }),
  checkLoggedIn: call({
    path: "/check-if-logged-in",
    body: phraseBody,
    answer: checkLoggedInAnswer,
    wire: (input: PhraseInput) => ({ email: input.email, twelveWords: words(input) }),
  }),
  checkPhrase: call({
    path: "/request-change-password",
    body: phraseBody,
    answer: messageAnswer,
    wire: (input: PhraseInput) => ({ email: input.email, twelveWords: words(input) }),
  }),
  changePassword: call({
    path: "/aml-client-change-password",
    body: changePasswordBody,
    answer: messageAnswer,
    wire: (input: ChangePasswordInput) => ({
      email: input.email,
      twelveWords: words(input),
      password: input.password,
      confirmPassword: input.confirmPassword,
    }),
  }),
  clientBalances: call({
    path: "/aml-client-balances",
    body: clientBalancesBody,
    answer: clientBalancesAnswer,
    wire: (input: ClientBalancesInput) => ({
      email: input.email,
      twelveWords: words(input),
      ...(input.transactionsLimit !== undefined ? { transactions_limit: input.transactionsLimit } : {}),
      ...(input.transactionsBefore !== undefined ? { transactions_before: input.transactionsBefore } : {}),
      ...(input.transactionsCoin !== undefined ? { transactions_coin: input.transactionsCoin } : {}),
      ...(input.includeTransactions !== undefined ? { include_transactions: input.includeTransactions } : {}),
      ...(input.includeMessages !== undefined ? { include_messages: input.includeMessages } : {}),
    }),
  }),
  requestWallet: call({
    path: "/request-nonbtc-wallet",
    body: walletRequestBody,
    answer: messageAnswer,
    wire: (input: RequestWalletInput) => ({
      email: input.email,
      twelveWords: words(input),
      request_text: input.ticker,
    }),
  }),
  // Call 7 spells the field `twelvewords` (spec section 7).
  newMessagesCount: call({
    path: "/aml-new-messages-count",
    body: newMessagesCountBody,
    answer: newMessagesCountAnswer,
    wire: (input: PhraseInput) => ({ email: input.email, twelvewords: words(input) }),
  }),
  requestTransaction: call({
    path: "/request-transaction",
    body: requestTransactionBody,
    answer: requestTransactionAnswer,
    wire: (input: RequestTransactionInput) => ({
      email: input.email,
      twelveWords: words(input),
      amount: input.amount,
      amount_in_usd: input.amountInUsd,
      receiver_wallet_address: input.receiverWalletAddress,
      wallet_id: input.walletId,
      ...(input.idempotencyKey !== undefined ? { idempotency_key: input.idempotencyKey } : {}),
      ...(input.destinationTag !== undefined ? { destination_tag: input.destinationTag } : {}),
    }),
  }),
  // Call 8: our contract also takes the caller's credentials (record 011).
  openMessage: call({
    path: "/aml-message-open-status",
    body: messageOpenBody,
    answer: openMessageAnswer,
    wire: (input: OpenMessageInput) => ({
      email: input.email,
      twelveWords: words(input),
      messageId: input.messageId,
    }),
  }),
  // Call 12: the body's shape tells the backend which form sent it; no credentials.
  requestMessage: call({
    path: "/request-message",
    body: requestMessageBody,
    answer: messageAnswer,
    wire: (input: RequestMessageInput) =>
      input.kind === "support"
        ? { email: input.email, full_name: input.fullName, phone: input.phone, comment: input.comment }
        : { email: input.email, comment: input.comment },
  }),
} as const;

export type CallName = keyof typeof CALLS;
type Calls = typeof CALLS;
/** The client's input of a call. */
export type CallInput<N extends CallName> = Parameters<Calls[N]["wire"]>[0];
/** A call's body after its schema (what the backend's services take). */
export type CallBody<N extends CallName> = z.output<Calls[N]["body"]>;
/** A call's answer. */
export type CallAnswer<N extends CallName> = z.output<Calls[N]["answer"]>;

/** Headers our own web tier adds to its HTTP calls (records 011, 026). */
export const CLIENT_IP_HEADER = "X-Coinkeep-Client-Ip";
export const BACKEND_TOKEN_HEADER = "X-Coinkeep-Backend-Token";
