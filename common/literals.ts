// Literal values of the spec's API contract (section 3) that both the backend
// and the web tier read. Dependency-free, like common/coins.ts.

/** wallet_address of a wallet that was requested but has no address yet. */
export const NOT_ADDED_YET = "Not added yet";

/** recipient_wallet of a received transaction. */
export const INCOMING_TRANSACTION = "Incoming Transaction";

/** The largest XRP destination tag: the ledger's DestinationTag is a 32-bit unsigned integer (issue 15). */
export const MAX_DESTINATION_TAG = 4_294_967_295;

/** A two-factor code given within this many minutes covers the next send or phrase reveal (issue 27). */
export const STEP_UP_MINUTES = 5;
