// The log-in form's schema (server always; the browser loads it on first use, record 034).
import { z } from "./z.ts";

export const loginSchema = z.object({
  email: z.string({ error: "Required" }).trim().min(1, "Required"),
  password: z.string({ error: "Required" }).min(1, "Required"),
});
