/**
 * The REST surface: which GraphQL operation answers which route under /api/v1. SOFA builds the
 * routes from this table; the guard refuses anything not in it; the OpenAPI document and the
 * service description list exactly these.
 */

export const REST_BASE = "/api/v1";

export type Auth = "none" | "optional" | "agent" | "reviewer" | "agentOrReviewer";

export interface RestRoute {
  /** The GraphQL field, `Query.x` or `Mutation.x`. */
  field: `${"Query" | "Mutation"}.${string}`;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Relative to REST_BASE, with `:param` placeholders. */
  path: string;
  status: number;
  summary: string;
  tag: string;
  /** Who may call it: drives the OpenAPI security requirements. */
  auth: Auth;
}

export const REST_ROUTES: readonly RestRoute[] = [
  {
    field: "Query.api",
    method: "GET",
    path: "/",
    status: 200,
    summary: "Describe the service",
    tag: "service",
    auth: "none",
  },
  {
    field: "Query.health",
    method: "GET",
    path: "/health",
    status: 200,
    summary: "Service and database health",
    tag: "service",
    auth: "none",
  },
  {
    field: "Query.providers",
    method: "GET",
    path: "/providers",
    status: 200,
    summary: "List provider summaries",
    tag: "providers",
    auth: "optional",
  },
  {
    field: "Mutation.createProvider",
    method: "POST",
    path: "/providers",
    status: 201,
    summary: "Submit an agent intake",
    tag: "providers",
    auth: "none",
  },
  {
    field: "Query.provider",
    method: "GET",
    path: "/providers/:providerCode",
    status: 200,
    summary: "Read a provider's full profile",
    tag: "providers",
    auth: "optional",
  },
  {
    field: "Mutation.updateProvider",
    method: "PATCH",
    path: "/providers/:providerCode",
    status: 200,
    summary: "Update the caller's own profile",
    tag: "providers",
    auth: "agent",
  },
  {
    field: "Query.providerVersions",
    method: "GET",
    path: "/providers/:providerCode/versions",
    status: 200,
    summary: "List a provider's profile versions",
    tag: "versions",
    auth: "optional",
  },
  {
    field: "Query.providerVersion",
    method: "GET",
    path: "/providers/:providerCode/versions/:version",
    status: 200,
    summary: "Read one profile version with its snapshot",
    tag: "versions",
    auth: "optional",
  },
  {
    field: "Mutation.issueToken",
    method: "POST",
    path: "/providers/:providerCode/tokens",
    status: 201,
    summary: "Issue (or rotate) an access token",
    tag: "tokens",
    auth: "agent",
  },
  {
    field: "Mutation.revokeToken",
    method: "DELETE",
    path: "/providers/:providerCode/tokens/:tokenId",
    status: 200,
    summary: "Revoke an access token",
    tag: "tokens",
    auth: "agentOrReviewer",
  },
  {
    field: "Query.reviewQueue",
    method: "GET",
    path: "/reviews/queue",
    status: 200,
    summary: "The active review queue",
    tag: "reviews",
    auth: "reviewer",
  },
  {
    field: "Query.review",
    method: "GET",
    path: "/reviews/:reviewCode",
    status: 200,
    summary: "Read one review",
    tag: "reviews",
    auth: "agentOrReviewer",
  },
];

/** The full path of a route, e.g. `/api/v1/providers/:providerCode`. */
export function restPath(path: string): string {
  return path === "/" ? REST_BASE : `${REST_BASE}${path}`;
}

/** `:name` placeholders of a path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);
}

/** Matches a request path (relative to REST_BASE) against a route path; answers its parameters. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith(":")) {
      try {
        params[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return null;
      }
    } else if (w !== g) return null;
  }
  return params;
}
