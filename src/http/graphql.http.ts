/**
 * GraphQL over HTTP at /graphql: the contract's error codes and the statuses of the GraphQL-over-HTTP
 * specification on every answer (`withErrorCodes`), and the common request (a POST of a JSON query
 * or mutation, answered as JSON) run from `onRequest`, as the REST routes are.
 *
 * Yoga passes every request through its stages in turn — request parsers, `onParams`, the operation,
 * `onResultProcess`, each stage a promise and a turn of the microtask queue — and that pipeline was
 * what an uncached profile read over /graphql cost more than the same read as a REST route, which
 * answers from `onRequest` (docs/architecture.md). The common request needs none of it: this runs the same steps on the same objects — Yoga's envelope of plugins for the request,
 * through the operation runner the REST lane shares (operation.runner.ts: its parse cache, the
 * limits' validation verdicts, the app's context, compiled execution, masked errors, the feed,
 * idempotency and rate limits), and Yoga's own processor of a JSON result, for the media type that
 * Yoga's `Accept` negotiation would choose.
 *
 * Anything else is left to Yoga, untouched, before anything has run: another method, body type or
 * `Accept` (an event stream), a body that is not a plain `{ query, variables?, operationName? }`, a
 * document that does not parse or validate, a subscription, or an operation name that names none of
 * the document's. Yoga then answers it exactly as it would have (a document's parse and validation
 * are cached, so the second look costs little). A plugin hooking `onParams`, `onExecutionResult` or
 * `onResultProcess` would not see the requests answered here: none of the app's does, bar the error
 * codes, which this path applies itself.
 */
import { GraphQLError } from "graphql";
import { type Plugin, processRegularResult } from "graphql-yoga";
import { badInput, codeOfStatus, ERROR_STATUS, type ErrorCode, isErrorCode } from "../errors.ts";
import { type OperationParams, type OperationRunner, operationRunner } from "./operation.runner.ts";
import { graphqlErrorResponse } from "./rest/problem.ts";
import { bodyText } from "./text.plugin.ts";

/** Yoga's maker of a request's envelope (graphql.limits.ts takes it from here). */

/** The codes of a request refused for what its GraphQL says: its document, its variables, its input. */
const REQUEST_ERRORS = new Set<ErrorCode>(["BAD_USER_INPUT", "GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED"]);

/**
 * The HTTP part of an error's extensions, as the GraphQL-over-HTTP specification sets statuses
 * (Yoga's processor reads `status`, and skips errors marked `spec` when it answers
 * `application/json`). An operation that ran (its result has `data`, even null) is answered 200
 * whatever its field errors: their statuses go, their headers (`WWW-Authenticate`) stay. An operation
 * that did not run keeps its error's status; a request error — a document that does not parse or
 * validate, no operation to run, variables or text that do not fit — is `spec`: 200 as
 * `application/json`, 400 as `application/graphql-response+json`. A request that is not a
 * well-formed GraphQL request at all (Yoga's BAD_REQUEST: no query, a body that is not JSON, unknown
 * parameters, a mutation by GET) and the transport's refusals (credentials, rate limits, an
 * Idempotency-Key) keep their 4xx under both.
 */
function httpOf(
  http: { status?: number; spec?: boolean; headers?: Record<string, string> } | undefined,
  given: unknown,
  code: ErrorCode,
  executed: boolean,
) {
  if (executed) return http?.headers ? { headers: http.headers } : undefined;
  const spec = given !== "BAD_REQUEST" && REQUEST_ERRORS.has(code);
  if (!http && !spec) return undefined;
  return { ...http, status: http?.status ?? ERROR_STATUS[code], spec };
}

/**
 * The errors of a result carry the contract's code and the status the GraphQL-over-HTTP
 * specification gives them (`httpOf`): Yoga's own refusals by their HTTP status (a 405 is
 * METHOD_NOT_ALLOWED), any other request error of GraphQL itself is bad input, a document's are
 * GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED (Yoga's codes). The error is copied, not changed:
 * an error's extensions may be read-only (graphql-jit's are).
 */
export function withErrorCodes(result: unknown): void {
  for (const r of (Array.isArray(result) ? result : [result]) as { errors?: readonly GraphQLError[] }[]) {
    if (!r.errors) continue;
    const executed = "data" in r;
    r.errors = r.errors.map((error) => {
      // Yoga's parser of a body that is not JSON puts the JSON parser's own words in `originalError`:
      // never shown.
      const { originalError: parserWords, http, ...extensions } = error.extensions ?? {};
      const given = extensions.code;
      const code = isErrorCode(given) ? given : codeOfStatus(http?.status);
      const httpNow = httpOf(http, given, code, executed);
      if (code === given && !parserWords && !http && !httpNow) return error;
      // Its nodes, source and positions too: Yoga writes `locations` from them.
      const coded = new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: { ...extensions, code, ...(httpNow ? { http: httpNow } : {}) },
      });
      return Object.assign(coded, { locations: error.locations });
    });
  }
}

/** Every answer Yoga builds from a result (useGraphqlPost's builds its own the same way). */
export const useErrorCodes: Plugin = {
  onResultProcess({ result }) {
    withErrorCodes(result);
  },
};

/**
 * A GET's `variables` and `extensions` must be JSON objects: Yoga's parser of a GET would throw the
 * JSON parser's own error (answered 500) for anything it cannot parse.
 */
export const useGraphqlGetParams: Plugin = {
  onRequest({ request, url, endResponse }) {
    if (request.method !== "GET" || !url.pathname.startsWith("/graphql")) return;
    for (const key of ["variables", "extensions"]) {
      const text = url.searchParams.get(key);
      if (!text) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {}
      if (value !== null && !isPlainObject(value)) {
        const error = badInput(`${key} must be a JSON object`, [{ path: key, message: "not a JSON object" }]);
        return endResponse(graphqlErrorResponse(error));
      }
    }
  },
};

/** The media types of Yoga's processor of single JSON results, in its order. */
const JSON_TYPES = ["application/graphql-response+json", "application/json"] as const;

/**
 * The media type Yoga answers a single result with, for an `Accept` header; undefined when it would
 * pick another processor (an event stream) or none. Yoga's negotiation (its `useResultProcessors`):
 * the header's types, last first, those with a charset other than utf-8 dropped; the JSON processor
 * is the last one Yoga tries, and the last match wins, so it is chosen whenever one of its types
 * matches one of the header's, and the one chosen is the last match in that order.
 */
export function jsonMediaTypeFor(accept: string | null): string | undefined {
  let chosen: string | undefined;
  const asked = (accept || "*/*").replace(/\s/g, "").toLowerCase().split(",").reverse();
  for (const entry of asked) {
    const [type = "", ...params] = entry.split(";");
    const charset = params.find((p) => p.includes("charset=")) ?? "charset=utf-8";
    if (charset !== "charset=utf-8") continue;
    const [pre, suf] = type.split("/");
    for (const candidate of JSON_TYPES) {
      const [candidatePre, candidateSuf] = candidate.split("/");
      if ((pre === "*" || pre === candidatePre) && (suf === "*" || suf === candidateSuf)) chosen = candidate;
    }
  }
  return chosen;
}

const JSON_BODY_TYPES = ["application/json", "application/graphql+json"];

/** Yoga's content-type test of a JSON POST (its `isPOSTJsonRequest`). */
function isJsonPost(request: Request): boolean {
  const type = request.headers.get("content-type")?.split(",")[0];
  return !!type && JSON_BODY_TYPES.some((t) => type === t || type.startsWith(`${t};`));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether a body's key may be run here: `extensions`, or anything else Yoga would judge, may not. */
const runnable = (key: string, value: unknown) =>
  value == null ||
  key === "query" ||
  (key === "variables" && isPlainObject(value)) ||
  (key === "operationName" && typeof value === "string");

/** The body as the params of a request this path runs; undefined for anything Yoga should judge. */
function paramsOf(text: string): OperationParams | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(body) || typeof body.query !== "string") return undefined;
  return Object.entries(body).every(([key, value]) => runnable(key, value))
    ? (body as unknown as OperationParams)
    : undefined;
}

/**
 * The common /graphql request, answered from `onRequest`. `maskError` is the app's (yoga.ts): what
 * the operation throws (a credential that does not verify, while the context is built) is answered
 * as Yoga answers it.
 */
export function useGraphqlPost(options: { endpoint: string; maskError: (error: unknown) => GraphQLError }): Plugin {
  let runner: OperationRunner | undefined;
  return {
    onYogaInit({ yoga }) {
      runner = operationRunner(yoga);
    },
    async onRequest({ request, url, serverContext, setRequest, endResponse, fetchAPI }) {
      if (request.method !== "POST" || url.pathname !== options.endpoint || !runner) return;
      if (!request.body || !isJsonPost(request)) return;
      const mediaType = jsonMediaTypeFor(request.headers.get("accept"));
      if (!mediaType) return;
      let text: string;
      try {
        text = await bodyText(request);
      } catch (error) {
        return endResponse(graphqlErrorResponse(error));
      }
      const params = paramsOf(text);
      const prepared = params && runner.prepare(serverContext as Record<string, unknown>, request, params);
      if (!prepared) {
        // Yoga reads the body again: it gets a request that holds the body just read.
        const { headers, signal } = request;
        return setRequest(new fetchAPI.Request(request.url, { method: "POST", headers, body: text, signal }));
      }
      const result = await runner.run(prepared, options.maskError);
      withErrorCodes(result);
      endResponse(processRegularResult(result, fetchAPI, mediaType));
    },
  };
}
