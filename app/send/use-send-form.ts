import { useForm, type Validate } from "../components/form-state.ts";
import { useEffect, useRef, useState } from "react";
import { useNavigation } from "react-router";
import {
  EMPTY_SEND_VALUES,
  emptyFields,
  FILL_OUT_ALL_FIELDS,
  type SendReply,
  type SendValues,
} from "./rules.ts";
import type { AllowlistRule } from "../../common/allowlist.ts";
import type { AddressRule, sendSchemaFor } from "./schema.ts";
import { useLazyValidation } from "../components/use-validated-form.ts";
import { useTimedErrors } from "./timed-errors.ts";

export type Step = "closed" | "form" | "confirm";
export type FieldName = keyof SendValues;
/** In the order of the form (the first one in error takes the focus). */
export const FIELDS = ["address", "tag", "coin", "fiat"] as const;

export const IDS = {
  form: "send-form",
  title: "send-title",
  address: "send-address",
  tag: "send-tag",
  tagHint: "send-tag-hint",
  coin: "send-coin",
  fiat: "send-fiat",
  available: "send-available",
  formError: "send-form-error",
  dialogTitle: "send-warning-title",
  dialogText: "send-warning-text",
  code: "send-code",
  codeHint: "send-code-hint",
} as const;

/** What a field's input carries for its errors: aria-invalid and aria-describedby. */
export interface FieldAria {
  "aria-invalid": true | undefined;
  "aria-describedby": string | undefined;
}

/** The destination tag the checked values resolved to (sendSchemaTo's `destination`), or null. */
function destinationTagOf(value: unknown): number | null {
  const tag = (value as { destination?: { tag?: unknown } } | undefined)?.destination?.tag;
  return typeof tag === "number" ? tag : null;
}

/** The intent of the button that submitted the form, if it carries one. */
function intentOf(event: React.FormEvent<HTMLFormElement>): string | null {
  const submitter = (event.nativeEvent as SubmitEvent).submitter;
  return submitter?.getAttribute("name") === "intent" ? submitter.getAttribute("value") : null;
}

/**
 * The send form's state: its step, the values as typed (the amount inputs
 * are controlled: they filter keystrokes and convert as you type), the
 * idempotency key, and the errors. Validation is conform's, with the schema
 * from send.ts: in the browser on 'Send' and Confirm (an enhancement), and
 * always on the server, whose reply (`reply.result`) brings its errors.
 */
export function useSendForm({
  sendKey,
  initiallyOpen,
  reply,
  fillIn,
  addressRule,
  allowlist,
}: {
  /** The network whose rules the receiver's address follows. */
  addressRule: AddressRule;
  /** While only saved addresses may receive sends (record 048): the coin's saved addresses. */
  allowlist?: AllowlistRule | undefined;
  sendKey: string;
  initiallyOpen: boolean;
  reply: SendReply | undefined;
  /** 'Full' and 'Convert' with scripts: the new values, from the current ones. */
  fillIn: (intent: "full" | "convert-coin" | "convert-fiat", values: SendValues) => SendValues;
}) {
  const navigation = useNavigation();
  const [step, setStep] = useState<Step>(reply?.step ?? (initiallyOpen ? "form" : "closed"));
  const [values, setValues] = useState<SendValues>(reply?.values ?? EMPTY_SEND_VALUES);
  // The key stays with this form until a send succeeds (the panel is then replaced), whatever
  // the loader issues on revalidation, so a retried Confirm can never send twice.
  const [key, setKey] = useState(reply?.key ?? sendKey);
  const [invalid, setInvalid] = useState<FieldName[]>(reply?.invalid ?? []);
  // The risk warning's destination tag (XRP): typed, or carried by an X-address.
  const [reviewTag, setReviewTag] = useState<number | null>(reply?.tag ?? null);
  const [attempt, setAttempt] = useState(0);
  // Two-factor's step-up (issue 27): once the server asked for a code, the warning keeps asking.
  const [needsCode, setNeedsCode] = useState(Boolean(reply?.needsCode));
  const [focusTarget, setFocusTarget] = useState<FieldName | "first-invalid" | null>(null);

  // A new answer from the server (after Confirm, with scripts) replaces the local state.
  const [seenReply, setSeenReply] = useState(reply);
  if (reply !== seenReply) {
    setSeenReply(reply);
    if (reply) {
      setStep(reply.step);
      setValues(reply.values);
      setKey(reply.key);
      setInvalid(reply.invalid);
      setReviewTag(reply.tag ?? null);
      if (reply.needsCode) setNeedsCode(true);
      setAttempt((n) => n + 1);
    }
  }

  // The saved addresses as the page last loaded them (it reloads its data now and then).
  const savedRef = useRef(allowlist);
  savedRef.current = allowlist;
  const validate = useLazyValidation<ReturnType<typeof sendSchemaFor>>(IDS.form, () =>
    import("./schema.ts").then(
      (m) => (formData: FormData) => m.sendSchemaFor(formData.get("intent"), addressRule, savedRef.current),
    ),
  );
  const [form, fields] = useForm<FieldName>({
    id: IDS.form,
    lastResult: reply?.result,
    // Errors stay until the next press (or their 5 s are up): typing does not re-check.
    shouldRevalidate: "onSubmit",
    onValidate: validate as Validate | undefined,
    // Only what passed the schema gets here; every step but Confirm stays in the browser.
    onSubmit: (event, { formData, submission }) => {
      const intent = formData.get("intent");
      // Not checked here yet (the checks load on the form's first use): the server
      // checks this press and answers the step, as it does without scripts.
      if (!submission) return;
      if (intent === "confirm") {
        // One Confirm at a time (the idempotency key would make a second one harmless anyway).
        if (navigation.state !== "idle") event.preventDefault();
        return;
      }
      event.preventDefault();
      if (intent === "full" || intent === "convert-coin" || intent === "convert-fiat") {
        setValues((current) => fillIn(intent, current));
      } else if (intent === "edit") setStep("form");
      else if (intent === "review") {
        setInvalid([]);
        setReviewTag(destinationTagOf(submission.status === "success" ? submission.value : undefined));
        setStep("confirm");
      }
    },
  });

  const shown = useTimedErrors(
    {
      form: form.errors,
      address: fields.address.errors,
      tag: fields.tag.errors,
      coin: fields.coin.errors,
      fiat: fields.fiat.errors,
    },
    attempt,
  );
  const formErrors = shown.form ?? [];
  const fillOut = formErrors.includes(FILL_OUT_ALL_FIELDS);

  function fieldInvalid(name: FieldName): boolean {
    return Boolean(shown[name]?.length) || (fillOut && invalid.includes(name));
  }

  function fieldAria(name: FieldName, ...more: string[]): FieldAria {
    const ids = [...more];
    if (shown[name]?.length) ids.push(`${IDS[name]}-error`);
    if (fillOut && invalid.includes(name)) ids.push(IDS.formError);
    return {
      "aria-invalid": fieldInvalid(name) || undefined,
      "aria-describedby": ids.length ? ids.join(" ") : undefined,
    };
  }

  // After a refused 'Send' the first field in error takes the focus; 'Send' the address.
  useEffect(() => {
    if (!focusTarget) return;
    const name = focusTarget === "first-invalid" ? FIELDS.find(fieldInvalid) : focusTarget;
    if (name) document.getElementById(IDS[name])?.focus();
    setFocusTarget(null);
    // Only a new request matters; it is made in the same event as the errors it follows.
    // oxlint-disable-next-line react/exhaustive-deps
  }, [focusTarget]);

  /** The form's submit handler (it runs with scripts only). */
  function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    const intent = intentOf(event);
    if (intent === "review" || intent === "confirm") {
      // Each press counts anew: the same message shows (and is announced) again.
      setAttempt((n) => n + 1);
      setInvalid(emptyFields(values));
      setFocusTarget("first-invalid");
    }
    form.onSubmit(event);
  }

  return {
    form,
    step,
    setStep,
    values,
    setValues,
    key,
    attempt,
    reviewTag,
    needsCode,
    shown,
    formErrors,
    fieldInvalid,
    fieldAria,
    focus: setFocusTarget,
    onSubmit,
  };
}
