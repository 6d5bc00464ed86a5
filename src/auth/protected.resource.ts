/**
 * The registry as an OAuth 2.1 protected resource: its metadata (RFC 9728), which a client reads,
 * from a 401's `WWW-Authenticate`, to learn which authorization servers issue tokens for it and
 * which scopes it knows.
 */
import { type Config, SERVICE_NAME } from "../config.ts";
import { SCOPE_ROLES } from "./roles.ts";

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** The metadata document of the registry at `base` (PUBLIC_URL, else the request's origin). */
export function protectedResourceMetadata(config: Pick<Config, "accessTokens">, base: string) {
  return {
    resource: base,
    authorization_servers: config.accessTokens.issuers.map((i) => i.issuer),
    scopes_supported: Object.keys(SCOPE_ROLES),
    bearer_methods_supported: ["header"],
    resource_name: SERVICE_NAME,
  };
}
