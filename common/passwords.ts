// Passwords are compared in Unicode NFKC (NIST SP 800-63B 5.1.1.2, record 025):
// the same text on screen is the same password, whichever keyboard, input
// method or operating system composed it (é as one code point or as e and a
// combining accent; full-width digits). The backend hashes this form and
// derives the phrase key from it; the web tier's forms compare a password and
// its confirmation the same way, so both tiers agree on "the same password".

/** The form a password is hashed and its phrase key derived in. */
export function normalisePassword(password: string): string {
  return password.normalize("NFKC");
}

/** The two entries of a password and its confirmation are the same password. */
export function samePassword(a: string, b: string): boolean {
  return normalisePassword(a) === normalisePassword(b);
}
