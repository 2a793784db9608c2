// The support and contact messages (call 12): their fields, limits and the
// texts a sender sees when a field is refused (spec section 5 where it has a
// text, ours, record 011, where it is silent). Both tiers derive from this:
// the web forms validate with these schemas (conform + zod) before posting,
// and the backend checks every message it stores with the same field
// schemas, so a text or limit changed here changes both.
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
  SUPPORT_BODY_NAMES,
  SUPPORT_TEXTS,
  WORD,
} from "./support-texts.ts";

export {
  characters,
  MAX_COMMENT,
  MAX_EMAIL,
  MAX_FULL_NAME,
  MAX_PHONE,
  MIN_COMMENT,
  MIN_FULL_NAME,
  onlyPhoneCharacters,
  SUPPORT_BODY_NAMES,
  SUPPORT_TEXTS,
  type SupportBodyField,
} from "./support-texts.ts";

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

// The body names cover exactly the form's fields.
SUPPORT_BODY_NAMES satisfies Record<keyof z.input<typeof supportFormSchema>, string>;

/** The public contact form: Email, Comment. */
export const contactFormSchema = z.object({ email, comment: contactComment });

/** The first text a value breaks in one field's rules, or null when it keeps them all. */
export function firstRefusal(field: z.ZodType<unknown, string>, value: string): string | null {
  const checked = field.safeParse(value);
  return checked.success ? null : (checked.error.issues[0]?.message ?? null);
}
