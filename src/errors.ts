import { GraphQLError } from "graphql";

/** The error codes of API.md §5 and their HTTP statuses. */
export const ERROR_STATUS = {
  BAD_USER_INPUT: 400,
  /** A GraphQL document that does not parse (GraphQL only: REST runs fixed documents). */
  GRAPHQL_PARSE_FAILED: 400,
  /** A GraphQL document that parses but does not validate against the schema or the GraphQL limits. */
  GRAPHQL_VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  /** Events asked for from before the log's retention. */
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An Idempotency-Key sent again with another request than the one it was first used with. */
  UNPROCESSABLE_CONTENT: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem with one input field: `path` is the field's dotted path (`endpoint.url`, `labels.2`). */
export interface FieldError {
  path: string;
  message: string;
}

/** The title a problem document carries for each code. */
export const ERROR_TITLE: Record<ErrorCode, string> = {
  BAD_USER_INPUT: "Bad request",
  GRAPHQL_PARSE_FAILED: "GraphQL document does not parse",
  GRAPHQL_VALIDATION_FAILED: "GraphQL document is not valid",
  UNAUTHENTICATED: "Authentication required",
  FORBIDDEN: "Forbidden",
  NOT_FOUND: "Not found",
  METHOD_NOT_ALLOWED: "Method not allowed",
  CONFLICT: "Conflict",
  PRECONDITION_FAILED: "Precondition failed",
  GONE: "Gone",
  PAYLOAD_TOO_LARGE: "Payload too large",
  UNSUPPORTED_MEDIA_TYPE: "Unsupported media type",
  UNPROCESSABLE_CONTENT: "Unprocessable content",
  RATE_LIMITED: "Too many requests",
  INTERNAL: "Internal server error",
};

/**
 * The one way the service reports an error. It carries the contract's code and the HTTP status
 * in `extensions`, which both Yoga (for /graphql) and SOFA (for /api/v1) read.
 */
export function apiError(
  code: ErrorCode,
  message: string,
  options: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
): GraphQLError {
  const headers = { ...options.headers };
  if (code === "UNAUTHENTICATED") headers["WWW-Authenticate"] = 'Bearer realm="agent-registry"';
  return new GraphQLError(message, {
    extensions: {
      code,
      ...options.extensions,
      ...(options.errors ? { errors: options.errors } : {}),
      http: { status: ERROR_STATUS[code], ...(Object.keys(headers).length ? { headers } : {}) },
    },
  });
}

export const badInput = (message: string, errors?: FieldError[]) =>
  apiError("BAD_USER_INPUT", message, errors ? { errors } : {});
export const notFound = (what = "Not found") => apiError("NOT_FOUND", what);
/**
 * The same answer whichever credential problem it was (API.md §3). The edge adds to every challenge
 * where the registry's OAuth protected resource metadata is (edge.plugin.ts).
 */
export const unauthenticated = () => apiError("UNAUTHENTICATED", "Missing or invalid credentials");
/** A valid credential that lacks the role a request needs (RFC 6750 `insufficient_scope`). */
export const insufficientScope = (scope: string) =>
  apiError("FORBIDDEN", `This credential does not carry the ${scope} scope`, {
    headers: { "WWW-Authenticate": `Bearer realm="agent-registry", error="insufficient_scope", scope="${scope}"` },
  });
export const forbidden = (message = "Not allowed") => apiError("FORBIDDEN", message);
export const conflict = (message: string) => apiError("CONFLICT", message);

/** The code of an HTTP status an error of the toolchain carries (bad input for any other 4xx). */
export function codeOfStatus(status: number | undefined): ErrorCode {
  const code = (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => ERROR_STATUS[c] === status);
  return code && code !== "INTERNAL" ? code : "BAD_USER_INPUT";
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && value in ERROR_STATUS;
}

/**
 * The code of an error. A GraphQLError without one is a request error of GraphQL itself (a variable
 * of the wrong type, a missing one, an unknown field): bad input. Anything else is internal.
 */
export function codeOf(error: unknown): ErrorCode {
  if (error instanceof GraphQLError || (typeof error === "object" && error !== null && "extensions" in error)) {
    const code = (error as GraphQLError).extensions?.code;
    if (isErrorCode(code)) return code;
    const original = (error as GraphQLError).originalError;
    return original && !(original instanceof GraphQLError) ? "INTERNAL" : "BAD_USER_INPUT";
  }
  return "INTERNAL";
}
