/**
 * The HTTP edge, in front of everything: a request id and one JSON log line per request, the body
 * limit (streamed bodies included: nothing is read past the limit), JSON-only bodies, and the
 * response headers/status that resolvers ask for through the context.
 */
import { randomUUID } from "node:crypto";
import type { Plugin } from "graphql-yoga";
import type { ResponseBag } from "./builder.ts";
import { apiError } from "./errors.ts";
import { graphqlErrorResponse, problemResponse } from "./rest/problem.ts";

export const MAX_BODY_BYTES = 64 * 1024;

interface EdgeContext {
  response?: ResponseBag;
  requestId?: string;
  startedAt?: number;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

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

export function useHttpEdge(options: { log: (line: Record<string, unknown>) => void }): Plugin {
  return {
    async onRequest({ request, url, serverContext, setRequest, endResponse, fetchAPI }) {
      const edge = serverContext as EdgeContext;
      const incoming = request.headers.get("x-request-id");
      edge.requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
      edge.startedAt = performance.now();
      edge.response = { headers: new Headers({ "X-Request-Id": edge.requestId }) };

      if (!request.body || request.method === "GET" || request.method === "HEAD") return;
      const declared = Number(request.headers.get("content-length") ?? "0");
      if (declared > MAX_BODY_BYTES) {
        return endResponse(
          errorResponse(url, apiError("PAYLOAD_TOO_LARGE", `The body is larger than ${MAX_BODY_BYTES} bytes`)),
        );
      }
      const bytes = await readCapped(request.body, MAX_BODY_BYTES);
      if (bytes === null) {
        return endResponse(
          errorResponse(url, apiError("PAYLOAD_TOO_LARGE", `The body is larger than ${MAX_BODY_BYTES} bytes`)),
        );
      }
      if (bytes.byteLength > 0 && !JSON_TYPE.test(request.headers.get("content-type") ?? "")) {
        return endResponse(errorResponse(url, apiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json")));
      }
      setRequest(
        new fetchAPI.Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: bytes.byteLength > 0 ? (bytes as unknown as BodyInit) : null,
          signal: request.signal,
        }),
      );
    },
    onResponse({ request, response, serverContext, setResponse, fetchAPI }) {
      const edge = serverContext as EdgeContext;
      let answer = response;
      if (edge.response) {
        // A response's headers may be immutable: answer a copy with the requested ones added.
        const headers = new Headers(response.headers);
        edge.response.headers.forEach((value, key) => {
          headers.set(key, value);
        });
        answer = new fetchAPI.Response(response.body, { status: edge.response.status ?? response.status, headers });
        setResponse(answer);
      }
      const url = new URL(request.url);
      options.log({
        time: new Date().toISOString(),
        level: answer.status >= 500 ? "error" : "info",
        requestId: edge.requestId,
        method: request.method,
        path: url.pathname,
        status: answer.status,
        ms: edge.startedAt === undefined ? undefined : Math.round((performance.now() - edge.startedAt) * 10) / 10,
      });
    },
  };
}
