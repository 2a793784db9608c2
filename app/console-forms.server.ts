// The console pages' actions: read the posted form (CSRF checked), pick the
// schema by its intent, answer a refused form at its fields or, for a
// command's refusal, as the form's own error. Nothing is run on bad input.
import type { SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod/v4";
import { data, type RouterContextProvider } from "react-router";
import type { z } from "zod";
import type { CommandInput, ConsoleCommand } from "../common/contract/console.ts";
import { redirectWithNotice, runAs, type Staff } from "./console.server.ts";
import { readForm } from "./forms.server.ts";

export async function readConsoleForm(
  request: Request,
  context: Readonly<RouterContextProvider>,
): Promise<{ formData: FormData; intent: string }> {
  const formData = await readForm(request, context);
  const intent = formData.get("intent");
  return { formData, intent: typeof intent === "string" ? intent : "" };
}

/** An answer for a form that was not run: its errors at the fields (or the form's own). */
export function refusedForm(form: string, result: SubmissionResult<string[]>, status = 400) {
  return data({ form, result }, { status });
}

function reply(
  submission: { reply(options?: { formErrors?: string[] }): SubmissionResult<string[]> },
  formErrors?: string[],
): SubmissionResult<string[]> {
  return submission.reply(formErrors ? { formErrors } : undefined);
}

/**
 * Parses `formData` with `schema`; on success runs the command `make` builds
 * and redirects to `to` with the notice `done` words; on bad input, or when
 * the command refuses, answers the form `form` (400) and runs nothing more.
 */
export async function runForm<S extends z.ZodType>(
  args: {
    context: Readonly<RouterContextProvider>;
    staff: Staff;
    formData: FormData;
    form: string;
    schema: S;
    to: string;
  },
  make: (value: z.output<S>) => { command: ConsoleCommand; input: CommandInput },
  done: (value: z.output<S>, json: unknown) => string,
) {
  const submission = parseWithZod(args.formData, { schema: args.schema });
  if (submission.status !== "success") return refusedForm(args.form, reply(submission));
  const { command, input } = make(submission.value);
  const result = await runAs(args.context, args.staff, command, input);
  if (!result.ok) return refusedForm(args.form, reply(submission, [result.message]));
  return redirectWithNotice(args.context, args.to, done(submission.value, result.data));
}

/** Like runForm, but the command's JSON comes back to the page (a secret shown once, never redirected). */
export async function runFormShowing<S extends z.ZodType>(
  args: {
    context: Readonly<RouterContextProvider>;
    staff: Staff;
    formData: FormData;
    form: string;
    schema: S;
  },
  make: (value: z.output<S>) => { command: ConsoleCommand; input: CommandInput },
): Promise<
  | { ok: true; json: unknown; result: SubmissionResult<string[]> }
  | { ok: false; response: ReturnType<typeof refusedForm> }
> {
  const submission = parseWithZod(args.formData, { schema: args.schema });
  if (submission.status !== "success") {
    return { ok: false, response: refusedForm(args.form, reply(submission)) };
  }
  const { command, input } = make(submission.value);
  const result = await runAs(args.context, args.staff, command, input);
  if (!result.ok) return { ok: false, response: refusedForm(args.form, reply(submission, [result.message])) };
  return { ok: true, json: result.data, result: submission.reply({ resetForm: true }) };
}
