import { lazy, Suspense, useState, type ComponentProps } from "react";
import { useHydrated } from "../hydrated";
import { SendStart } from "./send-start";

// The form's code (its state, conversions, the risk warning) is loaded when
// the form opens, or is about to (the pointer or focus on 'Send'), not with
// the wallet page (record 034). Opened from the URL (`?send`, or a reply
// without scripts) it is rendered on the server as before, and hydrated once
// its code has arrived.
const loadForm = () => import("./send-form");
const SendForm = lazy(() => loadForm().then((module) => ({ default: module.SendForm })));

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
      onPrepare={hydrated ? () => void loadForm() : undefined}
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
