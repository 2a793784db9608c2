// An authenticator app for the tests (issue 27): the codes of a TOTP secret,
// each time step used once and in order, as the server accepts them (±1 step).
// When the next usable step is still in the future, it waits for it.
import { Secret, TOTP } from "otpauth";

const PERIOD = 30_000;

export class Authenticator {
  private last = -Infinity;
  private readonly totp: TOTP;
  readonly secret: string;

  constructor(secret: string) {
    this.secret = secret;
    this.totp = new TOTP({ secret: Secret.fromBase32(secret.replace(/\s/gu, "")), digits: 6, period: 30 });
  }

  /** A code the server has not seen yet from this authenticator (waits up to 30 s when it must). */
  async code(): Promise<string> {
    for (;;) {
      const now = Date.now();
      const current = Math.floor(now / PERIOD);
      // Near the end of a step, the previous step's code may be out of the window by the time it lands.
      const lowest = now % PERIOD > 24_000 ? current : current - 1;
      const step = Math.max(this.last + 1, lowest);
      if (step <= current + 1) {
        this.last = step;
        return this.totp.generate({ timestamp: step * PERIOD + 1 });
      }
      await new Promise((resolve) => setTimeout(resolve, (step - 1) * PERIOD - now + 200));
    }
  }

  /** A code of no current step (wrong, whatever the clock). */
  wrongCode(): string {
    const now = Date.now();
    const near = [-1, 0, 1].map((d) => this.totp.generate({ timestamp: now + d * PERIOD }));
    for (let n = 0; ; n++) {
      const candidate = String((Number(near[1]) + 1 + n * 7919) % 1_000_000).padStart(6, "0");
      if (!near.includes(candidate)) return candidate;
    }
  }
}
