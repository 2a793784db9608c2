/** The restore form's twelve word boxes, by name (no zod here: the page imports it). */
export const WORD_FIELDS = Array.from({ length: 12 }, (_, i) => `word${i + 1}` as const);
export type WordField = (typeof WORD_FIELDS)[number];
