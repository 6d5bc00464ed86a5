/**
 * The enumerations the pages offer as choices. They are the server's lists
 * (src/providers/provider.rules.ts, src/reviews/review.rules.ts), copied so that a page that only
 * needs a list does not load the validation library with them; tests/browser/client.test.ts fails
 * when a copy drifts from its source.
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
export const ACTIVE_STATUSES = ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] as const;
export const PRIORITIES = ["URGENT", "HIGH", "NORMAL", "LOW"] as const;
