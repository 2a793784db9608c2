// The event streams' ping (app/heartbeat.server.ts): never more than 25 s of quiet, and
// streams opened in the same instant ping at different instants (issue 29). Fake timers: the
// test moves time itself, nothing waits.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { firstHeartbeatMs, HEARTBEAT_MS, startHeartbeat } from "../../app/heartbeat.server.ts";

/** The instants (ms after opening) at which a stream with this random draw pings, over `ms`. */
function pingTimes(random: number, ms: number): number[] {
  const times: number[] = [];
  const opened = Date.now();
  const stop = startHeartbeat(
    () => times.push(Date.now() - opened),
    () => random,
  );
  vi.advanceTimersByTime(ms);
  stop();
  return times;
}

describe("the event streams' heartbeat", () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  test("the first ping falls within the interval, never at the opening and never after 25 s", () => {
    expect(HEARTBEAT_MS).toBe(25_000);
    expect(firstHeartbeatMs(() => 0)).toBe(25_000);
    expect(firstHeartbeatMs(() => 0.5)).toBe(12_500);
    expect(firstHeartbeatMs(() => 0.999_999_99)).toBe(1);
  });

  test.each([0, 0.2, 0.5, 0.999_999])("draw %s: no gap of quiet longer than 25 s", (random) => {
    const times = pingTimes(random, 200_000);
    const gaps = times.map((t, i) => t - (i === 0 ? 0 : (times[i - 1] as number)));
    expect(times.length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(25_000);
    // … and from the last ping to the end of the window.
    expect(200_000 - (times.at(-1) as number)).toBeLessThanOrEqual(25_000);
  });

  test("streams opened together ping at the instants their draws give, then every 25 s", () => {
    expect(pingTimes(0.2, 80_000)).toEqual([20_000, 45_000, 70_000]);
    expect(pingTimes(0.6, 80_000)).toEqual([10_000, 35_000, 60_000]);
  });

  test("stopped, it pings no more (before or after its first ping)", () => {
    let pings = 0;
    const stopEarly = startHeartbeat(
      () => pings++,
      () => 0.5,
    );
    stopEarly();
    const stopLater = startHeartbeat(
      () => pings++,
      () => 0.5,
    );
    vi.advanceTimersByTime(13_000);
    expect(pings).toBe(1);
    stopLater();
    vi.advanceTimersByTime(100_000);
    expect(pings).toBe(1);
  });
});
