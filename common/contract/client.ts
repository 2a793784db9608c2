// The backend client's one typed interface (DESIGN.md "Shape"), whatever the
// transport: in-process (direct calls into the backend's services) or HTTP
// (BACKEND_URL). Both answer with the same results, and a refusal always
// carries its stable code (./refusals.ts); the web tier decides by the code.
import type { CallAnswer, CallBody, CallInput, CallName } from "./calls.ts";
import type { Refusal } from "./refusals.ts";
import type { StatementBody, StatementInput } from "./statement.ts";

/** A statement (issue 28, record 050): its file name and its CSV, streamed as it is read. */
export interface StatementFile {
  filename: string;
  body: ReadableStream<Uint8Array>;
}

/** A refusal of the backend: a 4xx with its code, text and (call 12, a malformed body) fields. */
export type BackendRejected = Refusal & { kind: "rejected" };

/** The backend could not be reached, failed (5xx) or answered something that is not the contract. */
export interface BackendNetworkFailure {
  ok: false;
  kind: "network";
  message: string;
}

export type BackendFailure = BackendRejected | BackendNetworkFailure;

export type BackendResult<T> = { ok: true; data: T } | BackendFailure;

/** One method per call of the contract, by the call's name (./calls.ts CALLS). */
export type BackendClient = {
  [N in CallName]: (input: CallInput<N>) => Promise<BackendResult<CallAnswer<N>>>;
} & {
  /** The statement call (common/contract/statement.ts): a stream, not a JSON answer. */
  statement(input: StatementInput): Promise<BackendResult<StatementFile>>;
};

/** A user whose credentials were checked. */
export interface Principal {
  userId: string;
  email: string;
}

/** Who is calling, as the backend's services need it. */
export interface Caller {
  /** The visitor's address the abuse limits count by and call 12 records; null when unknown. */
  senderIp: string | null;
  /**
   * Credentials already checked during this request (in-process only): the
   * web tier's request makes several calls with the same e-mail and words,
   * and each after the first is answered from here instead of checking again.
   * Absent over HTTP: every call checks its own.
   */
  checked?: Map<string, Promise<Principal | null>>;
  /**
   * Reads under way for this request (in-process only), by what they read: a
   * second loader asking for the same rows while the first read runs shares
   * it. A read is dropped from here as soon as it settles, so nothing read
   * before a change is ever served after it.
   */
  reading?: Map<string, Promise<unknown>>;
  /**
   * What one call of this request read for a later one (in-process only): a
   * page's call 4 reads the unread count with the credentials (record 052),
   * and the layout's call 7 takes it from here, once.
   */
  prefetched?: Map<string, unknown>;
}

/** A service's answer: the call's answer (a replayed send says so), or a refusal. */
export type Outcome<A> = { ok: true; data: A; replayed?: boolean } | Refusal;

/** The backend's services: one per call, taking the call's parsed body. */
export type BackendServices = {
  [N in CallName]: (body: CallBody<N>, caller: Caller) => Promise<Outcome<CallAnswer<N>>>;
} & {
  statement(body: StatementBody, caller: Caller): Promise<Outcome<StatementFile>>;
};
