// scripts/record-price-snapshot.ts: the shipped price snapshot is written only
// from a complete answer (every coin with a price and a 7-day line), in a form
// the server accepts at start. CoinGecko is played by a function that answers
// with the test fixture (a hand-made answer of the markets call's shape).
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { TICKERS } from "../../common/coins";
import { recordPriceSnapshot } from "../../scripts/record-price-snapshot";
import { loadPricesSnapshot } from "../../server/backend/feeds/routes";

// The fixture leaves some coins without a line (for the parser's tests): here each gets one.
const fixture = (
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, "../fixtures/feeds/coingecko-markets.json"), "utf8"),
  ) as Array<Record<string, unknown>>
).map((entry) =>
  entry.sparkline_in_7d ? entry : { ...entry, sparkline_in_7d: { price: [1, 1.5, entry.current_price] } },
);

function answering(body: unknown): typeof fetch {
  return async () =>
    new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

describe("record-price-snapshot", () => {
  test("a complete answer is written as a snapshot the server accepts, with every coin's 7-day line", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), "ck-snapshot-")), "snapshot-prices.json");
    const now = new Date("2026-11-26T05:00:00.000Z");
    const { asOf } = await recordPriceSnapshot({
      url: "https://example.test/markets",
      out,
      fetch: answering(fixture),
      now,
    });
    expect(asOf).toBe("2026-11-26T05:00:00.000Z");
    const written = loadPricesSnapshot(JSON.parse(readFileSync(out, "utf8")));
    expect(written.asOf).toBe("2026-11-26T05:00:00.000Z");
    expect(Object.keys(written.prices).toSorted()).toEqual([...TICKERS].toSorted());
    const btc = fixture.find((entry) => entry.id === "bitcoin") as { sparkline_in_7d: { price: number[] } };
    expect(written.prices.BTC.lastPrice).toBe("105432");
    expect(written.prices.BTC.changePct).toBe("-2.46014");
    expect(written.prices.BTC.sparkline).toEqual(btc.sparkline_in_7d.price);
    for (const ticker of TICKERS) expect(written.prices[ticker].sparkline?.length).toBeGreaterThanOrEqual(2);
  });

  test("an answer without a coin's 7-day line is refused by name and nothing is written", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), "ck-snapshot-")), "snapshot-prices.json");
    const partial = fixture.map((entry) =>
      entry.id === "tron" ? { ...entry, sparkline_in_7d: undefined } : entry,
    );
    await expect(
      recordPriceSnapshot({ url: "https://example.test/markets", out, fetch: answering(partial) }),
    ).rejects.toThrow(/lacks a price or a 7-day line for TRX; nothing written/u);
    expect(existsSync(out)).toBe(false);
  });
});
