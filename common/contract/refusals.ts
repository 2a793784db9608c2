// Every refusal of the backend's API (spec sections 7 and 8, records 004, 011,
// 013): a stable machine code, its HTTP status and the text the spec gives it.
// The API answers { success: false, code, message }; the web tier decides what
// to show by the code, never by the wording, so a text can be changed here and
// both tiers follow. Texts are kept exactly as clients expect them, including
// the spec's misspelling 'inccorect'.

import { MAX_SAVED_ADDRESSES } from "../allowlist.ts";

export const REFUSALS = {
  // The HTTP edge (record 004).
  not_found: { status: 404, message: "Not found." },
  method_not_allowed: { status: 405, message: "Method not allowed." },
  unsupported_media_type: { status: 415, message: "Content-Type must be application/json." },
  body_too_large: { status: 413, message: "Request body too large." },
  invalid_content_length: { status: 400, message: "Invalid Content-Length." },
  malformed_json: { status: 400, message: "Malformed JSON body." },
  not_an_object: { status: 400, message: "Request body must be a JSON object." },
  cross_site: { status: 403, message: "Cross-site request refused." },
  length_required: { status: 411, message: "Length Required: send the form with a Content-Length." },
  unknown_platform: { status: 400, message: "Missing or unknown platform." },
  invalid_request: { status: 400, message: "Invalid request." },
  internal: { status: 500, message: "Internal server error." },
  // Accounts (calls 1, 2, 3, 4, 5, 7, 8, 10, 11).
  passwords_do_not_match: { status: 400, message: "Passwords do not match." },
  email_taken: { status: 409, message: "An account with this email address already exists." },
  user_not_found: { status: 404, message: "User not found with this email address." },
  wrong_password: { status: 401, message: "Password is inccorect" },
  invalid_credentials: { status: 401, message: "Invalid credentials." },
  wrong_phrase: { status: 401, message: "Wrong 12 word phrase" },
  // Abuse limits (record 013): the wait is filled in by tooManyAttempts.
  too_many_attempts: { status: 429, message: "Too many attempts. Try again in {seconds} seconds." },
  account_locked: {
    status: 423,
    message: "Too many failed attempts. Restore your wallet with your 12-word phrase to unlock this account.",
  },
  // Wallets and sends (calls 5 and 6); the amount and address refusals carry their detail.
  unsupported_coin: { status: 400, message: "Unsupported coin." },
  wallet_not_found: { status: 404, message: "Wallet not found." },
  wallet_has_no_address: { status: 409, message: "This wallet has no address yet." },
  invalid_amount: { status: 400, message: "Invalid amount: {detail}" },
  invalid_address: { status: 400, message: "{detail}" },
  invalid_destination_tag: { status: 400, message: "{detail}" },
  own_address: { status: 400, message: "You cannot send to this wallet's own address." },
  idempotency_conflict: {
    status: 409,
    message: "This idempotency key was already used for a different transaction.",
  },
  insufficient_balance: { status: 422, message: "Insufficient balance." },
  // Kill switches (record 041): 423, a 4xx the web tier shows (a 5xx reads as the backend failing);
  // the text, by scope, is sendsPausedMessage's.
  sends_paused: { status: 423, message: "{detail}" },
  // The prices service: a request without its App_name / App_url headers.
  unknown_application: { status: 401, message: "Unknown application." },
  // Messages (calls 8 and 12); a refused call-12 message names its fields in `issues`.
  message_not_found: { status: 404, message: "Message not found." },
  invalid_message: { status: 400, message: "{detail}" },
  // Holder security (issue 27, record 048).
  // -- two-factor refusals
  two_factor_required: {
    status: 401,
    message: "Enter the 6-digit code from your authenticator app, or a recovery code.",
  },
  two_factor_invalid: {
    status: 401,
    message:
      "That code is not right. Enter the current 6-digit code from your authenticator app, or a recovery code.",
  },
  two_factor_replayed: {
    status: 401,
    message: "That code was used already. Wait for the next code in your authenticator app.",
  },
  two_factor_hold: { status: 423, message: "{detail}" },
  two_factor_already_on: { status: 409, message: "Two-factor authentication is already on." },
  two_factor_off: { status: 409, message: "Two-factor authentication is off." },
  // -- allowlist refusals
  // A send to an address the holder did not save, or saved too recently, while only saved
  // addresses may receive sends: 403, the text (with the hold's length or end) at the address.
  address_not_saved: { status: 403, message: "{detail}" },
  address_not_usable_yet: { status: 403, message: "{detail}" },
  saved_address_exists: { status: 409, message: "This address is saved already." },
  saved_addresses_full: {
    status: 409,
    message: `You can save up to ${MAX_SAVED_ADDRESSES} addresses. Remove one to save another.`,
  },
  saved_address_not_found: { status: 404, message: "Saved address not found." },
  // -- password and sessions refusals
  // E-mail (issue 28, record 049).
  email_already_verified: { status: 409, message: "Your e-mail address is verified already." },
  verification_too_soon: {
    status: 429,
    message: "We sent a link a moment ago. Wait a minute before asking for another.",
  },
  verification_limit: {
    status: 429,
    message: "You asked for 5 links in the last 24 hours. Try again tomorrow.",
  },
  verification_link_invalid: {
    status: 400,
    message: "This link is not valid. Ask for a new one on your Security page.",
  },
  verification_link_expired: {
    status: 410,
    message: "This link has expired or was used already. Ask for a new one on your Security page.",
  },
  // Statements (issue 28, record 050): a bad range, coin or currency, the field's text in `issues`.
  invalid_statement: { status: 400, message: "{detail}" },
} as const satisfies Record<string, { status: number; message: string }>;

export type RefusalCode = keyof typeof REFUSALS;

export const REFUSAL_CODES = Object.keys(REFUSALS) as RefusalCode[];

export function isRefusalCode(value: unknown): value is RefusalCode {
  return typeof value === "string" && Object.hasOwn(REFUSALS, value);
}

/** A field a refused body names, with the text the sender sees. */
export interface Issue {
  path: string;
  message: string;
}

/** A schema's issues (zod's), each field by its dotted path, with its text. */
export function issuesOf(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): Issue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
}

/** The first issue of each field, in the order the fields were checked. */
export function firstPerField(issues: readonly Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => !seen.has(issue.path) && seen.add(issue.path));
}

/** One refusal as both transports hand it over. */
export interface Refusal {
  ok: false;
  code: RefusalCode;
  status: number;
  message: string;
  /** The fields at fault (a malformed body, or call 12's form fields). */
  issues?: Issue[];
  /** A 429's wait, in whole seconds (also its Retry-After). */
  retryAfter?: number;
}

/**
 * The refusal `code`, with its text. `detail` fills the texts that carry one
 * (an amount's or an address's problem, a form field's text).
 */
export function refusal(
  code: RefusalCode,
  extra: { detail?: string; issues?: Issue[]; retryAfter?: number } = {},
): Refusal {
  const { status, message } = REFUSALS[code];
  return {
    ok: false,
    code,
    status,
    message: message.replace("{detail}", extra.detail ?? ""),
    ...(extra.issues ? { issues: extra.issues } : {}),
    ...(extra.retryAfter === undefined ? {} : { retryAfter: extra.retryAfter }),
  };
}

/** The one answer of a request refused for too many attempts; `seconds` is also its Retry-After. */
export function tooManyAttempts(seconds: number): Refusal {
  return {
    ...refusal("too_many_attempts", { retryAfter: seconds }),
    message: REFUSALS.too_many_attempts.message.replace("{seconds}", String(seconds)),
  };
}

/**
 * What a user is told while sends are paused (record 041): for the coin (every
 * user) or for their account. The operator's reason is never shown.
 */
export function sendsPausedMessage(scope: "coin" | "user", ticker: string): string {
  return scope === "coin"
    ? `Sends of ${ticker} are paused for now. Your funds are safe; please try again later.`
    : "Sends from your account are paused for now. Your funds are safe; please contact support.";
}

/** What a holder is told while a restore's removal of two-factor waits (issue 27, record 048). */
export function twoFactorHoldMessage(until: Date): string {
  const when = `${until.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `Sends are paused until ${when} while two-factor authentication is removed from your account after a restore.`;
}

/** The answers' success texts (spec section 7). */
export const ANSWERS = {
  walletCreated: "Wallet created.",
  loggedIn: "Logged in.",
  phraseAccepted: "Phrase accepted.",
  passwordChanged: "Password changed.",
  walletRequested: "Wallet requested.",
  walletAlreadyRequested: "Wallet already requested.",
  transactionRequested: "Transaction requested.",
  messageOpened: "Message opened.",
  messageSent: "Message sent!",
  // Issue 27 (record 048).
  twoFactorOn: "Two-factor authentication is on.",
  twoFactorOff: "Two-factor authentication is off.",
  codeAccepted: "Code accepted.",
  // Issue 28 (record 049).
  verificationSent: "We sent you a link. It works once, for 24 hours.",
  emailVerified: "Your e-mail address is verified.",
  sessionsEndedNoted: "Noted.",
} as const;
