// The e2e server's holds' clock (record 048): TEST_CLOCK_FILE holds a number
// of milliseconds added to the server's clock. The js and no-js projects (and
// any spec that waits out a hold) share one server, so one test at a time may
// hold the clock: `withHoldClock` takes a lock between Playwright's worker
// processes (a directory, made atomically), hands the test a way to move the
// clock, and always puts it back to 0 and lets go, even when the test fails.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";

const STALE_MS = 10 * 60_000;

function paths() {
  const dataDir = process.env.E2E_DATA_DIR;
  if (!dataDir) throw new Error("E2E_DATA_DIR is not set");
  return { clock: `${dataDir}.clock`, lock: `${dataDir}.clock.lock` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lock(dir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    // A lock left behind by a run that was killed: older than any test may take.
    try {
      if (Date.now() - statSync(dir).mtimeMs > STALE_MS) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Gone meanwhile: try again.
    }
    if (Date.now() > deadline) throw new Error("the holds' clock stayed taken by another test");
    await sleep(250);
  }
}

/** What a test holding the clock may do: move the server's holds' clock by `ms` from now. */
export interface HoldClock {
  set(offsetMs: number): void;
}

/** Runs `body` holding the server's holds' clock (no other test moves it meanwhile). */
export async function withHoldClock<T>(
  body: (clock: HoldClock) => Promise<T>,
  timeoutMs = 150_000,
): Promise<T> {
  const { clock, lock: dir } = paths();
  await lock(dir, timeoutMs);
  try {
    writeFileSync(clock, "0");
    return await body({ set: (offsetMs) => writeFileSync(clock, String(Math.trunc(offsetMs))) });
  } finally {
    writeFileSync(clock, "0");
    rmSync(dir, { recursive: true, force: true });
  }
}
