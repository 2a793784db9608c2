// The change-password form's schema (issue 27; server always, the browser loads it on first use,
// record 034). The new password follows the create-wallet form's rules, with its messages word
// for word (tests/unit/change-password-form.test.ts holds them to it): every field required, the
// confirmation equal to the new password in NFKC (record 025). The current password is checked
// by the backend (wrong_password), and its error is shown at its field.
import { samePassword } from "../../common/passwords.ts";
import { z } from "./z.ts";

export const changePasswordSchema = z
  .object({
    currentPassword: z.string().optional(),
    password: z.string().optional(),
    confirmPassword: z.string().optional(),
  })
  .superRefine((value, ctx) => {
    if (!value.currentPassword || !value.password || !value.confirmPassword) {
      ctx.addIssue({ code: "custom", path: [], message: "Please fill out all fields." });
      return;
    }
    if (!samePassword(value.password, value.confirmPassword)) {
      ctx.addIssue({ code: "custom", path: ["confirmPassword"], message: "Passwords do not match." });
    }
  });
