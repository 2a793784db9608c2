// The web tier's backend client, the one way it reaches the backend: one typed
// interface (common/contract/client.ts), two transports, and `backend(context)`, the
// client of the request being answered (in-process when the backend runs here, over
// HTTP when BACKEND_URL points elsewhere), with `prices(context)` beside it.
//   - in-process: the backend's services are called directly with the call's
//     body parsed by its contract schema — no Request, no JSON — and the
//     credentials of one web request are checked once (Caller.checked);
//   - HTTP (BACKEND_URL): the same bodies as JSON to the spec's paths, the
//     answers checked against the contract's answer schemas.
//
// Every call resolves (never throws) to a discriminated union:
//   { ok: true, data }                                           an answer of the expected shape
//   { ok: false, kind: "rejected", code, status, message, … }    a refusal: its stable code, the spec's text
//   { ok: false, kind: "network", message }                      unreachable, timed out, 5xx, or not the contract
// Passwords and phrases never appear in any message this client produces.
import { z } from "zod";
import {
  BACKEND_TOKEN_HEADER,
  CALLS,
  CLIENT_IP_HEADER,
  decodeBody,
  encodeBody,
  withFormPaths,
  type CallAnswer,
  type CallInput,
  type CallName,
} from "../common/contract/calls.ts";
import type {
  BackendClient,
  BackendFailure,
  BackendNetworkFailure,
  BackendRejected,
  BackendResult,
  BackendServices,
  Caller,
  Principal,
} from "../common/contract/client.ts";
import { isRefusalCode, type Refusal } from "../common/contract/refusals.ts";
import { decodeStatementBody, encodeStatementBody, STATEMENT_PATH } from "../common/contract/statement.ts";
import { currentRequest } from "../common/log.ts";
import { exchange } from "./lib/exchange.server.ts";

export type {
  BackendClient,
  BackendFailure,
  BackendNetworkFailure,
  BackendRejected,
  BackendResult,
} from "../common/contract/client.ts";
export type {
  ChangePasswordData,
  CheckLoggedInData,
  CheckPhraseData,
  ClientBalancesData,
  ClientBalancesInput,
  CreateAccountData,
  LoginData,
  NewMessagesCountData,
  OpenMessageData,
  RequestMessageData,
  RequestMessageInput,
  RequestTransactionData,
  RequestTransactionInput,
  RequestWalletData,
} from "../common/contract/calls.ts";
import type { RouterContextProvider } from "react-router";
import { memoize } from "../common/memo.ts";
import type { AppServices } from "./context.ts";
import { createInProcessPricesClient, createPricesClient, type PricesClient } from "./prices.server.ts";
import { services as servicesOf } from "./session.server.ts";

export interface HttpClientOptions {
  /** e.g. "http://127.0.0.1:3000/api" */
  baseUrl: string;
  platform: string;
  /** Default: globalThis.fetch. */
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

const DEFAULT_TIMEOUT_MS = 10_000;

const CALL_NAMES = Object.keys(CALLS) as CallName[];

/** A client whose every method is `run(name, input)`. */
function clientOf(
  run: <N extends CallName>(name: N, input: CallInput<N>) => Promise<BackendResult<CallAnswer<N>>>,
): BackendClient {
  // `statement` is set by each transport (it answers a stream, not a JSON body).
  return Object.fromEntries(
    CALL_NAMES.map((name) => [name, (input: CallInput<typeof name>) => run(name, input)]),
  ) as unknown as BackendClient;
}

/** A refusal, each refused field named as the app's input and its forms name it (fullName). */
function rejected(refused: Refusal): BackendRejected {
  return { ...withFormPaths(refused), kind: "rejected" };
}

function network(message: string): BackendNetworkFailure {
  return { ok: false, kind: "network", message };
}

// ---------------------------------------------------------------------------
// In-process.

/**
 * The client for one web request over the backend's own services. `clientIp`
 * is the visitor's address the host believed (the abuse limits count by it,
 * call 12 records it). Make one per request: it remembers whose credentials
 * it already checked, and only for that request, and lets loaders that read
 * the same rows at once share the read.
 */
export function createInProcessClient(
  services: BackendServices,
  platform: string,
  clientIp: string | undefined,
): BackendClient {
  const checked = new Map<string, Promise<Principal | null>>();
  const reading = new Map<string, Promise<unknown>>();
  const prefetched = new Map<string, unknown>();
  const client = clientOf(async (name, input) => {
    // The address the host believed for the request this call runs under, unless given.
    const caller: Caller = {
      senderIp: clientIp ?? currentRequest()?.clientIp ?? null,
      checked,
      reading,
      prefetched,
    };
    // The body the HTTP transport would send, decoded as the HTTP handler decodes it.
    const decoded = decodeBody(name, encodeBody(name, input, platform));
    if (!decoded.ok) return rejected(decoded);
    const service = services[name] as (
      body: unknown,
      who: Caller,
    ) => Promise<{ ok: true; data: CallAnswer<typeof name> } | Refusal>;
    const outcome = await service(decoded.body, caller);
    if (outcome.ok) return { ok: true, data: outcome.data };
    // As over HTTP: a fault of the backend's (logged there) is not a refusal.
    return outcome.status >= 500
      ? network(`The backend failed (status ${outcome.status}).`)
      : rejected(outcome);
  });
  // The statement (record 050): the same decode as over HTTP, the stream handed through.
  client.statement = async (input) => {
    const caller: Caller = {
      senderIp: clientIp ?? currentRequest()?.clientIp ?? null,
      checked,
      reading,
      prefetched,
    };
    const decoded = decodeStatementBody(encodeStatementBody(input, platform));
    if (!decoded.ok) return rejected(decoded);
    const outcome = await services.statement(decoded.body, caller);
    if (outcome.ok) return { ok: true, data: outcome.data };
    return outcome.status >= 500
      ? network(`The backend failed (status ${outcome.status}).`)
      : rejected(outcome);
  };
  return client;
}

// ---------------------------------------------------------------------------
// HTTP.

const refusalBody = z.object({
  code: z.string(),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

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

/** Retry-After in whole seconds (the backend sends delta-seconds), or undefined. */
function retryAfterSeconds(value: string | null): number | undefined {
  const text = value?.trim() ?? "";
  return /^\d{1,10}$/u.test(text) ? Number(text) : undefined;
}

/** The client over HTTP, for the visitor at `clientIp` (forwarded in X-Coinkeep-Client-Ip). */
export function createHttpClient(opts: HttpClientOptions, clientIp?: string): BackendClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/u, "");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const send = opts.fetch ?? ((request: Request) => globalThis.fetch(request));
  const token: Record<string, string> = opts.token ? { [BACKEND_TOKEN_HEADER]: opts.token } : {};
  const visitor: Record<string, string> = clientIp === undefined ? {} : { [CLIENT_IP_HEADER]: clientIp };

  const client = clientOf(async (name, input) => {
    const spec = CALLS[name];
    const answer = await exchange(
      send,
      `${baseUrl}${spec.path}`,
      {
        method: "POST",
        headers: {
          ...forwardedRequestHeaders(),
          ...visitor,
          ...token,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(encodeBody(name, input, opts.platform)),
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
    if (status >= 400) return refusalOf(status, parsed, answer.headers);
    if (status < 200 || status >= 300) return network(`The backend answered with status ${status}.`);
    const data = spec.answer.safeParse(parsed);
    if (!data.success) return network("The backend answered with an unexpected body.");
    return { ok: true, data: data.data as CallAnswer<typeof name> };
  });

  // The statement (record 050): a 200 is the CSV, handed on as it arrives (only the wait for
  // its headers is bounded); anything else is read as a refusal.
  client.statement = async (input) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let response: Response;
    try {
      response = await send(
        new Request(`${baseUrl}${STATEMENT_PATH}`, {
          method: "POST",
          headers: {
            ...forwardedRequestHeaders(),
            ...visitor,
            ...token,
            "content-type": "application/json",
            accept: "text/csv, application/json",
          },
          body: JSON.stringify(encodeStatementBody(input, opts.platform)),
          signal: controller.signal,
        }),
      );
    } catch (error) {
      return network(
        controller.signal.aborted
          ? "The backend did not answer in time."
          : `The backend could not be reached (${error instanceof Error ? error.name : "error"}).`,
      );
    } finally {
      clearTimeout(timer);
    }
    const { status } = response;
    const csv = (response.headers.get("content-type") ?? "").startsWith("text/csv");
    if (status === 200 && csv && response.body) {
      const named = /filename="(coinkeep-statement-[a-z0-9.-]+\.csv)"/u.exec(
        response.headers.get("content-disposition") ?? "",
      );
      return { ok: true, data: { filename: named?.[1] ?? "coinkeep-statement.csv", body: response.body } };
    }
    const text = await response.text().catch(() => "");
    if (status >= 500) return network(`The backend failed (status ${status}).`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return network(`The backend answered with a non-JSON body (status ${status}).`);
    }
    if (status >= 400) return refusalOf(status, parsed, response.headers);
    return network(`The backend answered with status ${status}.`);
  };
  return client;
}

/** A 4xx answer's refusal, or a network failure when it carries no refusal code. */
function refusalOf(status: number, parsed: unknown, headers: Headers): BackendFailure {
  const body = refusalBody.safeParse(parsed);
  if (!body.success || !isRefusalCode(body.data.code)) {
    return network(`The backend answered status ${status} without a refusal code.`);
  }
  const retryAfter = status === 429 ? retryAfterSeconds(headers.get("retry-after")) : undefined;
  return rejected({
    ok: false,
    code: body.data.code,
    status,
    message: body.data.message,
    ...(body.data.issues ? { issues: body.data.issues } : {}),
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
}

/**
 * The backend client for the request behind `context`, made once per request:
 * every call carries the visitor's address (record 013 counts the abuse limits
 * by it), so no call site can forget to pass it, and in-process the request's
 * credentials are checked once however many calls it makes.
 */
export const backend: (context: Readonly<RouterContextProvider>) => BackendClient = memoize((context) => {
  const s = servicesOf(context);
  const clientIp = s.clientAddress?.(context);
  if (s.backend) return createInProcessClient(s.backend, s.config.platform, clientIp);
  return createHttpClient(
    {
      baseUrl: s.config.backendBaseUrl,
      platform: s.config.platform,
      ...(s.config.backendToken ? { token: s.config.backendToken } : {}),
    },
    clientIp,
  );
});

/** The Retry-After an action set, for a route's `headers` (so the page carries it too). */
export function retryAfterOf(actionHeaders: Headers): Record<string, string> {
  const value = actionHeaders.get("Retry-After");
  return value === null ? {} : { "Retry-After": value };
}

/** What a page says when the backend refused for too many attempts (429) or a locked account (423). */
export interface LimitedAnswer {
  message: string;
  status: 429 | 423;
  headers: Record<string, string>;
}

/** "30 seconds", "1 minute", "15 minutes", "2 hours": a wait in words, rounded up. */
const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

export function waitInWords(seconds: number): string {
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), "second");
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), "minute");
  return plural(Math.ceil(seconds / 3600), "hour");
}

/** The page's message for a limited call (record 013), or null when the failure is another one. */
export function limitedAnswer(failure: BackendFailure): LimitedAnswer | null {
  if (failure.kind !== "rejected") return null;
  if (failure.code === "account_locked") {
    return {
      message:
        "Too many failed attempts. This account is locked: restore your wallet with your 12-word phrase to unlock it.",
      status: 423,
      headers: {},
    };
  }
  if (failure.code !== "too_many_attempts") return null;
  const seconds = failure.retryAfter ?? 60;
  return {
    message: `Too many attempts. Please wait ${waitInWords(seconds)} and try again.`,
    status: 429,
    headers: { "Retry-After": String(seconds) },
  };
}

/** The `before` paging parameter of a URL, when it is a date call 4 accepts. */
export function transactionsBefore(url: URL): { transactionsBefore: string } | Record<string, never> {
  const before = url.searchParams.get("before");
  return before && !Number.isNaN(Date.parse(before)) ? { transactionsBefore: before } : {};
}

/** The second client: the prices service (crypto prices and currency rates), one per host. */
const pricesOf = memoize((s: AppServices) =>
  s.prices
    ? createInProcessPricesClient(s.prices)
    : createPricesClient({
        baseUrl: s.config.pricesBaseUrl,
        appName: s.config.platform,
        appUrl: s.config.appUrl,
      }),
);

export function prices(context: Readonly<RouterContextProvider>): PricesClient {
  return pricesOf(servicesOf(context));
}
