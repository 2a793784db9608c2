// The send form's schemas (zod): on the server always, and in the browser as an
// enhancement loaded when the form is first used (record 034), so zod is not
// part of any page's first load. The rules themselves live in send.ts.
import { z } from "../forms/z.ts";
import {
  DESTINATION_TAG_XRP_ONLY,
  parseDestinationTag,
  resolveDestination,
  type UsdtNetwork,
} from "../../common/addresses.ts";
import { allowlistProblem, type AllowlistRule } from "../../common/allowlist.ts";
import type { Ticker } from "../../common/coins.ts";
import { AMOUNT_FORMAT } from "../../common/contract/amounts.ts";
import { isPositive, type Decimal } from "../../common/decimal.ts";
import {
  AMOUNT_POSITIVE,
  FILL_OUT_ALL_FIELDS,
  parseAmount,
  truncate4,
  type SendErrors,
  type SendValues,
} from "./rules.ts";

/** What the server reads of a typed value: at most this many characters. */
const TYPED_MAX = 256;

// A typed value, trimmed. A field left empty is "" whether it comes as "" (a
// plain object) or is missing (conform reads an empty input as undefined).
const typed = z
  .string()
  .transform((text) => text.slice(0, TYPED_MAX).trim())
  .default("");

/** The values as typed, unchecked: what the buttons that only fill in or convert read. */
export const sendValuesSchema = z.object({ address: typed, coin: typed, fiat: typed, tag: typed });

/**
 * The form's one schema, on the server always and in the browser as an
 * enhancement. All three values are required (one form-level message); the
 * amounts must be digits with one dot and at most 4 decimals; the coin amount
 * must be above 0. The address is checked by sendSchemaTo's rule when the
 * coin is known (the backend checks it again and its refusal shows as
 * 'Transaction failed: …').
 */
export const sendSchema = sendSchemaTo(undefined);

/** Which network's rules the receiver's address is checked by. */
export interface AddressRule {
  ticker: Ticker;
  usdtNetwork: UsdtNetwork;
}

/**
 * The form's schema; with `address`, the receiver's address is checked too, by
 * the backend's own rules (common/addresses.ts: format and checksum), so a
 * mistyped address is shown at its field before the risk warning asks to
 * confirm a transfer to it. With `allowlist` (only saved addresses may receive
 * sends, record 048), an address that is not a usable saved one is too.
 */
export function sendSchemaTo(address: AddressRule | undefined, allowlist?: AllowlistRule) {
  return sendValuesSchema.transform((value, ctx) => {
    // Where the send goes, once checked: an X-address becomes its classic address and tag.
    let destination: Destination = { address: value.address, tag: null };
    if (!value.address || !value.coin || !value.fiat) {
      ctx.addIssue({ code: "custom", path: [], message: FILL_OUT_ALL_FIELDS });
      return { ...value, destination };
    }
    // The tag: digits of a 32-bit unsigned value, the backend's rule (common/addresses.ts).
    const tag = parseDestinationTag(value.tag);
    if (!tag.ok) ctx.addIssue({ code: "custom", path: ["tag"], message: tag.reason });
    else if (tag.tag !== null && address && address.ticker !== "XRP") {
      // The field is shown for XRP only: a tag for another coin is a crafted post.
      ctx.addIssue({ code: "custom", path: [], message: DESTINATION_TAG_XRP_ONLY });
    } else if (address) {
      const checked = resolveDestination(address.ticker, value.address, tag.tag, {
        usdtNetwork: address.usdtNetwork,
      });
      if (checked.ok) {
        destination = { address: checked.address, tag: checked.tag };
        // Only saved addresses may receive sends (record 048): said at the field, as Confirm would be.
        const problem = allowlistProblem(allowlist, destination);
        if (problem) ctx.addIssue({ code: "custom", path: ["address"], message: problem });
      } else ctx.addIssue({ code: "custom", path: [checked.field], message: checked.reason });
    } else destination = { address: value.address, tag: tag.tag };
    const coin = parseAmount(value.coin);
    if (!coin) ctx.addIssue({ code: "custom", path: ["coin"], message: AMOUNT_FORMAT });
    else if (!isPositive(truncate4(coin)))
      ctx.addIssue({ code: "custom", path: ["coin"], message: AMOUNT_POSITIVE });
    if (!parseAmount(value.fiat)) ctx.addIssue({ code: "custom", path: ["fiat"], message: AMOUNT_FORMAT });
    return { ...value, destination };
  });
}

/** Where a checked send goes: the address to send to (classic for an X-address) and XRP's tag. */
export interface Destination {
  address: string;
  tag: number | null;
}

/**
 * The schema a press of a button is checked against: 'Send' (review) and
 * Confirm check the rules; 'Full', 'Convert' and the warning's Cancel only
 * read the values (a half-filled form may convert).
 */
export function sendSchemaFor(intent: unknown, address?: AddressRule, allowlist?: AllowlistRule) {
  return intent === "review" || intent === "confirm" ? sendSchemaTo(address, allowlist) : sendValuesSchema;
}

export type SendCheck = { ok: true; address: string; coin: Decimal } | { ok: false; errors: SendErrors };

/** Checks the form's values against the schema. */
export function checkSend(values: Omit<SendValues, "tag"> & { tag?: string }): SendCheck {
  const parsed = sendSchema.safeParse(values);
  if (parsed.success) {
    const coin = parseAmount(parsed.data.coin);
    if (coin) return { ok: true, address: parsed.data.address, coin };
  }
  const errors: SendErrors = {};
  for (const issue of parsed.error?.issues ?? []) {
    const key = issue.path[0];
    const slot = key === "address" || key === "tag" || key === "coin" || key === "fiat" ? key : "form";
    (errors[slot] ??= []).push(issue.message);
  }
  return { ok: false, errors };
}
