// Time bounds that hold on a loaded machine.

/**
 * Runs fn and times it. A 10 ms ticker runs alongside; its lateness beyond 2 ms
 * per tick, summed, is time this process was not given the CPU (a loaded CI
 * box), reported as `stalled` so time bounds measure the code, not the load.
 * On an idle machine it is ~0.
 */
export async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number; stalled: number }> {
  let stalled = 0;
  let last = performance.now();
  const tick = () => {
    const at = performance.now();
    stalled += Math.max(0, at - last - 12);
    last = at;
  };
  const ticker = setInterval(tick, 10);
  const started = performance.now();
  try {
    const result = await fn();
    const ms = performance.now() - started;
    tick();
    return { result, ms, stalled };
  } finally {
    clearInterval(ticker);
  }
}
