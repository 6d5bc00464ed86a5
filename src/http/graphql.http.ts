/**
 * GraphQL over HTTP at /graphql: the contract's error codes on every answer, and the common request
 * (a POST of a JSON query or mutation, answered as JSON) run from `onRequest`, as the REST routes are.
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
import { badInput, codeOfStatus, isErrorCode } from "../errors.ts";
import { type OperationParams, type OperationRunner, operationRunner } from "./operation.runner.ts";
import { graphqlErrorResponse } from "./rest/problem.ts";
import { bodyText } from "./text.plugin.ts";

/** Yoga's maker of a request's envelope (graphql.limits.ts takes it from here). */

/**
 * The errors of a result carry the contract's code: Yoga's own refusals by their HTTP status (a 405
 * is METHOD_NOT_ALLOWED), any other request error of GraphQL itself is bad input. The error is
 * copied, not changed: an error's extensions may be read-only (graphql-jit's are).
 */
function withErrorCodes(result: unknown): void {
  for (const r of (Array.isArray(result) ? result : [result]) as { errors?: readonly GraphQLError[] }[]) {
    if (!r.errors) continue;
    r.errors = r.errors.map((error) => {
      // Yoga's parser of a body that is not JSON puts the JSON parser's own words in `originalError`:
      // never shown. Yoga answers that body 400 whatever the Accept; so does its copy.
      const { originalError: parserWords, ...extensions } = error.extensions ?? {};
      if (isErrorCode(extensions.code) && !parserWords) return error;
      const code = isErrorCode(extensions.code) ? extensions.code : codeOfStatus(extensions.http?.status);
      if (parserWords && extensions.http) extensions.http = { ...extensions.http, spec: false };
      const coded = new GraphQLError(error.message, {
        path: error.path,
        originalError: error.originalError,
        extensions: { ...extensions, code },
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
