// Raw HTTP to a running host (scripts/host.ts starts one): every header, the
// source address and the body are exactly what the test says (fetch would add
// or refuse some of them).
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { expect } from "vitest";
import { callOpsSocket, opsSocketPath } from "../../../server/ops/socket.ts";
import { PLATFORM } from "../../backend/helpers.ts";

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The source address to connect from (any 127.x.y.z works on Linux). */
  localAddress?: string;
}

export function raw(port: number, req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined && headers["content-length"] === undefined) {
      headers["content-length"] = String(Buffer.byteLength(req.body));
    }
    const outgoing = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: req.method ?? "GET",
        path: req.path,
        headers,
        agent: false,
        ...(req.localAddress ? { localAddress: req.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

/** A call to the host's API over raw HTTP: POST /api<path>, JSON with the platform, from the source address. */
export function rawCall(
  port: number,
  path: string,
  body: Record<string, unknown>,
  { headers = {}, from }: { headers?: Record<string, string>; from?: string } = {},
): Promise<RawAnswer> {
  return raw(port, {
    method: "POST",
    path: `/api${path}`,
    localAddress: from,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ platform: PLATFORM, ...body }),
  });
}

/** Writes the bytes to a fresh connection and answers all it reads until the server closes it. */
export function rawBytes(port: number, bytes: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no answer; got ${text}`));
    });
  });
}

/** A contact message (call 12) from `email`, sent from `from` with the headers; answered "Message sent!". */
export async function sendContact(
  port: number,
  email: string,
  { from, headers = {} }: { from?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const answer = await rawCall(
    port,
    "/request-message",
    { email, comment: "Which address am I?" },
    { headers, from },
  );
  expect([answer.status, answer.text]).toEqual([
    200,
    JSON.stringify({ success: true, message: "Message sent!" }),
  ]);
  return answer;
}

/** The sender addresses the host on the data folder recorded for `email`'s messages (asked over its ops socket). */
export async function recordedIps(dataDir: string, email: string): Promise<(string | null)[]> {
  const listed = await callOpsSocket(opsSocketPath(dataDir), ["support", "--json"]);
  if (!listed || listed.code !== 0) throw new Error(`ops support failed: ${JSON.stringify(listed)}`);
  const rows = JSON.parse(listed.stdout) as { email: string; ip: string | null }[];
  return rows.filter((row) => row.email === email).map((row) => row.ip);
}

/** All Set-Cookie pairs of an answer as one Cookie header. */
export function cookiesOf(answer: RawAnswer): string {
  return (answer.headers["set-cookie"] ?? []).map((line) => line.split(";")[0]).join("; ");
}

/** A fresh account through the API (call 1), with its 12 words. */
export async function createAccount(port: number, tag: string) {
  const email = `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const answer = await rawCall(port, "/aml-authentication", { email, password, passwordConfirmed: password });
  if (answer.status !== 200) throw new Error(`account not created: ${answer.status} ${answer.text}`);
  const { twelveWords } = JSON.parse(answer.text) as { twelveWords: string[] };
  return { email, password, words: twelveWords.join(" ") };
}

/** The fast-login link (GET /fast-login) that signs the account in. */
export const fastLoginPath = (account: { email: string; password: string }) =>
  `/fast-login?email=${encodeURIComponent(account.email)}&password=${encodeURIComponent(account.password)}`;
