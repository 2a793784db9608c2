// The support and contact messages' texts, limits and the helpers a form uses
// as you type: no zod here, so a page can import them without it (record 034).
// The schemas built from them are in support-message.ts.

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

/** What a phone number may be: an optional leading + and digits. */
export const PHONE = /^\+?[0-9]+$/u;
/** A word has at least one letter or digit. */
export const WORD = /[\p{L}\p{N}]/u;

/** Keeps an optional leading + and the digits: what the phone field may hold. */
export function onlyPhoneCharacters(value: string): string {
  return (value.startsWith("+") ? "+" : "") + value.replace(/[^0-9]/gu, "");
}

/**
 * Each support-form field and the name call 12's body gives it (spec section
 * 3); a refusal names the body field, the form shows it on its own field.
 */
export const SUPPORT_BODY_NAMES = {
  fullName: "full_name",
  phone: "phone",
  comment: "comment",
} as const;

/** A body field call 12 may refuse. */
export type SupportBodyField = "email" | (typeof SUPPORT_BODY_NAMES)[keyof typeof SUPPORT_BODY_NAMES];
