// The holder's saved addresses as the web tier reads them (issue 27, record
// 048): for the security page, the send form's suggestions (a datalist) and
// its check of the destination while only saved addresses may receive sends.
import type { RouterContextProvider } from "react-router";
import { encodeXAddress } from "../common/addresses.ts";
import type { AllowlistRule } from "../common/allowlist.ts";
import type { Ticker } from "../common/coins.ts";
import type { AllowlistData } from "../common/contract/calls.ts";
import { backend } from "./backend.server.ts";
import type { AddressOffer } from "./send/rules.ts";
import type { SignedInUser } from "./session.server.ts";

/**
 * The list each request read, by request context: a send step's action and
 * the wallet page's loader that renders its answer share one read.
 */
const loadedIn = new WeakMap<Readonly<RouterContextProvider>, Promise<AllowlistData | null>>();

/** The holder's allowlist (one call per request); null when the backend could not answer. */
export function loadAllowlist(
  context: Readonly<RouterContextProvider>,
  user: SignedInUser,
): Promise<AllowlistData | null> {
  let loaded = loadedIn.get(context);
  if (!loaded) {
    loaded = backend(context)
      .allowlist({ email: user.email, twelveWords: user.words })
      .then((answer) => (answer.ok ? answer.data : null));
    loadedIn.set(context, loaded);
  }
  return loaded;
}

/**
 * The coin's saved addresses whose hold has ended, as the send form offers
 * them: an XRP address saved with a tag as its X-address, so one value
 * carries both (the form resolves it back, record 022).
 */
export function addressOffers(list: AllowlistData | null, ticker: Ticker): AddressOffer[] {
  if (!list) return [];
  return list.addresses
    .filter((saved) => saved.coin === ticker && saved.usable)
    .map((saved) => {
      const tag = saved.destination_tag;
      const x = tag === null ? undefined : encodeXAddress(saved.address, tag);
      return {
        value: x ?? saved.address,
        label: tag === null ? saved.label : `${saved.label} (tag ${tag})`,
      };
    });
}

/** What the send form checks a destination against, while the allowlist applies; else undefined. */
export function allowlistRule(list: AllowlistData | null, ticker: Ticker): AllowlistRule | undefined {
  if (!list?.on) return undefined;
  return {
    holdHours: list.hold_hours,
    saved: list.addresses
      .filter((saved) => saved.coin === ticker)
      .map((saved) => ({
        address: saved.address,
        tag: saved.destination_tag,
        usableFrom: saved.usable_from,
        usable: saved.usable,
      })),
  };
}
