// The backend's services: one function per call of the contract
// (common/contract/calls.ts), taking the call's parsed body and the caller,
// answering the call's answer or a refusal with its code. The HTTP handler
// (./api/handler.ts) parses a request and calls these; the web tier's
// in-process client calls them directly — no Request, no JSON.
import { coinFor, type Ticker } from "../../common/coins.ts";
import type { BackendServices, Caller, Outcome, Principal } from "../../common/contract/client.ts";
import {
  ANSWERS,
  refusal,
  sendsPausedMessage,
  tooManyAttempts,
  twoFactorHoldMessage,
  type Refusal,
} from "../../common/contract/refusals.ts";
import { normalisePhrase } from "../../common/phrase.ts";
import { resolveDestination, type UsdtNetwork } from "../../common/addresses.ts";
import {
  ALLOWLIST_ANSWERS,
  notSavedMessage,
  notUsableYetMessage,
  offRequestedMessage,
} from "../../common/allowlist.ts";
import type { SavedAddressData } from "../../common/contract/calls.ts";
import {
  addSavedAddress,
  readAllowlist,
  removeSavedAddress,
  setAllowlist,
  type SavedAddress,
} from "./domain/allowlist.ts";
import {
  changePassword,
  checkCredentials,
  checkRestorePhrase,
  createAccount,
  login,
  type AccountsContext,
} from "./domain/accounts.ts";
import { normaliseEmail, updatePassword } from "./domain/accounts.ts";
import { phraseMatches, samePassword, type ServerKeys } from "./domain/crypto.ts";
import { openMessage, storeSupportMessage } from "./domain/messages.ts";
import { isLimited, type Limited, type RateLimiter, type RateLimitRow } from "./domain/rate-limits.ts";
import { requestSend, type SendResult } from "./domain/sends.ts";
import { clientBalances, requestWallet, unreadMessagesCount } from "./domain/wallets.ts";
import { dayOf, statementFilename, statementRequest } from "../../common/contract/statement.ts";
import { statementStream } from "./domain/statements.ts";
import { balancesForUser } from "./domain/ledger.ts";
import { readPage, readSendCheck, type PageRead, type SendCheckRead } from "./domain/page-read.ts";
import type { AppDb } from "./db/index.ts";
import { emailState, noteSignIn, requestVerification } from "./domain/email.ts";
import { recordSecurityEvent } from "./domain/security-audit.ts";
import type { TotpKeys } from "./domain/totp.ts";
import { confirmVerification } from "./mail/outbox.ts";
import type { IssuingPolicy } from "./domain/issuing.ts";
import { sendRecorded } from "./domain/sends.ts";
import {
  cancelRemoval,
  disableTwoFactor,
  enableTwoFactor,
  grantIsValid,
  issueGrant,
  newEnrolment,
  passwordIsRight,
  REMOVAL_HOLD_HOURS,
  scheduleRemoval,
  twoFactorState,
  spendCode,
  type SecondFactorKeys,
  type TwoFactorState,
} from "./domain/two-factor.ts";

export interface ServicesContext extends AccountsContext {
  db: AppDb;
  keys: ServerKeys;
  /** A coin's USD price now, as a plain decimal, or null (the send records none). */
  usdPrice: (coin: Ticker) => Promise<string | null>;
  usdtNetwork: UsdtNetwork;
  /** The abuse limits (record 013); null only when configured off (RATE_LIMITS=off, never in production). */
  limits: RateLimiter | null;
  /** How requested wallets get their address (record 039): account keys, pools. */
  issuing: IssuingPolicy;
  /** The clock of the holds (allowlist, two-factor removal; record 048): tests move it. */
  holdClock: () => Date;
  /** A new saved address, or the allowlist's turn-off, waits this many hours (ALLOWLIST_HOLD_HOURS). */
  allowlistHoldHours: number;
  /** The holders' two-factor keys (record 048). */
  secondFactor: SecondFactorKeys;
  /** The clock of codes and grants (the system clock; tests move it). */
  clock: () => Date;
  /** E-mail (record 049): the key verification tokens wait sealed under, and the browsers' HMAC key. */
  mailKeys: TotpKeys;
  browserKey: Buffer;
}

/** 429 with its wait for a limited address; 423 for a locked account (there is no time to wait for). */
export function limitedRefusal(limited: Limited): Refusal {
  return limited.kind === "locked" ? refusal("account_locked") : tooManyAttempts(limited.retryAfterSeconds);
}

/** `limited` is set when the answer must be the limit's, not the check's. */
type WordsCheck = ({ ok: true } & Principal) | { ok: false; limited?: Refusal };

const checkedKey = (email: string, words: string | readonly string[]) =>
  `${email}\n${normalisePhrase(words)}`;

/**
 * An e-mail + words check under the limits: refused without checking while
 * this address's backoff for the account runs (or its failure window is
 * full); a failure is counted; a correct phrase is never counted. Within one
 * web request (caller.checked) a phrase already found correct is not checked again.
 */
function checkWords(
  ctx: ServicesContext,
  caller: Caller,
  email: string,
  words: string | readonly string[],
  check: typeof checkCredentials = checkCredentials,
): Promise<WordsCheck> {
  if (check !== checkCredentials) return checkWordsNow(ctx, caller, email, words, check);
  return checkWordsOnce(caller, email, words, () => checkWordsNow(ctx, caller, email, words, check));
}

/**
 * `run()`'s words check, unless this web request (caller.checked) found the phrase correct
 * already: then its principal, without a check (and without what `run` would have read).
 * A request's loaders call at once: the second waits for the first's check instead of making its own.
 */
async function checkWordsOnce<R extends WordsCheck>(
  caller: Caller,
  email: string,
  words: string | readonly string[],
  run: () => Promise<R>,
): Promise<R | WordsCheck> {
  if (!caller.checked) return run();
  const key = checkedKey(email, words);
  const earlier = caller.checked.get(key);
  const principal = earlier && (await earlier);
  if (principal) return { ok: true, ...principal };
  const result = run();
  if (!earlier)
    caller.checked.set(
      key,
      result.then((r) => (r.ok ? { userId: r.userId, email: r.email } : null)),
    );
  return result;
}

async function checkWordsNow(
  ctx: ServicesContext,
  caller: Caller,
  email: string,
  words: string | readonly string[],
  check: typeof checkCredentials,
): Promise<WordsCheck> {
  const before = await ctx.limits?.beforeWordsCheck(email, caller.senderIp);
  if (isLimited(before)) return { ok: false, limited: limitedRefusal(before) };
  const result = await check(ctx, email, words);
  return afterWordsCheck(ctx, caller, email, before, result.ok ? result : null);
}

/** A words check's outcome under the limits: a failure counted, failures before a success forgotten. */
async function afterWordsCheck(
  ctx: ServicesContext,
  caller: Caller,
  email: string,
  before: { hadFailures: boolean } | undefined,
  found: Principal | null,
): Promise<WordsCheck> {
  if (found) {
    if (before?.hadFailures) await ctx.limits?.wordsCheckSucceeded(email, caller.senderIp);
    return { ok: true, userId: found.userId, email: found.email };
  }
  const limited = await ctx.limits?.wordsCheckFailed(email, caller.senderIp);
  return limited ? { ok: false, limited: limitedRefusal(limited) } : { ok: false };
}

/**
 * A words check whose account and counters come from a read of the caller's, made in one
 * statement with what the call needs next (record 052): the counters weighed, the phrase
 * compared (against a placeholder for an unknown e-mail, as checkCredentials does) and the
 * outcome counted exactly as checkWordsNow does. `read` is the statement's whole answer.
 */
async function readAndCheck<R extends { user: PageRead["user"]; limits: RateLimitRow[] }>(
  ctx: ServicesContext,
  caller: Caller,
  email: string,
  words: string | readonly string[],
  reader: (normalised: string, keys: { pairKey: string; ipKey: string | null } | null) => Promise<R>,
): Promise<WordsCheck & { read?: R }> {
  const limits = ctx.limits;
  const read = await reader(
    normaliseEmail(email),
    limits ? limits.wordsCheckKeys(email, caller.senderIp) : null,
  );
  const before = limits ? await limits.wordsCheckVerdict(email, caller.senderIp, read.limits) : undefined;
  if (isLimited(before)) return { ok: false, limited: limitedRefusal(before) };
  const matches = phraseMatches(ctx.keys, words, read.user?.phraseHmac ?? "0".repeat(64));
  const found = read.user && matches ? { userId: read.user.id, email: read.user.email } : null;
  const result = await afterWordsCheck(ctx, caller, email, before, found);
  return result.ok ? { ...result, read } : result;
}

/** What a request's earlier call read for a later one (Caller.prefetched), taken once. */
function takePrefetched<T>(caller: Caller, key: string): T | undefined {
  const value = caller.prefetched?.get(key);
  caller.prefetched?.delete(key);
  return value as T | undefined;
}

/**
 * `read()`, or the same read already under way for this request (caller.reading):
 * the layout's and a page's loaders ask for the user's balances at once.
 */
function sharedRead<T>(caller: Caller, key: string, read: () => Promise<T>): Promise<T> {
  const reading = caller.reading;
  if (!reading) return read();
  const earlier = reading.get(key);
  if (earlier) return earlier as Promise<T>;
  const started = read();
  reading.set(key, started);
  const forget = () => {
    if (reading.get(key) === started) reading.delete(key);
  };
  started.then(forget, forget);
  return started;
}

function sendOutcome(
  sent: SendResult,
  allowlistHoldHours: number,
): Outcome<{
  success: true;
  message: string;
  transaction: Extract<SendResult, { ok: true }>["transaction"];
}> {
  if (sent.ok) {
    return {
      ok: true,
      data: { success: true, message: ANSWERS.transactionRequested, transaction: sent.transaction },
      ...(sent.replayed ? { replayed: true } : {}),
    };
  }
  switch (sent.reason) {
    case "wallet-not-found":
      return refusal("wallet_not_found");
    case "invalid-amount":
      return refusal("invalid_amount", { detail: sent.detail });
    case "invalid-address":
      return refusal("invalid_address", { detail: sent.detail });
    case "invalid-destination-tag":
      return refusal("invalid_destination_tag", { detail: sent.detail });
    case "own-address":
      return refusal("own_address");
    case "no-address":
      return refusal("wallet_has_no_address");
    case "idempotency-conflict":
      return refusal("idempotency_conflict");
    case "insufficient-balance":
      return refusal("insufficient_balance");
    case "sends-paused":
      return refusal("sends_paused", { detail: sendsPausedMessage(sent.scope, sent.coin) });
    case "not-allowlisted": {
      // At the address field (record 048): the form shows it there, not as "Transaction failed".
      const detail =
        sent.usableFrom === null ? notSavedMessage(allowlistHoldHours) : notUsableYetMessage(sent.usableFrom);
      const issues = [{ path: "receiver_wallet_address", message: detail }];
      return refusal(sent.usableFrom === null ? "address_not_saved" : "address_not_usable_yet", {
        detail,
        issues,
      });
    }
  }
}

/** A saved address as the allowlist calls answer it; `usable` by the holds' clock. */
function savedAddressData(saved: SavedAddress, now: Date): SavedAddressData {
  return {
    id: saved.id,
    coin: saved.coin,
    address: saved.address,
    destination_tag: saved.destinationTag,
    label: saved.label,
    created_at: saved.createdAt.toISOString(),
    usable_from: saved.usableFrom.toISOString(),
    usable: saved.usableFrom.getTime() <= now.getTime(),
  };
}

/** The codes' and grants' clock, in milliseconds. */
const now = (ctx: ServicesContext) => ctx.clock().getTime();

/** What a code or a grant proves (issue 27, record 048). */
interface Proof {
  twoFactorCode?: string | undefined;
  twoFactorGrant?: string | undefined;
}

type SecondFactor = { ok: true; grant?: { grant: string; expiresAt: Date } } | Refusal;

/** A checked code's refusal, when it was not accepted. */
function codeRefusal(check: "invalid" | "replayed" | "off"): Refusal {
  if (check === "replayed") return refusal("two_factor_replayed");
  if (check === "off") return refusal("two_factor_off");
  return refusal("two_factor_invalid");
}

/**
 * The second factor an action needs from a holder with two-factor on: a grant
 * of the last 5 minutes (when `grants` allows one), else a code, checked under
 * the password attempts' limits so wrong codes count toward the account's lock
 * (record 013). Accepted: a fresh grant for the next 5 minutes.
 */
async function secondFactor(
  ctx: ServicesContext,
  caller: Caller,
  who: Principal,
  state: Extract<TwoFactorState, { on: true }>,
  proof: Proof,
  opts: { grants: boolean; reservation?: { succeeded(): Promise<void> } | undefined },
): Promise<SecondFactor> {
  if (opts.grants && proof.twoFactorGrant !== undefined) {
    const valid = grantIsValid(
      ctx.secondFactor,
      proof.twoFactorGrant,
      who.userId,
      state.enrolledAt,
      now(ctx),
    );
    if (valid) return { ok: true };
  }
  if (proof.twoFactorCode === undefined || proof.twoFactorCode.trim() === "") {
    return refusal("two_factor_required");
  }
  let reservation = opts.reservation;
  if (!reservation) {
    const taken = await ctx.limits?.beginPasswordCheck(who.email, caller.senderIp);
    if (isLimited(taken)) return limitedRefusal(taken);
    reservation = taken;
  }
  const check = await spendCode(
    ctx.db,
    ctx.secondFactor,
    { userId: who.userId, email: who.email, code: proof.twoFactorCode },
    { ip: caller.senderIp },
    now(ctx),
  );
  // A refused code keeps its reserved failure: it counts toward the lock.
  if (check !== "accepted") return codeRefusal(check);
  await reservation?.succeeded();
  return { ok: true, grant: issueGrant(ctx.secondFactor, who.userId, state.enrolledAt, now(ctx)) };
}

/** A password check under the limits of call 2 (record 013): the reservation on success, else the refusal. */
async function checkPassword(
  ctx: ServicesContext,
  caller: Caller,
  who: Principal,
  password: string,
): Promise<{ ok: true; reservation?: { succeeded(): Promise<void> } | undefined } | Refusal> {
  const taken = await ctx.limits?.beginPasswordCheck(who.email, caller.senderIp);
  if (isLimited(taken)) return limitedRefusal(taken);
  if (!(await passwordIsRight(ctx.db, who.userId, password))) return refusal("wrong_password");
  return { ok: true, reservation: taken };
}

/**
 * What a change of the allowlist needs (issue 27, record 048): the password,
 * under call 2's limits, and with two-factor on a code or a grant of the last
 * 5 minutes. A wrong code keeps the password's reserved failure: it counts
 * toward the account's lock, as a wrong password does.
 */
async function proveChange(
  ctx: ServicesContext,
  caller: Caller,
  who: Principal,
  body: { password: string } & Proof,
): Promise<{ ok: true } | Refusal> {
  const password = await checkPassword(ctx, caller, who, body.password);
  if (!password.ok) return password;
  const state = await twoFactorState(ctx.db, who.userId, ctx.holdClock());
  if (state.on) {
    const second = await secondFactor(ctx, caller, who, state, body, {
      grants: true,
      reservation: password.reservation,
    });
    if (!second.ok) return second;
    // A code clears the reservation itself (secondFactor); a grant leaves it to us.
    if (second.grant) return { ok: true };
  }
  await password.reservation?.succeeded();
  return { ok: true };
}

export function createServices(ctx: ServicesContext): BackendServices {
  const stateOf = (userId: string) => twoFactorState(ctx.db, userId, ctx.holdClock());
  return {
    async createAccount(body, caller) {
      // Compared as they are hashed, in NFKC (record 025).
      if (!samePassword(body.password, body.passwordConfirmed)) return refusal("passwords_do_not_match");
      const limited = await ctx.limits?.takeCreation(caller.senderIp);
      if (limited) return limitedRefusal(limited);
      const result = await createAccount(ctx, body.email, body.password);
      if (!result.ok) return refusal("email_taken");
      return {
        ok: true,
        data: {
          success: true,
          message: ANSWERS.walletCreated,
          newUserId: result.userId,
          twelveWords: result.words,
        },
      };
    },

    async login(body, caller) {
      // Reserved before the password is checked: a limited attempt is never checked (record 013).
      const reservation = await ctx.limits?.beginPasswordCheck(body.email, caller.senderIp);
      if (isLimited(reservation)) return limitedRefusal(reservation);
      // Audited as a sign-in, a reveal or a restore lookup by `purpose` (record 015).
      const result = await login(ctx, body.email, body.password, {
        ip: caller.senderIp,
        purpose: body.purpose,
      });
      if (!result.ok) return refusal(result.reason === "not-found" ? "user_not_found" : "wrong_password");
      // Two-factor on (record 048): the phrase is answered only with a code (a reveal: or a grant).
      // While a restore's removal waits, the phrase was just proven: no code is asked.
      let grant: { grant: string; expiresAt: Date } | undefined;
      const state = body.purpose === "restore" ? { on: false as const } : await stateOf(result.userId);
      if (state.on && state.removalDueAt === null) {
        const who = { userId: result.userId, email: result.email };
        const second = await secondFactor(ctx, caller, who, state, body, {
          grants: body.purpose === "reveal",
          reservation: reservation ?? undefined,
        });
        if (!second.ok) return second;
        grant = second.grant;
      }
      await reservation?.succeeded();
      // The password opened the phrase: within this request the phrase needs no second check.
      caller.checked?.set(
        checkedKey(result.email, result.words),
        Promise.resolve({ userId: result.userId, email: result.email }),
      );
      return {
        ok: true,
        data: {
          success: true,
          message: ANSWERS.loggedIn,
          user: { email: result.email, twelveWords: result.words.join(" ") },
          ...(grant ? { two_factor_grant: grant.grant } : {}),
        },
      };
    },

    async checkLoggedIn(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      return { ok: true, data: { success: true, user: { email: result.email, userId: result.userId } } };
    },

    async checkPhrase(body, caller) {
      // The restore's phrase check is audited (record 015).
      const result = await checkWords(ctx, caller, body.email, body.twelveWords, (c, email, words) =>
        checkRestorePhrase(c, email, words, { ip: caller.senderIp }),
      );
      if (!result.ok) return result.limited ?? refusal("wrong_phrase");
      // Issue 27: whether the restore's last step asks for a code (not while a removal waits).
      const state = await stateOf(result.userId);
      const asks = state.on && state.removalDueAt === null;
      return {
        ok: true,
        data: { success: true, message: ANSWERS.phraseAccepted, ...(asks ? { two_factor: true } : {}) },
      };
    },

    async changePassword(body, caller) {
      if (!samePassword(body.password, body.confirmPassword)) return refusal("passwords_do_not_match");
      const before = await ctx.limits?.beforeWordsCheck(body.email, caller.senderIp);
      if (isLimited(before)) return limitedRefusal(before);
      // Two-factor on (issue 27, record 048): a right code keeps it (and calls off a waiting
      // removal); no code removes it after REMOVAL_HOLD_HOURS; a wrong code changes nothing.
      const audit = { ip: caller.senderIp };
      const found = await checkCredentials(ctx, body.email, body.twelveWords);
      const state = found.ok ? await stateOf(found.userId) : { on: false as const };
      const code = body.twoFactorCode?.trim() ?? "";
      let proven = false;
      if (found.ok && state.on && code !== "") {
        const check = await spendCode(ctx.db, ctx.secondFactor, { ...found, code }, audit, now(ctx));
        if (check !== "accepted") {
          const limited = await ctx.limits?.wordsCheckFailed(body.email, caller.senderIp);
          return limited ? limitedRefusal(limited) : codeRefusal(check);
        }
        proven = true;
      }
      let removalAt: Date | null = null;
      const result = await changePassword(
        ctx,
        body.email,
        body.twelveWords,
        body.password,
        audit,
        async (tx, user) => {
          if (!state.on) return;
          if (proven) await cancelRemoval(tx, { userId: user.id, email: user.email }, audit);
          else {
            const dueAt = new Date(ctx.holdClock().getTime() + REMOVAL_HOLD_HOURS * 3_600_000);
            removalAt = await scheduleRemoval(tx, { userId: user.id, email: user.email, dueAt }, audit);
          }
        },
      );
      if (!result.ok) {
        const limited = await ctx.limits?.wordsCheckFailed(body.email, caller.senderIp);
        return limited ? limitedRefusal(limited) : refusal("wrong_phrase");
      }
      // A restore by phrase lifts the account's password lock (record 013).
      await ctx.limits?.restored(body.email, caller.senderIp);
      const due = removalAt as Date | null;
      return {
        ok: true,
        data: {
          success: true,
          message: ANSWERS.passwordChanged,
          ...(due ? { two_factor_removal_at: due.toISOString() } : {}),
        },
      };
    },

    async clientBalances(body, caller) {
      // The words check, the wallets and the unread count: one statement (record 052), unless
      // this request checked the words already (then the wallets are read by themselves).
      const result: WordsCheck & { read?: PageRead } = await checkWordsOnce(
        caller,
        body.email,
        body.twelveWords,
        () =>
          readAndCheck(ctx, caller, body.email, body.twelveWords, (email, keys) =>
            readPage(ctx.db, email, keys),
          ),
      );
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const { userId, read: page } = result;
      // The layout asks for the unread count next (call 7): read with the credentials, kept for it.
      if (page) caller.prefetched?.set(`unread:${userId}`, page.unread);
      const data = await clientBalances(ctx.db, userId, {
        ...body,
        readWallets: () =>
          page
            ? Promise.resolve(page.wallets)
            : sharedRead(caller, `balances:${userId}`, () => balancesForUser(ctx.db, userId)),
      });
      return { ok: true, data };
    },

    async requestWallet(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      // The call's name is historical: any supported coin, BTC included, is requested here.
      const coin = coinFor(body.requestText.trim());
      if (!coin) return refusal("unsupported_coin");
      const requested = await requestWallet(ctx.db, result.userId, coin.ticker, ctx.issuing);
      // The account was found a moment ago; gone now means it no longer holds these credentials.
      if (!requested.ok) return refusal("invalid_credentials");
      return {
        ok: true,
        data: {
          success: true,
          message: requested.created ? ANSWERS.walletRequested : ANSWERS.walletAlreadyRequested,
        },
      };
    },

    async newMessagesCount(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelvewords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const unread =
        takePrefetched<number>(caller, `unread:${result.userId}`) ??
        (await unreadMessagesCount(ctx.db, result.userId));
      return { ok: true, data: { newMessagesCount: unread } };
    },

    async requestTransaction(body, caller) {
      // The words check, whether the key is recorded and whether two-factor is on: one statement
      // (record 052), unless this request checked the words already (then read one by one).
      const key = body.idempotencyKey ?? null;
      const result: WordsCheck & { read?: SendCheckRead } = await checkWordsOnce(
        caller,
        body.email,
        body.twelveWords,
        () =>
          readAndCheck(ctx, caller, body.email, body.twelveWords, (email, keys) =>
            readSendCheck(ctx.db, email, keys, key),
          ),
      );
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const checks = result.read;
      // Step-up (issue 27, record 048): with two-factor on, a code or a grant of the last 5
      // minutes; none while a restore's removal waits. A replay of a recorded send needs neither.
      const replay = checks
        ? checks.recorded
        : key !== null && (await sendRecorded(ctx.db, result.userId, key));
      // Without a two-factor row there is no state to read (nor a removal to finish).
      if (!replay && checks?.twoFactor !== false) {
        const state = await stateOf(result.userId);
        if (state.on && state.removalDueAt !== null) {
          return refusal("two_factor_hold", { detail: twoFactorHoldMessage(state.removalDueAt) });
        }
        if (state.on) {
          const second = await secondFactor(ctx, caller, result, state, body, { grants: true });
          if (!second.ok) return second;
        }
      }
      const sent = await requestSend(ctx.db, {
        ...body,
        userId: result.userId,
        usdPrice: ctx.usdPrice,
        usdtNetwork: ctx.usdtNetwork,
        // The allowlist's holds (record 048) end by the holds' clock; the hold checks them.
        allowlistAt: ctx.holdClock(),
      });
      return sendOutcome(sent, ctx.allowlistHoldHours);
    },

    async openMessage(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      // Another user's message, an unknown id and a malformed one: one answer, nothing changed.
      const opened = await openMessage(ctx.db, result.userId, body.messageId);
      if (!opened.ok) return refusal("message_not_found");
      return { ok: true, data: { success: true, message: ANSWERS.messageOpened, open_status: 1 } };
    },

    async requestMessage(body, caller) {
      // The call's decode has checked the fields by the forms' rules (common/support-message.ts).
      const taken = await ctx.limits?.takeMessage(caller.senderIp);
      if (isLimited(taken)) return limitedRefusal(taken);
      const stored = await storeSupportMessage(ctx.db, body, { ip: caller.senderIp });
      if (!stored.ok) {
        // A refused message does not use up the sender's allowance.
        await taken?.giveBack();
        return refusal("invalid_message", { detail: stored.issues[0]?.message ?? "", issues: stored.issues });
      }
      return { ok: true, data: { success: true, message: ANSWERS.messageSent } };
    },

    // ---- Holder security (issue 27, record 048)
    // -- two-factor services
    async twoFactorStatus(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const state = await stateOf(result.userId);
      return {
        ok: true,
        data: {
          success: true,
          enabled: state.on,
          removal_at: state.on && state.removalDueAt ? state.removalDueAt.toISOString() : null,
          recovery_codes_left: state.on ? state.recoveryCodesLeft : 0,
        },
      };
    },

    async twoFactorBegin(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const password = await checkPassword(ctx, caller, result, body.password);
      if (!password.ok) return password;
      await password.reservation?.succeeded();
      if ((await stateOf(result.userId)).on) return refusal("two_factor_already_on");
      // Nothing is stored until a code of this secret comes back (twoFactorEnable).
      const { secret, uri } = newEnrolment(result.email);
      return { ok: true, data: { success: true, secret, otpauth_uri: uri } };
    },

    async twoFactorEnable(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const enabled = await enableTwoFactor(
        ctx.db,
        ctx.secondFactor,
        { userId: result.userId, email: result.email, secret: body.secret, code: body.twoFactorCode },
        { ip: caller.senderIp },
        now(ctx),
      );
      if (!enabled.ok)
        return refusal(enabled.reason === "already-on" ? "two_factor_already_on" : "two_factor_invalid");
      return {
        ok: true,
        data: { success: true, message: ANSWERS.twoFactorOn, recovery_codes: enabled.recoveryCodes },
      };
    },

    async twoFactorDisable(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const state = await stateOf(result.userId);
      if (!state.on) return refusal("two_factor_off");
      const password = await checkPassword(ctx, caller, result, body.password);
      if (!password.ok) return password;
      const second = await secondFactor(ctx, caller, result, state, body, {
        grants: false,
        reservation: password.reservation,
      });
      if (!second.ok) return second;
      await disableTwoFactor(ctx.db, result, { ip: caller.senderIp });
      return { ok: true, data: { success: true, message: ANSWERS.twoFactorOff } };
    },

    async twoFactorVerify(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const state = await stateOf(result.userId);
      if (!state.on) return refusal("two_factor_off");
      const second = await secondFactor(ctx, caller, result, state, body, { grants: false });
      if (!second.ok) return second;
      // The authenticator is there after all: a restore's waiting removal is called off.
      const cancelled =
        state.removalDueAt !== null && (await cancelRemoval(ctx.db, result, { ip: caller.senderIp }));
      const grant = second.grant ?? issueGrant(ctx.secondFactor, result.userId, state.enrolledAt, now(ctx));
      return {
        ok: true,
        data: {
          success: true,
          message: ANSWERS.codeAccepted,
          grant: grant.grant,
          expires_at: grant.expiresAt.toISOString(),
          removal_cancelled: cancelled,
        },
      };
    },
    // -- allowlist services
    async allowlist(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const at = ctx.holdClock();
      const state = await readAllowlist(ctx.db, result, at);
      return {
        ok: true,
        data: {
          success: true,
          on: state.on,
          off_at: state.offAt?.toISOString() ?? null,
          hold_hours: ctx.allowlistHoldHours,
          usdt_network: ctx.usdtNetwork,
          addresses: state.addresses.map((saved) => savedAddressData(saved, at)),
        },
      };
    },

    async allowlistAdd(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      // Checked as a send's destination is, before the password: a mistyped address costs no attempt.
      const checked = resolveDestination(body.coin, body.address, body.destinationTag ?? null, {
        usdtNetwork: ctx.usdtNetwork,
      });
      if (!checked.ok) {
        const tag = checked.field === "tag";
        return refusal(tag ? "invalid_destination_tag" : "invalid_address", {
          detail: checked.reason,
          issues: [{ path: tag ? "destination_tag" : "address", message: checked.reason }],
        });
      }
      const proven = await proveChange(ctx, caller, result, body);
      if (!proven.ok) return proven;
      const at = ctx.holdClock();
      const added = await addSavedAddress(
        ctx.db,
        result,
        { coin: body.coin, address: checked.address, destinationTag: checked.tag, label: body.label },
        { now: at, holdHours: ctx.allowlistHoldHours },
        { ip: caller.senderIp },
      );
      if (!added.ok) {
        if (added.reason === "no-account") return refusal("invalid_credentials");
        return added.reason === "full"
          ? refusal("saved_addresses_full")
          : refusal("saved_address_exists", {
              issues: [{ path: "address", message: refusal("saved_address_exists").message }],
            });
      }
      return {
        ok: true,
        data: {
          success: true,
          message: ALLOWLIST_ANSWERS.added,
          address: savedAddressData(added.saved, at),
        },
      };
    },

    async allowlistRemove(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      // The password first: without it, nothing says whether an id is one of the holder's.
      const proven = await proveChange(ctx, caller, result, body);
      if (!proven.ok) return proven;
      const removed = await removeSavedAddress(ctx.db, result, body.id, { ip: caller.senderIp });
      if (!removed) return refusal("saved_address_not_found");
      return { ok: true, data: { success: true, message: ALLOWLIST_ANSWERS.removed } };
    },

    async allowlistSet(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const proven = await proveChange(ctx, caller, result, body);
      if (!proven.ok) return proven;
      const set = await setAllowlist(
        ctx.db,
        result,
        body.on,
        { now: ctx.holdClock(), holdHours: ctx.allowlistHoldHours },
        { ip: caller.senderIp },
      );
      const message =
        set.offAt !== null
          ? offRequestedMessage(set.offAt)
          : set.on
            ? set.change === "none"
              ? ALLOWLIST_ANSWERS.alreadyOn
              : ALLOWLIST_ANSWERS.on
            : ALLOWLIST_ANSWERS.offAlready;
      return {
        ok: true,
        data: { success: true, message, on: set.on, off_at: set.offAt?.toISOString() ?? null },
      };
    },
    // -- password and sessions services
    async updatePassword(body, caller) {
      // Compared as they are hashed, in NFKC (record 025).
      if (!samePassword(body.password, body.confirmPassword)) return refusal("passwords_do_not_match");
      // The session's proof, as on every signed-in call …
      const who = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!who.ok) return who.limited ?? refusal("invalid_credentials");
      // … then the person's: a current password is a password check like call 2's, under its limits
      // (record 013): reserved before it is checked, counted when wrong, cleared when right.
      const reservation = await ctx.limits?.beginPasswordCheck(who.email, caller.senderIp);
      if (isLimited(reservation)) return limitedRefusal(reservation);
      const result = await updatePassword(ctx, who.userId, body.currentPassword, body.password, {
        ip: caller.senderIp,
      });
      if (!result.ok) return refusal("wrong_password");
      await reservation?.succeeded();
      return { ok: true, data: { success: true, message: ANSWERS.passwordChanged } };
    },
    // -- e-mail services (issue 28, record 049)
    async emailStatus(body, caller) {
      const who = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!who.ok) return who.limited ?? refusal("invalid_credentials");
      const state = await emailState(ctx.db, who.userId, ctx.clock());
      return {
        ok: true,
        data: {
          success: true,
          email: who.email,
          verified_at: state.verifiedAt?.toISOString() ?? null,
          link_expires_at: state.verifiedAt ? null : (state.linkExpiresAt?.toISOString() ?? null),
        },
      };
    },
    async emailVerify(body, caller) {
      const who = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!who.ok) return who.limited ?? refusal("invalid_credentials");
      const asked = await requestVerification(ctx.db, ctx.mailKeys, who, ctx.clock());
      if (!asked.ok)
        return refusal(
          asked.reason === "verified"
            ? "email_already_verified"
            : asked.reason === "too-soon"
              ? "verification_too_soon"
              : "verification_limit",
        );
      return { ok: true, data: { success: true, message: ANSWERS.verificationSent } };
    },
    async emailConfirm(body, caller) {
      // The token is 256 random bits: it cannot be guessed, so no limit is needed to stop guessing.
      const confirmed = await confirmVerification(ctx.db, body.token, ctx.clock(), async (tx, user) => {
        await recordSecurityEvent(
          tx,
          { action: "auth.email.verified", email: user.email, userId: user.userId },
          { ip: caller.senderIp },
        );
      });
      if (!confirmed.ok)
        return refusal(
          confirmed.reason === "unknown" ? "verification_link_invalid" : "verification_link_expired",
        );
      return { ok: true, data: { success: true, message: ANSWERS.emailVerified, email: confirmed.email } };
    },
    async signInSeen(body, caller) {
      const who = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!who.ok) return who.limited ?? refusal("invalid_credentials");
      const seen = await noteSignIn(ctx.db, ctx.browserKey, {
        userId: who.userId,
        browserId: body.browserId,
        browserName: body.browserName,
        ip: caller.senderIp,
      });
      return { ok: true, data: { success: true, new_browser: seen.newBrowser, mailed: seen.mailed } };
    },
    async sessionsEnded(body, caller) {
      const who = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!who.ok) return who.limited ?? refusal("invalid_credentials");
      await ctx.db.transaction((tx) =>
        recordSecurityEvent(
          tx,
          {
            action: "auth.sessions.ended",
            email: who.email,
            userId: who.userId,
            details: { count: String(body.count) },
          },
          { ip: caller.senderIp },
        ),
      );
      return { ok: true, data: { success: true, message: ANSWERS.sessionsEndedNoted } };
    },

    // ---- Statements (issue 28, record 050)
    async statement(body, caller) {
      const result = await checkWords(ctx, caller, body.email, body.twelveWords);
      if (!result.ok) return result.limited ?? refusal("invalid_credentials");
      const asOf = ctx.clock();
      const checked = statementRequest(body, dayOf(asOf));
      if (!checked.ok) return checked;
      // Only the caller's own wallets are read: the user id comes from the credentials, never the body.
      const stream = await statementStream(ctx.db, result.userId, checked.request, asOf);
      return { ok: true, data: { filename: statementFilename(checked.request), body: stream } };
    },
  };
}
