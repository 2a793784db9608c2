// Structured logs: one JSON object per line (info on stdout, the rest on stderr),
// used by the host, the backend and the web tier's server code. Callers pass only
// what is safe to keep; request bodies, query strings, passwords, phrases and
// session ids are never handed to the logger.
//
// Every line written while a request is being served carries that request's id
// (`requestId`): the host runs each request inside `runWithRequest`, and the id
// follows the request through the web tier's loaders and actions and into the
// in-process API (AsyncLocalStorage). The store sits on globalThis because the
// web tier is a separate bundle with its own copy of this module.
import { AsyncLocalStorage } from "node:async_hooks";

type Fields = Record<string, string | number | boolean | null | undefined>;

export interface RequestLogContext {
  /** The id the host sent back in X-Request-Id. */
  requestId: string;
  /** The visitor's address, once the host has decided which one to believe. */
  clientIp?: string;
}

const STORE_KEY = Symbol.for("coinkeep.log.request-context");
type Holder = { [STORE_KEY]?: AsyncLocalStorage<RequestLogContext> };
const holder = globalThis as Holder;
const store: AsyncLocalStorage<RequestLogContext> = (holder[STORE_KEY] ??=
  new AsyncLocalStorage<RequestLogContext>());

/** Runs `fn` (and everything it starts) as part of one request. */
export function runWithRequest<T>(context: RequestLogContext, fn: () => T): T {
  return store.run(context, fn);
}

/** The request being served, if any. */
export function currentRequest(): RequestLogContext | undefined {
  return store.getStore();
}

// A last line of defence: a field whose name says it holds a secret is never
// written, whatever a caller passes.
const SECRET_FIELD = /pass(word)?|phrase|words|secret|token|cookie|session|authorization/iu;

function write(level: "info" | "warn" | "error", message: string, fields: Fields = {}) {
  const safe: Fields = {};
  for (const [key, value] of Object.entries(fields)) {
    safe[key] = SECRET_FIELD.test(key) && value !== undefined ? "[redacted]" : value;
  }
  const requestId = currentRequest()?.requestId;
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    message,
    ...(requestId ? { requestId } : {}),
    ...safe,
  });
  if (level === "info") process.stdout.write(`${line}\n`);
  else process.stderr.write(`${line}\n`);
}

export const log = {
  info: (message: string, fields?: Fields) => write("info", message, fields),
  warn: (message: string, fields?: Fields) => write("warn", message, fields),
  error: (message: string, fields?: Fields) => write("error", message, fields),
};
