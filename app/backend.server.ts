// The typed client of the backend API (server/backend/api/handler.ts). It only uses
// fetch: in-process it is handed the API handler itself, otherwise it talks
// HTTP to the configured base URL.
//
// Every call resolves (never throws) to a discriminated union:
//   { ok: true, data }                                  a 2xx answer of the expected shape
//   { ok: false, kind: "rejected", status, message }    a 4xx JSON answer; the server's message, unchanged
//   { ok: false, kind: "network", message }             fetch failed, timed out, 5xx, or an unexpected body
// Passwords and phrases never appear in any message this client produces.
import { z } from "zod";
import { currentRequest } from "../common/log";
import { exchange } from "./lib/exchange.server";

export interface BackendClientOptions {
  /** e.g. "http://127.0.0.1:3000/api" */
  baseUrl: string;
  platform: string;
  /** In-process: the API handler. Default: globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Default 10 000 ms. */
  timeoutMs?: number;
  /**
   * BACKEND_TOKEN, for a remote backend: sent with every call in
   * X-Coinkeep-Backend-Token, so the backend believes the visitor's address
   * this client forwards (record 026). Never logged, never in a message.
   */
  token?: string;
}

const createAccountData = z.object({
  success: z.literal(true),
  message: z.string(),
  newUserId: z.string(),
  twelveWords: z.array(z.string()),
});

const loginData = z.object({
  success: z.literal(true),
  message: z.string(),
  user: z.object({ email: z.string(), twelveWords: z.string() }),
});

const checkLoggedInData = z.object({
  success: z.literal(true),
  user: z.object({ email: z.string(), userId: z.string() }),
});

const messageData = z.object({ success: z.literal(true), message: z.string() });

const rejectionBody = z.object({ message: z.string() });
const sentTransaction = z.object({
  id: z.string(),
  date: z.string(),
  wallet_id: z.string(),
  recipient_wallet: z.string(),
  amount_in_crypto: z.string(),
  amount_in_dollar: z.string().nullable(),
  transaction_crypto: z.string(),
  status: z.string(),
});
const requestTransactionData = z.object({
  success: z.literal(true),
  message: z.string(),
  transaction: sentTransaction,
});

const newMessagesCountData = z.object({ newMessagesCount: z.number().int().min(0) });

const openMessageData = z.object({
  success: z.literal(true),
  message: z.string(),
  open_status: z.literal(1),
});

/** The fields a refused call-12 message names, each with the text the sender sees. */
const issuesBody = z.object({
  issues: z.array(z.object({ path: z.string(), message: z.string() })),
});

const amount = z.string().regex(/^\d+(\.\d+)?$/u);

const clientBalancesData = z.object({
  balances: z.record(z.string(), amount),
  wallets: z.array(z.object({ id: z.string(), wallet_crypto: z.string(), wallet_address: z.string() })),
  transactions: z.array(
    z.object({
      id: z.string(),
      date: z.string(),
      wallet_id: z.string(),
      recipient_wallet: z.string(),
      amount_in_crypto: amount,
      amount_in_dollar: z.string().nullable(),
      transaction_id: z.string(),
      transaction_crypto: z.string(),
      status: z.string(),
    }),
  ),
  messages: z.array(
    z.object({ id: z.string(), created_at: z.string(), message: z.string(), open_status: z.number() }),
  ),
});

export type CreateAccountData = z.infer<typeof createAccountData>;
export type LoginData = z.infer<typeof loginData>;
export type CheckLoggedInData = z.infer<typeof checkLoggedInData>;
export type CheckPhraseData = z.infer<typeof messageData>;
export type ChangePasswordData = z.infer<typeof messageData>;
export type ClientBalancesData = z.infer<typeof clientBalancesData>;
export type RequestWalletData = z.infer<typeof messageData>;
export type NewMessagesCountData = z.infer<typeof newMessagesCountData>;
export type RequestTransactionData = z.infer<typeof requestTransactionData>;
export type OpenMessageData = z.infer<typeof openMessageData>;
export type RequestMessageData = z.infer<typeof messageData>;

export interface BackendIssue {
  /** The request body's field, e.g. "comment". */
  path: string;
  message: string;
}

export interface BackendRejected {
  ok: false;
  kind: "rejected";
  status: number;
  message: string;
  /** Only requestMessage: the refused fields, when the backend names them. */
  issues?: BackendIssue[];
  /** A 429's Retry-After, in whole seconds (record 013). */
  retryAfter?: number;
}

export interface BackendNetworkFailure {
  ok: false;
  kind: "network";
  message: string;
}

export type BackendFailure = BackendRejected | BackendNetworkFailure;

export type BackendResult<T> = { ok: true; data: T } | BackendFailure;

export interface CreateAccountInput {
  email: string;
  password: string;
  passwordConfirmed: string;
}

export interface LoginInput {
  email: string;
  password: string;
  /**
   * Our addition to call 2 (record 015): why the password is checked, for the
   * audit log — the security page's phrase reveal, or the restore flow's
   * e-mail lookup. Absent: a sign-in.
   */
  purpose?: "reveal" | "restore";
}

export interface PhraseInput {
  email: string;
  twelveWords: string[];
}

export interface ChangePasswordInput {
  email: string;
  twelveWords: string[];
  password: string;
  confirmPassword: string;
}

export interface ClientBalancesInput extends PhraseInput {
  /** Newest first; at most this many transactions (1..1000). */
  transactionsLimit?: number;
  /** Only transactions older than this ISO date (paging). */
  transactionsBefore?: string;
  /** Only this coin's transactions (a wallet page). */
  transactionsCoin?: string;
}

export interface RequestTransactionInput extends PhraseInput {
  walletId: string;
  /** Decimal text, at most 4 decimals. */
  amount: string;
  /** The client's USD figure (the server prices the send itself). */
  amountInUsd: string;
  receiverWalletAddress: string;
  /** Issued with the form: the same key again answers the first answer and sends nothing. */
  idempotencyKey?: string;
}

export interface OpenMessageInput extends PhraseInput {
  messageId: string;
}

/** Call 12: the support modal's message, or the public contact form's. */
export type RequestMessageInput =
  | { kind: "support"; email: string; fullName: string; phone: string; comment: string }
  | { kind: "contact"; email: string; comment: string };

export interface CallerOptions {
  /**
   * The visitor's IP address, forwarded in X-Coinkeep-Client-Ip: the backend
   * records it (call 12, record 011) and counts its abuse limits by it (record
   * 013). Every method takes it; it wins over the client's default (forClient).
   */
  clientIp?: string | undefined;
}

/** Call 12's options: the caller's, as for every call. */
export type RequestMessageOptions = CallerOptions;

export interface BackendClient {
  createAccount(input: CreateAccountInput, opts?: CallerOptions): Promise<BackendResult<CreateAccountData>>;
  login(input: LoginInput, opts?: CallerOptions): Promise<BackendResult<LoginData>>;
  checkLoggedIn(input: PhraseInput, opts?: CallerOptions): Promise<BackendResult<CheckLoggedInData>>;
  checkPhrase(input: PhraseInput, opts?: CallerOptions): Promise<BackendResult<CheckPhraseData>>;
  changePassword(
    input: ChangePasswordInput,
    opts?: CallerOptions,
  ): Promise<BackendResult<ChangePasswordData>>;
  clientBalances(
    input: ClientBalancesInput,
    opts?: CallerOptions,
  ): Promise<BackendResult<ClientBalancesData>>;
  requestWallet(
    input: PhraseInput & { ticker: string },
    opts?: CallerOptions,
  ): Promise<BackendResult<RequestWalletData>>;
  newMessagesCount(input: PhraseInput, opts?: CallerOptions): Promise<BackendResult<NewMessagesCountData>>;
  requestTransaction(
    input: RequestTransactionInput,
    opts?: CallerOptions,
  ): Promise<BackendResult<RequestTransactionData>>;
  openMessage(input: OpenMessageInput, opts?: CallerOptions): Promise<BackendResult<OpenMessageData>>;
  requestMessage(
    input: RequestMessageInput,
    opts?: CallerOptions,
  ): Promise<BackendResult<RequestMessageData>>;
  /** The same client with every call made for this visitor (their address forwarded). */
  forClient(clientIp: string | undefined): BackendClient;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** As server/backend/api/http.ts CLIENT_IP_HEADER and BACKEND_TOKEN_HEADER. */
const CLIENT_IP_HEADER = "X-Coinkeep-Client-Ip";
const BACKEND_TOKEN_HEADER = "X-Coinkeep-Backend-Token";

interface CallOptions {
  headers?: Record<string, string>;
  /** Keep the `issues` of a refusal (only call 12 names fields the user can correct). */
  keepIssues?: boolean;
}

/**
 * What the backend learns about the visitor's request (record 015): its id, so
 * the API's log lines can be matched with the web tier's, and the visitor's
 * address the host believed, for the audit log (record 011 says when the
 * backend believes it).
 */
function forwardedRequestHeaders(): Record<string, string> {
  const current = currentRequest();
  if (!current) return {};
  return {
    "X-Request-Id": current.requestId,
    ...(current.clientIp !== undefined ? { [CLIENT_IP_HEADER]: current.clientIp } : {}),
  };
}

function network(message: string): BackendNetworkFailure {
  return { ok: false, kind: "network", message };
}

/** Retry-After in whole seconds (the backend sends delta-seconds), or undefined. */
function retryAfterSeconds(value: string | null): number | undefined {
  const text = value?.trim() ?? "";
  return /^\d{1,10}$/u.test(text) ? Number(text) : undefined;
}

export function createBackendClient(opts: BackendClientOptions, defaultClientIp?: string): BackendClient {
  /** The visitor's address for one call: the caller's, else the client's default. */
  const visitor = (callerOpts: CallerOptions): Record<string, string> => {
    const clientIp = callerOpts.clientIp ?? defaultClientIp;
    return clientIp === undefined ? {} : { [CLIENT_IP_HEADER]: clientIp };
  };
  const baseUrl = opts.baseUrl.replace(/\/+$/u, "");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const send = opts.fetch ?? ((request: Request) => globalThis.fetch(request));
  const token: Record<string, string> = opts.token ? { [BACKEND_TOKEN_HEADER]: opts.token } : {};

  async function call<T>(
    path: string,
    body: Record<string, unknown>,
    schema: z.ZodType<T>,
    callOpts: CallOptions = {},
  ): Promise<BackendResult<T>> {
    const answer = await exchange(
      send,
      `${baseUrl}${path}`,
      {
        method: "POST",
        headers: {
          ...forwardedRequestHeaders(),
          ...callOpts.headers,
          ...token,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify({ ...body, platform: opts.platform }),
      },
      timeoutMs,
    );
    if (!answer.ok) {
      return network(
        answer.reason === "timeout"
          ? "The backend did not answer in time."
          : `The backend could not be reached (${answer.name}).`,
      );
    }
    const { status, text } = answer;
    if (status >= 500) return network(`The backend failed (status ${status}).`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return network(`The backend answered with a non-JSON body (status ${status}).`);
    }
    if (status >= 400) {
      const rejection = rejectionBody.safeParse(parsed);
      if (!rejection.success) return network(`The backend answered status ${status} without a message.`);
      const issues = callOpts.keepIssues ? issuesBody.safeParse(parsed) : undefined;
      const retryAfter = status === 429 ? retryAfterSeconds(answer.headers.get("retry-after")) : undefined;
      return {
        ok: false,
        kind: "rejected",
        status,
        message: rejection.data.message,
        ...(issues?.success ? { issues: issues.data.issues } : {}),
        ...(retryAfter === undefined ? {} : { retryAfter }),
      };
    }
    if (status < 200 || status >= 300) return network(`The backend answered with status ${status}.`);
    const data = schema.safeParse(parsed);
    if (!data.success) return network("The backend answered with an unexpected body.");
    return { ok: true, data: data.data };
  }

  return {
    createAccount: (input, callerOpts = {}) =>
      call(
        "/aml-authentication",
        { email: input.email, password: input.password, passwordConfirmed: input.passwordConfirmed },
        createAccountData,
        { headers: visitor(callerOpts) },
      ),
    login: (input, callerOpts = {}) =>
      call(
        "/aml-authorization",
        {
          email: input.email,
          password: input.password,
          ...(input.purpose !== undefined ? { purpose: input.purpose } : {}),
        },
        loginData,
        { headers: visitor(callerOpts) },
      ),
    checkLoggedIn: (input, callerOpts = {}) =>
      call(
        "/check-if-logged-in",
        { email: input.email, twelveWords: input.twelveWords.join(" ") },
        checkLoggedInData,
        { headers: visitor(callerOpts) },
      ),
    checkPhrase: (input, callerOpts = {}) =>
      call(
        "/request-change-password",
        { email: input.email, twelveWords: input.twelveWords.join(" ") },
        messageData,
        { headers: visitor(callerOpts) },
      ),
    changePassword: (input, callerOpts = {}) =>
      call(
        "/aml-client-change-password",
        {
          email: input.email,
          twelveWords: input.twelveWords.join(" "),
          password: input.password,
          confirmPassword: input.confirmPassword,
        },
        messageData,
        { headers: visitor(callerOpts) },
      ),
    clientBalances: (input, callerOpts = {}) =>
      call(
        "/aml-client-balances",
        {
          email: input.email,
          twelveWords: input.twelveWords.join(" "),
          ...(input.transactionsLimit !== undefined ? { transactions_limit: input.transactionsLimit } : {}),
          ...(input.transactionsBefore !== undefined
            ? { transactions_before: input.transactionsBefore }
            : {}),
          ...(input.transactionsCoin !== undefined ? { transactions_coin: input.transactionsCoin } : {}),
        },
        clientBalancesData,
        { headers: visitor(callerOpts) },
      ),
    requestWallet: (input, callerOpts = {}) =>
      call(
        "/request-nonbtc-wallet",
        { email: input.email, twelveWords: input.twelveWords.join(" "), request_text: input.ticker },
        messageData,
        { headers: visitor(callerOpts) },
      ),
    // Call 7 spells the field `twelvewords` (spec section 7).
    newMessagesCount: (input, callerOpts = {}) =>
      call(
        "/aml-new-messages-count",
        { email: input.email, twelvewords: input.twelveWords.join(" ") },
        newMessagesCountData,
        { headers: visitor(callerOpts) },
      ),
    requestTransaction: (input, callerOpts = {}) =>
      call(
        "/request-transaction",
        {
          email: input.email,
          twelveWords: input.twelveWords.join(" "),
          amount: input.amount,
          amount_in_usd: input.amountInUsd,
          receiver_wallet_address: input.receiverWalletAddress,
          wallet_id: input.walletId,
          ...(input.idempotencyKey !== undefined ? { idempotency_key: input.idempotencyKey } : {}),
        },
        requestTransactionData,
        { headers: visitor(callerOpts) },
      ),
    // Call 8: our contract also takes the caller's credentials (record 011).
    openMessage: (input, callerOpts = {}) =>
      call(
        "/aml-message-open-status",
        { email: input.email, twelveWords: input.twelveWords.join(" "), messageId: input.messageId },
        openMessageData,
        { headers: visitor(callerOpts) },
      ),
    // Call 12: the body's shape tells the backend which form sent it; no credentials.
    requestMessage: (input, callerOpts = {}) =>
      call(
        "/request-message",
        input.kind === "support"
          ? { email: input.email, full_name: input.fullName, phone: input.phone, comment: input.comment }
          : { email: input.email, comment: input.comment },
        messageData,
        { keepIssues: true, headers: visitor(callerOpts) },
      ),
    forClient: (clientIp) => createBackendClient(opts, clientIp),
  };
}
