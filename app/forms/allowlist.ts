// The saved addresses page's forms (issue 27, record 048): add an address,
// remove one, switch "Only send to saved addresses". On the server always; in
// the browser as an enhancement loaded on first use (record 034). The address
// is checked by the backend's own rules (common/addresses.ts), as a send's is.
import { z } from "./z.ts";
import { resolveDestination, parseDestinationTag, type UsdtNetwork } from "../../common/addresses.ts";
import { labelProblem } from "../../common/allowlist.ts";
import { isTicker, type Ticker } from "../../common/coins.ts";
import { code, CODE_REQUIRED } from "./two-factor.ts";

export const CHOOSE_COIN = "Choose a coin.";
export const ENTER_ADDRESS = "Enter the address.";

/**
 * What every change is proven with: the password, and with two-factor on a code (the server's
 * schema takes it when given; whether one is needed is the backend's answer, at the code field).
 */
function proof(twoFactor: boolean) {
  return {
    password: z.string({ error: "Required" }).min(1, "Required"),
    code: twoFactor ? code : code.optional(),
  };
}

export interface AddressFormOptions {
  usdtNetwork: UsdtNetwork;
  /** Two-factor is on: the code is asked for. */
  twoFactor: boolean;
}

const typed = z.string().default("");

/**
 * Add: the coin, a label, the address (XRP: an optional tag, or an X-address
 * carrying one). Every field is read as text and checked in one pass, so a
 * refused form names every field at fault at once. The output has the address
 * as typed (the backend resolves it again) and, for checks against the saved
 * list, its canonical destination.
 */
export function addAddressSchema({ usdtNetwork, twoFactor }: AddressFormOptions) {
  return z
    .object({ coin: typed, label: typed, address: typed, tag: typed, password: typed, code: typed })
    .transform((value, ctx) => {
      const problem = (path: string, message: string) =>
        ctx.addIssue({ code: "custom", path: [path], message });
      const coin = value.coin.trim().toUpperCase();
      const label = value.label.trim();
      const address = value.address.trim();
      const labelText = labelProblem(label);
      if (labelText) problem("label", labelText);
      const tag = parseDestinationTag(value.tag);
      if (!tag.ok) problem("tag", tag.reason);
      let destination: { address: string; tag: number | null } | undefined;
      if (!isTicker(coin)) problem("coin", CHOOSE_COIN);
      else if (address === "") problem("address", ENTER_ADDRESS);
      else if (tag.ok) {
        const checked = resolveDestination(coin, address, tag.tag, { usdtNetwork });
        if (checked.ok) destination = { address: checked.address, tag: checked.tag };
        else problem(checked.field, checked.reason);
      }
      if (value.password === "") problem("password", "Required");
      const given = value.code === "" && !twoFactor ? undefined : code.safeParse(value.code);
      if (given && !given.success) problem("code", given.error.issues[0]?.message ?? CODE_REQUIRED);
      return {
        coin: coin as Ticker,
        label,
        address,
        tag: tag.ok ? tag.tag : null,
        destination,
        password: value.password,
        code: given?.success ? given.data : undefined,
      };
    });
}

/** Remove: which saved address (the list's id). */
export function removeAddressSchema(twoFactor: boolean) {
  return z.object({
    id: z.string({ error: "Choose an address to remove." }).trim().min(1).max(64),
    ...proof(twoFactor),
  });
}

/** The switch: on or off (the button pressed). */
export function switchSchema(twoFactor: boolean) {
  return z.object({
    intent: z.enum(["on", "off"], "Choose on or off."),
    ...proof(twoFactor),
  });
}
