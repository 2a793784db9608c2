import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { add, compare, multiply, parseDecimal, toFixed } from "../../common/decimal";
import {
  currencySymbol,
  formatChange,
  formatDate,
  formatFiat,
  formatListAmount,
  formatListBalance,
  formatTotal,
  formatWalletBalance,
  shortenAddress,
} from "../../app/lib/format";
import { d } from "../support/decimal.ts";

describe("decimal", () => {
  test("parses plain decimals only", () => {
    expect(parseDecimal("1.50")).toEqual({ units: 150n, scale: 2 });
    expect(parseDecimal("-0.5")).toEqual({ units: -5n, scale: 1 });
    expect(parseDecimal(2.5)).toEqual({ units: 25n, scale: 1 });
    for (const bad of ["", "1e5", "abc", "1.2.3", " . ", "NaN", "+1"])
      expect(parseDecimal(bad)).toBeUndefined();
    expect(parseDecimal(Number.NaN)).toBeUndefined();
  });

  test("multiplies 18-decimal amounts exactly", () => {
    const wei = d("1.000000000000000001");
    expect(toFixed(multiply(wei, d("3000")), 18)).toBe("3000.000000000000003000");
    expect(toFixed(add(d("0.1"), d("0.2")), 1)).toBe("0.3");
  });

  test("rounds half away from zero, truncates on request", () => {
    expect(toFixed(d("1.005"), 2)).toBe("1.01");
    expect(toFixed(d("-1.005"), 2)).toBe("-1.01");
    expect(toFixed(d("1.999"), 2, { truncate: true })).toBe("1.99");
    expect(toFixed(d("7"), 2)).toBe("7.00");
  });

  test("agrees with integer arithmetic", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (a, b) => {
          const product = multiply({ units: a, scale: 9 }, { units: b, scale: 3 });
          expect(product.units).toBe(a * b);
          expect(compare({ units: a, scale: 0 }, { units: a * 10n, scale: 1 })).toBe(0);
        },
      ),
    );
  });
});

describe("spec section 9 formats", () => {
  test("wallet list balance: 2 decimals when above 0, cut not rounded", () => {
    expect(formatListBalance(d("0"))).toBe("0");
    expect(formatListBalance(undefined)).toBe("0");
    expect(formatListBalance(d("1.5"))).toBe("1.50");
    expect(formatListBalance(d("0.999"))).toBe("0.99");
  });

  test("wallet page balance: 4 decimals when above 0", () => {
    expect(formatWalletBalance(d("0"))).toBe("0");
    expect(formatWalletBalance(d("1.5"))).toBe("1.5000");
    expect(formatWalletBalance(d("0.123456789012345678"))).toBe("0.1234");
  });

  test("list amounts: 3 decimals, 0 above 1000", () => {
    expect(formatListAmount(d("1.5"))).toBe("1.500");
    expect(formatListAmount(d("1000"))).toBe("1000.000");
    expect(formatListAmount(d("1000.7"))).toBe("1000");
    expect(formatListAmount(d("0.0004"))).toBe("0.000");
  });

  test("fiat: 2 decimals with the currency's symbol", () => {
    expect(formatFiat(d("1234.567"), "EUR")).toBe("€1234.57");
    expect(formatFiat(d("0.004"), "GBP")).toBe("£0.00");
    expect(formatFiat(undefined, "CAD")).toBe("$0.00");
  });

  test("total: 2 decimals; rounded with thin-space grouping above 1,000,000; always rounded on mobile", () => {
    expect(formatTotal(d("999999.994"), "USD")).toBe("$999999.99");
    expect(formatTotal(d("1000000"), "USD")).toBe("$1000000.00");
    expect(formatTotal(d("1234567.5"), "EUR")).toBe("€1\u2009234\u2009568");
    expect(formatTotal(d("1234.56"), "GBP", { mobile: true })).toBe("£1235");
    expect(formatTotal(d("0"), "USD")).toBe("$0.00");
  });

  test("currency symbols, unknown falls back to $", () => {
    expect(["USD", "CAD", "EUR", "GBP", "JPY", ""].map(currencySymbol)).toEqual([
      "$",
      "$",
      "€",
      "£",
      "$",
      "$",
    ]);
  });

  test("24-hour change carries its sign", () => {
    expect(formatChange(d("1.234"))).toBe("+1.23%");
    expect(formatChange(d("-0.5"))).toBe("-0.50%");
    expect(formatChange(d("0"))).toBe("0.00%");
    expect(formatChange(d("0.001"))).toBe("0.00%");
  });

  test("dates as dd.mm.yy", () => {
    expect(formatDate("2026-03-07T23:10:00.000Z")).toBe("07.03.26");
    expect(formatDate("not a date")).toBe("");
  });

  test("addresses longer than 12 characters are shortened 6…6", () => {
    expect(shortenAddress("bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d")).toBe("bc1quv…rprk9d");
    expect(shortenAddress("123456789012")).toBe("123456789012");
    expect(shortenAddress("Not added yet")).toBe("Not ad…ed yet");
  });
});
