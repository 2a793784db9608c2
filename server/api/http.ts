// The HTTP edge of the API: JSON responses, content-type and size checks,
// bounded body reading and JSON parsing. Nothing here knows about accounts.
import { readAtMost } from "../streams.ts";

export interface Issue {
  path: string;
  message: string;
}

export const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function failure(
  status: number,
  message: string,
  extra: { issues?: Issue[]; headers?: Record<string, string> } = {},
) {
  const body: { success: false; message: string; issues?: Issue[] } = { success: false, message };
  if (extra.issues) body.issues = extra.issues;
  return json(status, body, extra.headers);
}

/** A request that must be answered with this response instead of being handled. */
export class Rejection {
  readonly response: Response;
  constructor(response: Response) {
    this.response = response;
  }
}

export function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const mediaType = value.split(";", 1)[0]?.trim().toLowerCase();
  return mediaType === "application/json";
}

/**
 * Reads the body as UTF-8 text, refusing more than maxBytes: first by the
 * declared Content-Length, then by counting while reading, so a chunked or
 * lying body is never buffered past the limit.
 */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string | Rejection> {
  const tooLarge = () => new Rejection(failure(413, "Request body too large."));
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared.trim());
    if (!Number.isFinite(length) || length < 0) return new Rejection(failure(400, "Invalid Content-Length."));
    if (length > maxBytes) return tooLarge();
  }
  if (!request.body) return "";

  let bytes: Uint8Array | "too-large";
  try {
    bytes = await readAtMost(request.body, maxBytes);
  } catch {
    // The client went away or sent a broken stream: its mistake, not ours.
    return new Rejection(failure(400, "Malformed JSON body."));
  }
  if (bytes === "too-large") return tooLarge();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return new Rejection(failure(400, "Malformed JSON body."));
  }
}

/** Parses the body text into a plain JSON object, or says why it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | Rejection {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new Rejection(failure(400, "Malformed JSON body."));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new Rejection(failure(400, "Request body must be a JSON object."));
  }
  return value as Record<string, unknown>;
}
