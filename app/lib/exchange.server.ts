// One HTTP exchange with a deadline, for the web tier's clients (backend and
// prices). The abort signal stops a real fetch; the race also bounds an
// in-process handler that ignores the signal.
const TIMED_OUT: unique symbol = Symbol("timed out");

export type Exchange =
  | { ok: true; status: number; text: string; headers: Headers }
  | { ok: false; reason: "timeout" }
  /** Only the error's class is kept: fetch errors can carry the request with them. */
  | { ok: false; reason: "unreachable"; name: string };

export async function exchange(
  send: (request: Request) => Promise<Response>,
  url: string,
  init: Omit<RequestInit, "signal">,
  timeoutMs: number,
): Promise<Exchange> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(TIMED_OUT);
    }, timeoutMs);
  });
  try {
    const request = new Request(url, { ...init, signal: controller.signal });
    const answer = await Promise.race([
      (async () => {
        const response = await send(request);
        return { status: response.status, text: await response.text(), headers: response.headers };
      })(),
      timedOut,
    ]);
    if (answer === TIMED_OUT) return { ok: false, reason: "timeout" };
    return { ok: true, ...answer };
  } catch (error) {
    if (controller.signal.aborted) return { ok: false, reason: "timeout" };
    return { ok: false, reason: "unreachable", name: error instanceof Error ? error.name : "error" };
  } finally {
    clearTimeout(timer);
  }
}
