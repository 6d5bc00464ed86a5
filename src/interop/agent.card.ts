/**
 * A provider as an A2A agent card, following the A2A specification v1.0 (`lf.a2a.v1.AgentCard` of
 * a2aproject/A2A `specification/a2a.proto`, in its proto3 JSON form: camelCase names, a
 * `SecurityScheme` as a one-member object naming its kind, a `SecurityRequirement` as
 * `{ schemes: { <name>: { list: [scopes] } } }`). Pure: no database, no network.
 *
 * Every field the card carries is always filled, so the card never holds a `null` (the A2A JSON
 * schema has none): what the registry does not know is left out (`iconUrl`,
 * `capabilities.extendedAgentCard`) or given the value A2A takes for "absent". `signatures` is empty
 * here; the schema fills it for an approved agent (src/trust/card.signature.ts).
 */
import type { Profile } from "../providers/provider.rules.ts";

/** The A2A protocol version the cards follow, per interface (`AgentInterface.protocolVersion`). */
export const A2A_PROTOCOL_VERSION = "1.0";

export interface AgentInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
  inputModes: string[];
  outputModes: string[];
}

/** `SecurityScheme`: exactly one member, named after its kind. */
export type SecurityScheme =
  | { httpAuthSecurityScheme: { scheme: string; description: string; bearerFormat?: string } }
  | { apiKeySecurityScheme: { location: "header" | "query" | "cookie"; name: string; description: string } }
  | { mtlsSecurityScheme: { description: string } };

export interface SecurityRequirement {
  schemes: Record<string, { list: string[] }>;
}

/**
 * A2A `AgentCardSignature`: a JWS in the flattened JSON serialization without its payload (the card
 * itself, canonicalized). The registry puts everything in the protected header, so it never sends
 * `header` (RFC 7515 §7.2.1: absent when empty).
 */
export interface AgentCardSignature {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

export interface AgentCard {
  name: string;
  description: string;
  supportedInterfaces: AgentInterface[];
  provider: { organization: string; url: string };
  version: string;
  documentationUrl: string;
  capabilities: { streaming: boolean; pushNotifications: boolean; extensions: never[] };
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  signatures: AgentCardSignature[];
}

/** What the card is made from: the owner-editable profile, its code and its version. */
export type CardSource = Pick<Profile, "name" | "summary" | "description" | "capabilities" | "roles"> & {
  endpoint: NonNullable<Profile["endpoint"]>;
  providerCode: string;
  version: number;
};

/**
 * `endpoint.protocol` → `AgentInterface.protocolBinding`. An A2A endpoint is taken to use the
 * JSON-RPC binding (the binding A2A clients try first; the registry does not record which one);
 * other protocols keep their own name, an open-form binding A2A clients will not speak.
 */
const BINDINGS: Record<NonNullable<Profile["endpoint"]>["protocol"], string> = {
  A2A: "JSONRPC",
  MCP: "MCP",
  HTTP_JSON: "HTTP_JSON",
  OPENAI_COMPATIBLE: "OPENAI_COMPATIBLE",
  OTHER: "OTHER",
};

/** The security scheme (and its name in the card) for each `endpoint.authScheme`; none for NONE. */
export const SECURITY_SCHEMES: Record<NonNullable<Profile["endpoint"]>["authScheme"], [string, SecurityScheme] | null> =
  {
    NONE: null,
    BEARER: [
      "bearer",
      { httpAuthSecurityScheme: { scheme: "Bearer", description: "A bearer token in the Authorization header." } },
    ],
    API_KEY: [
      "apiKey",
      {
        apiKeySecurityScheme: {
          location: "header",
          name: "X-API-Key",
          description:
            "An API key. The registry does not record where the agent expects it; X-API-Key is the usual header.",
        },
      },
    ],
    // The registry records no OAuth 2.0 flows (which `oauth2SecurityScheme` requires); what a caller
    // sends is the access token, as a bearer token.
    OAUTH2: [
      "oauth2",
      {
        httpAuthSecurityScheme: {
          scheme: "Bearer",
          bearerFormat: "OAuth 2.0 access token",
          description: "An OAuth 2.0 access token, sent as a bearer token; the flows are not recorded by the registry.",
        },
      },
    ],
    MTLS: ["mtls", { mtlsSecurityScheme: { description: "Mutual TLS: a client certificate the agent trusts." } }],
  };

/** When no capability names a media type, the agent's defaults are plain text. */
const FALLBACK_MODES = ["text/plain"];

function union(lists: string[][]): string[] {
  return [...new Set(lists.flat())];
}

/** The card of a provider; `base` is the registry's public origin (for its documentation URL). */
export function agentCardOf(source: CardSource, base: string): AgentCard {
  const { endpoint } = source;
  const scheme = SECURITY_SCHEMES[endpoint.authScheme];
  // A handle (`@acme`), never an email address: the card is public.
  const owner = source.roles.find((r) => r.role === "OWNER" && !/.@/.test(r.subject));
  const profileUrl = `${base}/providers/${encodeURIComponent(source.providerCode)}`;
  const inputModes = union(source.capabilities.map((c) => c.inputModes));
  const outputModes = union(source.capabilities.map((c) => c.outputModes));
  return {
    name: source.name,
    description: source.description ?? source.summary,
    supportedInterfaces: [
      { url: endpoint.url, protocolBinding: BINDINGS[endpoint.protocol], protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    // The registry knows no organisation: the owner's handle when one is listed, else the agent itself.
    provider: { organization: owner?.subject.replace(/^@/, "") ?? source.name, url: new URL(endpoint.url).origin },
    version: String(source.version),
    documentationUrl: profileUrl,
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: scheme ? { [scheme[0]]: scheme[1] } : {},
    securityRequirements: scheme ? [{ schemes: { [scheme[0]]: { list: [] } } }] : [],
    defaultInputModes: inputModes.length ? inputModes : FALLBACK_MODES,
    defaultOutputModes: outputModes.length ? outputModes : FALLBACK_MODES,
    skills: source.capabilities.map((c) => ({
      id: c.key,
      name: c.name,
      description: c.description ?? c.name,
      tags: c.tags,
      examples: [],
      inputModes: c.inputModes,
      outputModes: c.outputModes,
    })),
    signatures: [],
  };
}
