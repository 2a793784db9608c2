// Request bodies of the API routes. Unknown fields are ignored (record 004,
// issue 6): zod's plain objects strip them, so the parsed output only ever
// holds known keys, and "__proto__", "constructor" and "prototype" are
// dropped by parseJsonObject before any schema runs. Wrong types and missing fields are
// still refused. Issue messages never repeat the submitted values.
import { z } from "zod";
import { isTicker } from "../../../common/coins.ts";
import { normalisePhrase, PHRASE_WORDS } from "../domain/crypto.ts";

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
