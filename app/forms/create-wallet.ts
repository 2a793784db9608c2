// The create-wallet form's schema (server always; the browser loads it on first use, record 034).
import { samePassword } from "../../common/passwords.ts";
import { z } from "./z.ts";

// Spec section 5: all fields required; the e-mail valid; the passwords equal.
export const createWalletSchema = z
  .object({
    email: z.string().trim().optional(),
    password: z.string().optional(),
    confirmPassword: z.string().optional(),
  })
  .superRefine((value, ctx) => {
    if (!value.email || !value.password || !value.confirmPassword) {
      ctx.addIssue({ code: "custom", path: [], message: "Please fill out all fields." });
      return;
    }
    if (!z.email().safeParse(value.email).success) {
      ctx.addIssue({ code: "custom", path: ["email"], message: "Please provide a valid email." });
    }
    // Compared as the backend stores them: NFKC (record 025), so the same text typed another way matches.
    if (!samePassword(value.password, value.confirmPassword)) {
      ctx.addIssue({ code: "custom", path: ["confirmPassword"], message: "Passwords do not match." });
    }
  });
