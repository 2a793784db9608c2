// XRP destination tags and X-addresses (issue 15): the tag as typed, the
// X-address codec (XLS-5d) against ripple-address-codec's published vectors,
// and the send form's schema, which the server and the browser share.
import { parseWithZod } from "@conform-to/zod/v4";
import { describe, expect, test } from "vitest";
import {
  decodeXAddress,
  parseDestinationTag,
  resolveDestination,
  validateAddress,
} from "../../common/addresses.ts";
import { sendSchemaFor } from "../../app/send/schema.ts";

const FORMAT = "A destination tag is a whole number from 0 to 4294967295, digits only.";

/** ripple-address-codec's test vectors (X-address ↔ classic address + tag), and its README's. */
const X_VECTORS: [x: string, classic: string, tag: number | null][] = [
  ["X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", null],
  ["X7AcgcsBL6XDcUb289X4mJ8djcdyKaGZMhc9YTE92ehJ2Fu", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", 1],
  ["X7AcgcsBL6XDcUb289X4mJ8djcdyKaGo2K5VpXpmCqbV2gS", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", 14],
  ["X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A", "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", 11747],
  ["XVZVpQj8YSVpNyiwXYSqvQoQqgBttTxAZwMcuJd4xteQHyt", "rLczgQHxPhWtjkaQqn3Q6UM8AbRbbRvs5K", null],
  ["X7YenJqxv3L66CwhBSfd3N8RzGXxYqV56ZkTCa9UCzgaao1", "rpZc4mVfWUif9CRoHRKKcmhu1nx2xktxBo", 58],
  ["XVLhHMPHU98es4dbozjVtdWzVrDjtV8AqEL4xcZj5whKbmc", "rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf", 0],
  ["XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi", "rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf", 4_294_967_295],
];
/** The testnet form of r3SVzk8ApofDJuVBPKdmbbLjWGCCXpBQ2g with tag 123 (the same README). */
const X_TESTNET = "T7oKJ3q7s94kDH6tpkBowhetT1JKfcfdSCmAXbS75iATyLD";

describe("a destination tag as typed", () => {
  test.each([
    ["", null],
    ["   ", null],
    ["0", 0],
    ["12345", 12_345],
    [" 12345 ", 12_345],
    ["4294967295", 4_294_967_295],
    ["0004294967295", 4_294_967_295],
  ])("%j is %s", (text, tag) => {
    expect(parseDestinationTag(text)).toEqual({ ok: true, tag });
  });

  test.each([
    "4294967296",
    "99999999999",
    "-1",
    "+1",
    "1.5",
    "1.",
    "1e3",
    "abc",
    "12 34",
    "0x10",
    "١٢",
    "12a",
  ])("%j is refused", (text) => {
    expect(parseDestinationTag(text)).toEqual({ ok: false, reason: FORMAT });
  });
});

describe("X-addresses", () => {
  test.each(X_VECTORS)("%s is %s with tag %s", (x, classic, tag) => {
    expect(validateAddress("XRP", x)).toEqual({ ok: true, address: x });
    expect(decodeXAddress(x)).toEqual({ address: classic, tag });
    expect(validateAddress("XRP", classic)).toEqual({ ok: true, address: classic });
  });

  test("a classic address, a testnet X-address and a mistyped one are not decoded", () => {
    expect(decodeXAddress("r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59")).toBeUndefined();
    expect(decodeXAddress(X_TESTNET)).toBeUndefined();
    expect(decodeXAddress("X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9B")).toBeUndefined();
  });

  test("a send resolves an X-address into its classic address and tag", () => {
    const [, , , [x, classic]] = X_VECTORS as [unknown, unknown, unknown, [string, string, number]];
    expect(resolveDestination("XRP", x, null)).toEqual({ ok: true, address: classic, tag: 11747 });
    expect(resolveDestination("XRP", x, 11747)).toEqual({ ok: true, address: classic, tag: 11747 });
    expect(resolveDestination("XRP", x, 5)).toEqual({
      ok: false,
      field: "tag",
      reason: "This X-address already carries destination tag 11747; leave the tag empty or enter 11747.",
    });
    // An X-address without a tag takes the tag given; a classic address keeps it.
    expect(resolveDestination("XRP", "X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ", 7)).toEqual({
      ok: true,
      address: classic,
      tag: 7,
    });
    expect(resolveDestination("XRP", classic, 0)).toEqual({ ok: true, address: classic, tag: 0 });
    expect(resolveDestination("XRP", classic, 4_294_967_296)).toMatchObject({ ok: false, field: "tag" });
    expect(resolveDestination("ETH", "0x52908400098527886E0F7030069857D2E4169EE7", 1)).toEqual({
      ok: false,
      field: "tag",
      reason: "Only XRP sends take a destination tag.",
    });
    expect(resolveDestination("XRP", X_TESTNET, null)).toMatchObject({ ok: false, field: "address" });
  });
});

describe("the send form's tag (server and browser)", () => {
  const rule = { ticker: "XRP", usdtNetwork: "erc20" } as const;
  function submit(
    fields: Record<string, string>,
    address = rule as { ticker: "XRP" | "ETH"; usdtNetwork: "erc20" },
  ) {
    const formData = new FormData();
    for (const [name, value] of Object.entries({ intent: "review", coin: "1", fiat: "2", ...fields }))
      formData.set(name, value);
    return parseWithZod(formData, { schema: sendSchemaFor("review", address) });
  }
  /** Where a passed submission sends to (the checked schema's `destination`). */
  const destination = (submission: ReturnType<typeof submit>) =>
    submission.status === "success" && "destination" in submission.value
      ? submission.value.destination
      : undefined;

  test("an empty tag or a 32-bit one passes; the destination carries it", () => {
    const empty = submit({ address: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", tag: "" });
    expect(destination(empty)).toEqual({
      address: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59",
      tag: null,
    });
    const typed = submit({ address: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", tag: "4294967295" });
    expect(destination(typed)?.tag).toBe(4_294_967_295);
    const x = submit({ address: "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A" });
    expect(destination(x)).toEqual({
      address: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59",
      tag: 11747,
    });
  });

  test.each(["4294967296", "-1", "1.5", "abc"])("tag %j: an error at the field", (tag) => {
    const refused = submit({ address: "r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59", tag });
    expect(refused.status === "error" && refused.error).toEqual({ tag: [FORMAT] });
  });

  test("an X-address's tag and another typed tag: an error at the tag", () => {
    const refused = submit({ address: "X7AcgcsBL6XDcUb289X4mJ8djcdyKaLFuhLRuNXPrDeJd9A", tag: "5" });
    expect(refused.status === "error" && refused.error).toEqual({
      tag: ["This X-address already carries destination tag 11747; leave the tag empty or enter 11747."],
    });
  });

  test("a tag posted for another coin is refused", () => {
    const refused = submit(
      { address: "0x52908400098527886E0F7030069857D2E4169EE7", tag: "1" },
      { ticker: "ETH", usdtNetwork: "erc20" },
    );
    expect(refused.status === "error" && refused.error).toEqual({
      "": ["Only XRP sends take a destination tag."],
    });
  });
});
