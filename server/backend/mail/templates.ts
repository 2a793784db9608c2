// One template per kind of mail (issue 28, record 049). A template is a list of parts
// (paragraphs, label-value lines, one link); the plain text and the HTML are both written
// from it, so the two never say different things. What a mail may hold: the product's name,
// the time of the change in UTC, the link PUBLIC_URL + path, and the facts of the change (a
// coin, an amount, a short address, a browser). Never a password, phrase, code, session id
// or a balance: the data kept with a queued mail has none to give.

export const MAIL_KINDS = [
  "verify_email",
  "new_sign_in",
  "send_requested",
  "send_confirmed",
  "send_declined",
  "deposit_credited",
  "security_change",
  "support_reply",
] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

export function isMailKind(value: string): value is MailKind {
  return (MAIL_KINDS as readonly string[]).includes(value);
}

/** What each kind keeps in its outbox row. */
export interface MailData {
  /** The token rides sealed (server/backend/mail/outbox.ts); the template gets it opened. */
  verify_email: { token: string };
  new_sign_in: { browser: string; ip: string | null };
  send_requested: { coin: string; amount: string; address: string };
  send_confirmed: { coin: string; amount: string; address: string };
  send_declined: { coin: string; amount: string; address: string };
  deposit_credited: { coin: string; amount: string };
  security_change: { change: SecurityChange; detail?: string };
  support_reply: Record<string, never>;
}

/** The security changes a holder is told of, each in a sentence. */
export const SECURITY_CHANGES = {
  password_changed: "Your password was changed.",
  password_restored: "Your password was set again with your 12 words (a restore).",
  two_factor_on: "Two-factor authentication was turned on.",
  two_factor_off: "Two-factor authentication was turned off.",
  two_factor_removal_scheduled:
    "A restore without a code asked to remove two-factor authentication. It goes after a 48-hour hold; sends wait until then. Sign in with a code to call it off.",
  two_factor_removal_cancelled: "The removal of two-factor authentication was called off.",
  two_factor_removed: "Two-factor authentication was removed after its 48-hour hold.",
  allowlist_added: "An address was saved to your withdrawal allowlist.",
  allowlist_removed: "An address was removed from your withdrawal allowlist.",
  allowlist_on: "“Only send to saved addresses” was turned on.",
  allowlist_off_requested:
    "“Only send to saved addresses” was asked to turn off. It turns off after its hold.",
  allowlist_off: "“Only send to saved addresses” is off.",
  sessions_ended: "Signed-in sessions were ended from your Security settings.",
} as const;
export type SecurityChange = keyof typeof SECURITY_CHANGES;

export function isSecurityChange(value: string): value is SecurityChange {
  return Object.hasOwn(SECURITY_CHANGES, value);
}

type Part =
  | { p: string }
  | { facts: readonly (readonly [string, string])[] }
  | { link: { text: string; path: string } };

interface Template {
  subject: string;
  parts: Part[];
}

export interface RenderContext {
  product: string;
  /** PUBLIC_URL without a trailing slash. */
  publicUrl: string;
  /** When the change happened (the row's created_at). */
  at: Date;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** A mail's time: "2026-11-28 14:05 UTC" (ISO order; the pages' utcMinute in common/allowlist.ts writes dd.mm.yy). */
export function mailTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** An address cut to its first 6 and last 4 characters: enough to recognise, not to copy. */
export function shortAddress(address: string): string {
  return address.length <= 14 ? address : `${address.slice(0, 6)}…${address.slice(-4)}`;
}

const NOT_YOU = "If this was not you, sign in and change your password at once, and write to our support.";

function template<K extends MailKind>(kind: K, data: MailData[K], product: string, when: string): Template {
  switch (kind) {
    case "verify_email": {
      const d = data as MailData["verify_email"];
      return {
        subject: `Verify your e-mail for ${product}`,
        parts: [
          { p: `Someone, we hope you, asked at ${when} to receive ${product} alerts at this address.` },
          {
            link: { text: "Verify your e-mail", path: `/verify-email?token=${encodeURIComponent(d.token)}` },
          },
          { p: "The link works once, for 24 hours. If you did not ask for it, ignore this mail." },
        ],
      };
    }
    case "new_sign_in": {
      const d = data as MailData["new_sign_in"];
      return {
        subject: `New sign-in to ${product}`,
        parts: [
          { p: `Your account was signed in to from a browser it had not used before.` },
          {
            facts: [["Browser", d.browser], ...(d.ip ? ([["Address", d.ip]] as const) : []), ["Time", when]],
          },
          { p: NOT_YOU },
          { link: { text: "Your signed-in sessions", path: "/security/sessions" } },
        ],
      };
    }
    case "send_requested":
    case "send_confirmed":
    case "send_declined": {
      const d = data as MailData["send_requested"];
      const what =
        kind === "send_requested"
          ? { subject: "Send requested", line: "You asked to send:" }
          : kind === "send_confirmed"
            ? { subject: "Send confirmed", line: "Your send was confirmed:" }
            : {
                subject: "Send declined",
                line: "Your send was declined; its amount is back in your wallet:",
              };
      return {
        subject: `${what.subject}: ${d.amount} ${d.coin}`,
        parts: [
          { p: what.line },
          {
            facts: [
              ["Amount", `${d.amount} ${d.coin}`],
              ["To", shortAddress(d.address)],
              ["Time", when],
            ],
          },
          ...(kind === "send_requested" ? [{ p: NOT_YOU }] : []),
          { link: { text: "Your history", path: "/history" } },
        ],
      };
    }
    case "deposit_credited": {
      const d = data as MailData["deposit_credited"];
      return {
        subject: `Deposit received: ${d.amount} ${d.coin}`,
        parts: [
          { p: "A deposit was credited to your wallet:" },
          {
            facts: [
              ["Amount", `${d.amount} ${d.coin}`],
              ["Time", when],
            ],
          },
          { link: { text: `Your ${d.coin} wallet`, path: `/wallet/${d.coin.toLowerCase()}` } },
        ],
      };
    }
    case "security_change": {
      const d = data as MailData["security_change"];
      return {
        subject: `Security change on your ${product} account`,
        parts: [
          { p: SECURITY_CHANGES[d.change] },
          {
            facts: [...(d.detail ? ([["Detail", d.detail]] as const) : []), ["Time", when]],
          },
          { p: NOT_YOU },
          { link: { text: "Your security settings", path: "/security" } },
        ],
      };
    }
    case "support_reply": {
      return {
        subject: `${product} support replied`,
        parts: [
          { p: "Our support replied to your message. Read the reply in your notifications." },
          { facts: [["Time", when]] },
          { link: { text: "Your notifications", path: "/notifications" } },
        ],
      };
    }
  }
  throw new Error(`no template for the mail kind ${String(kind)}`);
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (c) => HTML_ESCAPES[c] ?? c);
}

/** The subject, the plain text and the HTML of one mail, from its kind's template. */
export function renderMail<K extends MailKind>(kind: K, data: MailData[K], ctx: RenderContext): RenderedMail {
  const when = mailTime(ctx.at);
  const { subject, parts } = template(kind, data, ctx.product, when);
  const url = (path: string) => `${ctx.publicUrl}${path}`;
  const text: string[] = [];
  const html: string[] = [];
  for (const part of parts) {
    if ("p" in part) {
      text.push(part.p);
      html.push(`<p>${escapeHtml(part.p)}</p>`);
    } else if ("facts" in part) {
      text.push(part.facts.map(([label, value]) => `${label}: ${value}`).join("\n"));
      html.push(
        `<table role="presentation">${part.facts
          .map(
            ([label, value]) =>
              `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
          )
          .join("")}</table>`,
      );
    } else {
      text.push(`${part.link.text}: ${url(part.link.path)}`);
      html.push(`<p><a href="${escapeHtml(url(part.link.path))}">${escapeHtml(part.link.text)}</a></p>`);
    }
  }
  const footer = `${ctx.product} — ${ctx.publicUrl}/`;
  text.push(`-- \n${footer}`);
  html.push(`<hr><p>${escapeHtml(footer)}</p>`);
  return {
    subject,
    text: `${text.join("\n\n")}\n`,
    html: `<!doctype html><html><body>${html.join("\n")}</body></html>\n`,
  };
}
