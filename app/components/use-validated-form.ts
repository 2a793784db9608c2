import { useForm, type SubmissionResult } from "@conform-to/react";
import { getZodConstraint, parseWithZod } from "@conform-to/zod/v4";
import type { z } from "zod";

/**
 * Every form here validates the same way: with its zod schema, on the server
 * always, and in the browser too once scripts run (on submit, then as you type).
 */
export function useValidatedForm<Schema extends z.ZodType<unknown, Record<string, unknown>>>(
  id: string,
  schema: Schema,
  lastResult: SubmissionResult<string[]> | undefined,
  { revalidate = "onInput" }: { revalidate?: "onInput" | "onSubmit" } = {},
) {
  return useForm<z.input<Schema>, z.output<Schema>>({
    id,
    lastResult,
    constraint: getZodConstraint(schema),
    shouldValidate: "onSubmit",
    shouldRevalidate: revalidate,
    onValidate: ({ formData }) => parseWithZod(formData, { schema }),
  });
}
