/**
 * OpenAPI schemas for the JSON-typed fields of the interop types: A2A maps keyed by a scheme's name,
 * server.json, whose `$schema` member no GraphQL name can spell, and the MCP registry's answers,
 * whose `_meta` keys no GraphQL name can spell either. src/http/rest/openapi.ts puts
 * them in place of the generic "any JSON value".
 */
import { OFFICIAL_META } from "./mcp.registry.rules.ts";
import { SERVER_DESCRIPTION_MAX, SERVER_SCHEMA_URL } from "./server.json.ts";

type Json = Record<string, unknown>;

const text = { type: "string" };
const scheme = (kind: string, required: string[], properties: Json): Json => ({
  type: "object",
  required: [kind],
  additionalProperties: false,
  properties: { [kind]: { type: "object", required, properties: { description: text, ...properties } } },
});

/** Per operation, per JSON argument of its body: the schema that replaces the JSON scalar's. */
export const JSON_ARGUMENT_SCHEMAS: Record<string, Record<string, Json>> = {
  importProvider: {
    document: {
      type: "object",
      // Any members: generated clients type it `Record<string, unknown>`, not an object without keys.
      additionalProperties: true,
      description:
        "The agent card (A2A v1.0) or server.json (MCP registry, schema 2025-12-11), as JSON; nested at most 32 deep",
    },
  },
};

/** Per GraphQL type, per field: the schema that replaces the JSON scalar's. */
export const JSON_FIELD_SCHEMAS: Record<string, Record<string, Json>> = {
  AgentCard: {
    securitySchemes: {
      type: "object",
      description: "A2A `map<string, SecurityScheme>`: each scheme is an object with one member naming its kind",
      additionalProperties: {
        oneOf: [
          scheme("httpAuthSecurityScheme", ["scheme"], { scheme: text, bearerFormat: text }),
          scheme("apiKeySecurityScheme", ["location", "name"], {
            location: { type: "string", enum: ["header", "query", "cookie"] },
            name: text,
          }),
          scheme("mtlsSecurityScheme", [], {}),
        ],
      },
    },
  },
  AgentCardSecurityRequirement: {
    schemes: {
      type: "object",
      description: "A security scheme's name → the scopes it needs (`{ list: [] }`: none)",
      additionalProperties: {
        type: "object",
        required: ["list"],
        properties: { list: { type: "array", items: { type: "string" } } },
      },
    },
  },
};

/** A server.json as this registry writes it. */
const SERVER_JSON: Json = {
  type: "object",
  description: `An MCP server.json: valid against ${SERVER_SCHEMA_URL}, the schema its \`$schema\` names, whose members are summarised here`,
  required: ["$schema", "name", "description", "version"],
  additionalProperties: true,
  properties: {
    $schema: { type: "string", const: SERVER_SCHEMA_URL },
    name: {
      type: "string",
      description: "Reverse-DNS: the profile's serverName, else `<the registry's host, reversed>/<providerCode>`",
    },
    title: { type: "string", description: "The profile's name, when it is not the part of `name` after the slash" },
    description: { type: "string", maxLength: SERVER_DESCRIPTION_MAX },
    version: { type: "string", description: "The profile's releaseVersion, else its version as `N.0.0`" },
    websiteUrl: { type: "string", description: "The profile's homepageUrl" },
    repository: { type: "object", additionalProperties: true, description: "The profile's repository" },
    remotes: {
      type: "array",
      // Any members: generated clients type them `Record<string, unknown>`, not objects without keys.
      items: { type: "object", additionalProperties: true },
      description: "The endpoint, when it speaks MCP",
    },
    packages: {
      type: "array",
      items: { type: "object", additionalProperties: true },
      description: "The profile's packages",
    },
  },
};

const instant = (description: string): Json => ({ type: "string", format: "date-time", description });

/**
 * Schemas the operations answering JSON refer to: the MCP registry's `ServerResponse` and
 * `ServerList` (tests/interop/mcp-registry/openapi.yaml), with what this registry always sends
 * marked required.
 */
export const JSON_COMPONENT_SCHEMAS: Record<string, Json> = {
  ServerJson: SERVER_JSON,
  McpServerResponse: {
    type: "object",
    description: "The MCP registry's `ServerResponse`: a server.json and what the registry says of it",
    required: ["server", "_meta"],
    properties: {
      server: { $ref: "#/components/schemas/ServerJson" },
      _meta: {
        type: "object",
        required: [OFFICIAL_META],
        additionalProperties: true,
        properties: {
          [OFFICIAL_META]: {
            type: "object",
            required: ["status", "statusChangedAt", "publishedAt", "updatedAt", "isLatest"],
            additionalProperties: false,
            properties: {
              status: {
                type: "string",
                enum: ["active", "deprecated", "deleted"],
                description: "The provider's lifecycle: ACTIVE, DEPRECATED, RETIRED (deleted)",
              },
              statusMessage: {
                type: "string",
                maxLength: 500,
                description: "The lifecycle message, when there is one",
              },
              statusChangedAt: instant("When the status last changed"),
              publishedAt: instant("When the first profile version of this version was recorded"),
              updatedAt: instant(
                "When the entry last changed: its newest profile version, its name, status or listing",
              ),
              isLatest: { type: "boolean", description: "Whether this is the version of the current profile" },
            },
          },
        },
      },
    },
  },
  McpServerList: {
    type: "object",
    description: "The MCP registry's `ServerList`",
    required: ["servers", "metadata"],
    properties: {
      servers: { type: "array", items: { $ref: "#/components/schemas/McpServerResponse" } },
      metadata: {
        type: "object",
        required: ["count"],
        properties: {
          nextCursor: {
            type: "string",
            description: "The cursor of the next page, whenever this one is full; absent on the last page",
          },
          count: { type: "integer", description: "Entries on this page" },
        },
      },
    },
  },
};

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** Per operation answering JSON: the schema of its answer. */
export const JSON_RESULT_SCHEMAS: Record<string, Json> = {
  serverJson: ref("ServerJson"),
  mcpServers: ref("McpServerList"),
  mcpServerVersions: ref("McpServerList"),
  mcpServerVersion: ref("McpServerResponse"),
};
