// The clock of the holds (record 048): the allowlist's and two-factor removal's
// waits are measured by it. Without TEST_CLOCK_FILE it is the system clock.
// TEST_CLOCK_FILE (tests only: the configuration refuses it in production) names
// a file holding a whole number of milliseconds added to the system clock, read
// again on every reading, so a test moves the server's clock by writing the file.
import { readFileSync } from "node:fs";

export function holdClock(file: string | undefined): () => Date {
  if (file === undefined) return () => new Date();
  return () => {
    let offset = 0;
    try {
      const text = readFileSync(file, "utf8").trim();
      if (/^-?\d{1,15}$/u.test(text)) offset = Number(text);
    } catch {
      offset = 0;
    }
    return new Date(Date.now() + offset);
  };
}
