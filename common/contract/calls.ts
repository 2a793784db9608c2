// The spec's API contract (section 7), written once: each call's path, its
// request body and its answer. The backend's HTTP handler and the web tier's
// in-process client decode bodies with decodeBody; the client builds them with
// encodeBody and checks answers with `answer`, over either transport.
//
// Request bodies: unknown fields are ignored (record 004, issue 6): zod's
// plain objects strip them, so the parsed output only ever holds known keys,
// and "__proto__", "constructor" and "prototype" are dropped by the JSON
// parser before any schema runs. Wrong types and missing fields are still
// refused. Issue messages never repeat the submitted values.
import { z } from "zod";
import { labelProblem } from "../allowlist.ts";
import { isTicker } from "../coins.ts";
import { MAX_DESTINATION_TAG } from "../literals.ts";
import { normalisePhrase, PHRASE_WORDS } from "../phrase.ts";
import { MESSAGE_RULES } from "../support-message.ts";
import { firstPerField, issuesOf, refusal, type Refusal } from "./refusals.ts";

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
 * A code of the holder's authenticator app ("123456", "123 456") or one of
 * their recovery codes ("abcde-fghjk"): our addition (issue 27, record 048),
 * asked only of holders who turned two-factor on.
 */
export const twoFactorCode = z
  .string("Must be a string.")
  .max(64, "Must be at most 64 characters.")
  .regex(/^[A-Za-z0-9 -]*$/u, "Must be the 6-digit code or a recovery code.");

/** A step-up grant a code bought (twoFactorVerify, or call 2 with a code): good for 5 minutes. */
export const twoFactorGrant = z.string("Must be a string.").max(256, "Must be at most 256 characters.");

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
  // Issue 27: a holder with two-factor on gives a code to sign in (or, for a reveal, a grant).
  two_factor_code: twoFactorCode.optional(),
  two_factor_grant: twoFactorGrant.optional(),
});

export const phraseBody = z.object({ platform, email, twelveWords });

export const changePasswordBody = z.object({
  platform,
  email,
  twelveWords,
  password,
  confirmPassword: password,
  // Issue 27: with two-factor on, a code keeps it on; without one, it is removed after a hold.
  two_factor_code: twoFactorCode.optional(),
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
  // Issue 27 (record 048): with two-factor on, a code or a grant of the last 5 minutes.
  two_factor_code: twoFactorCode.optional(),
  two_factor_grant: twoFactorGrant.optional(),
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
 * is ignored like any unknown field. Only types are checked here (400
 * invalid_request); the field rules and their texts (spec section 5) are the
 * forms' own (common/support-message.ts), run by the call's decode next, so a
 * refusal names the field with the text the sender sees (400 invalid_message).
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

type MessageBody =
  | ({ kind: "support" } & z.output<typeof supportMessageBody>)
  | ({ kind: "contact" } & z.output<typeof contactMessageBody>);

const pickMessageKind = z.unknown().transform((body, ctx): MessageBody => {
  const isSupport = typeof body === "object" && body !== null && Object.hasOwn(body, "full_name");
  const parsed = isSupport ? supportMessageBody.safeParse(body) : contactMessageBody.safeParse(body);
  if (parsed.success) return { kind: isSupport ? "support" : "contact", ...parsed.data } as MessageBody;
  for (const issue of parsed.error.issues)
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  return z.NEVER;
});

/** `shape` lists every field either kind reads, as the other bodies' objects do. */
export const requestMessageBody = Object.assign(pickMessageKind, { shape: supportMessageBody.shape });

// ---------------------------------------------------------------------------
// Holder security bodies and answers (issue 27, record 048)
// -- two-factor bodies
export const twoFactorStatusBody = z.object({ platform, email, twelveWords });
export const twoFactorBeginBody = z.object({ platform, email, twelveWords, password });
export const twoFactorEnableBody = z.object({
  platform,
  email,
  twelveWords,
  secret: z.string("Must be a string.").regex(/^[A-Z2-7]{32}$/u, "Must be the secret twoFactorBegin gave."),
  two_factor_code: twoFactorCode,
});
export const twoFactorDisableBody = z.object({
  platform,
  email,
  twelveWords,
  password,
  two_factor_code: twoFactorCode,
});
export const twoFactorVerifyBody = z.object({ platform, email, twelveWords, two_factor_code: twoFactorCode });

const twoFactorStatusAnswer = z.object({
  success: z.literal(true),
  enabled: z.boolean(),
  /** While a restore's removal waits: when two-factor goes (ISO 8601); sends are refused until then. */
  removal_at: z.string().nullable(),
  recovery_codes_left: z.number().int().min(0),
});
const twoFactorBeginAnswer = z.object({
  success: z.literal(true),
  secret: z.string(),
  otpauth_uri: z.string(),
});
const twoFactorEnableAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  recovery_codes: z.array(z.string()),
});
const twoFactorVerifyAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  grant: z.string(),
  expires_at: z.string(),
  /** A waiting removal was called off by this code. */
  removal_cancelled: z.boolean(),
});
// -- allowlist bodies
/** A ticker in any case ("eth", "ETH"), as the coin's ticker. */
const ticker = z
  .string("Must be one of the coins' tickers, like BTC.")
  .max(16, "Must be one of the coins' tickers, like BTC.")
  .transform((value) => value.trim().toUpperCase())
  .refine(isTicker, "Must be one of the coins' tickers, like BTC.");
/** A saved address's label: trimmed, 1 to LABEL_MAX characters, no control characters. */
const savedLabel = z
  .string("Must be a string.")
  .max(1024, "Must be at most 1024 characters.")
  .transform((value) => value.trim())
  .superRefine((value, ctx) => {
    const problem = labelProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
/** What a change of the allowlist is proven with: the password, and with two-factor on a code or a grant. */
const allowlistProof = {
  password,
  two_factor_code: twoFactorCode.optional(),
  two_factor_grant: twoFactorGrant.optional(),
};
export const allowlistBody = z.object({ platform, email, twelveWords });
/** The address is checked by the services, as a send's (common/addresses.ts, USDT by the configured network). */
export const allowlistAddBody = z.object({
  platform,
  email,
  twelveWords,
  coin: ticker,
  address: z.string("Must be a string.").max(256, "Must be at most 256 characters."),
  destination_tag: destinationTag.optional(),
  label: savedLabel,
  ...allowlistProof,
});
export const allowlistRemoveBody = z.object({
  platform,
  email,
  twelveWords,
  id: z.string("Must be a string.").max(64, "Must be at most 64 characters."),
  ...allowlistProof,
});
export const allowlistSetBody = z.object({
  platform,
  email,
  twelveWords,
  on: z.boolean("Must be true or false."),
  ...allowlistProof,
});

const savedAddress = z.object({
  id: z.string(),
  coin: z.string(),
  /** Canonical, as a send stores it (an X-address is saved as its classic address and tag). */
  address: z.string(),
  /** XRP only; null: none. */
  destination_tag: z.number().int().nullable(),
  label: z.string(),
  created_at: z.string(),
  /** From this instant (the hold's end) a send may go to it. */
  usable_from: z.string(),
  /** Whether usable_from has passed, by the holds' clock. */
  usable: z.boolean(),
});
const allowlistAnswer = z.object({
  success: z.literal(true),
  /** Only saved addresses can receive sends (also while a turn-off waits). */
  on: z.boolean(),
  /** A turn-off waiting for its hold: sends may go anywhere from this instant. */
  off_at: z.string().nullable(),
  /** ALLOWLIST_HOLD_HOURS: how long a new address, or a turn-off, waits. */
  hold_hours: z.number().int().min(0),
  /** The network USDT addresses are checked for here. */
  usdt_network: z.enum(["erc20", "trc20"]),
  addresses: z.array(savedAddress),
});
const allowlistAddAnswer = z.object({ success: z.literal(true), message: z.string(), address: savedAddress });
const allowlistSetAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  on: z.boolean(),
  off_at: z.string().nullable(),
});
export type SavedAddressData = z.infer<typeof savedAddress>;
export type AllowlistData = z.infer<typeof allowlistAnswer>;
// -- password and sessions bodies
/**
 * Our addition (issue 27): a signed-in holder changes their password. The
 * e-mail and words prove the session as on every signed-in call; the current
 * password proves the person (a wrong one counts toward call 2's limits,
 * record 013); the new password twice, compared in NFKC (record 025).
 */
export const updatePasswordBody = z.object({
  platform,
  email,
  twelveWords,
  current_password: password,
  password,
  confirm_password: password,
});

// -- e-mail bodies (issue 28, record 049)
export const emailStatusBody = z.object({ platform, email, twelveWords });
export const emailVerifyBody = z.object({ platform, email, twelveWords });
/** The token of a "Verify your e-mail" link: it alone proves the mailbox; no session needed. */
export const emailConfirmBody = z.object({
  platform,
  token: z
    .string("Must be a string.")
    .regex(/^[A-Za-z0-9_-]{20,128}$/u, "Must be the token of a verification link."),
});
/**
 * After a sign-in (the web tier's): the browser's long-lived identifier (kept hashed) and
 * its name for the mail ("Firefox 128 on Linux"). A browser the account has not used
 * before is mailed, when the address is verified.
 */
export const signInSeenBody = z.object({
  platform,
  email,
  twelveWords,
  browser_id: z
    .string("Must be a string.")
    .regex(/^[A-Za-z0-9_-]{22,128}$/u, "Must be the browser's identifier."),
  browser_name: z.string("Must be a string.").max(200, "Must be at most 200 characters."),
});
/** Sessions ended from the Security page (the web tier ends them; the backend mails it). */
export const sessionsEndedBody = z.object({
  platform,
  email,
  twelveWords,
  count: z
    .number("Must be a whole number from 1 to 10000.")
    .int("Must be a whole number from 1 to 10000.")
    .min(1, "Must be a whole number from 1 to 10000.")
    .max(10_000, "Must be a whole number from 1 to 10000."),
});

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
  /** Issue 27: a code was given; this grant covers a reveal or send of the next 5 minutes. */
  two_factor_grant: z.string().optional(),
});

/** Call 10: our addition (issue 27) says whether the restore's last step asks for a code. */
const checkPhraseAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  two_factor: z.boolean().optional(),
});

/** Call 11: our addition (issue 27) says when two-factor goes, after a restore without a code. */
const changePasswordAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  two_factor_removal_at: z.string().optional(),
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
export type CheckPhraseData = z.infer<typeof checkPhraseAnswer>;
export type ChangePasswordData = z.infer<typeof changePasswordAnswer>;
export type RequestWalletData = MessageData;
export type RequestMessageData = MessageData;
export type ClientBalancesData = z.infer<typeof clientBalancesAnswer>;
export type NewMessagesCountData = z.infer<typeof newMessagesCountAnswer>;
export type RequestTransactionData = z.infer<typeof requestTransactionAnswer>;
export type SentTransaction = z.infer<typeof sentTransaction>;
export type OpenMessageData = z.infer<typeof openMessageAnswer>;

// ---------------------------------------------------------------------------
// The calls. Each is written once: its path, its body as the spec spells it
// (wire names, snake_case or camelCase as section 7 has them) and its answer.
// Everything else is derived from that one declaration (record 046):
//   - the client's input: the body's fields by their camelCase names (full_name → fullName),
//     without `platform`; a phrase may be a list of words;
//   - encodeBody(input): the JSON body, wire names back, a phrase as one space-joined string;
//   - decodeBody(body): the body checked by its schema (types, and for calls 1–11 their rules),
//     its fields renamed to camelCase for the services and the domain, then the call's field
//     rules (call 12: the forms' own); a refusal names the fields at fault, by wire name over
//     HTTP and by the form's name in the client's answer (formPath).

/** A wire name in camelCase: full_name → fullName; a name without "_" is itself. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;

/** An object's keys in camelCase, over each member of a union; `platform` is the transport's. */
type Cameled<T> = T extends unknown
  ? { [K in keyof T as K extends "platform" ? never : K extends string ? Camel<K> : K]: T[K] }
  : never;

/** A wire name, or a refused field's path, in camelCase: the name the app and its forms use. */
export function formPath(name: string): string {
  return name.replace(/_([a-z])/gu, (_, letter: string) => letter.toUpperCase());
}

/** One call of the contract; `rules`, when present, run on the decoded body (call 12). */
export interface CallSpec<B extends z.ZodType, A extends z.ZodType, R extends z.ZodType | undefined> {
  path: string;
  body: B;
  answer: A;
  rules: R;
}

function call<
  B extends z.ZodType & { shape: z.ZodRawShape },
  A extends z.ZodType,
  R extends z.ZodType | undefined = undefined,
>(spec: { path: string; body: B; answer: A; rules?: R }): CallSpec<B, A, R> {
  return { ...spec, rules: spec.rules as R };
}

/** Our base path: the calls are mounted at `${API_BASE}${path}`. */
export const API_BASE = "/api";

export const CALLS = {
  createAccount: call({ path: "/aml-authentication", body: createAccountBody, answer: createAccountAnswer }),
  /** Call 2; `purpose` is our addition (record 015). */
  login: call({ path: "/aml-authorization", body: loginBody, answer: loginAnswer }),
  checkLoggedIn: call({ path: "/check-if-logged-in", body: phraseBody, answer: checkLoggedInAnswer }),
  checkPhrase: call({ path: "/request-change-password", body: phraseBody, answer: checkPhraseAnswer }),
  changePassword: call({
    path: "/aml-client-change-password",
    body: changePasswordBody,
    answer: changePasswordAnswer,
  }),
  clientBalances: call({
    path: "/aml-client-balances",
    body: clientBalancesBody,
    answer: clientBalancesAnswer,
  }),
  requestWallet: call({ path: "/request-nonbtc-wallet", body: walletRequestBody, answer: messageAnswer }),
  // Call 7 spells the field `twelvewords` (spec section 7), and so does its input.
  newMessagesCount: call({
    path: "/aml-new-messages-count",
    body: newMessagesCountBody,
    answer: newMessagesCountAnswer,
  }),
  requestTransaction: call({
    path: "/request-transaction",
    body: requestTransactionBody,
    answer: requestTransactionAnswer,
  }),
  // Call 8: our contract also takes the caller's credentials (record 011).
  openMessage: call({ path: "/aml-message-open-status", body: messageOpenBody, answer: openMessageAnswer }),
  // Call 12: no credentials; the body's shape tells which form sent it, the forms' rules check it.
  requestMessage: call({
    path: "/request-message",
    body: requestMessageBody,
    answer: messageAnswer,
    rules: MESSAGE_RULES,
  }),
  // ---- Holder security (issue 27, record 048): our additions, not the spec's.
  // -- two-factor calls
  twoFactorStatus: call({ path: "/two-factor", body: twoFactorStatusBody, answer: twoFactorStatusAnswer }),
  twoFactorBegin: call({ path: "/two-factor/begin", body: twoFactorBeginBody, answer: twoFactorBeginAnswer }),
  twoFactorEnable: call({
    path: "/two-factor/enable",
    body: twoFactorEnableBody,
    answer: twoFactorEnableAnswer,
  }),
  twoFactorDisable: call({ path: "/two-factor/disable", body: twoFactorDisableBody, answer: messageAnswer }),
  twoFactorVerify: call({
    path: "/two-factor/verify",
    body: twoFactorVerifyBody,
    answer: twoFactorVerifyAnswer,
  }),
  // -- allowlist calls
  allowlist: call({ path: "/allowlist", body: allowlistBody, answer: allowlistAnswer }),
  allowlistAdd: call({ path: "/allowlist/add", body: allowlistAddBody, answer: allowlistAddAnswer }),
  allowlistRemove: call({ path: "/allowlist/remove", body: allowlistRemoveBody, answer: messageAnswer }),
  allowlistSet: call({ path: "/allowlist/set", body: allowlistSetBody, answer: allowlistSetAnswer }),
  // -- password and sessions calls
  /** Answered "Password changed." (the restore's text); the phrase is re-encrypted in the same transaction. */
  updatePassword: call({ path: "/change-password", body: updatePasswordBody, answer: messageAnswer }),
  // ---- E-mail (issue 28, record 049): our additions, not the spec's.
  emailStatus: call({
    path: "/email",
    body: emailStatusBody,
    answer: z.object({
      success: z.literal(true),
      email: z.string(),
      verified_at: z.string().nullable(),
      /** The newest unused link's deadline (ISO 8601), while one waits. */
      link_expires_at: z.string().nullable(),
    }),
  }),
  emailVerify: call({ path: "/email/verify", body: emailVerifyBody, answer: messageAnswer }),
  emailConfirm: call({
    path: "/email/confirm",
    body: emailConfirmBody,
    answer: z.object({ success: z.literal(true), message: z.string(), email: z.string() }),
  }),
  signInSeen: call({
    path: "/sign-in-seen",
    body: signInSeenBody,
    answer: z.object({ success: z.literal(true), new_browser: z.boolean(), mailed: z.boolean() }),
  }),
  sessionsEnded: call({ path: "/sessions-ended", body: sessionsEndedBody, answer: messageAnswer }),
} as const;

export type CallName = keyof typeof CALLS;
type Calls = typeof CALLS;
type Rules<N extends CallName> = Calls[N]["rules"];

/** A call's body after its decode: what the backend's services and the domain take. */
export type CallBody<N extends CallName> =
  Rules<N> extends z.ZodType ? z.output<Rules<N>> : Cameled<z.output<Calls[N]["body"]>>;

/** The client's input of a call: the body's fields by their camelCase names. */
export type CallInput<N extends CallName> =
  Rules<N> extends z.ZodType ? z.input<Rules<N>> : Cameled<z.input<Calls[N]["body"]>>;

/** A call's answer. */
export type CallAnswer<N extends CallName> = z.output<Calls[N]["answer"]>;

export type ClientBalancesInput = CallInput<"clientBalances">;
export type RequestTransactionInput = CallInput<"requestTransaction">;
export type RequestMessageInput = CallInput<"requestMessage">;

/** Each call's body fields by the names the app gives them (their camelCase), with their wire names. */
const WIRE_NAMES: Readonly<Record<string, ReadonlyMap<string, string>>> = Object.fromEntries(
  Object.entries(CALLS).map(([name, spec]) => [
    name,
    new Map(Object.keys(spec.body.shape).map((key) => [formPath(key), key])),
  ]),
);

/** The wire name of a body field the app names `field`, from the call's own shape. */
function wireName(name: CallName, field: string): string {
  return WIRE_NAMES[name]?.get(field) ?? field;
}

/** Fields that travel as one space-joined string of words (spec section 7), whatever the input holds. */
const WORD_FIELDS: ReadonlySet<unknown> = new Set([twelveWords]);

/** The JSON body of a call (with `platform`) from the client's input: wire names, phrases as text. */
export function encodeBody<N extends CallName>(name: N, input: CallInput<N>, platformCode: string) {
  const shape: z.ZodRawShape = CALLS[name].body.shape;
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const wire = wireName(name, key);
    const field = shape[wire];
    if (value === undefined || !field) continue;
    body[wire] = WORD_FIELDS.has(field) && Array.isArray(value) ? value.join(" ") : value;
  }
  return { ...body, platform: platformCode };
}

/** The body's fields by their camelCase names. */
function cameled(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "platform")
      .map(([key, field]) => [formPath(key), field]),
  );
}

/**
 * A body (already a JSON object with the right platform) as the call's services
 * take it, or its refusal: 400 invalid_request naming the fields of the wrong
 * type; then, for a call with field rules, 400 invalid_message with the first
 * text each refused field breaks (in body order), by wire name.
 */
export function decodeBody<N extends CallName>(
  name: N,
  body: unknown,
): { ok: true; body: CallBody<N> } | Refusal {
  const spec: CallSpec<z.ZodType, z.ZodType, z.ZodType | undefined> = CALLS[name];
  const parsed = spec.body.safeParse(body);
  if (!parsed.success) return refusal("invalid_request", { issues: issuesOf(parsed.error) });
  const decoded = cameled(parsed.data as Record<string, unknown>);
  if (!spec.rules) return { ok: true, body: decoded as CallBody<N> };
  const checked = spec.rules.safeParse(decoded);
  if (checked.success) return { ok: true, body: checked.data as CallBody<N> };
  const issues = firstPerField(issuesOf(checked.error)).map((issue) => ({
    ...issue,
    path: wireName(name, issue.path),
  }));
  return refusal("invalid_message", { detail: issues[0]?.message ?? "", issues });
}

/** A refusal as the client hands it to the app: each refused field by the form's name. */
export function withFormPaths(refused: Refusal): Refusal {
  if (!refused.issues) return refused;
  return { ...refused, issues: refused.issues.map((issue) => ({ ...issue, path: formPath(issue.path) })) };
}

/** Headers our own web tier adds to its HTTP calls (records 011, 026). */
export const CLIENT_IP_HEADER = "X-Coinkeep-Client-Ip";
export const BACKEND_TOKEN_HEADER = "X-Coinkeep-Backend-Token";
