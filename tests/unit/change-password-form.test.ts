// The change-password form (issue 27) takes the create-wallet form's password
// rules and messages word for word: the same inputs get the same texts, at the
// same places (the whole form, or the confirmation field).
import { parseWithZod } from "@conform-to/zod/v4";
import { expect, test } from "vitest";
import { changePasswordSchema } from "../../app/forms/change-password.ts";
import { createWalletSchema } from "../../app/forms/create-wallet.ts";

function errorsOf(
  schema: typeof changePasswordSchema | typeof createWalletSchema,
  fields: Record<string, string>,
) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  const submission = parseWithZod(form, { schema });
  return submission.status === "success" ? {} : (submission.reply().error ?? {});
}

const EMAIL = "holder@example.com";

test.each([
  ["nothing typed", "", "", ""],
  ["no confirmation", "pw-new", "", "pw"],
  ["no new password", "", "pw-new", "pw"],
  ["a confirmation that differs", "pw-new", "pw-other", "pw"],
  ["the same password composed another way (NFC and NFD)", "caf\u00e9", "cafe\u0301", "pw"],
  ["all filled in and equal", "pw-new", "pw-new", "pw"],
])("%s: the same messages as create-wallet's", (_label, password, confirmPassword, current) => {
  const created = errorsOf(createWalletSchema, { email: EMAIL, password, confirmPassword });
  const changed = errorsOf(changePasswordSchema, { currentPassword: current, password, confirmPassword });
  expect(changed).toEqual(created);
});

test("the current password is required like every other field", () => {
  expect(
    errorsOf(changePasswordSchema, { currentPassword: "", password: "pw-new", confirmPassword: "pw-new" }),
  ).toEqual({ "": ["Please fill out all fields."] });
  expect(
    errorsOf(changePasswordSchema, { currentPassword: "pw", password: "pw-new", confirmPassword: "pw-NEW" }),
  ).toEqual({ confirmPassword: ["Passwords do not match."] });
});
