// zod as the form schemas use it. In the browser the CSP allows no eval
// (record 014), and zod probes for it with `new Function` when a schema is
// built, which a strict CSP reports as a violation; jitless skips the probe.
// Every schema module imports zod from here, so this runs before any schema
// is built (record 034).
import { z } from "zod";

if (typeof document !== "undefined") z.config({ jitless: true });

export { z };
