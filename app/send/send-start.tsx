import { Form } from "react-router";
import { CopyButton } from "../components/copy-button.tsx";

/**
 * The panel before the form shows: 'Send {ticker}' and the wallet's address
 * to copy. Without scripts 'Send' is a GET to `?send=1`, which renders the
 * form open; with scripts `onOpen` opens it in place.
 */
export function SendStart({
  ticker,
  ownAddress,
  onOpen,
  onPrepare,
}: {
  ticker: string;
  ownAddress: string;
  onOpen: (() => void) | undefined;
  /** The pointer or the focus is on 'Send': a press may follow. */
  onPrepare?: (() => void) | undefined;
}) {
  return (
    <div className="actions">
      <Form noValidate method="get" preventScrollReset>
        <button
          type="submit"
          name="send"
          value="1"
          className="button button-primary"
          onPointerEnter={onPrepare}
          onFocus={onPrepare}
          onClick={(event) => {
            if (!onOpen) return;
            event.preventDefault();
            onOpen();
          }}
        >
          Send {ticker}
        </button>
      </Form>{" "}
      <CopyButton text={ownAddress} label="Copy wallet address" toast="Copied" />
    </div>
  );
}
