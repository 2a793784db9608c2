// The dashboard of issue 15: CoinGecko's /coins/markets answer read defensively
// (tests/fixtures/feeds/coingecko-markets.json is a hand-made answer in that
// shape, not recorded data), the sparkline's SVG path, and the total's 24-hour
// change in exact decimals.
import { describe, expect, test } from "vitest";
import { TICKERS } from "../../common/coins.ts";
import { PAST_VALUE_PLACES, sparklineOf, sparklinePath, totalChange24h } from "../../app/dashboard.server.ts";
import { formatFiatChange } from "../../app/lib/format.ts";
import { parseDecimal } from "../../common/decimal.ts";
import {
  COINGECKO_URL,
  MAX_SPARKLINE_POINTS,
  parseCoinGeckoAnswer,
  parseCoinGeckoMarkets,
} from "../../server/backend/feeds/crypto-prices.ts";
import { fixtureJson, collect, parsedQuietly } from "../fixtures/feeds.ts";

describe("parseCoinGeckoMarkets", () => {
  test("a good answer: prices and changes as the JSON spells them, sparklines as numbers", () => {
    const quotes = parsedQuietly(parseCoinGeckoMarkets, "coingecko-markets.json");
    expect([...quotes.keys()].toSorted()).toEqual([...TICKERS].toSorted());
    expect(quotes.get("BTC")).toEqual({
      lastPrice: "105432",
      changePct: "-2.46014",
      sparkline: [108101.5, 107002.25, 109950, 106300.75, 105432],
    });
    expect(quotes.get("ADA")).toEqual({
      lastPrice: "0.641782",
      changePct: "-6.1124",
      sparkline: [0.701, 0.688, 0.641782],
    });
  });

  test("a missing or null sparkline: the price is kept, no sparkline, no warning", () => {
    const quotes = parseCoinGeckoMarkets(fixtureJson("coingecko-markets.json"));
    expect(quotes.get("TRX")).toEqual({ lastPrice: "0.271098", changePct: "-1.2047" });
    expect(quotes.get("USDT")).toEqual({ lastPrice: "1.000198", changePct: "0.01725" });
  });

  test("nulls: a null change is 0, a null price skips the coin", () => {
    const { warnings, warn } = collect();
    const quotes = parseCoinGeckoMarkets(
      [
        { id: "ripple", current_price: 2.14, price_change_percentage_24h: null, sparkline_in_7d: null },
        { id: "bitcoin", current_price: null, price_change_percentage_24h: 1 },
      ],
      warn,
    );
    expect(quotes.get("XRP")).toEqual({ lastPrice: "2.14", changePct: "0" });
    expect(quotes.has("BTC")).toBe(false);
    expect(warnings).toContain("CoinGecko: skipped BTC: the price is not a finite positive number");
  });

  test("junk is skipped with a warning, never thrown", () => {
    for (const value of [null, undefined, 42, "[]", {}, { bitcoin: { usd: 1 } }, [null, 1, "x", []]]) {
      const { warnings, warn } = collect();
      expect(() => parseCoinGeckoMarkets(value, warn)).not.toThrow();
      expect(parseCoinGeckoMarkets(value).size).toBe(0);
      expect(warnings.length).toBeGreaterThan(0);
    }
    const { warnings, warn } = collect();
    const quotes = parseCoinGeckoMarkets(
      [
        { id: "shiba-inu", current_price: 0.00001 },
        { id: "bitcoin", current_price: "105432", price_change_percentage_24h: 1 },
        { id: "ethereum", current_price: -1 },
        { id: "solana", current_price: 145.87, price_change_percentage_24h: "-7%" },
        { id: "solana", current_price: 1 },
        { id: "cardano", current_price: 0.64, sparkline_in_7d: { price: [0.6, null, "0.7", -1, 0.65] } },
        { id: "dogecoin", current_price: 0.17, sparkline_in_7d: { price: "0.1,0.2" } },
        { id: "tron", current_price: 0.27, sparkline_in_7d: { price: [0.27] } },
        {
          id: "ripple",
          current_price: 2.14,
          sparkline_in_7d: { price: Array(MAX_SPARKLINE_POINTS + 1).fill(2) },
        },
        { id: "binancecoin", current_price: Infinity },
      ],
      warn,
    );
    expect(Object.fromEntries(quotes)).toEqual({
      SOL: { lastPrice: "145.87", changePct: "0" },
      ADA: { lastPrice: "0.64", changePct: "0", sparkline: [0.6, 0.65] },
      DOGE: { lastPrice: "0.17", changePct: "0" },
      TRX: { lastPrice: "0.27", changePct: "0" },
      XRP: { lastPrice: "2.14", changePct: "0" },
    });
    expect(warnings).toEqual([
      "CoinGecko: skipped BTC: the price is not a finite positive number",
      "CoinGecko: skipped ETH: the price is not a finite positive number",
      'CoinGecko: SOL: the 24 h change is not a number; "0" used',
      "CoinGecko: skipped a second entry for SOL",
      "CoinGecko: ADA: skipped 3 sparkline points that are not positive numbers",
      "CoinGecko: DOGE: the sparkline is not a list of prices; none shown",
      "CoinGecko: XRP: the sparkline has 1001 points; none shown",
      "CoinGecko: skipped BNB: the price is not a finite positive number",
      "CoinGecko: no entry for USDT (tether)",
    ]);
  });

  test("either answer is read by its shape; the default URL asks for markets with sparklines", () => {
    expect(parseCoinGeckoAnswer({ bitcoin: { usd: 5, usd_24h_change: 1 } }).get("BTC")).toEqual({
      lastPrice: "5",
      changePct: "1",
    });
    expect(parseCoinGeckoAnswer([{ id: "bitcoin", current_price: 5 }]).get("BTC")).toEqual({
      lastPrice: "5",
      changePct: "0",
    });
    const url = new URL(COINGECKO_URL);
    expect(url.origin + url.pathname).toBe("https://api.coingecko.com/api/v3/coins/markets");
    expect(url.searchParams.get("vs_currency")).toBe("usd");
    expect(url.searchParams.get("sparkline")).toBe("true");
    expect(url.searchParams.get("price_change_percentage")).toBe("24h");
    expect(url.searchParams.get("ids")?.split(",")).toHaveLength(9);
  });
});

describe("sparklinePath", () => {
  test("min at the bottom, max at the top, first at x 0 and last at the full width", () => {
    expect(sparklinePath([1, 2, 3])).toBe("M0,26 48,14 96,2");
    expect(sparklinePath([30, 10, 20, 10], { width: 30, height: 12, pad: 1 })).toBe("M0,1 10,11 20,6 30,11");
  });

  test("a flat series is a line across the middle", () => {
    expect(sparklinePath([5, 5, 5])).toBe("M0,14 48,14 96,14");
    expect(sparklinePath([0, 0])).toBe("M0,14 96,14");
  });

  test("a span under 1 % of the level is widened: a stablecoin's wobble stays near flat", () => {
    // span 0.002 at a level of ~1: drawn as 0.01 tall, i.e. a fifth of the height.
    expect(sparklinePath([0.999, 1.001])).toBe("M0,16.4 96,11.6");
  });

  test("one point: a flat line; none: nothing", () => {
    expect(sparklinePath([42])).toBe("M0,14 96,14");
    expect(sparklinePath([])).toBe("");
    expect(sparklinePath([Number.NaN])).toBe("");
  });

  test("168 hourly points are sampled down to one per pixel, first and last kept", () => {
    const points = Array.from({ length: 168 }, (_, i) => i);
    const drawn = sparklinePath(points);
    const pairs = drawn.slice(1).split(" ");
    expect(pairs).toHaveLength(96);
    expect(pairs[0]).toBe("0,26");
    expect(pairs.at(-1)).toBe("96,2");
  });

  test("its accessible name says the week's change in words", () => {
    expect(sparklineOf("BTC", [100, 97.54])).toMatchObject({
      label: "BTC price, last 7 days: down 2.46%",
      tone: "down",
    });
    expect(sparklineOf("ETH", [100, 110])).toMatchObject({
      label: "ETH price, last 7 days: up 10.00%",
      tone: "up",
    });
    expect(sparklineOf("USDT", [1, 1.00001])).toMatchObject({
      label: "USDT price, last 7 days: unchanged",
      tone: "flat",
    });
    expect(sparklineOf("XRP", [2])).toBeNull();
    expect(sparklineOf("XRP", [])).toBeNull();
  });
});

describe("totalChange24h", () => {
  test("one coin up 25 %: the value 24 h ago was 80 % of today's", () => {
    // 2 × 50 = 100 now; 100 × 100 / 125 = 80 then.
    expect(totalChange24h([{ balance: "2", price: "50", change: "25" }])).toEqual({
      usd: "20",
      percent: "25.00",
    });
  });

  test("several coins, exact decimals: now minus then, percent of then", () => {
    const change = totalChange24h([
      { balance: "0.5", price: "105432", change: "-2.46" }, // 52716 now
      { balance: "10", price: "2531.84", change: "-8.2" }, // 25318.4 now
      { balance: "100", price: "1", change: "0" }, // 100, unchanged
    ]);
    // then: 52716 × 100 / 97.54 = 54045.519786754152 (12 places, half away from zero)
    //     + 25318.4 × 100 / 91.8 = 27579.956427015251
    //     + 100 = 81725.476213769403; now 78134.4
    expect(change).toEqual({ usd: "-3591.076213769403", percent: "-4.39" });
  });

  test("the past value's division is rounded half away from zero at 12 places", () => {
    // 1 × 100 / 103 = 0.970873786407766990…: 0.970873786408 (up), difference 0.029126213592.
    expect(PAST_VALUE_PLACES).toBe(12);
    expect(totalChange24h([{ balance: "1", price: "1", change: "3" }])).toEqual({
      usd: "0.029126213592",
      percent: "3.00",
    });
    // 1 × 100 / 97 = 1.030927835051546…: 1.030927835052 (half up); the percent rounds -2.9999…% to -3.00.
    expect(totalChange24h([{ balance: "1", price: "1", change: "-3" }])).toEqual({
      usd: "-0.030927835052",
      percent: "-3.00",
    });
  });

  test("a coin without a usable change counts as unchanged; nothing held: null", () => {
    expect(
      totalChange24h([
        { balance: "1", price: "10", change: null },
        { balance: "1", price: "10", change: "abc" },
        { balance: "1", price: "10", change: "-100" },
        { balance: "1", price: "10", change: "-150" },
        { balance: "5", price: null, change: "10" },
      ]),
    ).toEqual({ usd: "0", percent: "0.00" });
    expect(totalChange24h([])).toBeNull();
    expect(totalChange24h([{ balance: "0", price: "105432", change: "-2.46" }])).toBeNull();
  });

  test("shown in the display currency: 2 decimals, half away from zero, with its sign", () => {
    const usd = parseDecimal("-3591.076213769403");
    const eur = parseDecimal("0.8686587908");
    if (!usd || !eur) throw new Error("not decimals");
    expect(formatFiatChange(usd, "USD")).toBe("-$3591.08");
    expect(formatFiatChange({ units: usd.units * eur.units, scale: usd.scale + eur.scale }, "EUR")).toBe(
      "-€3119.42",
    );
    expect(formatFiatChange({ units: 5n, scale: 3 }, "USD")).toBe("+$0.01");
    expect(formatFiatChange({ units: -4n, scale: 3 }, "GBP")).toBe("£0.00");
  });
});
