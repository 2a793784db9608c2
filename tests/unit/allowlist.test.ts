// The allowlist's shared rules (issue 27 item 2, record 048): labels, the times
// a holder reads, the check the send form makes, the X-address the send form
// offers for a saved XRP address with a tag.
import { describe, expect, test } from "vitest";
import { decodeXAddress, encodeXAddress } from "../../common/addresses.ts";
import {
  allowlistProblem,
  holdText,
  labelProblem,
  notSavedMessage,
  notUsableYetMessage,
  utcMinute,
} from "../../common/allowlist.ts";
import { addressOffers, allowlistRule } from "../../app/allowlist.server.ts";
import type { AllowlistData } from "../../common/contract/calls.ts";

// ripple-address-codec's published vectors: one account, its X-addresses with and without a tag.
const CLASSIC = "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59";
const X_NO_TAG = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ";
const X_TAG_11747 = "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A";

describe("X-addresses for saved XRP addresses", () => {
  test("encodeXAddress gives the published vectors and decodes back", () => {
    expect(encodeXAddress(CLASSIC, null)).toBe(X_NO_TAG);
    expect(encodeXAddress(CLASSIC, 11747)).toBe(X_TAG_11747);
    for (const tag of [0, 1, 255, 256, 65_536, 4_294_967_295]) {
      expect(decodeXAddress(encodeXAddress(CLASSIC, tag) ?? "")).toEqual({ address: CLASSIC, tag });
    }
  });

  test("anything but a classic address and a 32-bit tag gives nothing", () => {
    expect(encodeXAddress(X_NO_TAG, 1)).toBeUndefined();
    expect(encodeXAddress(`${CLASSIC.slice(0, -1)}x`, 1)).toBeUndefined();
    expect(encodeXAddress("0x8f348F300873Fd5DA36950B2aC75a26584584feE", null)).toBeUndefined();
    expect(encodeXAddress(CLASSIC, 4_294_967_296)).toBeUndefined();
    expect(encodeXAddress(CLASSIC, -1)).toBeUndefined();
  });
});

describe("labels, times and texts", () => {
  test("a label: 1 to 50 characters once trimmed, no control characters", () => {
    expect(labelProblem("")).toBe('Enter a label, like "My exchange".');
    expect(labelProblem("x".repeat(50))).toBeUndefined();
    expect(labelProblem("😀".repeat(50))).toBeUndefined();
    expect(labelProblem("x".repeat(51))).toBe("A label is at most 50 characters.");
    for (const bad of ["a\nb", "a\tb", "a\u0000", "a\u0085b", "a\u2028b"]) {
      expect(labelProblem(bad)).toBe("A label cannot contain line breaks or other control characters.");
    }
  });

  test("times are dd.mm.yy hh:mm UTC, rounded up to the minute", () => {
    expect(utcMinute("2026-11-28T14:03:00.000Z")).toBe("28.11.26 14:03 UTC");
    expect(utcMinute("2026-11-28T14:03:00.001Z")).toBe("28.11.26 14:04 UTC");
    expect(utcMinute("2026-12-31T23:59:30.000Z")).toBe("01.01.27 00:00 UTC");
    expect(utcMinute("not a date")).toBe("");
    expect(holdText(1)).toBe("1 hour");
    expect(holdText(24)).toBe("24 hours");
    expect(notSavedMessage(48)).toBe(
      "Only your saved addresses can receive sends. Add this address on the Security page; it can be used 48 hours after you add it.",
    );
    expect(notUsableYetMessage("2026-11-28T14:03:00.000Z")).toBe(
      "This saved address can receive sends from 28.11.26 14:03 UTC, once its waiting time is over.",
    );
  });
});

describe("what the send form offers and checks", () => {
  const list: AllowlistData = {
    success: true,
    on: true,
    off_at: null,
    hold_hours: 24,
    usdt_network: "erc20",
    addresses: [
      {
        id: "1",
        coin: "XRP",
        address: CLASSIC,
        destination_tag: 11747,
        label: "Exchange",
        created_at: "2026-11-26T00:00:00.000Z",
        usable_from: "2026-11-27T00:00:00.000Z",
        usable: true,
      },
      {
        id: "2",
        coin: "XRP",
        address: CLASSIC,
        destination_tag: null,
        label: "Mine",
        created_at: "2026-11-26T00:00:00.000Z",
        usable_from: "2026-11-27T00:00:00.000Z",
        usable: true,
      },
      {
        id: "3",
        coin: "XRP",
        address: "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3",
        destination_tag: null,
        label: "New",
        created_at: "2026-11-27T10:00:00.000Z",
        usable_from: "2026-11-28T10:00:00.000Z",
        usable: false,
      },
      {
        id: "4",
        coin: "ETH",
        address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
        destination_tag: null,
        label: "Cold",
        created_at: "2026-11-26T00:00:00.000Z",
        usable_from: "2026-11-27T00:00:00.000Z",
        usable: true,
      },
    ],
  };

  test("the coin's usable saved addresses, a tagged XRP one as its X-address", () => {
    expect(addressOffers(list, "XRP")).toEqual([
      { value: X_TAG_11747, label: "Exchange (tag 11747)" },
      { value: CLASSIC, label: "Mine" },
    ]);
    expect(addressOffers(list, "ETH")).toEqual([
      { value: "0x8f348F300873Fd5DA36950B2aC75a26584584feE", label: "Cold" },
    ]);
    expect(addressOffers(list, "BTC")).toEqual([]);
    expect(addressOffers(null, "ETH")).toEqual([]);
  });

  test("the check: only with the allowlist on; the (address, tag) pair, usable", () => {
    const rule = allowlistRule(list, "XRP");
    expect(allowlistProblem(rule, { address: CLASSIC, tag: 11747 })).toBeUndefined();
    expect(allowlistProblem(rule, { address: CLASSIC, tag: null })).toBeUndefined();
    expect(allowlistProblem(rule, { address: CLASSIC, tag: 11748 })).toBe(notSavedMessage(24));
    expect(allowlistProblem(rule, { address: "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3", tag: null })).toBe(
      notUsableYetMessage("2026-11-28T10:00:00.000Z"),
    );
    // Saved for ETH is not saved for XRP's form (nor the other way round).
    expect(
      allowlistProblem(allowlistRule(list, "BNB"), { address: list.addresses[3]!.address, tag: null }),
    ).toBe(notSavedMessage(24));
    expect(allowlistRule({ ...list, on: false }, "XRP")).toBeUndefined();
    expect(allowlistProblem(undefined, { address: "anything", tag: null })).toBeUndefined();
  });
});
