import { PassThrough } from "node:stream";
import { createGzip } from "node:zlib";
import { createReadableStreamFromReadable } from "@react-router/node";
import { renderToPipeableStream } from "react-dom/server";
import { ServerRouter, type EntryContext, type RouterContextProvider } from "react-router";
import { log } from "../common/log.ts";
import { nonceContext } from "./context.ts";

// The host sets the services and the CSP nonce on these very context keys (see server/host/web-tier.ts).
export { nonceContext, servicesContext } from "./context.ts";

export const streamTimeout = 5_000;

export default function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  routerContext: EntryContext,
  loadContext: RouterContextProvider,
) {
  if (request.method.toUpperCase() === "HEAD") {
    return new Response(null, { status: responseStatusCode, headers: responseHeaders });
  }
  // The host's per-request nonce: React Router puts it on its inline scripts
  // (and <Scripts>, <Links>), React on any script it inlines.
  const nonce = loadContext.get(nonceContext) || undefined;
  return new Promise<Response>((resolve, reject) => {
    let status = responseStatusCode;
    // Pages are small and nothing is deferred: send the whole document at once,
    // which is also what low-end browsers and screen readers handle best.
    const { pipe, abort } = renderToPipeableStream(
      <ServerRouter context={routerContext} url={request.url} nonce={nonce} />,
      {
        nonce,
        // Never outline a finished part behind a script (React does that past 12.8 KB
        // of page by default): the page must read whole without scripts.
        progressiveChunkSize: Number.POSITIVE_INFINITY,
        onAllReady() {
          responseHeaders.set("Content-Type", "text/html; charset=utf-8");
          // Compressed where the browser takes gzip, except pages that may carry
          // the 12-word phrase (record 035); the CSRF token is masked per response.
          const compress = acceptsGzip(request) && !carriesSecret(routerContext);
          if (compress) responseHeaders.set("Content-Encoding", "gzip");
          responseHeaders.append("Vary", "Accept-Encoding");
          const body = compress ? createGzip({ level: 6 }) : new PassThrough();
          resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status }));
          pipe(body);
        },
        onShellError: reject,
        onError(error: unknown) {
          status = 500;
          logServerError(error, request);
        },
      },
    );
    setTimeout(abort, streamTimeout + 1000).unref();
  });
}

/** Whether the request's Accept-Encoding takes gzip: named with a q above 0, or left to `*`. */
export function acceptsGzip(request: Request): boolean {
  const weights = new Map<string, number>();
  for (const part of (request.headers.get("Accept-Encoding") ?? "").split(",")) {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (coding) weights.set(coding.trim(), q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  return (weights.get("gzip") ?? weights.get("*") ?? 0) > 0;
}

/** A page whose route says it may show a secret a reflected input could be compressed against. */
function carriesSecret(context: EntryContext): boolean {
  return context.staticHandlerContext.matches.some((match) => {
    const handle = context.routeModules[match.route.id]?.handle as { carriesSecret?: boolean } | undefined;
    return handle?.carriesSecret === true;
  });
}

/**
 * Errors of loaders, actions and rendering, as one structured line (record
 * 015): the error's class and message and the request's path, never its query
 * string, body or cookies.
 */
export function handleError(error: unknown, { request }: { request: Request }) {
  if (request.signal.aborted) return;
  logServerError(error, request);
}

function logServerError(error: unknown, request: Request) {
  let path: string | undefined;
  try {
    path = new URL(request.url).pathname;
  } catch {
    path = undefined;
  }
  log.error("web tier error", {
    method: request.method,
    path,
    error: error instanceof Error ? error.name : typeof error,
    detail: error instanceof Error ? error.message.slice(0, 300) : undefined,
  });
}
