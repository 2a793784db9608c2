// The support and contact messages' limits and the helpers a form uses as you
// type: no zod here, so a page can import them without it (record 034). The
// rules built from them, with their texts, are in support-message.ts.

/** The longest support and contact comment, in characters (code points). */
export const MAX_COMMENT = 5000;
/** An address longer than this cannot be delivered to: not valid either. */
export const MAX_EMAIL = 254;
export const MIN_FULL_NAME = 2;
export const MAX_FULL_NAME = 200;
export const MAX_PHONE = 32;
export const MIN_COMMENT = 6;

/** Characters as a person counts them: code points, as PostgreSQL's char_length does. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** PostgreSQL text cannot hold NUL, and a lone surrogate cannot be encoded as UTF-8. */
export function storable(text: string): boolean {
  return text.isWellFormed() && !text.includes("\u0000");
}

/** What a phone number may be: an optional leading + and digits. */
export const PHONE = /^\+?[0-9]+$/u;
/** A word has at least one letter or digit. */
export const WORD = /[\p{L}\p{N}]/u;

/** Keeps an optional leading + and the digits: what the phone field may hold. */
export function onlyPhoneCharacters(value: string): string {
  return (value.startsWith("+") ? "+" : "") + value.replace(/[^0-9]/gu, "");
}
