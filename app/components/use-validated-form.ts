import type { Submission, SubmissionResult } from "@conform-to/react";
import { useEffect, useState } from "react";
import type { z } from "zod";
import { useForm, type Validate as FormValidate } from "./form-state.ts";

/** What a form is checked with in the browser: conform's submission for the form data. */
type Validate<Schema extends z.ZodType> = (
  formData: FormData,
) => Submission<z.input<Schema>, string[], z.output<Schema>>;

/**
 * The browser's copy of a form's checks, loaded when the form is first used
 * (a focus, a press or a tap inside it) rather than with the page, so zod is
 * in no page's first load (record 034). Until it has arrived — a few
 * milliseconds after that first use — a submit goes to the server, which
 * checks every form anyway and answers with the same errors.
 */
export function useLazyValidation<Schema extends z.ZodType>(
  formId: string,
  load: () => Promise<Schema | ((formData: FormData) => Schema)>,
): Validate<Schema> | undefined {
  const [validate, setValidate] = useState<Validate<Schema>>();
  useEffect(() => {
    let cancelled = false;
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      remove();
      void Promise.all([import("../forms/parse.ts"), load()]).then(([{ parseWithZod }, schema]) => {
        if (cancelled) return;
        setValidate(
          () => (formData: FormData) =>
            parseWithZod(formData, {
              schema: typeof schema === "function" ? schema(formData) : schema,
            }) as Submission<z.input<Schema>, string[], z.output<Schema>>,
        );
      });
    };
    const inForm = (target: EventTarget | null) =>
      target instanceof Element &&
      (target.closest(`form#${CSS.escape(formId)}`) !== null ||
        (target as Partial<HTMLInputElement>).form?.id === formId);
    const onUse = (event: Event) => {
      if (inForm(event.target)) start();
    };
    const events = ["focusin", "pointerdown", "keydown"] as const;
    function remove() {
      for (const name of events) document.removeEventListener(name, onUse, true);
    }
    for (const name of events) document.addEventListener(name, onUse, true);
    // A field focused before the page was interactive (autofocus) counts as a use.
    if (inForm(document.activeElement)) start();
    return () => {
      cancelled = true;
      remove();
    };
    // The loader is the form's own and never changes.
    // oxlint-disable-next-line react/exhaustive-deps
  }, [formId]);
  return validate;
}

/**
 * Every form here validates the same way: with its zod schema, on the server
 * always, and in the browser too once scripts run and the form has been used
 * (on submit, then as you type).
 */
export function useValidatedForm<Schema extends z.ZodType<unknown, Record<string, unknown>>>(
  id: string,
  load: () => Promise<Schema>,
  lastResult: SubmissionResult<string[]> | undefined,
  { revalidate = "onInput" }: { revalidate?: "onInput" | "onSubmit" } = {},
) {
  const validate = useLazyValidation(id, load);
  return useForm<keyof z.input<Schema> & string>({
    id,
    lastResult,
    shouldRevalidate: revalidate,
    onValidate: validate as FormValidate | undefined,
  });
}
