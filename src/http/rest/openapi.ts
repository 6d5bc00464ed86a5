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
 *   parameter never appears in the body, and DELETE has no body;
 * - full paths under /api/v1 (a client's base URL is the origin), the GraphQL field name as
 *   operationId, the route's own success status, bearer security from the route's `auth`, the
 *   problem+json error answers, and the If-Match / ETag headers.
 */
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
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
import { JSON_ARGUMENT_SCHEMAS, JSON_FIELD_SCHEMAS } from "../../interop/interop.openapi.ts";
import { type Auth, pathParams, pathTemplate, REST_ROUTES, type RestRoute, restPath } from "./rest.routes.ts";
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
  // Any value but null: a nullable JSON field adds "null" like any other type (schemaOf).
  JSON: { type: ["string", "number", "boolean", "object", "array"], description: "Any JSON value" },
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
          path: { type: "string", description: "The field's dotted path, e.g. `endpoint.url` or `labels.2`" },
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
};

const REQUIRES_CREDENTIALS = new Set<Auth>(["agent", "reviewer", "agentOrReviewer"]);

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

const ETAG_HEADER: Json = {
  ETag: { description: 'The profile version, quoted: `"<version>"`', schema: { type: "string" } },
};
const NO_STORE_HEADER: Json = {
  "Cache-Control": { description: "`no-store`: the answer holds a token in plaintext", schema: { type: "string" } },
};
const RESPONSE_HEADERS: Record<string, Json> = {
  provider: ETAG_HEADER,
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
};
RESPONSE_HEADERS.importProvider = RESPONSE_HEADERS.createProvider as Json;

const IF_MATCH: Json = {
  name: "If-Match",
  in: "header",
  required: false,
  description: 'The version the caller last saw, `"<version>"` (or `*`); a stale one is refused with 412.',
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

  const bodyArgs = field.args.filter((a) => !inPath.has(a.name));
  const body = hasBody ? objectSchema(bodyArgs, { closed: true }) : undefined;
  if (body && route.method === "PATCH") body.minProperties = 1;
  // JSON arguments whose shape is known (an imported document is an object).
  for (const [name, argSchema] of Object.entries(JSON_ARGUMENT_SCHEMAS[field.name] ?? {})) {
    if (body) (body.properties as Record<string, Json>)[name] = argSchema;
  }
  const bodyRequired = route.method === "PATCH" || bodyArgs.some((a) => isNonNullType(a.type));

  const responses: Record<string, Json> = {
    [String(route.status)]: {
      description: route.summary,
      ...(RESPONSE_HEADERS[field.name] ? { headers: RESPONSE_HEADERS[field.name] } : {}),
      // A REST answer is never a bare null: the operation answers its object or a problem.
      content: { "application/json": { schema: nonNullSchema(field.type) } },
    },
  };
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
    ...(body ? { requestBody: { required: bodyRequired, content: { "application/json": { schema: body } } } } : {}),
    responses,
  };
}

// ── The document ────────────────────────────────────────────────────────────────────────────────

export function openApiDocument(schema: GraphQLSchema): OpenApiDocument {
  const sofa = useSofa({
    ...sofaConfig(schema),
    openAPI: { info: { title: "Agent Registry", version: SERVICE_VERSION } },
  } as never).openAPIDocument as unknown as SofaDocument;

  const paths: OpenApiDocument["paths"] = {};
  for (const route of REST_ROUTES) {
    const template = pathTemplate(route.path);
    const method = route.method.toLowerCase();
    const generated = sofa.paths[template]?.[method];
    if (!generated) throw new Error(`SOFA generated no operation for ${route.method} ${route.path}`);
    const path = restPath(template);
    paths[path] = { ...paths[path], [method]: operationOf(schema, route, generated.parameters ?? []) };
  }

  // A copy: the shared constants above must not be reachable from a caller's document.
  return structuredClone({
    openapi: "3.1.0" as const,
    info: {
      title: "Agent Registry",
      version: SERVICE_VERSION,
      description:
        "A registry of AI agents: intake, review and versioned profiles. This document covers the REST " +
        "routes under /api/v1; the same operations are available over GraphQL at /graphql. Errors are " +
        "RFC 9457 problem documents (application/problem+json).",
    },
    servers: [{ url: "/", description: "This server; paths include the /api/v1 prefix" }],
    tags: [...new Set(REST_ROUTES.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...componentSchemas(schema), Problem: PROBLEM_SCHEMA },
      responses: errorResponses(),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <token>`. Either an agent token (`agr_…`, issued at intake and by " +
            "POST /api/v1/providers/{providerCode}/tokens, shown once), which acts for its own provider " +
            "only, or a reviewer JWT (claim `roles` containing `reviewer` or `admin`; `npm run " +
            "reviewer-token` mints one locally). Missing, invalid, revoked or expired credentials get 401.",
        },
      },
    },
  });
}
