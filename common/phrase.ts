// The 12-word phrase as both tiers read it (spec section 7: words are
// compared lower-case, whatever the spacing).

export const PHRASE_WORDS = 12;

/** Lower-cases, trims and collapses whitespace; a list is joined with spaces first. */
export function normalisePhrase(input: string | readonly string[]): string {
  const joined = typeof input === "string" ? input : input.join(" ");
  return joined.toLowerCase().trim().split(/\s+/u).filter(Boolean).join(" ");
}
