// The two-factor forms' schemas (issue 27, record 048): server always; the
// browser loads them on first use (record 034).
import { z } from "./z.ts";

export const CODE_REQUIRED = "Enter the 6-digit code from your authenticator app, or a recovery code.";
const CODE_SHAPE = "Enter the 6-digit code, or a recovery code like abcde-fghjk.";

/** An authenticator code ("123456", "123 456") or a recovery code ("abcde-fghjk"). */
export const code = z
  .string({ error: CODE_REQUIRED })
  .trim()
  .min(1, CODE_REQUIRED)
  .max(64, CODE_SHAPE)
  .regex(/^(\d{3} ?\d{3}|[A-Za-z0-9]{5}[ -]?[A-Za-z0-9]{5})$/u, CODE_SHAPE);

/** Sign-in's second step. */
export const signInCodeSchema = z.object({ code });

/** Turning two-factor on, step 1: the password. */
export const enrolPasswordSchema = z.object({
  intent: z.literal("begin"),
  password: z.string({ error: "Required" }).min(1, "Required"),
});

/** Turning two-factor on, step 2: a code of the new secret (an authenticator code only). */
export const enrolCodeSchema = z.object({
  intent: z.literal("enable"),
  code: z
    .string({ error: CODE_REQUIRED })
    .trim()
    .min(1, "Enter the 6-digit code your authenticator app shows for Coinkeep.")
    .regex(/^\d{3} ?\d{3}$/u, "Enter the 6-digit code your authenticator app shows for Coinkeep."),
});

/** Turning two-factor off: the password and a code. */
export const disableSchema = z.object({
  intent: z.literal("disable"),
  password: z.string({ error: "Required" }).min(1, "Required"),
  code,
});

/** Keeping two-factor while a restore's removal waits: a code. */
export const keepSchema = z.object({ intent: z.literal("keep"), code });

/** The forms of /security/two-factor, by their intent. */
export const twoFactorPageSchema = z.discriminatedUnion("intent", [
  enrolPasswordSchema,
  enrolCodeSchema,
  disableSchema,
  keepSchema,
]);
