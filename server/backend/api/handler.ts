// The backend API: a fetch-style handler for the paths under /api.
//
// Every answer is JSON with `cache-control: no-store`. Failures are always
// { success: false, message } (validation failures add `issues`). Client
// mistakes are 4xx; only a fault of ours is a 500, logged without the body.
//
// Each POST route passes the same checks, in this order:
//   404 unknown path · 405 wrong method · 415 not application/json ·
//   413 body over maxBodyBytes · 400 malformed JSON / not an object ·
//   400 missing or unknown platform · 400 the call's decode (unknown fields ignored).
//
// The handler's optional second argument is the connection's address (as
// @remix-run/node-fetch-server passes it); call 12 records the sender's IP,
// and the rate limits count, by it, or by the X-Coinkeep-Client-Ip of our own
// web tier: in-process, or a configured one with its token (senderAddress in
// ./http.ts, record 026).
import { DrizzleQueryError } from "drizzle-orm";
import type { Ticker } from "../../../common/coins.ts";
import { API_BASE, CALLS, decodeBody, type CallName } from "../../../common/contract/calls.ts";
import type { BackendServices, Caller, Outcome, StatementFile } from "../../../common/contract/client.ts";
import { decodeStatementBody, STATEMENT_PATH } from "../../../common/contract/statement.ts";
import { refusal } from "../../../common/contract/refusals.ts";
import { log } from "../../../common/log.ts";
import type { AppDb } from "../db/index.ts";
import type { UsdtNetwork } from "../../../common/addresses.ts";
import { deriveServerKeys } from "../domain/crypto.ts";
import type { ConfiguredKeys } from "../custody/derive.ts";
import { NO_KEYS } from "../domain/issuing.ts";
import { createRateLimiter, DEFAULT_RATE_LIMITS, type RateLimitPolicy } from "../domain/rate-limits.ts";
import { createServices, type ServicesContext } from "../services.ts";
import { secondFactorKeys } from "../domain/two-factor.ts";
import { createJobs } from "../jobs.ts";
import { createChainWatchers } from "../chains/watcher.ts";
import type { ChainSettings } from "../chains/settings.ts";
import type { HeldLock } from "../db/index.ts";
import { browserKey } from "../domain/email.ts";
import { mailKeys } from "../mail/outbox.ts";
import { createMailSender, type MailSender } from "../mail/sender.ts";
import type { SmtpSettings } from "../mail/smtp-url.ts";
import {
  isJsonContentType,
  json,
  parseJsonObject,
  readBoundedText,
  refusalResponse,
  Rejection,
  senderAddress,
  webTierCheck,
  type ClientAddress,
  type WebTierTrust,
} from "./http.ts";

export interface ApiHandlerOptions {
  /**
   * The chain watchers (issue 30, record 053): the networks read, the confirmations policy
   * and the database's leadership lock. Absent: no chain is watched.
   */
  chains?:
    | {
        settings: ChainSettings;
        confirmations: Readonly<Record<Ticker, number>>;
        holdLock: (key: bigint) => Promise<HeldLock | null>;
      }
    | undefined;
  db: AppDb;
  /** The platform code every request body must carry. */
  platform: string;
  /** At least 32 characters; the phrase keys are derived from it. */
  backendSecret: string;
  /** Largest accepted request body; default 16 KiB. */
  maxBodyBytes?: number;
  /**
   * A coin's USD price now, as a plain decimal (sends are priced with it; the
   * client's figure is not trusted). Default: no price, so sends record none.
   */
  usdPrice?: (coin: Ticker) => Promise<string | null>;
  /** The network USDT addresses are checked for; default erc20. */
  usdtNetwork?: UsdtNetwork;
  /** The abuse limits (record 013); default DEFAULT_RATE_LIMITS. "off" only for tests and benchmarks. */
  rateLimits?: RateLimitPolicy | "off";
  /** The clock of the rate limits and of two-factor codes and grants; default the system clock (tests move it). */
  now?: () => Date;
  /** The clock of the holds (allowlist, two-factor removal; record 048); default the system clock. */
  holdClock?: () => Date;
  /** A new saved address, or the allowlist's turn-off, waits this many hours; default 24. */
  allowlistHoldHours?: number;
  /**
   * A web tier outside this process whose X-Coinkeep-Client-Ip is believed
   * over a connection: its addresses and its token (record 026). Default none:
   * only an in-process call (no connection) forwards a visitor's address.
   * The host decides this at its edge instead (inspect, server/host/requests.ts) and hands the
   * handler the address it believed.
   */
  webTier?: WebTierTrust | undefined;
  /** Watch-only account keys and the pool's low-water mark (record 039); default no keys, low water 20. */
  custody?: { keys: ConfiguredKeys; poolLowWater: number };
  /**
   * The embedded database's VACUUM (ANALYZE) (Database.maintain, record 036), which start()
   * runs a second later and hourly; absent with PostgreSQL.
   */
  maintain?: (() => Promise<void>) | undefined;
  /**
   * E-mail (issue 28, record 049): the SMTP server (undefined: off, mails wait in the outbox),
   * the From header, the links' base and the product's name. Default: off.
   */
  mail?: {
    smtp: SmtpSettings | undefined;
    from: string;
    publicUrl: string;
    product: string;
    pollMs?: number;
  };
}

/**
 * The API. `client` is the connection's address when served over HTTP by
 * @remix-run/node-fetch-server's createRequestListener (the function declares
 * both parameters, so the listener passes it); absent for an in-process call.
 */
export type ApiHandler = (request: Request, client?: ClientAddress) => Promise<Response>;

/**
 * The backend: its services (what the in-process client calls), its HTTP handler, and its
 * own jobs (../jobs.ts), which the process that serves it starts and stops.
 */
export interface Backend {
  services: BackendServices;
  handler: ApiHandler;
  /** Issues the wallet requests left waiting (resolves once done), then starts the repeating jobs. */
  start(): Promise<void>;
  /** Ends the jobs, waiting for one that is running; before the database is closed. */
  stop(): Promise<void>;
  /** The outbox's sender in this process (record 049), started with the jobs. */
  mail: MailSender;
}

export const DEFAULT_MAX_BODY_BYTES = 16_384;

/** A service's outcome as the HTTP answer. */
function outcomeResponse(outcome: Outcome<unknown>): Response {
  if (!outcome.ok) return refusalResponse(outcome);
  return json(200, outcome.data, outcome.replayed ? { "idempotent-replayed": "true" } : {});
}

/**
 * A statement's answer (issue 28, record 050): the CSV streamed as the backend
 * reads it, named in Content-Disposition; a refusal is the usual JSON.
 */
function statementResponse(outcome: Outcome<StatementFile>): Response {
  if (!outcome.ok) return refusalResponse(outcome);
  return new Response(outcome.data.body, {
    status: 200,
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${outcome.data.filename}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

/** One service, its body and answer types erased (the handler parses the body with the call's own schema). */
type Service = (body: unknown, caller: Caller) => Promise<Outcome<unknown>>;

/** The call behind each path. */
const callsByPath = new Map<string, CallName>(
  (Object.keys(CALLS) as CallName[]).map((name) => [`${API_BASE}${CALLS[name].path}`, name]),
);

/**
 * What may be logged about an unexpected error: its class, its driver cause and
 * SQLSTATE, never query parameters or anything from the request body.
 */
function describeError(error: unknown): Record<string, string | undefined> {
  if (!(error instanceof Error)) return { error: typeof error };
  // drizzle's query errors carry the SQL parameters in their message; only the driver's cause is logged.
  const isQueryError = error instanceof DrizzleQueryError || error.message.startsWith("Failed query:");
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const shown = isQueryError ? cause : error;
  const code: unknown = (shown as (Error & { code?: unknown }) | undefined)?.code;
  const sqlState = typeof code === "string" && /^[0-9A-Z]{5}$/u.test(code);
  return {
    error: isQueryError ? "DrizzleQueryError" : error.name,
    cause: cause?.name,
    code: typeof code === "string" ? code : undefined,
    // A database error's message can quote a submitted value; its SQLSTATE code is enough then.
    detail: shown && !sqlState ? shown.message.slice(0, 300) : undefined,
  };
}

/** The services' context from the handler's options. */
function servicesContext(opts: ApiHandlerOptions): ServicesContext {
  return {
    db: opts.db,
    keys: deriveServerKeys(opts.backendSecret),
    usdPrice: opts.usdPrice ?? (() => Promise.resolve(null)),
    usdtNetwork: opts.usdtNetwork ?? "erc20",
    holdClock: opts.holdClock ?? (() => new Date()),
    secondFactor: secondFactorKeys(opts.backendSecret),
    clock: opts.now ?? (() => new Date()),
    mailKeys: mailKeys(opts.backendSecret),
    browserKey: browserKey(opts.backendSecret),
    allowlistHoldHours: opts.allowlistHoldHours ?? 24,
    issuing: {
      keys: opts.custody?.keys ?? NO_KEYS.keys,
      poolLowWater: opts.custody?.poolLowWater ?? NO_KEYS.poolLowWater,
      usdtNetwork: opts.usdtNetwork ?? "erc20",
    },
    limits:
      opts.rateLimits === "off"
        ? null
        : createRateLimiter({
            db: opts.db,
            secret: opts.backendSecret,
            policy: opts.rateLimits ?? DEFAULT_RATE_LIMITS,
            ...(opts.now ? { now: opts.now } : {}),
          }),
  };
}

/** The backend: its services, and the HTTP handler in front of them. */
export function createBackend(opts: ApiHandlerOptions): Backend {
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw new Error("maxBodyBytes must be a positive integer");
  if (!opts.platform) throw new Error("platform must not be empty");
  const ctx = servicesContext(opts);
  const calls = createServices(ctx);
  // Quiet counters are dropped every 10 minutes, by whichever call comes first.
  let lastPurge = Date.now();
  const purgeNow = () => {
    if (!ctx.limits || Date.now() - lastPurge < 10 * 60_000) return;
    lastPurge = Date.now();
    ctx.limits.purge().catch((error: unknown) => {
      log.warn("could not purge rate limits", { error: error instanceof Error ? error.name : "unknown" });
    });
  };
  // Every call, in-process or over HTTP, gives the purge its chance; a fault
  // of ours is logged without the body and answered as an internal error.
  const services = {} as Record<CallName | "statement", Service>;
  const guarded = (run: Service, path: string): Service => {
    return async (body, caller) => {
      purgeNow();
      try {
        return await run(body, caller);
      } catch (error) {
        log.error("api internal error", {
          method: "POST",
          path: `${API_BASE}${path}`,
          ...describeError(error),
        });
        return refusal("internal");
      }
    };
  };
  for (const name of Object.keys(CALLS) as CallName[]) {
    services[name] = guarded(calls[name] as Service, CALLS[name].path);
  }
  services.statement = guarded(calls.statement as Service, STATEMENT_PATH);
  const platform = opts.platform;
  const fromWebTier = webTierCheck(opts.webTier);

  async function handle(request: Request, client: ClientAddress | undefined): Promise<Response> {
    const { pathname } = new URL(request.url);
    const name = pathname === `${API_BASE}${STATEMENT_PATH}` ? "statement" : callsByPath.get(pathname);
    if (!name) return refusalResponse(refusal("not_found"));
    if (request.method !== "POST") return refusalResponse(refusal("method_not_allowed"), { allow: "POST" });
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return refusalResponse(refusal("unsupported_media_type"));
    }

    const text = await readBoundedText(request, maxBodyBytes);
    if (text instanceof Rejection) return text.response;
    const body = parseJsonObject(text);
    if (body instanceof Rejection) return body.response;

    if (!Object.hasOwn(body, "platform") || body.platform !== platform) {
      return refusalResponse(refusal("unknown_platform"));
    }

    const caller = { senderIp: senderAddress(request, client, fromWebTier) };
    if (name === "statement") {
      const decoded = decodeStatementBody(body);
      if (!decoded.ok) return refusalResponse(decoded);
      return statementResponse((await services.statement(decoded.body, caller)) as Outcome<StatementFile>);
    }
    const decoded = decodeBody(name, body);
    if (!decoded.ok) return refusalResponse(decoded);
    return outcomeResponse(await services[name](decoded.body, caller));
  }

  async function handler(request: Request, client?: ClientAddress): Promise<Response> {
    try {
      return await handle(request, client);
    } catch (error) {
      let path: string | undefined;
      try {
        path = new URL(request.url).pathname;
      } catch {
        path = undefined;
      }
      log.error("api internal error", { method: request.method, path, ...describeError(error) });
      return refusalResponse(refusal("internal"));
    }
  }
  const jobs = createJobs({ db: opts.db, issuing: ctx.issuing, maintain: opts.maintain });
  const chains = opts.chains
    ? createChainWatchers({
        db: opts.db,
        settings: opts.chains.settings,
        policy: { confirmations: opts.chains.confirmations, usdtNetwork: ctx.usdtNetwork },
        holdLock: opts.chains.holdLock,
      })
    : undefined;
  const mail = createMailSender({
    db: opts.db,
    smtp: opts.mail?.smtp,
    from: opts.mail?.from ?? "Coinkeep <no-reply@coinkeep.example>",
    publicUrl: opts.mail?.publicUrl ?? "http://localhost:3000",
    product: opts.mail?.product ?? "Coinkeep",
    keys: ctx.mailKeys,
    ...(opts.mail?.pollMs ? { pollMs: opts.mail.pollMs } : {}),
  });
  return {
    services: services as unknown as BackendServices,
    handler,
    async start() {
      await jobs.start();
      mail.start();
      chains?.start();
    },
    async stop() {
      await Promise.all([jobs.stop(), mail.stop(), chains?.stop()]);
    },
    mail,
  };
}

/** The API's HTTP handler alone (tests and tools that speak HTTP only). */
export function createApiHandler(opts: ApiHandlerOptions): ApiHandler {
  return createBackend(opts).handler;
}
