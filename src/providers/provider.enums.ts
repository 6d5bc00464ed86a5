/**
 * The enumerations of a provider profile (API.md §1). Plain lists with no imports, so that the
 * pages (src/web) offer the server's own choices without loading the validation library.
 */
export const AGENT_TYPES = ["ASSISTANT", "AUTONOMOUS", "WORKFLOW", "TOOL_SERVER", "MULTI_AGENT"] as const;
export const VISIBILITIES = ["PUBLIC", "UNLISTED", "PRIVATE"] as const;
export const TRUST_TIERS = ["UNVERIFIED", "VERIFIED", "TRUSTED", "OFFICIAL"] as const;
export const REVIEW_STAGES = [
  "SUBMITTED",
  "IN_REVIEW",
  "CHANGES_REQUESTED",
  "APPROVED",
  "REJECTED",
  "SUSPENDED",
] as const;
export const MODEL_ROLES = ["PRIMARY", "FALLBACK", "EMBEDDING", "OTHER"] as const;
export const TOOL_KINDS = ["MCP", "FUNCTION", "HTTP", "BUILTIN"] as const;
export const TOOL_SCOPES = ["READ_ONLY", "WRITE", "DESTRUCTIVE", "EXTERNAL"] as const;
export const PROTOCOLS = ["A2A", "MCP", "HTTP_JSON", "OPENAI_COMPATIBLE", "OTHER"] as const;
export const AUTH_SCHEMES = ["NONE", "BEARER", "API_KEY", "OAUTH2", "MTLS"] as const;
export const HUMAN_OVERSIGHT = ["NONE", "ON_REQUEST", "ALWAYS"] as const;
export const ROLE_KINDS = ["OWNER", "MAINTAINER", "SECURITY_CONTACT"] as const;
/** Package registries an MCP server ships through (server.json's `registryType`). */
export const PACKAGE_REGISTRIES = ["NPM", "PYPI", "OCI", "NUGET", "MCPB", "CARGO"] as const;
export type PackageRegistry = (typeof PACKAGE_REGISTRIES)[number];
/** How a client talks to a package it started (server.json's `transport.type`). */
export const PACKAGE_TRANSPORTS = ["STDIO", "STREAMABLE_HTTP", "SSE"] as const;
/** How an MCP client talks to a remote endpoint (server.json's `remotes[].type`). */
export const ENDPOINT_TRANSPORTS = ["STREAMABLE_HTTP", "SSE"] as const;
/** How a client reads a variable's or an argument's value (server.json's `format`). */
export const INPUT_FORMATS = ["STRING", "NUMBER", "BOOLEAN", "FILEPATH"] as const;
export const ARGUMENT_KINDS = ["NAMED", "POSITIONAL"] as const;
