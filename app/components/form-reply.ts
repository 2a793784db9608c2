import type { SubmissionResult } from "@conform-to/react";
import { useRouteLoaderData } from "react-router";
import type { loader as rootLoader } from "../root.tsx";

/**
 * The reply to a refused form that was posted without scripts (the contact
 * popup, the support modal), when it is for `form`: the server kept it for one
 * page (a flash) and redirected back to the page the form was opened on, so
 * the popup shows its errors and values in place (record 037).
 */
export function useFlashedReply(form: "contact" | "support"): SubmissionResult<string[]> | undefined {
  const root = useRouteLoaderData<typeof rootLoader>("root");
  return root?.formReply?.form === form ? root.formReply.result : undefined;
}
