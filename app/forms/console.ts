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

// ---------------------------------------------------------------------------
// The console's pages (users, money, requests, staff): one schema per form;
// the server picks it by the form's hidden "intent".
// ---------------------------------------------------------------------------

export const PAUSE_WHATS = ["sends", "deposits", "issuing"] as const;
export const COIN_CHOICES = ["BTC", "ETH", "ADA", "BNB", "DOGE", "SOL", "TRX", "USDT", "XRP"] as const;

const coin = z.enum(COIN_CHOICES, { error: "Choose a coin." });
const what = z.enum(PAUSE_WHATS, { error: "Choose sends, deposits or issuing." });
/** A plain decimal as the commands take it: kept as text, never a float. */
const decimal = (max: number) =>
  required(max).regex(/^\d+(\.\d+)?$/u, "A plain decimal like 0.015, without a sign.");
const wholeText = (label: string) =>
  z
    .string()
    .trim()
    .max(10, `${label}: at most 10 digits.`)
    .regex(/^\d*$/u, `${label}: a whole number like 0 or 3.`)
    .optional();

/** The message to one user (the user is the page's, never the form's). */
export const userMessageSchema = z.object({ intent: z.literal("message"), text: required(5000) });

/** Pause or resume something for the page's user (pause --user / resume --user). */
export const userSwitchSchema = z.object({
  intent: z.enum(["pause", "resume"]),
  what,
  reason: required(REASON_MAX),
});

export const unlockSchema = z.object({ intent: z.literal("unlock") });

export const reconcileSchema = z.object({ intent: z.literal("reconcile") });

export const holdingsSchema = z.object({
  intent: z.literal("holdings"),
  coin,
  amount: decimal(64),
  source: required(500),
});

/** Pause or resume something for a coin (pause --coin / resume --coin). */
export const coinSwitchSchema = z.object({
  intent: z.enum(["pause", "resume"]),
  what,
  coin,
  reason: required(REASON_MAX),
});

export const issueAddressSchema = z.object({
  intent: z.literal("issue-address"),
  walletId: z.uuid("Not a wallet."),
  address: required(256),
});

export const issuingSchema = z.object({
  intent: z.literal("issuing"),
  coin,
  mode: z.enum(["auto", "manual"], { error: "Choose auto or manual." }),
  reason: required(500),
});

export const depositSchema = z.object({
  intent: z.literal("deposit"),
  coin,
  txid: required(256).regex(/^\S+$/u, "A transaction id has no spaces."),
  output: wholeText("Output index"),
  address: required(256),
  amount: decimal(64),
  confirmations: wholeText("Confirmations"),
  usd: z
    .string()
    .trim()
    .max(32, "At most 32 characters.")
    .regex(/^(\d+(\.\d+)?)?$/u, "A plain decimal like 1234.56.")
    .optional(),
});

/** Staff forms that take a reason (staff roles has its own with the roles). */
export const staffRolesSchema = z.object({
  intent: z.literal("roles"),
  email: required(254),
  roles: z
    .array(z.enum(ROLE_NAMES), { error: "Choose at least one role." })
    .min(1, "Choose at least one role."),
  reason: required(REASON_MAX),
});

export const staffReasonSchema = z.object({
  intent: z.enum(["remove", "end-sessions", "unlock"]),
  email: required(254),
  reason: required(REASON_MAX),
});

export const staffLinkSchema = z.object({ intent: z.literal("link"), email: required(254) });

export const thresholdSchema = z.object({
  coin: z.enum(["BTC", "ETH", "ADA", "BNB", "DOGE", "SOL", "TRX", "USDT", "XRP"], { error: "Not a coin." }),
  usd: z
    .string({ error: "Required" })
    .trim()
    .min(1, "Required")
    .regex(/^\d{1,12}(\.\d{1,2})?$/u, "A plain amount in USD, like 10000 or 2500.50."),
  reason: z
    .string({ error: "Required" })
    .trim()
    .min(1, "Required")
    .max(1000, "Must be at most 1000 characters."),
});
