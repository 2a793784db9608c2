// The statement call (issue 28 item 2, record 050): a holder's transactions of
// a date range, one coin or all, as CSV. The answer is not JSON: a 200 is the
// CSV itself, streamed (text/csv); a refusal is the usual JSON refusal. So the
// call sits beside CALLS, not in it. Its fields' rules are common/statement.ts.
import { z } from "zod";
import { statementFields, type StatementRequest } from "../statement-schema.ts";
import { twelveWords, email } from "./calls.ts";
import { firstPerField, issuesOf, refusal, type Refusal } from "./refusals.ts";

export * from "../statement.ts";
export * from "../statement-schema.ts";

/** The call's path under /api. */
export const STATEMENT_PATH = "/statement";

/** The call's body on the wire: the credentials, then the fields as text (checked by statementRequest). */
export const statementBody = z.object({
  platform: z.string(),
  email,
  twelveWords,
  from: z.string("Must be a string.").max(64, "Must be at most 64 characters."),
  to: z.string("Must be a string.").max(64, "Must be at most 64 characters."),
  coin: z.string("Must be a string.").max(64, "Must be at most 64 characters.").optional(),
  currency: z.string("Must be a string.").max(64, "Must be at most 64 characters.").optional(),
});

export type StatementBody = Omit<z.output<typeof statementBody>, "platform">;

/** What the web tier passes: the credentials (words as a list or text) and the fields. */
export interface StatementInput {
  email: string;
  twelveWords: string | readonly string[];
  from: string;
  to: string;
  coin?: string;
  currency?: string;
}

/** A decoded body: its fields by their rules, or the refusal naming the first fault of each field. */
export function statementRequest(
  fields: { from: string; to: string; coin?: string | undefined; currency?: string | undefined },
  today: string,
): { ok: true; request: StatementRequest } | Refusal {
  const checked = statementFields(today).safeParse(fields);
  if (checked.success) return { ok: true, request: checked.data };
  const issues = firstPerField(issuesOf(checked.error));
  return refusal("invalid_statement", { detail: issues[0]?.message ?? "", issues });
}

/** The body as JSON (with `platform`), from the web tier's input. */
export function encodeStatementBody(input: StatementInput, platform: string) {
  return {
    platform,
    email: input.email,
    twelveWords: typeof input.twelveWords === "string" ? input.twelveWords : input.twelveWords.join(" "),
    from: input.from,
    to: input.to,
    ...(input.coin === undefined ? {} : { coin: input.coin }),
    ...(input.currency === undefined ? {} : { currency: input.currency }),
  };
}

/** The body decoded as the HTTP handler decodes it (400 invalid_request for wrong types). */
export function decodeStatementBody(body: unknown): { ok: true; body: StatementBody } | Refusal {
  const parsed = statementBody.safeParse(body);
  if (!parsed.success) return refusal("invalid_request", { issues: issuesOf(parsed.error) });
  const { platform: _platform, ...rest } = parsed.data;
  return { ok: true, body: rest };
}
