// The support and contact forms' contract (common/support-message.ts) is the
// one place their texts and limits are written: the backend's call 12 and the
// web forms' server-side validation (the schema each route's action parses
// the posted form with) both answer with the contract's text at the
// contract's limit. Change a text or a limit there and both tiers follow.
import { parseWithZod } from "@conform-to/zod/v4";
import { beforeAll, describe, expect, test } from "vitest";
import {
  contactFormSchema,
  MAX_COMMENT,
  MAX_FULL_NAME,
  MAX_PHONE,
  MIN_FULL_NAME,
  SUPPORT_TEXTS,
  supportFormSchema,
} from "../../common/support-message.ts";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import { createTestHandler, PLATFORM, uniqueEmail } from "./helpers.ts";
import { describeEachDatabase } from "./api-suite.ts";

/** Support-form values that keep every rule; each case breaks one field. */
const VALID = { fullName: "Ada Lovelace", phone: "+442079460000", comment: "A question about fees." };

/** One field at (or just past) a limit the contract sets, and the text it answers. */
const CASES = [
  {
    field: "fullName",
    body: "full_name",
    value: "A".repeat(MIN_FULL_NAME - 1),
    text: SUPPORT_TEXTS.fullName,
  },
  {
    field: "fullName",
    body: "full_name",
    value: "A".repeat(MAX_FULL_NAME + 1),
    text: SUPPORT_TEXTS.fullNameTooLong,
  },
  { field: "phone", body: "phone", value: "1".repeat(MAX_PHONE + 1), text: SUPPORT_TEXTS.phoneTooLong },
  { field: "phone", body: "phone", value: "020 7946", text: SUPPORT_TEXTS.phone },
  { field: "comment", body: "comment", value: "Hello", text: SUPPORT_TEXTS.supportComment },
  {
    field: "comment",
    body: "comment",
    value: "a".repeat(MAX_COMMENT + 1),
    text: SUPPORT_TEXTS.commentTooLong,
  },
] as const;

describe("the web forms' server-side validation follows the contract", () => {
  test.each(CASES)("support form: $field past its limit answers '$text'", ({ field, value, text }) => {
    const form = new FormData();
    for (const [name, valid] of Object.entries({ ...VALID, [field]: value })) form.set(name, valid);
    const submission = parseWithZod(form, { schema: supportFormSchema });
    expect(submission.status).toBe("error");
    expect(submission.reply().error).toEqual({ [field]: [text] });
  });

  test("the limits themselves are allowed", () => {
    const form = new FormData();
    form.set("fullName", "A".repeat(MAX_FULL_NAME));
    form.set("phone", "1".repeat(MAX_PHONE));
    form.set("comment", `word ${"a".repeat(MAX_COMMENT - 5)}`);
    expect(parseWithZod(form, { schema: supportFormSchema }).status).toBe("success");
  });

  test("contact form: a short comment answers the spec's text", () => {
    const form = new FormData();
    form.set("email", "someone@example.com");
    form.set("comment", "  12345  ");
    expect(parseWithZod(form, { schema: contactFormSchema }).reply().error).toEqual({
      comment: [SUPPORT_TEXTS.contactComment],
    });
  });
});

describeEachDatabase("call 12 follows the contract ($name)", (getDatabase) => {
  let handler: ApiHandler;
  beforeAll(() => {
    handler = createTestHandler(getDatabase().database.db);
  });

  async function requestMessage(body: Record<string, string>) {
    const response = await handler(
      new Request("http://backend.invalid/api/request-message", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ platform: PLATFORM, ...body }),
      }),
    );
    return { status: response.status, body: (await response.json()) as unknown };
  }

  test.each(CASES)(
    "support message: $body past its limit is refused with '$text'",
    async ({ body, value, text }) => {
      const valid = { full_name: VALID.fullName, phone: VALID.phone, comment: VALID.comment };
      const answer = await requestMessage({ email: uniqueEmail("contract"), ...valid, [body]: value });
      expect(answer).toEqual({
        status: 400,
        body: {
          success: false,
          code: "invalid_message",
          message: text,
          issues: [{ path: body, message: text }],
        },
      });
    },
  );

  test("contact message: a short comment is refused with the spec's text", async () => {
    const answer = await requestMessage({ email: uniqueEmail("contract"), comment: "  12345  " });
    expect(answer).toEqual({
      status: 400,
      body: {
        success: false,
        code: "invalid_message",
        message: SUPPORT_TEXTS.contactComment,
        issues: [{ path: "comment", message: SUPPORT_TEXTS.contactComment }],
      },
    });
  });
});
