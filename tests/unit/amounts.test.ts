// Decimal text ⇄ base units, exactly, for every coin.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { COINS, TICKERS, type Ticker } from "../../common/coins.ts";
import { formatAmount, normaliseUsd, parseAmount } from "../../server/backend/domain/amounts.ts";

function units(ticker: Ticker, text: string, opts?: { maxDecimals?: number }): bigint {
  const result = parseAmount(ticker, text, opts);
  if (!result.ok) throw new Error(`expected ${text} to parse: ${result.reason}`);
  return result.units;
}

function refused(ticker: Ticker, text: string, opts?: { maxDecimals?: number }): string {
  const result = parseAmount(ticker, text, opts);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text)} to be refused, got ${result.units}`);
  return result.reason;
}

describe("parseAmount", () => {
  test("plain decimals become integers of the base unit", () => {
    expect(units("BTC", "1")).toBe(100_000_000n);
    expect(units("BTC", "0.00000001")).toBe(1n);
    expect(units("BTC", "21000000")).toBe(2_100_000_000_000_000n);
    expect(units("ETH", "1")).toBe(10n ** 18n);
    expect(units("ETH", "0.000000000000000001")).toBe(1n);
    expect(units("ETH", "1.5")).toBe(1_500_000_000_000_000_000n);
    expect(units("USDT", "1500.25")).toBe(1_500_250_000n);
    expect(units("SOL", "0.000000001")).toBe(1n);
  });

  test("a leading or trailing dot, leading zeros and trailing zeros are fine", () => {
    expect(units("BTC", ".5")).toBe(50_000_000n);
    expect(units("BTC", "5.")).toBe(500_000_000n);
    expect(units("BTC", "0005.10")).toBe(510_000_000n);
    // Trailing zeros beyond the coin's decimals change nothing, so they do not count.
    expect(units("USDT", "1.000000000")).toBe(1_000_000n);
  });

  test("18-decimal amounts far beyond a float's precision stay exact", () => {
    const text = "123456789012345678.123456789012345678";
    expect(units("ETH", text)).toBe(123456789012345678123456789012345678n);
    expect(formatAmount("ETH", units("ETH", text))).toBe(text);
    const max = `${"9".repeat(30)}.${"9".repeat(18)}`;
    expect(formatAmount("ETH", units("ETH", max))).toBe(max);
  });

  test("more decimals than the coin has are refused", () => {
    expect(refused("BTC", "0.000000001")).toBe("At most 8 decimals for BTC.");
    expect(refused("USDT", "0.0000001")).toBe("At most 6 decimals for USDT.");
    expect(refused("ETH", `0.${"1".repeat(19)}`)).toBe("At most 18 decimals for ETH.");
  });

  test("maxDecimals tightens the limit (the UI's 4), never widens it", () => {
    expect(units("ETH", "0.1234", { maxDecimals: 4 })).toBe(123_400_000_000_000_000n);
    expect(refused("ETH", "0.12345", { maxDecimals: 4 })).toBe("At most 4 decimals for ETH.");
    expect(refused("ETH", "0.1", { maxDecimals: 0 })).toBe("ETH amounts take no decimals.");
    expect(units("ETH", "7", { maxDecimals: 0 })).toBe(7n * 10n ** 18n);
    expect(refused("USDT", "0.0000001", { maxDecimals: 12 })).toBe("At most 6 decimals for USDT.");
    expect(refused("ETH", "0.12", { maxDecimals: 1 })).toBe("At most 1 decimal for ETH.");
  });

  test("zero is refused in every spelling", () => {
    for (const zero of ["0", "0.0", "000", ".0", "0.", "0.000000000000000000"]) {
      expect(refused("ETH", zero)).toBe("Amount must be greater than zero.");
    }
  });

  test("anything but digits and one dot is refused", () => {
    const junk = [
      "",
      ".",
      "-1",
      "+1",
      "1e5",
      "1E-3",
      " 1",
      "1 ",
      "1 000",
      "1,5",
      "1.2.3",
      "0x10",
      "Infinity",
      "NaN",
      "١",
      "1_000",
      "½",
    ];
    for (const text of junk) expect(refused("BTC", text)).toMatch(/./);
    expect(refused("BTC", "")).toBe("Enter an amount.");
    expect(refused("BTC", "-1")).toBe("Amount must be a plain decimal number, like 0.5.");
  });

  test("at most 30 integer digits (leading zeros aside)", () => {
    expect(units("BTC", "9".repeat(30))).toBe(BigInt("9".repeat(30)) * 100_000_000n);
    expect(units("BTC", `000${"9".repeat(30)}`)).toBe(BigInt("9".repeat(30)) * 100_000_000n);
    expect(refused("BTC", "1".repeat(31))).toMatch(/too large/);
    expect(refused("BTC", "1".repeat(500))).toMatch(/too long/);
  });
});

describe("formatAmount", () => {
  test("exact text, trailing zeros trimmed, 0 for zero", () => {
    expect(formatAmount("BTC", 0n)).toBe("0");
    expect(formatAmount("BTC", 1n)).toBe("0.00000001");
    expect(formatAmount("BTC", 100_000_000n)).toBe("1");
    expect(formatAmount("BTC", 150_000_000n)).toBe("1.5");
    expect(formatAmount("ETH", 10n ** 18n)).toBe("1");
    expect(formatAmount("ETH", 1n)).toBe("0.000000000000000001");
    expect(formatAmount("ETH", 2n ** 256n - 1n)).toBe(
      "115792089237316195423570985008687907853269984665640564039457.584007913129639935",
    );
    expect(formatAmount("USDT", 1_500_250_000n)).toBe("1500.25");
    expect(formatAmount("BTC", -150_000_000n)).toBe("-1.5");
  });
});

describe("round trips (properties)", () => {
  const ticker = fc.constantFrom(...TICKERS);

  test("format then parse gives the same units, for every coin", () => {
    // Up to the largest amount parseAmount accepts: 30 integer digits and all the coin's decimals.
    const amount = ticker.chain((t) =>
      fc.bigInt({ min: 1n, max: 10n ** BigInt(30 + COINS[t].decimals) - 1n }).map((u) => ({ t, u })),
    );
    fc.assert(
      fc.property(amount, ({ t, u }) => {
        const text = formatAmount(t, u);
        expect(text).toMatch(/^\d+(\.\d*[1-9])?$/);
        expect(units(t, text)).toBe(u);
      }),
    );
  });

  test("parse then format gives the canonical form of the text", () => {
    const decimalText = ticker.chain((t) =>
      fc
        .tuple(
          fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 1, maxLength: 30 }),
          fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 0, maxLength: COINS[t].decimals }),
        )
        .map(([whole, fraction]) => ({ t, whole, fraction })),
    );
    fc.assert(
      fc.property(decimalText, ({ t, whole, fraction }) => {
        const text = fraction ? `${whole}.${fraction}` : whole;
        const canonicalWhole = whole.replace(/^0+(?=\d)/, "");
        const canonicalFraction = fraction.replace(/0+$/, "");
        const canonical = canonicalFraction ? `${canonicalWhole}.${canonicalFraction}` : canonicalWhole;
        const result = parseAmount(t, text);
        if (canonical === "0") {
          expect(result.ok).toBe(false);
        } else {
          expect(result.ok && formatAmount(t, result.units)).toBe(canonical);
        }
      }),
    );
  });

  test("18 decimals: parse(format(u)) = u and order is kept", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        (a, b) => {
          const pa = units("ETH", formatAmount("ETH", a));
          const pb = units("ETH", formatAmount("ETH", b));
          expect(pa).toBe(a);
          expect(pa < pb).toBe(a < b);
        },
      ),
    );
  });

  test("refuses every string with a character other than digits and one dot", () => {
    fc.assert(
      fc.property(ticker, fc.string({ minLength: 1, maxLength: 20 }), (t, text) => {
        fc.pre(!/^\d*\.?\d*$/.test(text));
        expect(parseAmount(t, text).ok).toBe(false);
      }),
    );
  });
});

describe("normaliseUsd", () => {
  test("plain non-negative decimals, canonicalised", () => {
    expect(normaliseUsd("1234.50")).toBe("1234.5");
    expect(normaliseUsd("0")).toBe("0");
    expect(normaliseUsd("00.10")).toBe("0.1");
    expect(normaliseUsd("12.000")).toBe("12");
    expect(normaliseUsd("0.000000000000000001")).toBe("0.000000000000000001");
  });
  test("anything else is undefined", () => {
    for (const bad of [
      "",
      "-1",
      "1e3",
      "1.",
      ".5",
      "1,5",
      " 1",
      "NaN",
      "1.0000000000000000001",
      "1".repeat(31),
    ]) {
      expect(normaliseUsd(bad)).toBeUndefined();
    }
  });
});
