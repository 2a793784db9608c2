// The staff console's form schemas (issue 26): checked on the server always,
// and in the browser once a form is first used (record 034).
import { z } from "./z.ts";

const required = (max: number) =>
  z.string({ error: "Required" }).trim().min(1, "Required").max(max, `Must be at most ${max} characters.`);

export const REASON_MAX = 1000;

export const staffLoginSchema = z.object({
  email: required(254),
  password: z.string({ error: "Required" }).min(1, "Required").max(1024, "Must be at most 1024 characters."),
});

export const staffCodeSchema = z.object({
  code: z
    .string({ error: "Required" })
    .trim()
    .min(1, "Required")
    .regex(
      /^(\d{3}\s?\d{3}|[a-z2-9]{5}-?[a-z2-9]{5})$/iu,
      "Enter the 6-digit code from your authenticator, or a recovery code like abcde-fgh23.",
    ),
});

export const enrolSchema = z
  .object({
    password: z
      .string({ error: "Required" })
      .min(1, "Required")
      .refine((p) => p.normalize("NFKC").length >= 12, "Must be at least 12 characters.")
      .refine((p) => p.normalize("NFKC").length <= 1024, "Must be at most 1024 characters."),
    confirmPassword: z.string({ error: "Required" }).min(1, "Required"),
    code: z
      .string({ error: "Required" })
      .trim()
      .regex(/^\d{3}\s?\d{3}$/u, "Enter the 6-digit code your authenticator shows."),
  })
  .refine((v) => v.password.normalize("NFKC") === v.confirmPassword.normalize("NFKC"), {
    message: "Passwords do not match.",
    path: ["confirmPassword"],
  });

export const reasonSchema = z.object({ reason: required(REASON_MAX) });

export const decideSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("approve"), sendId: z.uuid("Not a send.") }),
  z.object({
    intent: z.literal("decline"),
    sendId: z.uuid("Not a send."),
    reason: z
      .string({ error: "Say why the send is declined." })
      .trim()
      .min(1, "Say why the send is declined.")
      .max(REASON_MAX, `Must be at most ${REASON_MAX} characters.`),
  }),
]);

export const replySchema = z.object({
  supportMessageId: z.uuid("Not a message."),
  text: required(5000),
});

export const ROLE_NAMES = ["support", "compliance", "approver", "treasury", "admin"] as const;

export const addStaffSchema = z.object({
  email: required(254).pipe(z.email("Enter an e-mail address.")),
  roles: z
    .array(z.enum(ROLE_NAMES), { error: "Choose at least one role." })
    .min(1, "Choose at least one role."),
});

export const staffActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("roles"),
    email: required(254),
    roles: z
      .array(z.enum(ROLE_NAMES), { error: "Choose at least one role." })
      .min(1, "Choose at least one role."),
    reason: required(REASON_MAX),
  }),
  z.object({ intent: z.literal("remove"), email: required(254), reason: required(REASON_MAX) }),
  z.object({ intent: z.literal("end-sessions"), email: required(254), reason: required(REASON_MAX) }),
  z.object({ intent: z.literal("unlock"), email: required(254), reason: required(REASON_MAX) }),
  z.object({ intent: z.literal("link"), email: required(254) }),
]);

export const messageSchema = z.object({
  to: z.string().trim().max(254).optional(),
  everyone: z.literal("on").optional(),
  text: required(5000),
});
