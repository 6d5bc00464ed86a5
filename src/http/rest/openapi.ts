/**
 * The OpenAPI 3.1 document of the REST routes (API.md §4), served at /openapi.json and /openapi.yaml.
 *
 * SOFA generates the routes from REST_ROUTES and an OpenAPI 3.0 document of them; that document stays
 * the source of the paths, their methods and their parameters. What SOFA gets wrong for this API is
 * rebuilt here, from the same GraphQL schema and the same route table:
 * - component schemas: SOFA writes 3.0 schemas that mark nothing nullable or required; ours are
 *   walked from the GraphQL types (non-null → `required`, nullable → `type: [T, "null"]` or
 *   `oneOf: [$ref, {type: "null"}]`, DateTime and JSON scalars, enums as string enums);
 * - operations: SOFA lists a mutation's variables as query parameters too; here a body route takes
 *   its non-path arguments from a JSON body only (what the guard in rest.plugin.ts enforces), a path
 *   parameter never appears in the body, DELETE has no body, and a PATCH body is a JSON Merge Patch;
 * - full paths under /api/v1 or /v0.1 (a client's base URL is the origin), the GraphQL field name as
 *   operationId, the route's own success status, bearer security from the route's `auth`, the
 *   problem+json error answers, the conditional-request and caching headers of API.md §4;
 * - only the components the routes reach, so the document lints clean (redocly.yaml, .spectral.yaml;
 *   tests/rest/openapi.lint.test.ts).
 */
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isIntrospectionType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from "graphql";
import { useSofa } from "sofa-api";
import { SERVICE_VERSION } from "../../config.ts";
import { ERROR_STATUS, ERROR_TITLE, type ErrorCode } from "../../errors.ts";
import {
  JSON_ARGUMENT_SCHEMAS,
  JSON_COMPONENT_SCHEMAS,
  JSON_FIELD_SCHEMAS,
  JSON_RESULT_SCHEMAS,
} from "../../interop/interop.openapi.ts";
import {
  type Auth,
  pathParams,
  pathTemplate,
  REST_BASES,
  REST_ROUTES,
  type RestRoute,
  restArguments,
  restPath,
} from "./rest.routes.ts";
import { sofaConfig } from "./sofa.handlers.ts";

type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { openapi: "3.1.0"; paths: Record<string, Record<string, Json>> };

interface SofaParameter {
  name: string;
  in: "path" | "query";
}
type SofaDocument = { paths: Record<string, Record<string, { parameters?: SofaParameter[] }>> };

const BODY_METHODS = new Set(["POST", "PATCH", "PUT"]);

// ── Schemas from GraphQL types ──────────────────────────────────────────────────────────────────

const SCALARS: Record<string, Json> = {
  String: { type: "string" },
  ID: { type: "string" },
  Int: { type: "integer", format: "int32" },
  Float: { type: "number", format: "double" },
  Boolean: { type: "boolean" },
  DateTime: { type: "string", format: "date-time", description: "An ISO-8601 instant in UTC" },
  // Any value but null, and no `type`: generated clients type it `unknown` (with a list of types, its
  // object member would be an object without keys). A nullable JSON field drops the `not` (schemaOf).
  JSON: { description: "Any JSON value", not: { type: "null" } },
};

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

/** A GraphQL type as a schema, ignoring its outermost nullability. */
function nonNullSchema(type: GraphQLType): Json {
  if (isNonNullType(type)) return nonNullSchema(type.ofType);
  if (isListType(type)) return { type: "array", items: schemaOf(type.ofType) };
  if (isScalarType(type)) {
    const scalar = SCALARS[type.name];
    if (!scalar) throw new Error(`No OpenAPI schema for the scalar ${type.name}`);
    return { ...scalar };
  }
  return ref(type.name);
}

/** A GraphQL type as a schema: a nullable type admits null (3.1 style). */
function schemaOf(type: GraphQLType): Json {
  const schema = nonNullSchema(type);
  if (isNonNullType(type)) return schema;
  if (schema.not) {
    const { not: _null, ...anything } = schema;
    return anything;
  }
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  if (Array.isArray(schema.type)) return { ...schema, type: [...schema.type, "null"] };
  if (schema.$ref) return { oneOf: [schema, { type: "null" }] };
  return schema;
}

function withDescription(schema: Json, description: string | null | undefined): Json {
  return description ? { ...schema, description } : schema;
}

/**
 * An object schema of fields or arguments. An input requires its non-null arguments; an output
 * requires every field, nullable ones included: an answer always carries each key (null when it has
 * no value), and generated clients should type it `T | null`, not `T | null | undefined`.
 */
function objectSchema(
  fields: readonly { name: string; type: GraphQLType; description?: string | null }[],
  options: { description?: string | null | undefined; closed: boolean },
): Json {
  const required = fields.filter((f) => !options.closed || isNonNullType(f.type)).map((f) => f.name);
  return {
    type: "object",
    ...(options.description ? { description: options.description } : {}),
    properties: Object.fromEntries(fields.map((f) => [f.name, withDescription(schemaOf(f.type), f.description)])),
    ...(required.length ? { required } : {}),
    // Inputs are closed: an unknown key is refused with 400. Outputs may grow.
    ...(options.closed ? { additionalProperties: false } : {}),
  };
}

function namedTypeSchema(type: GraphQLNamedType): Json | undefined {
  if (isEnumType(type)) {
    return withDescription({ type: "string", enum: type.getValues().map((v) => v.value) }, type.description);
  }
  if (isInputObjectType(type)) {
    return objectSchema(Object.values(type.getFields()), { description: type.description, closed: true });
  }
  if (isObjectType(type)) {
    return objectSchema(Object.values(type.getFields()), { description: type.description, closed: false });
  }
  return undefined; // scalars are inlined
}

/** Every enum, input and object type of the schema except the root operation types. */
function componentSchemas(schema: GraphQLSchema): Record<string, Json> {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  const schemas: Record<string, Json> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || roots.has(type as never)) continue;
    const built = namedTypeSchema(type);
    if (built) schemas[type.name] = built;
  }
  // JSON fields whose shape is known, though GraphQL cannot say it (maps keyed by name).
  for (const [typeName, fields] of Object.entries(JSON_FIELD_SCHEMAS)) {
    const properties = schemas[typeName]?.properties as Record<string, Json> | undefined;
    for (const [field, fieldSchema] of Object.entries(fields)) {
      if (!properties?.[field]) throw new Error(`No JSON field ${typeName}.${field} to describe`);
      properties[field] = fieldSchema;
    }
  }
  return schemas;
}

// ── Errors ──────────────────────────────────────────────────────────────────────────────────────

const PROBLEM_SCHEMA: Json = {
  type: "object",
  description: "An RFC 9457 problem document, sent as application/problem+json.",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string", description: "A URI reference naming the problem type; `about:blank` here." },
    title: { type: "string" },
    status: { type: "integer", description: "The HTTP status" },
    detail: { type: "string", description: "What went wrong, for a human" },
    code: { type: "string", enum: Object.keys(ERROR_STATUS), description: "The error code (API.md §5)" },
    errors: {
      type: "array",
      description: "The input fields at fault, for BAD_USER_INPUT",
      items: {
        type: "object",
        required: ["path", "message"],
        properties: {
          path: {
            type: "string",
            format: "json-pointer",
            description:
              "A JSON Pointer (RFC 6901) to the value at fault: into the body (`/endpoint/url`, `/labels/2`), " +
              '`/<name>` for a query or path parameter or a header (`/Idempotency-Key`), `""` for the whole body',
          },
          message: { type: "string" },
          source: {
            type: ["string", "null"],
            description:
              "POST /api/v1/providers/import only: the JSON pointer into the imported document the field came from (null: from the request body)",
          },
        },
      },
    },
  },
};

const ERROR_HEADERS: Partial<Record<ErrorCode, Json>> = {
  UNAUTHENTICATED: { "WWW-Authenticate": { description: "`Bearer`", schema: { type: "string" } } },
  METHOD_NOT_ALLOWED: { Allow: { description: "The methods the path allows", schema: { type: "string" } } },
  RATE_LIMITED: { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } },
  UNSUPPORTED_MEDIA_TYPE: {
    "Accept-Patch": { description: "On a PATCH: the media types its body may have", schema: { type: "string" } },
  },
};

/** One reusable response per error code, `#/components/responses/<CODE>`. */
function errorResponses(): Record<string, Json> {
  return Object.fromEntries(
    (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [
      code,
      {
        description: `${ERROR_TITLE[code]} (${code})`,
        ...(ERROR_HEADERS[code] ? { headers: ERROR_HEADERS[code] } : {}),
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );
}

/** The errors an operation can answer besides the ones every route may. */
const OPERATION_ERRORS: Record<string, ErrorCode[]> = {
  createProvider: ["CONFLICT", "UNPROCESSABLE_CONTENT"],
  importProvider: ["CONFLICT", "UNPROCESSABLE_CONTENT"],
  issueToken: ["CONFLICT"],
  // A PATCH moves the review workflow too (resubmission), which refuses a concurrent move with 409.
  updateProvider: ["CONFLICT", "PRECONDITION_FAILED"],
  // The workflow's moves: a transition the current state does not allow is a 409 naming it.
  assignReview: ["CONFLICT"],
  decideReview: ["CONFLICT"],
  updateReview: ["CONFLICT"],
  suspendProvider: ["CONFLICT"],
  reinstateProvider: ["CONFLICT"],
  // A transition the lifecycle does not allow (409 naming the state); a stale If-Match (412).
  setProviderLifecycle: ["CONFLICT", "PRECONDITION_FAILED"],
  // Asking from before the log's retention.
  events: ["GONE"],
  // A providerCode the caller may not see (404); an agent's subscriptions beyond the limit (409).
  createWebhook: ["NOT_FOUND", "CONFLICT"],
  // A disabled subscription, or a delivery being sent right now.
  retryWebhookDelivery: ["CONFLICT"],
  testWebhook: ["CONFLICT"],
};

const REQUIRES_CREDENTIALS = new Set<Auth>(["agent", "reviewer", "agentOrReviewer", "admin"]);

function errorCodesOf(route: RestRoute, name: string): ErrorCode[] {
  const codes: ErrorCode[] = ["BAD_USER_INPUT"];
  // Every route refuses a bad credential with 401, even one that needs none (API.md §3).
  codes.push("UNAUTHENTICATED");
  if (REQUIRES_CREDENTIALS.has(route.auth)) codes.push("FORBIDDEN");
  if (pathParams(route.path).length) codes.push("NOT_FOUND");
  codes.push(...(OPERATION_ERRORS[name] ?? []));
  if (BODY_METHODS.has(route.method)) codes.push("PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE");
  codes.push("RATE_LIMITED", "INTERNAL");
  return codes.sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
}

function securityOf(auth: Auth): Json[] {
  if (auth === "none") return [];
  if (auth === "optional") return [{}, { bearer: [] }];
  return [{ bearer: [] }];
}

// ── Operations ──────────────────────────────────────────────────────────────────────────────────

/** A write's answer is tagged with the version it made; a read's tag is led by the version it shows. */
const ETAG_HEADER: Json = {
  ETag: {
    description: 'The profile version, quoted: `"<version>"`; send it back as If-Match',
    schema: { type: "string" },
  },
};
const PROFILE_ETAG_HEADER: Json = {
  ETag: {
    description:
      'The version, then a hash of this answer: `"<version>-<hash>"`; a strong validator for If-None-Match, ' +
      "and If-Match takes it as the version it names",
    schema: { type: "string" },
  },
};
/** What every GET answers with its 200 (and its 304): API.md §4, HTTP conventions. */
const READ_HEADERS: Json = {
  ETag: {
    description: "A strong validator of this answer; send it back as If-None-Match to be answered 304",
    schema: { type: "string" },
  },
  "Cache-Control": {
    description:
      "How long caches may keep the answer: shared caches briefly for an anonymous read of public data, " +
      "never for an answer that depends on the caller's credentials",
    schema: { type: "string" },
  },
  Vary: {
    description: "`Authorization` among others: the answer depends on who asks",
    schema: { type: "string" },
  },
};
const NO_STORE_HEADER: Json = {
  "Cache-Control": { description: "`no-store`: the answer holds a token in plaintext", schema: { type: "string" } },
};
const RESPONSE_HEADERS: Record<string, Json> = {
  provider: PROFILE_ETAG_HEADER,
  updateProvider: ETAG_HEADER,
  setProviderLifecycle: ETAG_HEADER,
  createProvider: {
    ...NO_STORE_HEADER,
    "Idempotent-Replayed": {
      description: "`true` when the answer replays the intake first made with the same Idempotency-Key",
      schema: { type: "string" },
    },
  },
  issueToken: NO_STORE_HEADER,
  createWebhook: NO_STORE_HEADER,
  createApiKey: NO_STORE_HEADER,
};
RESPONSE_HEADERS.importProvider = RESPONSE_HEADERS.createProvider as Json;

const IF_MATCH: Json = {
  name: "If-Match",
  in: "header",
  required: false,
  description:
    'The version the caller last saw, `"<version>"`, or the ETag of the read it saw (`"<version>-<hash>"`), or `*`; ' +
    "a stale one is refused with 412.",
  schema: { type: "string" },
};

const IF_NONE_MATCH: Json = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "ETags the caller holds (or `*`); when one matches the answer's, it is 304 without a body.",
  schema: { type: "string" },
};

const IDEMPOTENCY_KEY: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1–255 visible ASCII characters (a UUID). A retry with the same key and body within 24 hours replays the first answer without its access token; the same key with another body is 422; while the first request runs, 409.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

function fieldOf(schema: GraphQLSchema, route: RestRoute): GraphQLField<unknown, unknown> {
  const [kind, name] = route.field.split(".") as [string, string];
  const field = (kind === "Query" ? schema.getQueryType() : schema.getMutationType())?.getFields()[name];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown field ${route.field}`);
  return field;
}

/** The operation that creates what a PATCH changes: what it requires, a PATCH cannot remove. */
const CREATED_BY: Record<string, string> = { updateProvider: "createProvider" };

/** Write-only members a PATCH clears with null, though no answer shows them (a mirror source's credential). */
const CLEARED_UNSEEN: Record<string, readonly string[]> = { updateMirrorSource: ["credential"] };

/**
 * A PATCH body is a JSON Merge Patch (RFC 7396): `null` removes a member, which only a field the
 * record may lack can take. Such a field is nullable in the answer and not required at creation;
 * every other property refuses null (a 400), though its GraphQL argument is nullable (optional).
 */
function mergePatchSchema(
  schema: GraphQLSchema,
  field: GraphQLField<unknown, unknown>,
  bodyArgs: readonly GraphQLArgument[],
): Json {
  const answer = getNamedType(field.type);
  const answerFields = isObjectType(answer) ? answer.getFields() : {};
  const creation = CREATED_BY[field.name];
  const created = creation ? schema.getMutationType()?.getFields()[creation] : undefined;
  if (creation && !created) throw new Error(`No mutation ${creation}, which creates what ${field.name} changes`);
  const requiredAtCreation = new Set(created?.args.filter((a) => isNonNullType(a.type)).map((a) => a.name));
  const body = objectSchema(bodyArgs, { closed: true });
  const properties = body.properties as Record<string, Json>;
  for (const arg of bodyArgs) {
    const answered = answerFields[arg.name];
    if (answered && !isNonNullType(answered.type) && !requiredAtCreation.has(arg.name)) continue;
    if (CLEARED_UNSEEN[field.name]?.includes(arg.name)) continue;
    properties[arg.name] = withDescription(nonNullSchema(arg.type), arg.description);
  }
  return { ...body, minProperties: 1 };
}

function parameterOf(arg: GraphQLArgument, where: "path" | "query"): Json {
  const schema = nonNullSchema(arg.type);
  return {
    name: arg.name,
    in: where,
    required: where === "path" || isNonNullType(arg.type),
    ...(arg.description ? { description: arg.description } : {}),
    schema,
    // Lists travel comma-separated: `?labels=a,b`.
    ...(schema.type === "array" ? { style: "form", explode: false } : {}),
  };
}

const MERGE_PATCH_DESCRIPTION =
  "The fields to change, as a JSON Merge Patch (RFC 7396), sent as application/json or " +
  "application/merge-patch+json: a member absent stays as it is, `null` clears a nullable field, and " +
  "`null` for a required one is a 400 naming it.";

function operationOf(schema: GraphQLSchema, route: RestRoute, sofaParameters: readonly SofaParameter[]): Json {
  const field = fieldOf(schema, route);
  const args = new Map(field.args.map((a) => [a.name, a]));
  const inPath = new Set(pathParams(route.path));
  const hasBody = BODY_METHODS.has(route.method);

  // SOFA's parameters, minus what it gets wrong: a body route's variables are not query parameters.
  const parameters = sofaParameters
    .filter((p) => p.in === "path" || !hasBody)
    .map((p) => {
      const arg = args.get(p.name);
      if (!arg) throw new Error(`SOFA lists ${p.name} for ${route.field}, which has no such argument`);
      return parameterOf(arg, inPath.has(p.name) ? "path" : "query");
    });
  for (const name of inPath) {
    if (!parameters.some((p) => p.name === name)) throw new Error(`SOFA lost the path parameter ${name}`);
  }
  if (field.name === "updateProvider" || field.name === "setProviderLifecycle") parameters.push(IF_MATCH);
  if (field.name === "createProvider" || field.name === "importProvider") parameters.push(IDEMPOTENCY_KEY);
  const isRead = route.method === "GET";
  if (isRead) parameters.push(IF_NONE_MATCH);

  const bodyArgs = restArguments(field.args).filter((a) => !inPath.has(a.name));
  const isPatch = route.method === "PATCH";
  const body = !hasBody
    ? undefined
    : isPatch
      ? mergePatchSchema(schema, field, bodyArgs)
      : objectSchema(bodyArgs, { closed: true });
  // JSON arguments whose shape is known (an imported document is an object).
  for (const [name, argSchema] of Object.entries(JSON_ARGUMENT_SCHEMAS[field.name] ?? {})) {
    if (body) (body.properties as Record<string, Json>)[name] = argSchema;
  }
  const bodyRequired = isPatch || bodyArgs.some((a) => isNonNullType(a.type));
  const bodyTypes = isPatch ? ["application/json", "application/merge-patch+json"] : ["application/json"];

  const headers = { ...(isRead ? READ_HEADERS : {}), ...RESPONSE_HEADERS[field.name] };
  const responses: Record<string, Json> = {
    [String(route.status)]: {
      description: route.summary,
      ...(Object.keys(headers).length ? { headers } : {}),
      // A REST answer is never a bare null: a lookup that is nullable over GraphQL (null with a
      // NOT_FOUND error) answers 404 here, so the 200 schema is the non-null type.
      content: { "application/json": { schema: JSON_RESULT_SCHEMAS[field.name] ?? nonNullSchema(field.type) } },
    },
  };
  if (isRead) responses["304"] = { description: "Not Modified: If-None-Match matched; no body", headers };
  if (field.name === "health") {
    responses["503"] = {
      description: "The database does not answer",
      content: { "application/json": { schema: ref("Health") } },
    };
  }
  for (const code of errorCodesOf(route, field.name)) {
    responses[String(ERROR_STATUS[code])] = { $ref: `#/components/responses/${code}` };
  }

  return {
    operationId: field.name,
    summary: route.summary,
    ...(field.description ? { description: field.description } : {}),
    tags: [route.tag],
    security: securityOf(route.auth),
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: bodyRequired,
            ...(isPatch ? { description: MERGE_PATCH_DESCRIPTION } : {}),
            content: Object.fromEntries(bodyTypes.map((type) => [type, { schema: body }])),
          },
        }
      : {}),
    responses,
  };
}

// ── The document ────────────────────────────────────────────────────────────────────────────────

const TAGS: Record<string, string> = {
  service: "What the service is and whether it is up",
  providers: "Agents: intake, profiles, owner updates and lifecycle",
  versions: "A profile's recorded versions and the changes between them",
  interop: "A2A agent cards and MCP server.json, out and in",
  tokens: "An agent's access tokens",
  "api-keys": "Read keys for clients that cannot do OAuth: made, listed and revoked by admins",
  mirror: "Registries this one mirrors (the MCP registry, another Agent Registry): managed by admins",
  moderation: "Reviewers suspend and reinstate approved agents",
  trust: "An agent's verified publisher domains: a challenge, then a check of its proof",
  reviews: "The review queue and its workflow",
  health: "Whether each agent answers, as the registry's prober finds it: a check now, and the agents long down",
  events: "The change log: every committed change to a provider or a review, in commit order, with its JSON Patch",
  webhooks: "Signed pushes of the event log to a URL: subscriptions, their deliveries, redelivery and a test ping",
  mcp:
    "The MCP registry's read API under /v0.1, as its OpenAPI document names it: the approved, public MCP servers, " +
    "their versions and one version, for MCP clients and subregistry tools",
};

function tagsOf(routes: readonly RestRoute[]): Json[] {
  return [...new Set(routes.map((r) => r.tag))].map((name) => {
    const description = TAGS[name];
    if (!description) throw new Error(`The tag ${name} has no description`);
    return { name, description };
  });
}

/**
 * The components the paths reach, through any chain of `$ref`s. The GraphQL schema has types no
 * REST route answers (subscription payloads, Relay's), and not every error code is an operation's
 * answer (405 is answered for a method no operation has).
 */
function reachable(paths: Json, components: Record<string, Record<string, Json>>): Json {
  const kept: Record<string, Record<string, Json>> = {};
  const visit = (node: unknown): void => {
    if (!node || typeof node !== "object") return; // arrays are objects: their entries are visited too
    for (const [key, value] of Object.entries(node)) {
      if (key !== "$ref") {
        visit(value);
        continue;
      }
      const [, , kind, name] = String(value).split("/") as [string, string, string, string];
      if (kept[kind]?.[name]) continue;
      const target = components[kind]?.[name];
      if (!target) throw new Error(`Nothing at ${value}`);
      kept[kind] = { ...kept[kind], [name]: target };
      visit(target);
    }
  };
  visit(paths);
  return kept;
}

export function openApiDocument(schema: GraphQLSchema): OpenApiDocument {
  const sofas = new Map(
    REST_BASES.map((base) => [
      base,
      useSofa({
        ...sofaConfig(schema, base),
        openAPI: { info: { title: "Agent Registry", version: SERVICE_VERSION } },
      } as never).openAPIDocument as unknown as SofaDocument,
    ]),
  );

  const paths: OpenApiDocument["paths"] = {};
  for (const route of REST_ROUTES) {
    const template = pathTemplate(route.path);
    const method = route.method.toLowerCase();
    const generated = sofas.get(route.base)?.paths[template]?.[method];
    if (!generated) throw new Error(`SOFA generated no operation for ${route.method} ${route.path}`);
    const path = restPath(template, route.base);
    paths[path] = { ...paths[path], [method]: operationOf(schema, route, generated.parameters ?? []) };
  }

  const components = reachable(paths, {
    schemas: { ...componentSchemas(schema), ...JSON_COMPONENT_SCHEMAS, Problem: PROBLEM_SCHEMA },
    responses: errorResponses(),
  });
  // A copy: the shared constants above must not be reachable from a caller's document.
  return structuredClone({
    openapi: "3.1.0" as const,
    info: {
      title: "Agent Registry",
      version: SERVICE_VERSION,
      description:
        "A registry of AI agents: intake, review and versioned profiles. This document covers the REST " +
        "routes under /api/v1, and the MCP registry's read API under /v0.1; the same operations are " +
        "available over GraphQL at /graphql. Errors are " +
        "RFC 9457 problem documents (application/problem+json). Every GET route also answers HEAD, " +
        "with the same status and headers and no body.",
    },
    servers: [{ url: "/", description: "This server; paths include their prefix, /api/v1 or /v0.1" }],
    tags: tagsOf(REST_ROUTES),
    paths,
    components: {
      ...components,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <token>`. An agent token (`agr_…`, issued at intake and by " +
            "POST /api/v1/providers/{providerCode}/tokens, shown once), which acts for its own provider " +
            "only; an API key (`ark_…`, made by an admin, shown once), which reads; an OAuth access token " +
            "from an issuer the registry lists (scopes `registry:read`, `registry:review`, `registry:admin`, " +
            "or groups the operator maps to roles; GET /.well-known/oauth-protected-resource); or a " +
            "reviewer JWT (claim `roles` containing `reviewer` or `admin`; `npm run reviewer-token` mints " +
            "one locally). Missing, invalid, revoked or expired credentials get 401. A registry run with " +
            "READ_ACCESS=authenticated answers every operation 401 without a credential.",
        },
      },
    },
  });
}
