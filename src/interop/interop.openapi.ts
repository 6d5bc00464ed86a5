/**
 * OpenAPI schemas for the JSON-typed fields of the interop types: A2A maps keyed by a scheme's name,
 * and server.json, whose `$schema` member no GraphQL name can spell. src/http/rest/openapi.ts puts
 * them in place of the generic "any JSON value".
 */
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

/** Per operation answering JSON: the schema of its answer. */
export const JSON_RESULT_SCHEMAS: Record<string, Json> = {
  serverJson: {
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
      repository: { type: "object", description: "The profile's repository" },
      remotes: { type: "array", items: { type: "object" }, description: "The endpoint, when it speaks MCP" },
      packages: { type: "array", items: { type: "object" }, description: "The profile's packages" },
    },
  },
};
