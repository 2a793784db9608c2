// SMTP_URL (issue 28, record 049), read at start: a malformed one stops the process with a
// message that names the variable and never repeats the password.

export interface SmtpSettings {
  host: string;
  port: number;
  /** smtps: TLS from the first byte; smtp: STARTTLS when the server offers it. */
  secure: boolean;
  user?: string | undefined;
  pass?: string | undefined;
}

/** SMTP_URL: smtp://[user:pass@]host[:port] or smtps://…; a message naming what is wrong, never the password. */
export function parseSmtpUrl(value: string): SmtpSettings | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be a URL like smtp://user:password@mail.example.com:587 or smtps://…:465";
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return "must start with smtp:// or smtps://";
  if (!url.hostname) return "must name the mail server's host";
  if (url.pathname !== "" && url.pathname !== "/") return "must not have a path";
  const secure = url.protocol === "smtps:";
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  return {
    host: url.hostname.replace(/^\[|\]$/gu, ""),
    port,
    secure,
    ...(url.username ? { user: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { pass: decodeURIComponent(url.password) } : {}),
  };
}
