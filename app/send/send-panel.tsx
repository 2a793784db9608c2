import { Suspense, useState, type ComponentProps } from "react";
import { useHydrated } from "../components/hydrated.ts";
import { lazyComponent } from "../components/lazy-component.ts";
import { SendStart } from "./send-start.tsx";

// The form's code (its state, conversions, the risk warning) is loaded when
// the form opens, or is about to (the pointer or focus on 'Send'), not with
// the wallet page; the server renders it in place for `?send=1` and a reply
// without scripts (record 034).
const { Component: SendForm, preload: loadForm } = lazyComponent(() =>
  import("./send-form.tsx").then((module) => module.SendForm),
);

/**
 * The send flow (spec section 4): 'Send {ticker}' and the wallet's address
 * to copy; the first press of 'Send' reveals the form (with scripts in place,
 * without them as a GET to `?send=1`).
 */
export function SendPanel(props: ComponentProps<typeof SendForm>) {
  const { ticker, ownAddress, initiallyOpen, reply } = props;
  const hydrated = useHydrated();
  const [openedHere, setOpenedHere] = useState(false);
  const [open, setOpen] = useState(initiallyOpen || Boolean(reply));
  // A reply of the server (a send step) opens the form, as it does without scripts.
  const [seenReply, setSeenReply] = useState(reply);
  if (reply !== seenReply) {
    setSeenReply(reply);
    if (reply) setOpen(true);
  }

  const start = (
    <SendStart
      ticker={ticker}
      ownAddress={ownAddress}
      onPrepare={hydrated ? loadForm : undefined}
      onOpen={
        hydrated
          ? () => {
              setOpenedHere(true);
              setOpen(true);
            }
          : undefined
      }
    />
  );
  if (!open) return start;
  return (
    <Suspense fallback={start}>
      <SendForm {...props} initiallyOpen={initiallyOpen || openedHere} />
    </Suspense>
  );
}
