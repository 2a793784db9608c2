// The support and contact messages (call 12): their fields, limits and the
// texts a sender sees when a field is refused (spec section 5 where it has a
// text, ours, record 011, where it is silent). Both tiers derive from this:
// the web forms validate with these schemas (conform + zod) before posting,
// and the backend checks every message it stores with the same field
// schemas, so a text or limit changed here changes both.
import { z } from "zod";

/** The longest support and contact comment, in characters (code points). */
export const MAX_COMMENT = 5000;
/** An address longer than this cannot be delivered to: not valid either. */
export const MAX_EMAIL = 254;
export const MIN_FULL_NAME = 2;
export const MAX_FULL_NAME = 200;
export const MAX_PHONE = 32;
export const MIN_COMMENT = 6;

export const SUPPORT_TEXTS = {
  email: "Please enter a valid email address.",
  fullName: "Please enter your full name.",
  fullNameTooLong: `Full name must be at most ${MAX_FULL_NAME} characters.`,
  phone: "Phone number may contain only digits, with an optional leading +.",
  phoneTooLong: `Phone number must be at most ${MAX_PHONE} characters.`,
  supportComment: "Enter at least 1 word and 6 letters.",
  contactComment: "Comment must be at least 6 characters.",
  commentTooLong: `Comment must be at most ${MAX_COMMENT} characters.`,
  fullNameUnstorable: "Full name contains characters that cannot be stored.",
  commentUnstorable: "Comment contains characters that cannot be stored.",
  /** Spec section 8: the toast after a support message, and the popup's step 3 heading. */
  sent: "Message sent!",
} as const;

/** Characters as a person counts them: code points, as PostgreSQL's char_length does. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const PHONE = /^\+?[0-9]+$/u;
const WORD = /[\p{L}\p{N}]/u;

/** Keeps an optional leading + and the digits: what the phone field may hold. */
export function onlyPhoneCharacters(value: string): string {
  return (value.startsWith("+") ? "+" : "") + value.replace(/[^0-9]/gu, "");
}

// Each field's rules, in the order they are checked: the first one a value
// breaks is the text the backend answers; a form shows every one it breaks.

/** The sender's address, as typed (the backend checks it lower-cased, which the format does not mind). */
const email = z
  .string({ error: SUPPORT_TEXTS.email })
  .trim()
  .max(MAX_EMAIL, SUPPORT_TEXTS.email)
  .pipe(z.email({ error: SUPPORT_TEXTS.email }));

const fullName = z
  .string({ error: SUPPORT_TEXTS.fullName })
  .trim()
  .refine((value) => characters(value) >= MIN_FULL_NAME, SUPPORT_TEXTS.fullName)
  .refine((value) => characters(value) <= MAX_FULL_NAME, SUPPORT_TEXTS.fullNameTooLong);

/** Optional: empty (once trimmed) is no phone. */
const phone = z
  .string()
  .trim()
  .refine((value) => value === "" || PHONE.test(value), SUPPORT_TEXTS.phone)
  .refine((value) => value.length <= MAX_PHONE, SUPPORT_TEXTS.phoneTooLong);

/** At least 1 word and 6 characters once trimmed; at most MAX_COMMENT as written. */
const supportComment = z
  .string({ error: SUPPORT_TEXTS.supportComment })
  .refine(
    (value) => characters(value.trim()) >= MIN_COMMENT && WORD.test(value),
    SUPPORT_TEXTS.supportComment,
  )
  .refine((value) => characters(value) <= MAX_COMMENT, SUPPORT_TEXTS.commentTooLong);

/**
 * At least 6 characters once trimmed. The form sends it trimmed, and its
 * textarea holds at most MAX_COMMENT; the backend checks that too (commentLength).
 */
const contactComment = z
  .string({ error: SUPPORT_TEXTS.contactComment })
  .trim()
  .refine((value) => characters(value) >= MIN_COMMENT, SUPPORT_TEXTS.contactComment);

/** Any comment as written, of either kind. */
const commentLength = z
  .string()
  .refine((value) => characters(value) <= MAX_COMMENT, SUPPORT_TEXTS.commentTooLong);

/** Each field's schema, for the backend's checks (by the names the web forms post). */
export const SUPPORT_FIELDS = {
  email,
  fullName,
  phone,
  supportComment,
  contactComment,
  commentLength,
} as const;

/**
 * The support modal's form: Full name, Phone, Comment. The e-mail is not a
 * field: the server uses the signed-in user's.
 */
export const supportFormSchema = z.object({
  fullName,
  phone: phone.optional(),
  comment: supportComment,
});

/**
 * Each support-form field and the name call 12's body gives it (spec section
 * 3); a refusal names the body field, the form shows it on its own field.
 */
export const SUPPORT_BODY_NAMES = {
  fullName: "full_name",
  phone: "phone",
  comment: "comment",
} as const satisfies Record<keyof z.input<typeof supportFormSchema>, string>;

/** A body field call 12 may refuse. */
export type SupportBodyField = "email" | (typeof SUPPORT_BODY_NAMES)[keyof typeof SUPPORT_BODY_NAMES];

/** The public contact form: Email, Comment. */
export const contactFormSchema = z.object({ email, comment: contactComment });

/** The first text a value breaks in one field's rules, or null when it keeps them all. */
export function firstRefusal(field: z.ZodType<unknown, string>, value: string): string | null {
  const checked = field.safeParse(value);
  return checked.success ? null : (checked.error.issues[0]?.message ?? null);
}
