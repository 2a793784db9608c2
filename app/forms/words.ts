/** The restore form's twelve word boxes, by name (no zod here: the page imports it). */
export const WORD_FIELDS = Array.from({ length: 12 }, (_, i) => `word${i + 1}` as const);
export type WordField = (typeof WORD_FIELDS)[number];

/**
 * The words of a pasted phrase: split on spaces, line breaks and commas, with
 * the numbers of a numbered list ("1. abandon 2. ability", "1) …", "1:abandon")
 * left out, in lower case.
 */
export function splitPhrase(text: string): string[] {
  return text
    .split(/[\s,;]+/u)
    .map((token) => token.replace(/^#?\d+[.):-]*/u, "").toLowerCase())
    .filter(Boolean);
}
