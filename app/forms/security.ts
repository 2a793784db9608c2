// The security page's schema (server always; the browser loads it on first use, record 034).
import { z } from "./z.ts";

const NOT_TICKED = "Please tick the box to confirm you have read the important note.";

// Spec section 5: the password is required; 'Next' also needs the box ticked.
export const securitySchema = z.object({
  password: z.string({ error: "Required" }).min(1, "Required"),
  acknowledged: z.literal("on", { error: NOT_TICKED }),
  // Issue 27: with two-factor on, a code (unless one was given in the last 5 minutes).
  code: z.string().trim().max(64, "Enter the 6-digit code, or a recovery code like abcde-fghjk.").optional(),
});
