// The withdrawal address allowlist (issue 27, record 048): its limits and the
// texts a holder reads, written once for the backend, the contract and the
// page. Free of zod, so a component may import it without zod (record 034).

/** A saved address's label: 1 to this many characters once trimmed. */
export const LABEL_MAX = 50;

/** How many addresses one holder may save (a bound on what one account can write). */
export const MAX_SAVED_ADDRESSES = 100;

export const LABEL_TEXTS = {
  empty: 'Enter a label, like "My exchange".',
  long: `A label is at most ${LABEL_MAX} characters.`,
  control: "A label cannot contain line breaks or other control characters.",
} as const;

/** What is wrong with a label (already trimmed), or undefined when it can be saved. */
export function labelProblem(label: string): string | undefined {
  if (label === "") return LABEL_TEXTS.empty;
  // Counted in code points, as a person counts characters.
  if ([...label].length > LABEL_MAX) return LABEL_TEXTS.long;
  // oxlint-disable-next-line no-control-regex -- control characters are what this refuses.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u.test(label)) return LABEL_TEXTS.control;
  return undefined;
}

/** "24 hours", "1 hour". */
export function holdText(hours: number): string {
  return `${hours} ${hours === 1 ? "hour" : "hours"}`;
}

const two = (n: number) => String(n).padStart(2, "0");

/**
 * An instant as the pages show dates and times (dd.mm.yy hh:mm UTC, spec section
 * 9), rounded up to the minute: a time shown as "usable from" is never earlier
 * than the instant itself.
 */
export function utcMinute(at: Date | string): string {
  const ms = new Date(at).getTime();
  if (Number.isNaN(ms)) return "";
  const date = new Date(Math.ceil(ms / 60_000) * 60_000);
  const day = `${two(date.getUTCDate())}.${two(date.getUTCMonth() + 1)}.${two(date.getUTCFullYear() % 100)}`;
  return `${day} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())} UTC`;
}

/** A send to an address that is not saved, while only saved addresses may receive sends. */
export function notSavedMessage(holdHours: number): string {
  return (
    "Only your saved addresses can receive sends. Add this address on the Security page; " +
    `it can be used ${holdText(holdHours)} after you add it.`
  );
}

/** A send to a saved address whose hold has not ended yet. */
export function notUsableYetMessage(usableFrom: Date | string): string {
  return `This saved address can receive sends from ${utcMinute(usableFrom)}, once its waiting time is over.`;
}

/** The allowlist calls' success texts. */
export const ALLOWLIST_ANSWERS = {
  added: "Address saved.",
  removed: "Address removed.",
  on: "Only your saved addresses can receive sends now.",
  alreadyOn: "Only your saved addresses can receive sends.",
  offAlready: "Sends can go to any address.",
} as const;

/** Turning the allowlist off: it still applies until `offAt`. */
export function offRequestedMessage(offAt: Date | string): string {
  return `Sends can go to any address from ${utcMinute(offAt)}. Until then, only your saved addresses can receive them.`;
}

/** A saved address as a send checks against it: canonical address, XRP tag, and when it is usable from. */
export interface SavedDestination {
  address: string;
  tag: number | null;
  usableFrom: string;
  /** Whether its hold had ended when the list was read (by the backend's holds' clock). */
  usable: boolean;
}

/** What a send form checks a destination against while only saved addresses may receive sends. */
export interface AllowlistRule {
  holdHours: number;
  /** The wallet's coin's saved addresses. */
  saved: readonly SavedDestination[];
}

/**
 * Why a send to `destination` (canonical, as resolveDestination gives it) is
 * refused by the allowlist, or undefined when it may go: the backend's own
 * texts, so the form says at the field what Confirm would be told.
 */
export function allowlistProblem(
  rule: AllowlistRule | undefined,
  destination: { address: string; tag: number | null },
): string | undefined {
  if (!rule) return undefined;
  const saved = rule.saved.find((s) => s.address === destination.address && s.tag === destination.tag);
  if (!saved) return notSavedMessage(rule.holdHours);
  return saved.usable ? undefined : notUsableYetMessage(saved.usableFrom);
}
