// The support and contact messages (call 12): each field's rules with the texts
// a sender sees when a field is refused (spec section 5 where it has a text,
// ours, record 011, where it is silent), written once. The web forms validate
// with them (conform + zod) before posting, and call 12's decode runs
// MESSAGE_RULES — the same fields, plus what only the store needs — on every
// message the backend stores (common/contract/calls.ts), so a text, a limit or
// a new field changed here changes both tiers.
// A refusal names the field as the form does (fullName), which is how the
// form shows it on its own field.
import { z } from "zod";
import {
  characters,
  MAX_COMMENT,
  MAX_EMAIL,
  MAX_FULL_NAME,
  MAX_PHONE,
  MIN_COMMENT,
  MIN_FULL_NAME,
  PHONE,
  storable,
  WORD,
} from "./support-limits.ts";

export {
  characters,
  MAX_COMMENT,
  MAX_EMAIL,
  MAX_FULL_NAME,
  MAX_PHONE,
  MIN_COMMENT,
  MIN_FULL_NAME,
  onlyPhoneCharacters,
  storable,
} from "./support-limits.ts";

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

// Each field's rules, in the order they are checked: the first one a value
// breaks is the text the backend answers; a form shows every one it breaks.

/** Checked only once the field's other rules pass: the sender sees one problem at a time. */
const unlessRefused = { when: (payload: z.core.ParsePayload) => payload.issues.length === 0 };

/** The sender's address, trimmed and lower-cased as an account's is. */
const email = z
  .string({ error: SUPPORT_TEXTS.email })
  .trim()
  .toLowerCase()
  .max(MAX_EMAIL, SUPPORT_TEXTS.email)
  .pipe(z.email({ error: SUPPORT_TEXTS.email }));

/** Trimmed. */
const fullName = z
  .string({ error: SUPPORT_TEXTS.fullName })
  .trim()
  .refine((value) => characters(value) >= MIN_FULL_NAME, SUPPORT_TEXTS.fullName)
  .refine((value) => characters(value) <= MAX_FULL_NAME, SUPPORT_TEXTS.fullNameTooLong);

/** Optional: trimmed, and empty is no phone. */
const phone = z
  .string()
  .trim()
  .refine((value) => value === "" || PHONE.test(value), SUPPORT_TEXTS.phone)
  .refine((value) => value.length <= MAX_PHONE, SUPPORT_TEXTS.phoneTooLong)
  .transform((value) => (value === "" ? undefined : value))
  .optional();

/** Kept as written: at least 1 word and 6 characters once trimmed, at most MAX_COMMENT. */
const supportComment = z
  .string({ error: SUPPORT_TEXTS.supportComment })
  .refine(
    (value) => characters(value.trim()) >= MIN_COMMENT && WORD.test(value),
    SUPPORT_TEXTS.supportComment,
  )
  .refine((value) => characters(value) <= MAX_COMMENT, SUPPORT_TEXTS.commentTooLong);

/** At least 6 characters once trimmed (the contact form's textarea holds at most MAX_COMMENT). */
const contactComment = z
  .string({ error: SUPPORT_TEXTS.contactComment })
  .refine((value) => characters(value.trim()) >= MIN_COMMENT, SUPPORT_TEXTS.contactComment);

/**
 * What only the store adds to a field's rules: at most MAX_COMMENT characters for any comment
 * as written, and text PostgreSQL can hold, checked once the field's own rules pass.
 */
const stored = (field: z.ZodString, unstorable: string) =>
  field.refine(storable, { message: unstorable, ...unlessRefused });

/**
 * The support modal's form: Full name, Phone, Comment. The e-mail is not a
 * field: the server uses the signed-in user's.
 */
export const supportFormSchema = z.object({ fullName, phone, comment: supportComment });

/** The public contact form: Email, Comment; the comment is sent trimmed. */
export const contactFormSchema = z.object({ email, comment: contactComment.trim() });

/** A message from the support modal, with the account's e-mail: the form's fields, storable. */
const supportMessage = z.object({
  kind: z.literal("support"),
  email,
  ...supportFormSchema.shape,
  fullName: stored(fullName, SUPPORT_TEXTS.fullNameUnstorable),
  comment: stored(supportComment, SUPPORT_TEXTS.commentUnstorable),
});

/** A message from the public contact form: its comment as written, at most MAX_COMMENT, storable. */
const contactMessage = z.object({
  kind: z.literal("contact"),
  email,
  comment: stored(
    contactComment.refine((value) => characters(value) <= MAX_COMMENT, SUPPORT_TEXTS.commentTooLong),
    SUPPORT_TEXTS.commentUnstorable,
  ),
});

/** Call 12's field rules: what the backend checks and stores (the domain takes their output). */
export const MESSAGE_RULES = z.discriminatedUnion("kind", [supportMessage, contactMessage]);
export type CheckedMessage = z.output<typeof MESSAGE_RULES>;
