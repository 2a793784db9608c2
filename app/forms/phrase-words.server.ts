// The BIP-39 English list, on the server only: the restore form names a box
// whose word is not on it, instead of only saying the phrase is wrong.
import { wordlist } from "@scure/bip39/wordlists/english.js";

const WORDS = new Set(wordlist);

/** The index of the first word that is not a BIP-39 English word, or null. */
export function notPhraseWord(words: readonly string[]): number | null {
  const index = words.findIndex((word) => !WORDS.has(word.normalize("NFKD")));
  return index === -1 ? null : index;
}
