// The outbox's sender (issue 28, record 049): in each backend process, one loop that takes
// due mails (outbox.ts claimDue: FOR UPDATE SKIP LOCKED and a lease, so processes and hosts
// never take the same row), renders each from its kind's template, hands it to the SMTP
// server and marks it sent, or puts it back with a backoff and the server's words. One mail
// at a time per process; SMTP is spoken outside any transaction and with timeouts on the
// connection, the greeting and each command, so a hung server holds nothing but this loop.
import { createTransport } from "nodemailer";
import { log } from "../../../common/log.ts";
import type { AppDb } from "../db/index.ts";
import type { TotpKeys } from "../domain/totp.ts";
import type { SmtpSettings } from "./smtp-url.ts";
import { claimDue, markFailed, markSent, openVerificationToken, type DueMail } from "./outbox.ts";
import { isMailKind, isSecurityChange, renderMail, type MailData, type RenderedMail } from "./templates.ts";

export interface MailSenderOptions {
  db: AppDb;
  smtp: SmtpSettings | undefined;
  /** MAIL_FROM: the From header. */
  from: string;
  /** PUBLIC_URL without a trailing slash: every link in a mail starts with it. */
  publicUrl: string;
  product: string;
  keys: TotpKeys;
  /** How often the queue is looked at (ms). */
  pollMs?: number;
  /** A taken mail is another sender's again after this long (a sender that died mid-send). */
  leaseMs?: number;
  /** SMTP timeouts (ms): connecting, the server's greeting, and any command's answer. */
  timeouts?: { connect: number; greeting: number; socket: number };
}

export interface MailSender {
  /** Whether SMTP_URL is set; without it the outbox fills and nothing is sent. */
  readonly enabled: boolean;
  start(): void;
  /** Ends the loop and waits for a mail in progress. */
  stop(): Promise<void>;
  /** One pass over the due mails (tests, and `start`'s loop). Answers how many were sent. */
  runOnce(): Promise<number>;
}

const BATCH = 10;

export function createMailSender(opts: MailSenderOptions): MailSender {
  const pollMs = opts.pollMs ?? 1_000;
  const leaseMs = opts.leaseMs ?? 120_000;
  const timeouts = opts.timeouts ?? { connect: 10_000, greeting: 10_000, socket: 20_000 };
  const smtp = opts.smtp;
  const transport = smtp
    ? createTransport({
        host: smtp.host,
        port: smtp.port,
        secure: smtp.secure,
        ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? "" } } : {}),
        connectionTimeout: timeouts.connect,
        greetingTimeout: timeouts.greeting,
        socketTimeout: timeouts.socket,
        disableFileAccess: true,
        disableUrlAccess: true,
      })
    : undefined;
  const host = (() => {
    try {
      return new URL(opts.publicUrl).hostname || "coinkeep.invalid";
    } catch {
      return "coinkeep.invalid";
    }
  })();

  function render(mail: DueMail): RenderedMail | string {
    if (!isMailKind(mail.kind)) return `unknown kind ${mail.kind}`;
    const ctx = { product: opts.product, publicUrl: opts.publicUrl, at: mail.createdAt };
    if (mail.kind === "verify_email") {
      const token = openVerificationToken(opts.keys, mail.userId, mail.data);
      if (token === null) return "the verification token cannot be opened (another BACKEND_SECRET?)";
      return renderMail("verify_email", { token }, ctx);
    }
    if (mail.kind === "security_change") {
      const data = mail.data as MailData["security_change"];
      if (!isSecurityChange(data.change)) return `unknown security change ${String(data.change)}`;
    }
    return renderMail(mail.kind, mail.data as MailData[typeof mail.kind], ctx);
  }

  async function deliver(mail: DueMail): Promise<boolean> {
    const rendered = render(mail);
    try {
      if (typeof rendered === "string") throw new Error(rendered);
      if (!transport) throw new Error("SMTP_URL is not set");
      await transport.sendMail({
        from: opts.from,
        to: mail.to,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        // The same row keeps the same Message-ID, so a mail retried after a lost answer is
        // one message to the receiving side's de-duplication.
        messageId: `<outbox-${mail.id}@${host}>`,
        date: mail.createdAt,
      });
      await markSent(opts.db, mail.id);
      log.info("mail sent", { id: mail.id, kind: mail.kind, attempts: mail.attempts });
      return true;
    } catch (error) {
      const why = describe(error);
      await markFailed(opts.db, mail.id, mail.attempts, why).catch(() => undefined);
      log.warn("mail not sent", { id: mail.id, kind: mail.kind, attempts: mail.attempts, error: why });
      return false;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  async function runOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const due = await claimDue(opts.db, BATCH, leaseMs);
      for (const mail of due) {
        if (stopped) return sent;
        if (await deliver(mail)) sent += 1;
      }
      if (due.length < BATCH || stopped) return sent;
    }
  }

  function tick() {
    running = runOnce()
      .catch((error: unknown) => {
        log.warn("mail sender could not read the outbox", { error: describe(error) });
      })
      .finally(() => {
        running = undefined;
        if (!stopped) schedule();
      });
  }
  function schedule() {
    timer = setTimeout(tick, pollMs);
    timer.unref();
  }

  return {
    enabled: transport !== undefined,
    start() {
      if (!transport) {
        log.info("e-mail is off: SMTP_URL is not set; mails wait in the outbox");
        return;
      }
      log.info("e-mail is on", { smtp: `${smtp?.secure ? "smtps" : "smtp"}://${smtp?.host}:${smtp?.port}` });
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      transport?.close();
    },
    runOnce,
  };
}

/** A server's refusal or a socket's fault, in a line; never the message or the credentials. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const e = error as Error & { code?: string; responseCode?: number; response?: string };
  const parts = [e.code, e.responseCode ? String(e.responseCode) : undefined, e.response ?? e.message];
  return parts
    .filter((p): p is string => typeof p === "string" && p !== "")
    .join(" ")
    .replace(/\s+/gu, " ")
    .slice(0, 300);
}
