// The public data feeds without a network: the number formatting the parsers
// use, the CoinGecko and ECB parsers on recorded-style payloads (and broken
// ones), and the cached source's rules driven by a fake clock and fetch stand-ins.
import { describe, expect, test } from "vitest";
import { TICKERS } from "../../common/coins.ts";
import {
  COINGECKO_SIMPLE_URL,
  parseCoinGecko,
  toDecimalString,
} from "../../server/backend/feeds/crypto-prices.ts";
import { createCachedSource, type CachedSourceOptions } from "../../server/backend/feeds/feed.ts";
import { ecbAsOf, parseEcbDaily, toSignificant } from "../../server/backend/feeds/fx-rates.ts";
import { measure } from "../support/measure.ts";
import { fixture, fixtureJson, collect, parsedQuietly } from "../fixtures/feeds.ts";

describe("toDecimalString / toSignificant", () => {
  test.each([
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [123.45, "123.45"],
    [-1.25, "-1.25"],
    [0.000001, "0.000001"],
    [1e-7, "0.0000001"],
    [1.5e-7, "0.00000015"],
    [-4.2e-8, "-0.000000042"],
    [1.2345e-10, "0.00000000012345"],
    [1e21, "1000000000000000000000"],
    [1.23e25, "12300000000000000000000000"],
    [-9.87654321e22, "-98765432100000000000000"],
    [123456789012345680000, "123456789012345680000"],
  ])("%s → %s", (value, text) => {
    expect(toDecimalString(value)).toBe(text);
    expect(Number(toDecimalString(value))).toBe(value === 0 ? 0 : value);
  });

  test("refuses non-finite numbers", () => {
    expect(() => toDecimalString(Number.NaN)).toThrow(RangeError);
    expect(() => toDecimalString(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => toSignificant(Number.NaN)).toThrow(RangeError);
  });

  test("at most 10 significant digits, trailing zeros dropped, no exponent", () => {
    expect(toSignificant(1 / 1.1512)).toBe("0.8686587908");
    expect(toSignificant(2 / 3)).toBe("0.6666666667");
    expect(toSignificant(1.5)).toBe("1.5");
    expect(toSignificant(1 / 3e8)).toBe("0.000000003333333333");
    expect(toSignificant(123456789012.7)).toBe("123456789000");
    expect(toSignificant(2 / 3, 4)).toBe("0.6667");
  });
});

describe("parseCoinGecko", () => {
  test("reads every coin of the recorded answer, numbers kept as the JSON spells them", () => {
    const quotes = parsedQuietly(parseCoinGecko, "coingecko-simple-price.json");
    expect([...quotes.keys()]).toEqual([...TICKERS]);
    expect(Object.fromEntries(quotes)).toEqual({
      BTC: { lastPrice: "105432", changePct: "-2.4601386712089415" },
      ETH: { lastPrice: "2531.84", changePct: "-8.201394771125315" },
      ADA: { lastPrice: "0.641782", changePct: "-6.112398712037162" },
      BNB: { lastPrice: "645.21", changePct: "-2.038712519628447" },
      DOGE: { lastPrice: "0.176534", changePct: "-7.001297543002441" },
      SOL: { lastPrice: "145.87", changePct: "-6.985218123499531" },
      TRX: { lastPrice: "0.271098", changePct: "-1.2046618309172905" },
      USDT: { lastPrice: "1.000198", changePct: "0.017251489073617" },
      XRP: { lastPrice: "2.14", changePct: "-4.330981725839022" },
    });
  });

  test("the fixture's number texts survive unchanged", () => {
    const text = fixture("coingecko-simple-price.json");
    const quotes = parseCoinGecko(JSON.parse(text));
    for (const quote of quotes.values()) {
      expect(text).toContain(`"usd": ${quote.lastPrice},`);
      expect(text).toContain(`"usd_24h_change": ${quote.changePct} }`);
    }
  });

  test("skips prices that are not finite positive numbers, with a warning each", () => {
    const { warnings, warn } = collect();
    const quotes = parseCoinGecko(fixtureJson("coingecko-simple-price-malformed.json"), warn);
    expect(Object.fromEntries(quotes)).toEqual({
      BTC: { lastPrice: "105432", changePct: "0" }, // null change → "0", silently
      BNB: { lastPrice: "645.21", changePct: "0" }, // "n/a" change → "0", warned
    });
    expect(warnings).toEqual([
      "CoinGecko: skipped ETH: the price is not a finite positive number",
      "CoinGecko: skipped ADA: the price is not a finite positive number",
      'CoinGecko: BNB: the 24 h change is not a number; "0" used',
      "CoinGecko: skipped DOGE: the price is not a finite positive number",
      "CoinGecko: skipped SOL: the entry is not an object",
      "CoinGecko: skipped TRX: the entry is not an object",
      "CoinGecko: no entry for USDT (tether)",
      "CoinGecko: skipped XRP: the price is not a finite positive number",
    ]);
  });

  test("never throws on junk; an error body gives an empty map", () => {
    const junk: unknown[] = [
      null,
      undefined,
      42,
      "bitcoin",
      [],
      [{ bitcoin: { usd: 1 } }],
      { bitcoin: "1" },
      { bitcoin: { usd: Number.NaN } },
      { bitcoin: { usd: Number.POSITIVE_INFINITY } },
      { bitcoin: { usd: -0 } },
      Object.create(null) as unknown,
      JSON.parse('{"__proto__": {"usd": 5}}'),
      fixtureJson("coingecko-rate-limited.json"),
    ];
    for (const value of junk) {
      const { warnings, warn } = collect();
      expect(() => parseCoinGecko(value, warn)).not.toThrow();
      expect(parseCoinGecko(value).size).toBe(0);
      expect(parseCoinGecko(value, warn).size).toBe(0);
      expect(warnings.length).toBeGreaterThan(0);
    }
  });

  test("inherited properties are not read as coins", () => {
    const proto = { bitcoin: { usd: 5 } };
    expect(parseCoinGecko(Object.create(proto) as unknown).size).toBe(0);
    expect(parseCoinGecko({ bitcoin: Object.create({ usd: 5 }) as unknown }).size).toBe(0);
  });

  test("tiny and huge prices come out without exponent notation", () => {
    const quotes = parseCoinGecko({
      dogecoin: { usd: 1.5e-7, usd_24h_change: -2.5e-9 },
      bitcoin: { usd: 1.23e21, usd_24h_change: 1e-7 },
    });
    expect(quotes.get("DOGE")).toEqual({ lastPrice: "0.00000015", changePct: "-0.0000000025" });
    expect(quotes.get("BTC")).toEqual({ lastPrice: "1230000000000000000000", changePct: "0.0000001" });
  });

  test("the /simple/price URL asks for all nine coins in USD with the 24 h change", () => {
    const url = new URL(COINGECKO_SIMPLE_URL);
    expect(url.origin + url.pathname).toBe("https://api.coingecko.com/api/v3/simple/price");
    expect(url.searchParams.get("ids")?.split(",")).toEqual([
      "bitcoin",
      "ethereum",
      "cardano",
      "binancecoin",
      "dogecoin",
      "solana",
      "tron",
      "tether",
      "ripple",
    ]);
    expect(url.searchParams.get("vs_currencies")).toBe("usd");
    expect(url.searchParams.get("include_24hr_change")).toBe("true");
  });
});

describe("parseEcbDaily", () => {
  const xml = fixture("ecb-eurofxref-daily.xml");

  test("reads the day and turns EUR-based rates into USD multipliers", () => {
    const parsed = parseEcbDaily(xml);
    expect(parsed).toEqual({
      date: "2025-06-13",
      rates: { USD: "1", EUR: "0.8686587908", GBP: "0.738533704", CAD: "1.363273106" },
    });
    // 1 EUR = 1.1512 USD, so 1 USD is worth EUR 1/1.1512; GBP and CAD go through the euro.
    expect(Number(parsed.rates.EUR) * 1.1512).toBeCloseTo(1, 9);
    expect(Number(parsed.rates.GBP) * 1.1512).toBeCloseTo(0.8502, 9);
    expect(Number(parsed.rates.CAD) * 1.1512).toBeCloseTo(1.5694, 8);
    expect(ecbAsOf(parsed.date)).toBe("2025-06-13T00:00:00.000Z");
  });

  test("double quotes, swapped attributes, other spacing and comments", () => {
    const variant = xml
      .replaceAll(/currency='([A-Z]{3})' rate='([\d.]+)'\/>/gu, 'rate = "$2"  currency="$1" />')
      .replace("<Cube time='2025-06-13'>", '<Cube time="2025-06-13" >')
      .replace("<Cube>", "<Cube><!-- <Cube currency='USD' rate='9.99'/> -->");
    expect(variant).toContain('rate = "1.1512"  currency="USD" />');
    expect(parseEcbDaily(variant)).toEqual(parseEcbDaily(xml));
  });

  test("only the first day of a multi-day file is read", () => {
    const older =
      "<Cube time='2025-06-12'><Cube currency='USD' rate='2'/><Cube currency='CHF' rate='1'/></Cube>";
    const twoDays = xml.replace("\t</Cube>\n</gesmes:Envelope>", `${older}</Cube></gesmes:Envelope>`);
    expect(twoDays).toContain("2025-06-12");
    expect(parseEcbDaily(twoDays)).toEqual(parseEcbDaily(xml));
  });

  test("a missing GBP rate is a clear error", () => {
    expect(() => parseEcbDaily(fixture("ecb-eurofxref-daily-missing-gbp.xml"))).toThrow(
      "ECB rates for 2025-06-13: missing GBP",
    );
    const bare = "<Cube><Cube time='2025-06-13'><Cube currency='JPY' rate='165.78'/></Cube></Cube>";
    expect(() => parseEcbDaily(bare)).toThrow("ECB rates for 2025-06-13: missing USD, GBP, CAD");
  });

  test("an error page, an empty body or a missing day are clear errors", () => {
    for (const text of [
      fixture("ecb-error-page.html"),
      "",
      "not xml at all",
      "<Cube currency='USD' rate='1'/>",
    ]) {
      expect(() => parseEcbDaily(text)).toThrow("ECB rates: no <Cube time='YYYY-MM-DD'> element found");
    }
  });

  test("invalid rates and days are refused", () => {
    expect(() => parseEcbDaily(xml.replace("rate='1.1512'", "rate='N/A'"))).toThrow(
      "ECB rates for 2025-06-13: invalid USD rate 'N/A'",
    );
    expect(() => parseEcbDaily(xml.replace("rate='1.1512'", "rate='0'"))).toThrow("invalid USD rate '0'");
    expect(() => parseEcbDaily(xml.replace("rate='1.5694'", "rate='-1.5'"))).toThrow("invalid CAD rate");
    expect(() => parseEcbDaily(xml.replace("rate='0.85020'", "rate='1e3'"))).toThrow("invalid GBP rate");
    expect(() => parseEcbDaily(xml.replace("2025-06-13", "2025-02-30"))).toThrow(
      "ECB rates: invalid reference day '2025-02-30'",
    );
    expect(() => parseEcbDaily(xml.replace("2025-06-13", "yesterday"))).toThrow("invalid reference day");
  });
});

describe("createCachedSource", () => {
  interface Data {
    value: string;
  }
  const SNAPSHOT = { value: "snapshot", asOf: "2025-06-13T12:00:00.000Z" };
  const T0 = Date.parse("2026-01-01T00:00:00.000Z");

  function setup(
    fetchLive: CachedSourceOptions<Data>["fetchLive"],
    extra: Partial<CachedSourceOptions<Data>> = {},
  ) {
    const clock = { ms: T0 };
    const failures: string[] = [];
    const source = createCachedSource<Data>({
      name: "test",
      fetchLive,
      snapshot: () => SNAPSHOT,
      now: () => clock.ms,
      onFailure: ({ name, reason }) => void failures.push(`${name}: ${reason}`),
      ...extra,
    });
    return { clock, failures, source };
  }

  test("offline: the snapshot, and the network is never touched", async () => {
    let calls = 0;
    const { source } = setup(
      async () => {
        calls += 1;
        return { value: "live" };
      },
      { offline: true },
    );
    expect(await source.get()).toEqual({
      data: SNAPSHOT,
      asOf: SNAPSHOT.asOf,
      source: "snapshot",
      fetchedAt: "2026-01-01T00:00:00.000Z",
    });
    await source.get();
    expect(calls).toBe(0);
  });

  test("a live value is served from cache within the ttl, then refreshed", async () => {
    let calls = 0;
    const { clock, source } = setup(async () => {
      calls += 1;
      return { value: `live ${calls}` };
    });
    const first = await source.get();
    expect(first).toEqual({
      data: { value: "live 1" },
      asOf: "2026-01-01T00:00:00.000Z", // no own asOf: the fetch time
      source: "live",
      fetchedAt: "2026-01-01T00:00:00.000Z",
    });
    clock.ms += 59_999;
    expect(await source.get()).toEqual(first);
    expect(calls).toBe(1);
    clock.ms += 1;
    expect((await source.get()).data.value).toBe("live 2");
    expect(calls).toBe(2);
  });

  test("the ttl is an option", async () => {
    let calls = 0;
    const { clock, source } = setup(
      async () => {
        calls += 1;
        return { value: "live" };
      },
      { ttlMs: 1_000 },
    );
    await source.get();
    clock.ms += 1_000;
    await source.get();
    expect(calls).toBe(2);
  });

  test("a live value's own asOf is the answer's asOf", async () => {
    const { source } = setup(async () => ({ value: "live", asOf: "2025-06-13T00:00:00.000Z" }));
    const answer = await source.get();
    expect(answer.asOf).toBe("2025-06-13T00:00:00.000Z");
    expect(answer.fetchedAt).toBe("2026-01-01T00:00:00.000Z");
  });

  test("concurrent callers share one refresh", async () => {
    let calls = 0;
    const deferred = Promise.withResolvers<Data>();
    const { source } = setup(() => {
      calls += 1;
      return deferred.promise;
    });
    const pending = Array.from({ length: 5 }, () => source.get());
    await Promise.resolve();
    expect(calls).toBe(1);
    deferred.resolve({ value: "live" });
    const answers = await Promise.all(pending);
    expect(new Set(answers.map((answer) => answer.data.value))).toEqual(new Set(["live"]));
    expect(answers.every((answer) => answer.source === "live")).toBe(true);
    expect(calls).toBe(1);
  });

  test("a hanging source: the snapshot within the timeout, and the signal is aborted", async () => {
    let signal: AbortSignal | undefined;
    const { failures, source } = setup(
      (given) => {
        signal = given;
        return new Promise<Data>(() => {}); // ignores the signal on purpose
      },
      { timeoutMs: 150 },
    );
    const { result: answer, ms, stalled } = await measure(() => source.get());
    expect(answer.source).toBe("snapshot");
    expect(answer.data).toEqual(SNAPSHOT);
    expect(ms).toBeGreaterThanOrEqual(140);
    expect(ms - stalled).toBeLessThan(150 + 200);
    expect(signal?.aborted).toBe(true);
    expect(failures).toEqual(["test: Error: no answer within 150 ms"]);
  });

  test("after a failure the network is left alone for 60 s", async () => {
    let calls = 0;
    let up = false;
    const { clock, failures, source } = setup(async () => {
      calls += 1;
      if (!up)
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
        });
      return { value: "live" };
    });
    expect((await source.get()).source).toBe("snapshot");
    expect(failures).toEqual(["test: TypeError: fetch failed (ECONNREFUSED)"]);
    for (let i = 0; i < 20; i += 1) {
      clock.ms += 2_999;
      expect((await source.get()).source).toBe("snapshot");
    }
    expect(calls).toBe(1);
    up = true;
    clock.ms = T0 + 60_000;
    expect((await source.get()).data.value).toBe("live");
    expect(calls).toBe(2);
    expect(failures).toHaveLength(1);
  });

  test("a failed refresh serves the last good live value, not the snapshot", async () => {
    let calls = 0;
    const { clock, source } = setup(async () => {
      calls += 1;
      if (calls > 1) throw new Error("HTTP status 503");
      return { value: "live", asOf: "2025-12-31T23:59:00.000Z" };
    });
    const good = await source.get();
    clock.ms += 61_000;
    const stale = await source.get();
    expect(stale).toEqual(good);
    expect(stale).toEqual({
      data: { value: "live", asOf: "2025-12-31T23:59:00.000Z" },
      asOf: "2025-12-31T23:59:00.000Z",
      source: "live",
      fetchedAt: "2026-01-01T00:00:00.000Z",
    });
    clock.ms += 30_000; // inside the back-off
    expect(await source.get()).toEqual(good);
    expect(calls).toBe(2);
  });

  test("a source that throws synchronously, or a failing logger, still gives an answer", async () => {
    const { source } = setup(
      () => {
        throw new Error("boom");
      },
      {
        onFailure: () => {
          throw new Error("logger down");
        },
      },
    );
    expect((await source.get()).source).toBe("snapshot");
  });

  test("invalid options are refused", () => {
    const base = { name: "x", fetchLive: async () => ({ value: "" }), snapshot: () => SNAPSHOT };
    expect(() => createCachedSource<Data>({ ...base, timeoutMs: 0 })).toThrow("timeoutMs");
    expect(() => createCachedSource<Data>({ ...base, ttlMs: -1 })).toThrow("ttlMs");
    expect(() => createCachedSource<Data>({ ...base, retryAfterMs: Number.NaN })).toThrow("retryAfterMs");
  });
});
