/**
 * The REST surface: which GraphQL operation answers which route, under /api/v1 or, for the MCP
 * registry's read API, under /v0.1. SOFA builds the routes from this table; the guard refuses
 * anything not in it; the OpenAPI document and the service description list exactly these.
 */

export const REST_BASE = "/api/v1";
/** The MCP registry's read API (src/interop/mcp.registry.schema.ts), at the path its clients know. */
export const MCP_BASE = "/v0.1";
/** Every base path a route may have. */
export const REST_BASES = [REST_BASE, MCP_BASE] as const;
export type RestBase = (typeof REST_BASES)[number];

/** The base a request path is under, if any. */
export function restBaseOf(path: string): RestBase | undefined {
  return REST_BASES.find((base) => path === base || path.startsWith(`${base}/`));
}

export type Auth = "none" | "optional" | "agent" | "reviewer" | "agentOrReviewer" | "admin";

export interface RestRoute {
  /** The GraphQL field, `Query.x` or `Mutation.x`. */
  field: `${"Query" | "Mutation"}.${string}`;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The base path it is under. */
  base: RestBase;
  /** Relative to the base, with `:param` placeholders. */
  path: string;
  status: number;
  summary: string;
  tag: string;
  /** Who may call it: drives the OpenAPI security requirements. */
  auth: Auth;
}

/** One row of the table: `"METHOD /path"`, the operation, who may call it, its tag and summary. */
function route(
  spec: `${RestRoute["method"]} /${string}`,
  field: RestRoute["field"],
  auth: Auth,
  tag: string,
  summary: string,
  status = 200,
  base: RestBase = REST_BASE,
): RestRoute {
  const [method, path] = spec.split(" ") as [RestRoute["method"], string];
  return { field, method, base, path, status, summary, tag, auth };
}

/** A route of the MCP registry's read API: anyone may call it, and it is what the MCP OpenAPI names. */
function mcpRoute(spec: `GET /${string}`, field: RestRoute["field"], summary: string): RestRoute {
  return route(spec, field, "none", "mcp", summary, 200, MCP_BASE);
}

// biome-ignore format: a table reads best one route a line
export const REST_ROUTES: readonly RestRoute[] = [
  route("GET /", "Query.api", "none", "service", "Describe the service"),
  route("GET /health", "Query.health", "none", "service", "Service and database health"),
  route("GET /providers", "Query.providers", "optional", "providers", "List provider summaries"),
  // Before /providers/:providerCode, which would take "facets" for a code.
  route("GET /providers/facets", "Query.providerFacets", "optional", "providers", "Count the list's providers by each value of its filters"),
  route("POST /providers", "Mutation.createProvider", "none", "providers", "Submit an agent intake", 201),
  route("GET /providers/:providerCode", "Query.provider", "optional", "providers", "Read a provider's full profile"),
  route("PATCH /providers/:providerCode", "Mutation.updateProvider", "agent", "providers", "Update the caller's own profile"),
  route("GET /providers/:providerCode/versions", "Query.providerVersions", "optional", "versions", "List a provider's profile versions"),
  route("GET /providers/:providerCode/versions/:version", "Query.providerVersion", "optional", "versions", "Read one profile version with its snapshot"),
  route("GET /providers/:providerCode/versions/:from/diff/:to", "Query.versionDiff", "optional", "versions", "The JSON Patch (RFC 6902) from one version's snapshot to another's"),
  route("GET /providers/:providerCode/agent-card.json", "Query.agentCard", "optional", "interop", "The provider as an A2A agent card"),
  route("GET /providers/:providerCode/server.json", "Query.serverJson", "optional", "interop", "The provider as an MCP registry server.json"),
  route("POST /providers/import", "Mutation.importProvider", "none", "interop", "Submit an agent intake from an A2A agent card or an MCP server.json", 201),
  route("POST /providers/:providerCode/tokens", "Mutation.issueToken", "agentOrReviewer", "tokens", "Issue (or rotate) an access token", 201),
  route("DELETE /providers/:providerCode/tokens/:tokenId", "Mutation.revokeToken", "agentOrReviewer", "tokens", "Revoke an access token"),
  route("POST /providers/:providerCode/domains", "Mutation.requestDomainChallenge", "agent", "trust", "Ask for a challenge to prove control of a domain", 201),
  route("POST /providers/:providerCode/domains/:domain/check", "Mutation.checkDomain", "agent", "trust", "Check the proof of a domain"),
  route("POST /providers/:providerCode/labels", "Mutation.setProviderLabels", "reviewer", "moderation", "Set a provider's labels, as reviewers curate them"),
  route("POST /providers/:providerCode/suspend", "Mutation.suspendProvider", "reviewer", "moderation", "Suspend an approved provider"),
  route("POST /providers/:providerCode/reinstate", "Mutation.reinstateProvider", "reviewer", "moderation", "Reinstate a suspended provider"),
  route("POST /providers/:providerCode/lifecycle", "Mutation.setProviderLifecycle", "agentOrReviewer", "providers", "Deprecate, retire or reactivate a provider"),
  route("GET /health/down", "Query.downProviders", "reviewer", "health", "Approved agents DOWN for more than 24 hours"),
  route("POST /providers/:providerCode/health/check", "Mutation.checkProviderHealth", "agentOrReviewer", "health", "Check the provider's endpoint now"),
  route("GET /events", "Query.events", "optional", "events", "The change log, paged by seq"),
  route("GET /reviews/queue", "Query.reviewQueue", "reviewer", "reviews", "The active review queue"),
  route("GET /reviews/:reviewCode", "Query.review", "agentOrReviewer", "reviews", "Read one review"),
  route("PATCH /reviews/:reviewCode", "Mutation.updateReview", "reviewer", "reviews", "Change a review's priority"),
  route("POST /reviews/:reviewCode/assign", "Mutation.assignReview", "reviewer", "reviews", "Assign a review"),
  route("POST /reviews/:reviewCode/decision", "Mutation.decideReview", "reviewer", "reviews", "Approve, reject or request changes"),
  route("POST /reviews/:reviewCode/comments", "Mutation.commentOnReview", "agentOrReviewer", "reviews", "Comment on a review", 201),
  route("GET /api-keys", "Query.apiKeys", "admin", "api-keys", "List the registry's API keys"),
  route("POST /api-keys", "Mutation.createApiKey", "admin", "api-keys", "Make a read key; its secret is answered once", 201),
  route("DELETE /api-keys/:keyId", "Mutation.revokeApiKey", "admin", "api-keys", "Revoke an API key"),
  route("GET /webhooks", "Query.webhooks", "agentOrReviewer", "webhooks", "List the caller's webhook subscriptions (a reviewer's: all)"),
  route("POST /webhooks", "Mutation.createWebhook", "agentOrReviewer", "webhooks", "Subscribe a URL to events; the signing secret is answered once", 201),
  route("GET /webhooks/:webhookId", "Query.webhook", "agentOrReviewer", "webhooks", "Read one webhook subscription"),
  route("DELETE /webhooks/:webhookId", "Mutation.deleteWebhook", "agentOrReviewer", "webhooks", "Delete a webhook subscription"),
  route("GET /webhooks/:webhookId/deliveries", "Query.webhookDeliveries", "agentOrReviewer", "webhooks", "A subscription's deliveries and their attempts"),
  route("POST /webhooks/:webhookId/deliveries/:deliveryId/retry", "Mutation.retryWebhookDelivery", "agentOrReviewer", "webhooks", "Deliver one message again", 202),
  route("POST /webhooks/:webhookId/test", "Mutation.testWebhook", "agentOrReviewer", "webhooks", "Send a test ping", 202),
  route("GET /mirror/sources", "Query.mirrorSources", "admin", "mirror", "List the mirror sources with their sync state"),
  route("POST /mirror/sources", "Mutation.createMirrorSource", "admin", "mirror", "Add a registry to mirror", 201),
  route("GET /mirror/sources/:sourceId", "Query.mirrorSource", "admin", "mirror", "Read a mirror source with its sync state and counts"),
  route("PATCH /mirror/sources/:sourceId", "Mutation.updateMirrorSource", "admin", "mirror", "Change a mirror source"),
  route("DELETE /mirror/sources/:sourceId", "Mutation.deleteMirrorSource", "admin", "mirror", "Remove a mirror source (its providers stay)"),
  route("POST /mirror/sources/:sourceId/sync", "Mutation.syncMirrorSource", "admin", "mirror", "Start a sync of the source now", 202),
  mcpRoute("GET /servers", "Query.mcpServers", "List MCP servers (the MCP registry's API)"),
  mcpRoute("GET /servers/:serverName/versions", "Query.mcpServerVersions", "List all versions of an MCP server (the MCP registry's API)"),
  mcpRoute("GET /servers/:serverName/versions/:version", "Query.mcpServerVersion", "Get one version of an MCP server, or `latest` (the MCP registry's API)"),
];

/**
 * Arguments that REST takes from a header instead of the body: a mutation's `ifVersion` is the
 * `If-Match` header there, so a REST body keeps to the resource's own fields.
 */
export const HEADER_ARGUMENTS: ReadonlyMap<string, string> = new Map([["ifVersion", "If-Match"]]);

/** The arguments a route's operation takes from its path, query string or body. */
export function restArguments<A extends { name: string }>(args: readonly A[]): A[] {
  return args.filter((a) => !HEADER_ARGUMENTS.has(a.name));
}

/** The full path of a route's path under its base, e.g. `/api/v1/providers/:providerCode`. */
export function restPath(path: string, base: RestBase = REST_BASE): string {
  return path === "/" ? base : `${base}${path}`;
}

/** A path as URI templates and the OpenAPI document write it: `:providerCode` becomes `{providerCode}`. */
export function pathTemplate(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, "{$1}");
}

/** `:name` placeholders of a path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);
}

/** Matches a request path (relative to its base) against a route path; answers its parameters. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  return matchSegments(segmentsOf(pattern), segmentsOf(path));
}

const segmentsOf = (path: string) => path.split("/").filter(Boolean);

function matchSegments(want: readonly string[], got: readonly string[]): Record<string, string> | null {
  if (want.length !== got.length) return null;
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    if (!w.startsWith(":") && w !== got[i]) return null;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    if (!w.startsWith(":")) continue;
    try {
      params[w.slice(1)] = decodeURIComponent(got[i] as string);
    } catch {
      return null;
    }
  }
  return params;
}

/** The table split into segments once: every request is matched against it. */
const COMPILED = REST_ROUTES.map((route) => ({
  route,
  segments: segmentsOf(route.path),
  fixed: !route.path.includes(":"),
}));

/**
 * The routes a path (relative to `base`) matches, with their parameters. A fixed segment wins
 * over a parameter: when a route without parameters matches (`/reviews/queue`), only such routes are
 * answered, not `/reviews/{reviewCode}`.
 */
export function routesOf(
  relative: string,
  base: RestBase = REST_BASE,
): { route: RestRoute; params: Record<string, string> }[] {
  const got = segmentsOf(relative);
  const matches: { route: RestRoute; params: Record<string, string>; fixed: boolean }[] = [];
  for (const { route, segments, fixed } of COMPILED) {
    if (route.base !== base) continue;
    const params = matchSegments(segments, got);
    if (params) matches.push({ route, params, fixed });
  }
  return matches.some((m) => m.fixed) ? matches.filter((m) => m.fixed) : matches;
}
