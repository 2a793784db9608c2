// The backend API: a fetch-style handler for the paths under /api.
//
// Every answer is JSON with `cache-control: no-store`. Failures are always
// { success: false, message } (validation failures add `issues`). Client
// mistakes are 4xx; only a fault of ours is a 500, logged without the body.
//
// Each POST route passes the same checks, in this order:
//   404 unknown path · 405 wrong method · 415 not application/json ·
//   413 body over maxBodyBytes · 400 malformed JSON / not an object ·
//   400 missing or unknown platform · 400 schema (unknown fields ignored).
//
// The handler's optional second argument is the connection's address (as
// @remix-run/node-fetch-server passes it); call 12 records the sender's IP,
// and the rate limits count, by it, or by the X-Coinkeep-Client-Ip of our own
// web tier: in-process, or a configured one with its token (senderAddress in
// ./http.ts, record 026).
import { DrizzleQueryError } from "drizzle-orm";
import type { z } from "zod";
import { coinFor, type Ticker } from "../../../common/coins.ts";
import { log } from "../../../common/log.ts";
import type { AppDb } from "../db/index.ts";
import {
  changePassword,
  checkCredentials,
  checkRestorePhrase,
  createAccount,
  login,
  type AccountsContext,
  type CheckCredentialsResult,
} from "../domain/accounts.ts";
import {
  createRateLimiter,
  DEFAULT_RATE_LIMITS,
  isLimited,
  type Limited,
  type RateLimiter,
  type RateLimitPolicy,
} from "../domain/rate-limits.ts";
import { deriveServerKeys, samePassword } from "../domain/crypto.ts";
import type { UsdtNetwork } from "../domain/addresses.ts";
import { openMessage, storeSupportMessage, type SupportMessageInput } from "../domain/messages.ts";
import { requestSend, type SendResult } from "../domain/sends.ts";
import { clientBalances, requestWallet, unreadMessagesCount } from "../domain/wallets.ts";
import {
  failure,
  isJsonContentType,
  json,
  parseJsonObject,
  readBoundedText,
  Rejection,
  senderAddress,
  webTierCheck,
  type ClientAddress,
  type Issue,
  type WebTierTrust,
} from "./http.ts";
import {
  changePasswordBody,
  clientBalancesBody,
  createAccountBody,
  loginBody,
  messageOpenBody,
  newMessagesCountBody,
  phraseBody,
  requestMessageBody,
  requestTransactionBody,
  walletRequestBody,
} from "./schemas.ts";

export interface ApiHandlerOptions {
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
  /** The clock of the rate limits; default the system clock (tests move it). */
  now?: () => Date;
  /**
   * A web tier outside this process whose X-Coinkeep-Client-Ip is believed
   * over a connection: its addresses and its token (record 026). Default none:
   * only an in-process call (no connection) forwards a visitor's address.
   * server/host/host.ts decides this at its edge instead (inspect) and hands the
   * handler the address it believed.
   */
  webTier?: WebTierTrust | undefined;
}

interface RouteContext extends AccountsContext {
  usdPrice: (coin: Ticker) => Promise<string | null>;
  usdtNetwork: UsdtNetwork;
  /** The abuse limits (record 013); null only when configured off (RATE_LIMITS=off, never in production). */
  limits: RateLimiter | null;
}

/** What a route knows about the request besides its body. */
interface RequestInfo {
  /** The sender's IP address to record, or null when unknown. */
  senderIp: string | null;
}

/**
 * The API. `client` is the connection's address when served over HTTP by
 * @remix-run/node-fetch-server's createRequestListener (the function declares
 * both parameters, so the listener passes it); absent for an in-process call.
 */
export type ApiHandler = (request: Request, client?: ClientAddress) => Promise<Response>;

export const DEFAULT_MAX_BODY_BYTES = 16_384;

// Kept exactly as the clients expect them, including the misspelling.
export const MESSAGES = {
  notFound: "Not found.",
  methodNotAllowed: "Method not allowed.",
  internal: "Internal server error.",
  unknownPlatform: "Missing or unknown platform.",
  invalidRequest: "Invalid request.",
  passwordsDoNotMatch: "Passwords do not match.",
  emailTaken: "An account with this email address already exists.",
  userNotFound: "User not found with this email address.",
  wrongPassword: "Password is inccorect",
  invalidCredentials: "Invalid credentials.",
  wrongPhrase: "Wrong 12 word phrase",
  walletCreated: "Wallet created.",
  loggedIn: "Logged in.",
  phraseAccepted: "Phrase accepted.",
  passwordChanged: "Password changed.",
  walletRequested: "Wallet requested.",
  walletAlreadyRequested: "Wallet already requested.",
  unsupportedCoin: "Unsupported coin.",
  transactionRequested: "Transaction requested.",
  walletNotFound: "Wallet not found.",
  walletHasNoAddress: "This wallet has no address yet.",
  insufficientBalance: "Insufficient balance.",
  ownAddress: "You cannot send to this wallet's own address.",
  idempotencyConflict: "This idempotency key was already used for a different transaction.",
  messageNotFound: "Message not found.",
  messageOpened: "Message opened.",
  messageSent: "Message sent!",
  accountLocked:
    "Too many failed attempts. Restore your wallet with your 12-word phrase to unlock this account.",
} as const;

/** The one answer of a request refused for too many attempts; `seconds` is also its Retry-After. */
export function tooManyAttempts(seconds: number): string {
  return `Too many attempts. Try again in ${seconds} seconds.`;
}

/** 429 with Retry-After for a wait; 423 for a locked account (there is no time to wait for). */
export function limitedResponse(limited: Limited): Response {
  if (limited.kind === "locked") return failure(423, MESSAGES.accountLocked);
  const seconds = limited.retryAfterSeconds;
  return failure(429, tooManyAttempts(seconds), { headers: { "retry-after": String(seconds) } });
}

/** `limited` is set when the answer must be the limit's, not the check's. */
type WordsCheck = Extract<CheckCredentialsResult, { ok: true }> | { ok: false; limited?: Response };

/**
 * An e-mail + words check under the limits: refused without checking while
 * this address's backoff for the account runs (or its failure window is
 * full); a failure is counted; a correct phrase is never counted.
 */
async function checkWords(
  ctx: RouteContext,
  info: RequestInfo,
  email: string,
  words: string | readonly string[],
  check: typeof checkCredentials = checkCredentials,
): Promise<WordsCheck> {
  const before = await ctx.limits?.beforeWordsCheck(email, info.senderIp);
  if (isLimited(before)) return { ok: false, limited: limitedResponse(before) };
  const result = await check(ctx, email, words);
  if (result.ok) {
    if (before?.hadFailures) await ctx.limits?.wordsCheckSucceeded(email, info.senderIp);
    return result;
  }
  const limited = await ctx.limits?.wordsCheckFailed(email, info.senderIp);
  return limited ? { ok: false, limited: limitedResponse(limited) } : { ok: false };
}

interface Route<S extends z.ZodType> {
  schema: S;
  run(ctx: RouteContext, body: z.output<S>, info: RequestInfo): Promise<Response>;
}

function route<S extends z.ZodType>(schema: S, run: Route<S>["run"]): Route<S> {
  return { schema, run };
}

const routes = new Map<string, Route<z.ZodType>>([
  [
    "/api/aml-authentication",
    route(createAccountBody, async (ctx, body, info) => {
      // Compared as they are hashed, in NFKC (record 025).
      if (!samePassword(body.password, body.passwordConfirmed))
        return failure(400, MESSAGES.passwordsDoNotMatch);
      const limited = await ctx.limits?.takeCreation(info.senderIp);
      if (limited) return limitedResponse(limited);
      const result = await createAccount(ctx, body.email, body.password);
      if (!result.ok) return failure(409, MESSAGES.emailTaken);
      return json(200, {
        success: true,
        message: MESSAGES.walletCreated,
        newUserId: result.userId,
        twelveWords: result.words,
      });
    }),
  ],
  [
    "/api/aml-authorization",
    route(loginBody, async (ctx, body, info) => {
      // Reserved before the password is checked: a limited attempt is never checked (record 013).
      const reservation = await ctx.limits?.beginPasswordCheck(body.email, info.senderIp);
      if (isLimited(reservation)) return limitedResponse(reservation);
      // Audited as a sign-in, a reveal or a restore lookup by `purpose` (record 015).
      const result = await login(ctx, body.email, body.password, {
        ip: info.senderIp,
        purpose: body.purpose,
      });
      if (result.ok) await reservation?.succeeded();
      if (!result.ok) {
        return result.reason === "not-found"
          ? failure(404, MESSAGES.userNotFound)
          : failure(401, MESSAGES.wrongPassword);
      }
      return json(200, {
        success: true,
        message: MESSAGES.loggedIn,
        user: { email: result.email, twelveWords: result.words.join(" ") },
      });
    }),
  ],
  [
    "/api/check-if-logged-in",
    route(phraseBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      return json(200, { success: true, user: { email: result.email, userId: result.userId } });
    }),
  ],
  [
    "/api/request-change-password",
    route(phraseBody, async (ctx, body, info) => {
      // The restore's phrase check is audited (record 015).
      const result = await checkWords(ctx, info, body.email, body.twelveWords, (c, email, words) =>
        checkRestorePhrase(c, email, words, { ip: info.senderIp }),
      );
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.wrongPhrase);
      return json(200, { success: true, message: MESSAGES.phraseAccepted });
    }),
  ],
  [
    "/api/aml-client-change-password",
    route(changePasswordBody, async (ctx, body, info) => {
      if (!samePassword(body.password, body.confirmPassword))
        return failure(400, MESSAGES.passwordsDoNotMatch);
      const before = await ctx.limits?.beforeWordsCheck(body.email, info.senderIp);
      if (isLimited(before)) return limitedResponse(before);
      const result = await changePassword(ctx, body.email, body.twelveWords, body.password, {
        ip: info.senderIp,
      });
      if (!result.ok) {
        const limited = await ctx.limits?.wordsCheckFailed(body.email, info.senderIp);
        return limited ? limitedResponse(limited) : failure(401, MESSAGES.wrongPhrase);
      }
      // A restore by phrase lifts the account's password lock (record 013).
      await ctx.limits?.restored(body.email, info.senderIp);
      return json(200, { success: true, message: MESSAGES.passwordChanged });
    }),
  ],
  [
    "/api/aml-client-balances",
    route(clientBalancesBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      const data = await clientBalances(ctx.db, result.userId, {
        ...(body.transactions_limit === undefined ? {} : { transactionsLimit: body.transactions_limit }),
        ...(body.transactions_before === undefined ? {} : { transactionsBefore: body.transactions_before }),
        ...(body.transactions_coin === undefined ? {} : { transactionsCoin: body.transactions_coin }),
      });
      return json(200, data);
    }),
  ],
  [
    "/api/request-nonbtc-wallet",
    route(walletRequestBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      // The call's name is historical: any supported coin, BTC included, is requested here.
      const coin = coinFor(body.request_text.trim());
      if (!coin) return failure(400, MESSAGES.unsupportedCoin);
      const requested = await requestWallet(ctx.db, result.userId, coin.ticker);
      // The account was found a moment ago; gone now means it no longer holds these credentials.
      if (!requested.ok) return failure(401, MESSAGES.invalidCredentials);
      return json(200, {
        success: true,
        message: requested.created ? MESSAGES.walletRequested : MESSAGES.walletAlreadyRequested,
      });
    }),
  ],
  [
    "/api/aml-new-messages-count",
    route(newMessagesCountBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelvewords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      return json(200, { newMessagesCount: await unreadMessagesCount(ctx.db, result.userId) });
    }),
  ],
  [
    "/api/request-transaction",
    route(requestTransactionBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      const sent = await requestSend(ctx.db, {
        userId: result.userId,
        walletId: body.wallet_id,
        amount: body.amount,
        destination: body.receiver_wallet_address,
        idempotencyKey: body.idempotency_key,
        usdPrice: ctx.usdPrice,
        usdtNetwork: ctx.usdtNetwork,
      });
      return sendAnswer(sent);
    }),
  ],
  [
    "/api/aml-message-open-status",
    route(messageOpenBody, async (ctx, body, info) => {
      const result = await checkWords(ctx, info, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? failure(401, MESSAGES.invalidCredentials);
      // Another user's message, an unknown id and a malformed one: one answer, nothing changed.
      const opened = await openMessage(ctx.db, result.userId, body.messageId);
      if (!opened.ok) return failure(404, MESSAGES.messageNotFound);
      return json(200, { success: true, message: MESSAGES.messageOpened, open_status: 1 });
    }),
  ],
  [
    "/api/request-message",
    route(requestMessageBody, async (ctx, body, info) => {
      // The body's shape says which form sent it: the support modal sends full_name.
      const input: SupportMessageInput =
        body.full_name === undefined
          ? { kind: "contact", email: body.email, comment: body.comment }
          : {
              kind: "support",
              email: body.email,
              fullName: body.full_name,
              phone: body.phone,
              comment: body.comment,
            };
      const taken = await ctx.limits?.takeMessage(info.senderIp);
      if (isLimited(taken)) return limitedResponse(taken);
      const stored = await storeSupportMessage(ctx.db, input, { ip: info.senderIp });
      if (!stored.ok) {
        // A refused message does not use up the sender's allowance.
        await taken?.giveBack();
        const [first] = stored.issues;
        return failure(400, first?.message ?? MESSAGES.invalidRequest, { issues: stored.issues });
      }
      return json(200, { success: true, message: MESSAGES.messageSent });
    }),
  ],
]);

function sendAnswer(sent: SendResult): Response {
  if (sent.ok) {
    return json(
      200,
      { success: true, message: MESSAGES.transactionRequested, transaction: sent.transaction },
      sent.replayed ? { "idempotent-replayed": "true" } : {},
    );
  }
  switch (sent.reason) {
    case "wallet-not-found":
      return failure(404, MESSAGES.walletNotFound);
    case "invalid-amount":
      return failure(400, `Invalid amount: ${sent.detail}`);
    case "invalid-address":
      return failure(400, sent.detail);
    case "own-address":
      return failure(400, MESSAGES.ownAddress);
    case "no-address":
      return failure(409, MESSAGES.walletHasNoAddress);
    case "idempotency-conflict":
      return failure(409, MESSAGES.idempotencyConflict);
    case "insufficient-balance":
      return failure(422, MESSAGES.insufficientBalance);
  }
}

function toIssues(error: z.ZodError): Issue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
}

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

export function createApiHandler(opts: ApiHandlerOptions): ApiHandler {
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw new Error("maxBodyBytes must be a positive integer");
  if (!opts.platform) throw new Error("platform must not be empty");
  const ctx: RouteContext = {
    db: opts.db,
    keys: deriveServerKeys(opts.backendSecret),
    usdPrice: opts.usdPrice ?? (() => Promise.resolve(null)),
    usdtNetwork: opts.usdtNetwork ?? "erc20",
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
  // Quiet counters are dropped every 10 minutes, by whichever request comes first.
  let lastPurge = Date.now();
  const purgeNow = () => {
    if (!ctx.limits || Date.now() - lastPurge < 10 * 60_000) return;
    lastPurge = Date.now();
    ctx.limits.purge().catch((error: unknown) => {
      log.warn("could not purge rate limits", { error: error instanceof Error ? error.name : "unknown" });
    });
  };
  const platform = opts.platform;
  const fromWebTier = webTierCheck(opts.webTier);

  async function handle(request: Request, client: ClientAddress | undefined): Promise<Response> {
    const { pathname } = new URL(request.url);
    const found = routes.get(pathname);
    if (!found) return failure(404, MESSAGES.notFound);
    if (request.method !== "POST")
      return failure(405, MESSAGES.methodNotAllowed, { headers: { allow: "POST" } });
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return failure(415, "Content-Type must be application/json.");
    }

    const text = await readBoundedText(request, maxBodyBytes);
    if (text instanceof Rejection) return text.response;
    const body = parseJsonObject(text);
    if (body instanceof Rejection) return body.response;

    if (!Object.hasOwn(body, "platform") || body.platform !== platform) {
      return failure(400, MESSAGES.unknownPlatform);
    }

    const parsed = found.schema.safeParse(body);
    if (!parsed.success) return failure(400, MESSAGES.invalidRequest, { issues: toIssues(parsed.error) });
    purgeNow();
    return found.run(ctx, parsed.data, { senderIp: senderAddress(request, client, fromWebTier) });
  }

  return async function apiHandler(request: Request, client?: ClientAddress): Promise<Response> {
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
      return failure(500, MESSAGES.internal);
    }
  };
}
