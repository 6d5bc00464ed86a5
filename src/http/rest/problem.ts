/**
 * Errors as HTTP answers: `application/problem+json` (RFC 9457) for REST and the transport routes,
 * the GraphQL response shape for /graphql. Every error is mapped to a code of API.md §5; anything
 * unexpected becomes a masked INTERNAL.
 */
import { GraphQLError } from "graphql";
import { escapeToken } from "rfc6902/pointer.js";
import { codeOf, ERROR_STATUS, ERROR_TITLE, type ErrorCode, type FieldError } from "../../errors.ts";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
}

/**
 * A field's path as REST names it: a JSON Pointer into the body (RFC 6901). The rules name fields by
 * dotted path (`endpoint.url`, `labels.1`, "(body)" for the whole), which GraphQL answers keep; the
 * REST guard's own paths are pointers already (they start with "/", as no field name does).
 */
export function pointerOf(path: string): string {
  if (path === "" || path.startsWith("/")) return path;
  if (path === "(body)") return "";
  return path
    .split(".")
    .map((segment) => `/${escapeToken(segment)}`)
    .join("");
}

export function problemOf(error: unknown): { problem: Problem; headers: Record<string, string> } {
  const code = codeOf(error);
  const status = ERROR_STATUS[code];
  const graphqlError = error instanceof GraphQLError ? error : null;
  const extensions = (graphqlError?.extensions ?? {}) as {
    errors?: FieldError[];
    http?: { headers?: Record<string, string> };
  };
  const detail = code === "INTERNAL" ? "An unexpected error occurred" : (graphqlError?.message ?? "Bad request");
  const errors = extensions.errors;
  const headers: Record<string, string> = { ...extensions.http?.headers };
  if (code === "UNAUTHENTICATED") headers["WWW-Authenticate"] ??= 'Bearer realm="agent-registry"';
  return {
    problem: {
      type: "about:blank",
      title: ERROR_TITLE[code],
      status,
      detail,
      code,
      ...(errors ? { errors } : {}),
    },
    headers,
  };
}

/** A problem+json response with exactly one Content-Type; the paths it names are JSON Pointers. */
export function problemResponse(error: unknown, extraHeaders: Record<string, string> = {}): Response {
  const { problem, headers } = problemOf(error);
  if (problem.errors) problem.errors = problem.errors.map((e) => ({ ...e, path: pointerOf(e.path) }));
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { ...headers, ...extraHeaders, "Content-Type": "application/problem+json" },
  });
}

/** The same error as a GraphQL response, for refusals that happen before GraphQL runs. */
export function graphqlErrorResponse(error: unknown, extraHeaders: Record<string, string> = {}): Response {
  const { problem, headers } = problemOf(error);
  const body = {
    errors: [
      {
        message: problem.detail,
        extensions: { code: problem.code, ...(problem.errors ? { errors: problem.errors } : {}) },
      },
    ],
  };
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: { ...headers, ...extraHeaders, "Content-Type": "application/graphql-response+json; charset=utf-8" },
  });
}

/** SOFA's error handler: the most severe of the errors decides the answer. */
export function sofaErrorHandler(errors: ReadonlyArray<unknown>): Response {
  const worst = [...errors].sort((a, b) => ERROR_STATUS[codeOf(b)] - ERROR_STATUS[codeOf(a)])[0];
  return problemResponse(worst);
}
