// Whose web session a row is (web_sessions.owner): HMAC-SHA-256 of the
// normalised e-mail under the session secret, so the table holds no e-mail and
// a restore can still find every session of the account. Written by the web
// tier (app/session.server.ts); the back office counts a holder's live sessions by it.
import { createHmac } from "node:crypto";

export function sessionOwner(secret: string, email: string): string {
  return createHmac("sha256", secret)
    .update(`coinkeep session owner v1:${email.trim().toLowerCase()}`)
    .digest("hex");
}
