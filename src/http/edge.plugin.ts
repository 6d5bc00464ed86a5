/**
 * The HTTP edge, in front of everything: a request id and one JSON log line per request, the body
 * limit (a declared length over it is refused unread; a chunked body is read here, never past it),
 * JSON-only bodies, the response headers/status that resolvers ask for through the context, and the
 * HTTP caching of every read: ETag, If-None-Match, Cache-Control and HEAD (conditional.ts).
 *
 * A refused body is answered at once and the connection is closed (`Connection: close`): Node would
 * otherwise keep a keep-alive connection open and, to find the next request, read and discard the
 * rest of the body, however long the client makes it. GET and HEAD never have their body read (the
 * fetch API has none for them), so an answer to one that came with a body closes the connection too.
 */
import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import type { Plugin } from "graphql-yoga";
import { PROTECTED_RESOURCE_PATH } from "../auth/protected.resource.ts";
import type { ResponseBag } from "../builder.ts";
import { apiError } from "../errors.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { answerRead } from "./conditional.ts";
import { looksLikeCredential, operationOf, routeOf } from "./request.log.ts";
import { graphqlErrorResponse, problemResponse } from "./rest/problem.ts";
import { restBaseOf } from "./rest/rest.routes.ts";

/** The media types a PATCH body may have, as its 415 names them. */
export const ACCEPT_PATCH = "application/merge-patch+json, application/json";

/** The default body limit of API.md §6 (the configured one is `Config.maxBodyBytes`). */
export const MAX_BODY_BYTES = 64 * 1024;

interface EdgeContext {
  response?: ResponseBag;
  requestId?: string;
  startedAt?: number;
  /** The answer must close the connection: a body was refused or left unread. */
  closeConnection?: boolean;
  /** The request's path, read once by Yoga (`onRequest`'s URL) and kept for the log line. */
  path?: string;
  /** Filled while the request runs, read by the log line (the context holds the same object). */
  logFields?: { operation?: string; route?: string };
}

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;
const MERGE_PATCH_TYPE = /^application\/merge-patch\+json\s*(?:;|$)/i;
const ANY_JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Whether a route reads a body of this media type. REST reads application/json, and on PATCH also
 * JSON Merge Patch (RFC 7396), which is what its PATCH bodies are; any other type, another patch
 * format (JSON Patch) included, is a 415 there. /graphql leaves JSON types to Yoga's parsers.
 */
function readsBody(method: string, path: string, type: string): boolean {
  if (JSON_TYPE.test(type)) return true;
  if (!restBaseOf(path)) return ANY_JSON_TYPE.test(type);
  return method === "PATCH" && MERGE_PATCH_TYPE.test(type);
}

/** Reads a body up to `max` bytes; null when it is larger. */
async function readCapped(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** An error answer in the shape of the route it is for. */
export function errorResponse(url: URL, error: unknown, headers: Record<string, string> = {}): Response {
  return url.pathname.startsWith("/graphql") ? graphqlErrorResponse(error, headers) : problemResponse(error, headers);
}

/**
 * How long, and for how many more bytes, a connection being closed keeps reading before it is cut:
 * long enough for a slow client across a real network to read its answer (nginx's lingering
 * timeout is 5 s too), short and small enough that a hostile one gains nothing.
 */
const LINGER_MS = 5000;
const LINGER_BYTES = 64 * 1024;

/**
 * Closes a connection after its answer without losing the answer: Node would destroy the socket
 * at once, and a client still sending gets a reset that can wipe the answer from its buffers before
 * it reads it. So the server half-closes (FIN after the answer), keeps discarding what arrives for
 * at most LINGER_MS or LINGER_BYTES, then cuts — bounded either way, never a drain. Only when the
 * app is served by node:http (the server context carries Node's request).
 */
function lingerOnClose(serverContext: unknown): void {
  const socket = (serverContext as { req?: { socket?: Socket } }).req?.socket;
  if (!socket || socket.destroyed) return;
  socket.destroySoon = () => {
    const readAtClose = socket.bytesRead;
    socket.end();
    // Cut after the reads already waiting: a timer that fires late, after the event loop stalled,
    // runs before them and would reset a connection whose answer the peer has in hand.
    const cut = () => {
      clearTimeout(timer);
      clearInterval(watch);
      setImmediate(() => socket.destroy());
    };
    const timer = setTimeout(cut, LINGER_MS);
    const watch = setInterval(() => {
      if (socket.bytesRead - readAtClose > LINGER_BYTES) cut();
    }, 10);
    timer.unref();
    watch.unref();
    socket.once("close", () => {
      clearTimeout(timer);
      clearInterval(watch);
    });
  };
}

/** The request id of an answer: the client's `X-Request-Id` unless it looks like a credential (the log must never hold one), else a new one. */
export function requestIdFor(incoming: string | null): string {
  return incoming && /^[\w.:-]{1,128}$/.test(incoming) && !looksLikeCredential(incoming) ? incoming : randomUUID();
}

/** Whether a request says it carries a body (a length above 0, or any transfer coding). */
function declaresBody(request: Request): boolean {
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length") ?? "0") > 0;
}

/**
 * A Bearer challenge (a 401, or a 403 `insufficient_scope`) names the registry's OAuth protected
 * resource metadata (RFC 9728), where a client learns which authorization servers issue its tokens:
 * added here, once, to whichever door's refusal it is.
 */
function withResourceMetadata(answer: Response, base: string, fetchAPI: { Response: typeof Response }): Response {
  const challenge = answer.headers.get("WWW-Authenticate");
  if (!challenge?.startsWith("Bearer ") || challenge.includes("resource_metadata=")) return answer;
  const headers = new Headers(answer.headers);
  headers.set("WWW-Authenticate", `${challenge}, resource_metadata="${base}${PROTECTED_RESOURCE_PATH}"`);
  return new fetchAPI.Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}

export function useHttpEdge(options: {
  log: (line: Record<string, unknown>) => void;
  maxBodyBytes?: number;
  /** How long shared caches may keep an anonymous read, in seconds (`Config.httpCacheMaxAge`). */
  cacheMaxAge: number;
  /** PUBLIC_URL: where the protected resource metadata a challenge names is (else the request's origin). */
  publicUrl?: string | undefined;
  /** Where each answer is counted too, as its log line is written (src/metrics/). */
  metrics?: Pick<Metrics, "observeRequest">;
}): Plugin {
  const max = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const tooLarge = (url: URL) =>
    errorResponse(url, apiError("PAYLOAD_TOO_LARGE", `The body is larger than ${max} bytes`), {
      Connection: "close",
    });
  const logAnswer = (edge: EdgeContext, request: Request, answer: Response) => {
    // The pattern, never the path: paths carry ids, and a careless client's token. The REST
    // guard names the route it matched; anything else is matched here.
    const route = edge.logFields?.route ?? routeOf(edge.path ?? new URL(request.url).pathname);
    const ms = edge.startedAt === undefined ? Number.NaN : performance.now() - edge.startedAt;
    options.metrics?.observeRequest(route, request.method, answer.status, ms / 1000);
    options.log({
      time: new Date().toISOString(),
      level: answer.status >= 500 ? "error" : "info",
      requestId: edge.requestId,
      method: request.method,
      route,
      operation: edge.logFields?.operation,
      status: answer.status,
      ms: Number.isNaN(ms) ? undefined : Math.round(ms * 10) / 10,
    });
  };
  // A PATCH refused for its type says which patch formats it takes (Accept-Patch, RFC 5789).
  const unsupportedType = (method: string, url: URL) =>
    method === "PATCH"
      ? errorResponse(
          url,
          apiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/merge-patch+json or application/json"),
          { "Accept-Patch": ACCEPT_PATCH },
        )
      : errorResponse(url, apiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json"));
  return {
    async onRequest({ request, url, serverContext, setRequest, endResponse, fetchAPI }) {
      const edge = serverContext as EdgeContext;
      edge.requestId = requestIdFor(request.headers.get("x-request-id"));
      edge.path = url.pathname;
      edge.logFields = {};
      edge.startedAt = performance.now();
      edge.response = { headers: new Map() };

      // Whatever the method, a declared length over the limit is refused before a byte is read.
      if (Number(request.headers.get("content-length") ?? "0") > max) {
        edge.closeConnection = true;
        return endResponse(tooLarge(url));
      }
      if (request.method === "GET" || request.method === "HEAD") {
        if (declaresBody(request)) edge.closeConnection = true;
        return;
      }
      if (!request.body) return;
      const json = readsBody(request.method, url.pathname, request.headers.get("content-type") ?? "");
      if (request.headers.has("content-length") && !request.headers.has("transfer-encoding")) {
        // Framed by its Content-Length, checked above: no byte past it is read, so the body is left
        // to the one reader that needs it (Yoga or the REST guard). Reading and rebuilding the
        // request here cost ~15 µs of CPU per GraphQL POST.
        if (declaresBody(request) && !json) return endResponse(unsupportedType(request.method, url));
        return;
      }
      // A body of no declared length (chunked, or built in process) is read here, never past the limit.
      const bytes = await readCapped(request.body, max);
      if (bytes === null) {
        edge.closeConnection = true;
        return endResponse(tooLarge(url));
      }
      if (bytes.byteLength > 0 && !json) return endResponse(unsupportedType(request.method, url));
      setRequest(
        new fetchAPI.Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: bytes.byteLength > 0 ? (bytes as unknown as BodyInit) : null,
          signal: request.signal,
        }),
      );
    },
    onExecute({ args }) {
      const fields = (args.contextValue as EdgeContext).logFields;
      if (fields) fields.operation = operationOf(args.document, args.operationName);
    },
    onResponse({ request, response, serverContext, setResponse, fetchAPI }) {
      const edge = serverContext as EdgeContext;
      let answer = response;
      // A resolver's ETag names a version (for If-Match), not the bytes a read answers.
      let resolverTag = false;
      if (edge.response) {
        const bag = edge.response;
        resolverTag = bag.headers.has("ETag");
        const apply = (headers: Headers) => {
          headers.set("X-Request-Id", edge.requestId as string);
          for (const [name, value] of bag.headers) headers.set(name, value);
          if (edge.closeConnection) headers.set("Connection", "close");
        };
        let copied = bag.status !== undefined && bag.status !== response.status;
        if (!copied) {
          // The answers built here have mutable headers: adding to them saves a copy of the whole
          // response on every request. A response with immutable headers is copied.
          try {
            apply(response.headers);
          } catch {
            copied = true;
          }
        }
        if (copied) {
          const headers = new Headers(response.headers);
          apply(headers);
          answer = new fetchAPI.Response(response.body, { status: bag.status ?? response.status, headers });
          setResponse(answer);
        }
        if (edge.closeConnection) lingerOnClose(serverContext);
      }
      if (answer.status === 401 || answer.status === 403) {
        const challenged = withResourceMetadata(answer, options.publicUrl ?? new URL(request.url).origin, fetchAPI);
        if (challenged !== answer) {
          answer = challenged;
          setResponse(answer);
        }
      }
      if (request.method !== "GET" && request.method !== "HEAD") return logAnswer(edge, request, answer);
      // ETag, If-None-Match, Cache-Control and HEAD, for every read (conditional.ts).
      const read = answerRead(request, answer, {
        path: edge.path ?? new URL(request.url).pathname,
        resolverTag,
        maxAge: options.cacheMaxAge,
        Response: fetchAPI.Response,
      });
      if (read instanceof Promise) {
        return read.then((final) => {
          setResponse(final);
          logAnswer(edge, request, final);
        });
      }
      if (read !== answer) setResponse(read);
      logAnswer(edge, request, read);
    },
  };
}
