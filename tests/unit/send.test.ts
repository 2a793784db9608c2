import { parseWithZod } from "@conform-to/zod/v4";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { refusal, type RefusalCode } from "../../common/contract/refusals";
import { compare, divide, multiply, toFixed, toPlain } from "../../common/decimal";
import {
  acceptsAmountInput,
  amountToSend,
  coinToFiat,
  completeAmounts,
  emptyFields,
  fiatToCoin,
  fullAmount,
  parseAmount,
  sendFailureMessage,
  receiveNetwork,
  sendNetwork,
  usdtNetworkOf,
  sendPrice,
  usdValueOf,
  withCoinAmount,
  withFiatAmount,
} from "../../app/send/rules.ts";
import { checkSend, sendSchemaFor, sendValuesSchema } from "../../app/send/schema.ts";
import { d } from "../support/decimal.ts";

/** A refusal of call 6 as the client hands it over. */
const refused = (code: RefusalCode) => ({ ...refusal(code), kind: "rejected" as const });

describe("divide", () => {
  test("rounds half away from zero, or truncates", () => {
    expect(toFixed(divide(d("1"), d("3"), 4), 4)).toBe("0.3333");
    expect(toFixed(divide(d("2"), d("3"), 4), 4)).toBe("0.6667");
    expect(toFixed(divide(d("2"), d("3"), 4, { truncate: true }), 4)).toBe("0.6666");
    expect(toFixed(divide(d("-2"), d("3"), 4), 4)).toBe("-0.6667");
    expect(toFixed(divide(d("2"), d("-3"), 4, { truncate: true }), 4)).toBe("-0.6666");
    expect(toFixed(divide(d("0.005"), d("1"), 2), 2)).toBe("0.01");
    expect(toFixed(divide(d("1265.92"), d("2531.84"), 4), 4)).toBe("0.5000");
  });

  test("refuses division by zero", () => {
    expect(() => divide(d("1"), d("0.000"), 2)).toThrow(RangeError);
  });

  test("truncated quotient × divisor never exceeds the dividend", () => {
    const positive = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.integer({ min: 0, max: 18 }))
      .map(([units, scale]) => ({ units, scale }));
    fc.assert(
      fc.property(positive, positive, (a, b) => {
        const q = divide(a, b, 4, { truncate: true });
        expect(compare(multiply(q, b), a)).toBeLessThanOrEqual(0);
        // …and one more unit in the last place would.
        expect(compare(multiply({ units: q.units + 1n, scale: 4 }, b), a)).toBeGreaterThan(0);
      }),
    );
  });
});

describe("toPlain", () => {
  test("drops trailing zeros", () => {
    expect(toPlain(d("1.5000"))).toBe("1.5");
    expect(toPlain(d("2.000"))).toBe("2");
    expect(toPlain(d("0.0000"))).toBe("0");
    expect(toPlain(d("120"))).toBe("120");
    expect(toPlain(d("-0.50"))).toBe("-0.5");
  });
});

describe("amount inputs", () => {
  test("accept digits with one dot and at most 4 decimals while typing", () => {
    for (const ok of ["", ".", "0.", "0", "12", "0.5", "1.2345", ".5", "10."])
      expect(acceptsAmountInput(ok)).toBe(true);
    for (const bad of ["1.23456", "1..2", "1.2.3", "-1", "+1", "1e5", "abc", " 1", "1,5", "0x1"])
      expect(acceptsAmountInput(bad)).toBe(false);
  });

  test("parse finished amounts only", () => {
    expect(parseAmount("0.5")).toEqual(d("0.5"));
    expect(parseAmount(".5")).toEqual(d("0.5"));
    expect(parseAmount("5.")).toEqual(d("5"));
    expect(parseAmount(" 1.2345 ")).toEqual(d("1.2345"));
    for (const bad of ["", ".", "1.23456", "1,5", "-1", "1e3"]) expect(parseAmount(bad)).toBeUndefined();
  });
});

describe("conversions", () => {
  const eth = d("2531.84");
  const usd = d("1");
  const eur = d("0.8686587908");

  test("coin → fiat through the USD price and the multiplier, 2 decimals", () => {
    expect(coinToFiat(d("0.5"), eth, usd)).toBe("1265.92");
    expect(coinToFiat(d("0.5"), eth, eur)).toBe("1099.65"); // 1099.6464… rounds up
    expect(coinToFiat(d("0.0001"), d("0.176534"), usd)).toBe("0.00");
  });

  test("fiat → coin is truncated to 4 decimals", () => {
    expect(fiatToCoin(d("1265.92"), eth, usd)).toBe("0.5");
    expect(fiatToCoin(d("100"), eth, usd)).toBe("0.0394"); // 0.03949…
    expect(fiatToCoin(d("100"), d("0"), usd)).toBeUndefined();
  });

  test("USDT is priced at 1, whatever the feed says", () => {
    expect(sendPrice("USDT", "0.9998")).toEqual(d("1"));
    expect(sendPrice("USDT", null)).toEqual(d("1"));
    expect(sendPrice("ETH", "2531.84")).toEqual(eth);
    expect(sendPrice("ETH", null)).toBeUndefined();
    expect(sendPrice("ETH", "0")).toBeUndefined();
  });

  test("'Full' is the whole balance truncated to 4 decimals", () => {
    expect(fullAmount(d("1.5"))).toBe("1.5");
    expect(fullAmount(d("0.123456789012345678"))).toBe("0.1234");
    expect(fullAmount(d("0.00009"))).toBe("0");
    expect(fullAmount(d("0"))).toBe("0");
  });

  test("the amount sent is truncated to 4 decimals; its USD value has 2", () => {
    expect(amountToSend(d("0.99999"))).toBe("0.9999");
    expect(amountToSend(d("2.50"))).toBe("2.5");
    expect(usdValueOf(d("0.5"), eth)).toBe("1265.92");
    expect(usdValueOf(d("0.5"), undefined)).toBe("0");
  });
});

describe("the send form's rules", () => {
  test("all three fields are required, with one message", () => {
    const check = checkSend({ address: "0xabc", coin: "", fiat: " " });
    expect(check).toEqual({ ok: false, errors: { form: ["Please fill out all fields."] } });
    expect(emptyFields({ address: "0xabc", coin: "", fiat: " " })).toEqual(["coin", "fiat"]);
  });

  test("amounts must be digits with one dot and at most 4 decimals, the coin amount above 0", () => {
    expect(checkSend({ address: "a", coin: "1.23456", fiat: "abc" })).toEqual({
      ok: false,
      errors: {
        coin: ["Use digits and one dot, with at most 4 decimals (for example 0.5)."],
        fiat: ["Use digits and one dot, with at most 4 decimals (for example 0.5)."],
      },
    });
    expect(checkSend({ address: "a", coin: "0.0000", fiat: "0" })).toEqual({
      ok: false,
      errors: { coin: ["Enter an amount greater than 0."] },
    });
    expect(checkSend({ address: " 0xabc ", coin: "0.5", fiat: "0.00" })).toEqual({
      ok: true,
      address: "0xabc",
      coin: d("0.5"),
    });
  });

  test("failures read as the spec's catalogue says, decided by the refusal's code", () => {
    expect(sendFailureMessage(refused("insufficient_balance"))).toBe("Insufficient balance.");
    expect(sendFailureMessage(refused("wallet_not_found"))).toBe("Transaction failed: Wallet not found.");
    // The wording does not decide: only the code does.
    expect(sendFailureMessage({ ...refused("wallet_not_found"), message: "Insufficient balance." })).toBe(
      "Transaction failed: Insufficient balance.",
    );
    expect(
      sendFailureMessage({ ok: false, kind: "network", message: "The backend did not answer in time." }),
    ).toBe("Transaction failed: The backend did not answer in time.");
  });

  test("USDT's network follows the wallet's own address", () => {
    expect(sendNetwork("USDT", "Ethereum (ERC-20)", "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio")).toBe(
      "TRON (TRC-20)",
    );
    expect(sendNetwork("USDT", "Ethereum (ERC-20)", "0x8f348F300873Fd5DA36950B2aC75a26584584feE")).toBe(
      "Ethereum (ERC-20)",
    );
    expect(sendNetwork("ETH", "Ethereum", "0x8f34")).toBe("Ethereum");
  });

  test("the receive panel names the network as exchanges do (token standard where the name is ambiguous)", () => {
    expect(receiveNetwork("BNB", "BNB Smart Chain", "0x8f348F300873Fd5DA36950B2aC75a26584584feE")).toBe(
      "BNB Smart Chain (BEP-20)",
    );
    expect(receiveNetwork("USDT", "Ethereum (ERC-20)", "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio")).toBe(
      "TRON (TRC-20)",
    );
    expect(receiveNetwork("USDT", "Ethereum (ERC-20)", "0x8f348F300873Fd5DA36950B2aC75a26584584feE")).toBe(
      "Ethereum (ERC-20)",
    );
    expect(receiveNetwork("TRX", "TRON", "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio")).toBe("TRON");
    expect(usdtNetworkOf("TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio")).toBe("trc20");
    expect(usdtNetworkOf("0x8f348F300873Fd5DA36950B2aC75a26584584feE")).toBe("erc20");
  });

  test("with its coin known, the send schema checks the address by the backend's rules", () => {
    const values = { coin: "0.1", fiat: "1" };
    const bad = sendSchemaFor("review", { ticker: "BTC", usdtNetwork: "erc20" }).safeParse({
      ...values,
      address: "not-an-address",
    });
    expect(bad.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["address", "This is not a valid Bitcoin address: it contains characters that never appear in one."],
    ]);
    const good = sendSchemaFor("review", { ticker: "BTC", usdtNetwork: "erc20" }).safeParse({
      ...values,
      address: "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
    });
    expect(good.success).toBe(true);
    // A TRON address for USDT where USDT goes on TRON, and the other way round.
    const tron = { ...values, address: "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio" };
    expect(sendSchemaFor("confirm", { ticker: "USDT", usdtNetwork: "trc20" }).safeParse(tron).success).toBe(
      true,
    );
    expect(sendSchemaFor("confirm", { ticker: "USDT", usdtNetwork: "erc20" }).safeParse(tron).success).toBe(
      false,
    );
    // 'Full' and 'Convert' only read the values.
    expect(
      sendSchemaFor("full", { ticker: "BTC", usdtNetwork: "erc20" }).safeParse({ ...values, address: "x" })
        .success,
    ).toBe(true);
  });
});

/** A posted form, as the action (and conform in the browser) reads it. */
function form(entries: Record<string, string>): FormData {
  const formData = new FormData();
  for (const [name, value] of Object.entries(entries)) formData.append(name, value);
  return formData;
}

describe("the send form on conform", () => {
  const eth = d("2531.84");
  const usd = d("1");

  test("empty inputs (which conform reads as missing) give the one form-level message", () => {
    const submission = parseWithZod(form({ intent: "review", address: "", coin: "", fiat: "" }), {
      schema: sendSchemaFor("review"),
    });
    expect(submission.status).toBe("error");
    expect(submission.status === "error" && submission.error).toEqual({
      "": ["Please fill out all fields."],
    });
  });

  test("'Send' and Confirm check the rules; the other buttons only read the values", () => {
    const values = { address: " 0xabc ", coin: "1.23456", fiat: "" };
    for (const intent of ["review", "confirm"]) {
      const submission = parseWithZod(form({ intent, ...values }), { schema: sendSchemaFor(intent) });
      expect(submission.status).toBe("error");
    }
    for (const intent of ["full", "convert-coin", "convert-fiat", "edit"]) {
      const submission = parseWithZod(form({ intent, ...values }), { schema: sendSchemaFor(intent) });
      expect(submission.status).toBe("success");
      expect(submission.status === "success" && submission.value).toEqual({
        address: "0xabc",
        coin: "1.23456",
        fiat: "",
        tag: "",
      });
    }
    const ok = parseWithZod(form({ intent: "confirm", address: " 0xabc ", coin: "0.5", fiat: "1265.92" }), {
      schema: sendSchemaFor("confirm"),
    });
    expect(ok.status === "success" && ok.value).toEqual({
      address: "0xabc",
      coin: "0.5",
      fiat: "1265.92",
      tag: "",
      destination: { address: "0xabc", tag: null },
    });
  });

  test("a typed value is read up to 256 characters, then trimmed", () => {
    const long = `${"a".repeat(255)} tail`;
    expect(sendValuesSchema.parse({ address: long }).address).toBe("a".repeat(255));
  });

  test("typing one amount converts the other; an unfinished one leaves it, an emptied one empties it", () => {
    const amounts = { coin: "", fiat: "12.00" };
    expect(withCoinAmount(amounts, "0.5", eth, usd)).toEqual({ coin: "0.5", fiat: "1265.92" });
    expect(withCoinAmount(amounts, "0.", eth, usd)).toEqual({ coin: "0.", fiat: "0.00" });
    expect(withCoinAmount(amounts, ".", eth, usd)).toEqual({ coin: ".", fiat: "12.00" });
    expect(withCoinAmount(amounts, "", eth, usd)).toEqual({ coin: "", fiat: "" });
    expect(withCoinAmount(amounts, "0.5", undefined, usd)).toEqual({ coin: "0.5", fiat: "12.00" });
    expect(withFiatAmount({ coin: "1", fiat: "" }, "100", eth, usd)).toEqual({ coin: "0.0394", fiat: "100" });
    expect(withFiatAmount({ coin: "1", fiat: "" }, ".", eth, usd)).toEqual({ coin: "1", fiat: "." });
    expect(withFiatAmount({ coin: "1", fiat: "9" }, "", eth, usd)).toEqual({ coin: "", fiat: "" });
    expect(withFiatAmount({ coin: "1", fiat: "" }, "100", undefined, usd)).toEqual({
      coin: "1",
      fiat: "100",
    });
  });
});

// Issue 24, defect 8: 'Send' without scripts with only one amount typed.
describe("the amount 'Send' fills in when only one is given", () => {
  const eth = d("2531.84");
  const usd = d("1");
  const eur = d("0.8686587908");

  test("the other one as 'Convert' fills it in: 2 decimals of fiat, the coin truncated to 4", () => {
    expect(completeAmounts({ coin: "0.5", fiat: "" }, eth, usd)).toEqual({ coin: "0.5", fiat: "1265.92" });
    expect(completeAmounts({ coin: "0.5", fiat: "" }, eth, eur)).toEqual({ coin: "0.5", fiat: "1099.65" });
    expect(completeAmounts({ coin: "", fiat: "100" }, eth, usd)).toEqual({ coin: "0.0394", fiat: "100" });
    expect(completeAmounts({ coin: "", fiat: "1099.65" }, eth, eur)).toEqual({
      coin: "0.4999",
      fiat: "1099.65",
    });
    // A finished amount as the form takes it: '.5', '5.'.
    expect(completeAmounts({ coin: ".5", fiat: "" }, eth, usd)).toEqual({ coin: ".5", fiat: "1265.92" });
    expect(completeAmounts({ coin: "", fiat: "5." }, eth, usd)).toEqual({ coin: "0.0019", fiat: "5." });
    // USDT at 1, whatever the feed says.
    expect(completeAmounts({ coin: "", fiat: "12.5" }, sendPrice("USDT", "0.9998"), usd)).toEqual({
      coin: "12.5",
      fiat: "12.5",
    });
  });

  test("the same figures as 'Convert' and typing (one conversion, not a copy)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,6}(\.\d{1,4})?$/), (text) => {
        expect(completeAmounts({ coin: text, fiat: "" }, eth, eur)).toEqual(
          withCoinAmount({ coin: "", fiat: "" }, text, eth, eur),
        );
        expect(completeAmounts({ coin: "", fiat: text }, eth, eur)).toEqual(
          withFiatAmount({ coin: "", fiat: "" }, text, eth, eur),
        );
      }),
    );
  });

  test("a fiat amount worth less than 0.0001 of the coin gives 0, which the rules refuse", () => {
    const amounts = completeAmounts({ coin: "", fiat: "0.01" }, eth, usd);
    expect(amounts).toEqual({ coin: "0", fiat: "0.01" });
    expect(checkSend({ address: "0xabc", ...amounts })).toEqual({
      ok: false,
      errors: { coin: ["Enter an amount greater than 0."] },
    });
  });

  test("nothing is filled in with both or neither given, an unfinished or malformed amount, or no price", () => {
    for (const amounts of [
      { coin: "", fiat: "" },
      { coin: "0.5", fiat: "12" },
      { coin: ".", fiat: "" },
      { coin: "", fiat: "." },
      { coin: "1.23456", fiat: "" },
      { coin: "", fiat: "abc" },
    ])
      expect(completeAmounts(amounts, eth, usd)).toEqual(amounts);
    expect(completeAmounts({ coin: "0.5", fiat: "" }, undefined, usd)).toEqual({ coin: "0.5", fiat: "" });
    expect(completeAmounts({ coin: "", fiat: "100" }, undefined, usd)).toEqual({ coin: "", fiat: "100" });
    expect(checkSend({ address: "0xabc", coin: "0.5", fiat: "" })).toEqual({
      ok: false,
      errors: { form: ["Please fill out all fields."] },
    });
  });
});
