// The restore forms' schemas (server always; the browser loads them on first use, record 034).
import { samePassword } from "../../common/passwords.ts";
import { WORD_FIELDS, type WordField } from "./words.ts";
import { z } from "./z.ts";

export const emailSchema = z.object({
  email: z.email({ error: "Please enter a valid email." }).trim(),
});

// One message for the whole phrase, however many words are missing.
export const wordsSchema = z
  .object(
    Object.fromEntries(WORD_FIELDS.map((name) => [name, z.string().trim().optional()])) as Record<
      WordField,
      z.ZodOptional<z.ZodString>
    >,
  )
  .superRefine((value, ctx) => {
    if (WORD_FIELDS.some((name) => !value[name])) {
      ctx.addIssue({ code: "custom", path: [], message: "All 12 words are required." });
    }
  });

export const passwordSchema = z
  .object({
    password: z.string().optional(),
    confirmPassword: z.string().optional(),
    // Issue 27: with two-factor on, a code keeps it; left empty, it is removed after 48 hours.
    code: z
      .string()
      .trim()
      .max(64, "Enter the 6-digit code, or a recovery code like abcde-fghjk.")
      .optional(),
  })
  .superRefine((value, ctx) => {
    // Compared as the backend stores them: NFKC (record 025), so the same text typed another way matches.
    if (!value.password || !value.confirmPassword || !samePassword(value.password, value.confirmPassword)) {
      ctx.addIssue({ code: "custom", path: ["confirmPassword"], message: "Passwords do not match." });
    }
  });
