/**
 * The OpenAPI document (API.md §4): served as JSON and YAML, valid OpenAPI 3.1, and faithful to
 * the route table and the GraphQL schema it is built from.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { getNamedType, isInputObjectType } from "graphql";
import openapiTS, { astToString } from "openapi-typescript";
import { parse } from "yaml";
import { SERVICE_VERSION } from "../../src/config.ts";
import { ERROR_STATUS } from "../../src/errors.ts";
import {
  pathParams,
  pathTemplate,
  REST_ROUTES,
  type RestRoute,
  restArguments,
  restPath,
} from "../../src/http/rest/rest.routes.ts";
import { schema } from "../../src/schema.ts";
import { activeReviewCode, approve, call, intake, reviewerToken } from "../helpers.ts";

const METHODS = ["get", "put", "post", "patch", "delete", "options", "head", "trace"];

let doc: any;

beforeAll(async () => {
  const answer = await call("GET", "/openapi.json");
  expect(answer.status).toBe(200);
  doc = answer.body;
});

/** The document's path of a route: `/api/v1/providers/{providerCode}`. */
const docPath = (route: RestRoute) => restPath(pathTemplate(route.path), route.base);
const operation = (route: RestRoute) => doc.paths[docPath(route)][route.method.toLowerCase()];
const route = (name: string) => {
  const found = REST_ROUTES.find((r) => r.field.endsWith(`.${name}`));
  if (!found) throw new Error(`no route ${name}`);
  return found;
};
const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op })),
  );
/** Follows a local `$ref`. */
const resolve = (node: any): any => {
  if (!node?.$ref) return node;
  return resolve(
    (node.$ref as string)
      .slice(2)
      .split("/")
      .reduce((at: any, key) => at[key], doc),
  );
};
/** Whether a schema admits null: by its type, a branch of oneOf/anyOf, or having no type at all. */
const admitsNull = (schema: any): boolean => {
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return branches.some(admitsNull);
  if (schema.$ref || schema.enum) return false;
  if (schema.type === undefined) return schema.not?.type !== "null";
  return schema.type === "null" || (Array.isArray(schema.type) && schema.type.includes("null"));
};
const body = (op: any) => op.requestBody?.content["application/json"].schema;

describe("serving", () => {
  test("/openapi.json and /openapi.yaml are the same document", async () => {
    const json = await call("GET", "/openapi.json");
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    const yaml = await call("GET", "/openapi.yaml");
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toMatch(/yaml/);
    expect(parse(yaml.text)).toEqual(json.body);
  });

  test("is OpenAPI 3.1.0 with the service's title and version", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.title).toBe("Agent Registry");
    expect(doc.info.version).toBe(SERVICE_VERSION);
    expect(doc.info.description).toEqual(expect.any(String));
  });

  test("is valid against the OpenAPI 3.1 schema", async () => {
    const result = await new Validator().validate(structuredClone(doc));
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
  });
});

describe("operations", () => {
  test("are exactly the routes of REST_ROUTES, with full paths under /api/v1 (and /v0.1)", () => {
    const documented = operations().map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    const routes = REST_ROUTES.map((r) => `${r.method} ${docPath(r)}`);
    expect(documented.sort()).toEqual(routes.sort());
    expect(Object.keys(doc.paths).every((p) => p.startsWith("/api/v1") || p.startsWith("/v0.1/servers"))).toBe(true);
    // No SOFA webhook route (`/webhook`, `/webhook/{id}`): the only webhook paths are our `/webhooks` ones.
    expect(Object.keys(doc.paths).filter((p) => /\/webhook(\/|$)/.test(p))).toEqual([]);
    expect(
      Object.keys(doc.paths)
        .filter((p) => p.includes("webhook"))
        .sort(),
    ).toEqual([
      "/api/v1/webhooks",
      "/api/v1/webhooks/{webhookId}",
      "/api/v1/webhooks/{webhookId}/deliveries",
      "/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry",
      "/api/v1/webhooks/{webhookId}/test",
    ]);
  });

  test("have one unique operationId each: the GraphQL field name", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of REST_ROUTES) expect(operation(r).operationId).toBe(r.field.split(".")[1]);
  });

  test("answer the route's status with a JSON body", () => {
    for (const r of REST_ROUTES) {
      const success = operation(r).responses[String(r.status)];
      expect(success?.content?.["application/json"]?.schema).toBeDefined();
    }
    expect(Object.keys(operation(route("createProvider")).responses)).toContain("201");
    expect(Object.keys(operation(route("issueToken")).responses)).toContain("201");
    expect(operation(route("createProvider")).responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/IntakeResult",
    });
  });

  test("GET operations take their non-path arguments as query parameters", () => {
    for (const r of REST_ROUTES.filter((r) => r.method === "GET")) {
      const field = schema.getQueryType()!.getFields()[r.field.split(".")[1]!]!;
      const inPath = pathParams(r.path);
      const params = (operation(r).parameters ?? []) as any[];
      expect(params.filter((p) => p.in === "path").map((p) => p.name)).toEqual(inPath);
      expect(params.filter((p) => p.in === "query").map((p) => p.name)).toEqual(
        field.args.map((a) => a.name).filter((n) => !inPath.includes(n)),
      );
    }
    const labels = operation(route("providers")).parameters.find((p: any) => p.name === "labels");
    expect(labels).toMatchObject({ in: "query", required: false, style: "form", explode: false });
    expect(labels.schema).toEqual({ type: "array", items: { type: "string" } });
  });

  test("mutations take no query parameters and a JSON body without their path parameters", () => {
    for (const r of REST_ROUTES.filter((r) => r.method !== "GET")) {
      const op = operation(r);
      const params = (op.parameters ?? []) as any[];
      expect(params.filter((p) => p.in === "query")).toEqual([]);
      expect(params.filter((p) => p.in === "path").map((p) => p.name)).toEqual(pathParams(r.path));
      if (r.method === "DELETE") {
        expect(op.requestBody).toBeUndefined();
        continue;
      }
      const properties = Object.keys(body(op).properties);
      for (const name of pathParams(r.path)) expect(properties).not.toContain(name);
      const field = schema.getMutationType()!.getFields()[r.field.split(".")[1]!]!;
      // Every argument but those REST takes as a header (`ifVersion` is If-Match).
      expect(properties.sort()).toEqual(
        restArguments(field.args)
          .map((a) => a.name)
          .filter((n) => !pathParams(r.path).includes(n))
          .sort(),
      );
    }
  });

  test("request bodies: required fields are the non-null arguments, unknown keys are refused", () => {
    const intake = body(operation(route("createProvider")));
    expect(operation(route("createProvider")).requestBody.required).toBe(true);
    // No endpoint for an MCP server that ships only as packages: the rules then require a package.
    expect(intake.required.sort()).toEqual(["agentType", "contactEmail", "name", "summary"]);
    expect(intake.additionalProperties).toBe(false);
    expect(intake.properties.endpoint.oneOf).toEqual([
      { $ref: "#/components/schemas/EndpointInput" },
      { type: "null" },
    ]);
    expect(intake.properties.endpoint.description).toContain("unless the agent ships as at least one package");
    expect(intake.properties.packages.items).toEqual({ $ref: "#/components/schemas/PackageInput" });
    expect(admitsNull(intake.properties.description)).toBe(true);

    const patch = body(operation(route("updateProvider")));
    expect(patch.required).toBeUndefined();
    expect(patch.minProperties).toBe(1);
    expect(patch.additionalProperties).toBe(false);
    for (const readOnly of ["trustTier", "reviewStage", "version", "providerCode"]) {
      expect(patch.properties).not.toHaveProperty(readOnly);
    }
  });

  test("PATCH documents If-Match and the ETag it answers", () => {
    const op = operation(route("updateProvider"));
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "If-Match", in: "header", required: false }));
    expect(op.responses["200"].headers.ETag.schema).toEqual({ type: "string" });
  });

  test("PATCH is a JSON Merge Patch: both media types, null only for what may be cleared", () => {
    const op = operation(route("updateProvider"));
    expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "application/merge-patch+json"]);
    const patch = op.requestBody.content["application/merge-patch+json"].schema;
    expect(patch).toEqual(body(op));
    expect(op.requestBody.description).toContain("RFC 7396");
    const clearable = Object.entries(patch.properties as Record<string, any>)
      .filter(([, property]) => admitsNull(property))
      .map(([name]) => name);
    // Nullable in the profile and not required at intake (the endpoint while a package remains);
    // contactEmail is nullable only in what others see.
    expect(clearable.sort()).toEqual([
      "description",
      "endpoint",
      "homepageUrl",
      "lifecycleMessage",
      "policy",
      "releaseVersion",
      "repository",
      "serverName",
      "successorCode",
    ]);
    expect(patch.properties.summary).toMatchObject({ type: "string" });
    expect(patch.properties.labels).toMatchObject({ type: "array", items: { type: "string" } });
    // Sections merge member by member: every member optional, unlike intake's.
    expect(patch.properties.endpoint.oneOf).toEqual([
      { $ref: "#/components/schemas/EndpointPatchInput" },
      { type: "null" },
    ]);
    expect(patch.properties.policy.oneOf).toEqual([
      { $ref: "#/components/schemas/PolicyPatchInput" },
      { type: "null" },
    ]);
    expect(doc.components.schemas.EndpointPatchInput.required).toBeUndefined();
    // Every PATCH route is a merge patch; no other body route takes one.
    for (const r of REST_ROUTES.filter((r) => r.method !== "GET" && r.method !== "DELETE")) {
      const types = Object.keys(operation(r).requestBody.content);
      expect([r.field, types.includes("application/merge-patch+json")]).toEqual([r.field, r.method === "PATCH"]);
    }
  });

  test("every GET: If-None-Match, a 200 with ETag, Cache-Control and Vary, and a 304 without a body", () => {
    const reads = REST_ROUTES.filter((r) => r.method === "GET");
    expect(reads.length).toBeGreaterThan(5);
    for (const r of reads) {
      const op = operation(r);
      expect([r.field, op.parameters]).toEqual([
        r.field,
        expect.arrayContaining([expect.objectContaining({ name: "If-None-Match", in: "header", required: false })]),
      ]);
      for (const status of ["200", "304"]) {
        expect([r.field, status, Object.keys(op.responses[status].headers).sort()]).toEqual([
          r.field,
          status,
          ["Cache-Control", "ETag", "Vary"],
        ]);
      }
      expect(op.responses["304"].content).toBeUndefined();
    }
    expect(operation(route("provider")).responses["200"].headers.ETag.description).toContain('"<version>-<hash>"');
    for (const r of REST_ROUTES.filter((r) => r.method !== "GET")) {
      expect([r.field, operation(r).responses["304"]]).toEqual([r.field, undefined]);
    }
    // HEAD is answered for every GET route; the document says so once instead of listing each.
    expect(doc.info.description).toContain("Every GET route also answers HEAD");
  });

  test("a 200 answer is never null, even for a lookup that is nullable over GraphQL", () => {
    for (const r of REST_ROUTES) {
      const success = operation(r).responses[String(r.status)].content["application/json"].schema;
      expect([r.field, admitsNull(success)]).toEqual([r.field, false]);
    }
    for (const name of ["provider", "review", "providerVersion", "agentCard"]) {
      const success = operation(route(name)).responses["200"].content["application/json"].schema;
      const type = getNamedType(schema.getQueryType()!.getFields()[name]!.type);
      expect(success).toEqual({ $ref: `#/components/schemas/${type.name}` });
    }
  });
});

describe("schemas", () => {
  const schemas = () => doc.components.schemas;

  test("nullable GraphQL fields admit null, non-null ones are required", () => {
    expect(admitsNull(schemas().Provider.properties.description)).toBe(true);
    expect(admitsNull(schemas().ProviderPage.properties.nextCursor)).toBe(true);
    expect(schemas().ProviderPage.properties.nextCursor.type).toEqual(["string", "null"]);
    expect(admitsNull(schemas().Provider.properties.policy)).toBe(true);
    expect(schemas().Provider.properties.policy.oneOf).toContainEqual({ type: "null" });
    expect(schemas().CapabilityInput.required.sort()).toEqual(["key", "name"]);
    expect(schemas().CapabilityInput.properties.key).toEqual({ type: "string" });
    expect(admitsNull(schemas().CapabilityInput.properties.description)).toBe(true);
  });

  test("every object and input field follows its GraphQL type's nullability", () => {
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith("__") || !("getFields" in type) || !schemas()[type.name]) continue;
      const component = schemas()[type.name];
      for (const field of Object.values(type.getFields())) {
        const nonNull = field.type.toString().endsWith("!");
        expect([type.name, field.name, admitsNull(component.properties[field.name])]).toEqual([
          type.name,
          field.name,
          !nonNull,
        ]);
        // An input requires what GraphQL requires; an answer always carries every key.
        expect([type.name, field.name, (component.required ?? []).includes(field.name)]).toEqual([
          type.name,
          field.name,
          nonNull || !isInputObjectType(type),
        ]);
      }
    }
  });

  test("output fields are all required (an answer always carries each key); nullable ones admit null", () => {
    const provider = schemas().Provider;
    expect(provider.required).toEqual(
      expect.arrayContaining(["providerCode", "name", "summary", "version", "description", "tokens"]),
    );
    expect(schemas().ProviderPage.required).toEqual(["items", "nextCursor"]);
    expect(schemas().EndpointInput.required).toEqual(["url", "protocol", "authScheme"]);
    expect(admitsNull(provider.properties.name)).toBe(false);
    expect(admitsNull(provider.properties.description)).toBe(true);
    expect(admitsNull(provider.properties.tokens)).toBe(true);
    expect(schemas().ProviderPage.properties.items).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/ProviderSummary" },
    });
  });

  test("enums are string enums, DateTime a date-time string, JSON anything", () => {
    expect(schemas().AgentType).toEqual({
      type: "string",
      enum: ["ASSISTANT", "AUTONOMOUS", "WORKFLOW", "TOOL_SERVER", "MULTI_AGENT"],
    });
    expect(schemas().Provider.properties.createdAt).toMatchObject({ type: "string", format: "date-time" });
    expect(schemas().Review.properties.decidedAt).toMatchObject({ type: ["string", "null"], format: "date-time" });
    expect(schemas().Provider.properties.agentType).toEqual({ $ref: "#/components/schemas/AgentType" });
    expect(schemas().Provider.properties.policy.oneOf).toContainEqual({ $ref: "#/components/schemas/Policy" });
    expect(schemas().Query).toBeUndefined();
    expect(schemas().Mutation).toBeUndefined();
    // JSON has no `type`, so generated clients type it `unknown`; a nullable one drops its `not`.
    expect(schemas().AgentCardCapabilities.properties.extensions).toEqual({
      type: "array",
      items: { description: "Any JSON value", not: { type: "null" } },
    });
    expect(schemas().JsonPatchOperation.properties.value).toEqual({ description: "add, replace and test only" });
    expect(admitsNull(schemas().JsonPatchOperation.properties.value)).toBe(true);
  });

  test("generated clients type free-form JSON as unknown, never as an object without keys", async () => {
    const generated = astToString(await openapiTS(structuredClone(doc), { silent: true }));
    /** The members of a component schema's generated type. */
    const typeOf = (name: string) => {
      const start = generated.indexOf(`\n        ${name}: {\n`);
      expect([name, start]).not.toEqual([name, -1]);
      return generated.slice(start, generated.indexOf("\n        };", start));
    };
    expect(typeOf("JsonPatchOperation")).toMatch(/\n {12}value: unknown;/);
    expect(typeOf("AgentCardCapabilities")).toMatch(/\n {12}extensions: unknown\[\];/);
    const components = generated.slice(generated.indexOf("export interface components"));
    expect(components.slice(0, components.indexOf("\n}\n"))).not.toContain("Record<string, never>");
    expect(generated).toContain("document: {\n                        [key: string]: unknown;");
  });
});

describe("security", () => {
  test("bearer: agent tokens and reviewer JWTs", () => {
    const bearer = doc.components.securitySchemes.bearer;
    expect(bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(bearer.description).toContain("agr_");
    expect(bearer.description).toContain("JWT");
  });

  test("follows each route's auth", () => {
    for (const name of ["updateProvider", "issueToken", "revokeToken", "reviewQueue", "review"]) {
      expect([name, operation(route(name)).security]).toEqual([name, [{ bearer: [] }]]);
    }
    for (const name of ["providers", "provider", "providerVersions", "providerVersion"]) {
      expect([name, operation(route(name)).security]).toEqual([name, [{}, { bearer: [] }]]);
    }
    for (const name of ["createProvider", "api", "health"]) {
      expect([name, operation(route(name)).security]).toEqual([name, []]);
    }
  });
});

describe("problem responses", () => {
  test("Problem has the contract's shape and codes", () => {
    const problem = doc.components.schemas.Problem;
    expect(problem.required.sort()).toEqual(["code", "detail", "status", "title", "type"]);
    expect(problem.properties.code.enum.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    expect(problem.properties.errors.items.required).toEqual(["path", "message"]);
    const path = problem.properties.errors.items.properties.path;
    expect(path).toMatchObject({ type: "string", format: "json-pointer" });
    expect(path.description).toContain("RFC 6901");
  });

  const problemStatuses = (name: string) =>
    Object.entries(operation(route(name)).responses as Record<string, any>)
      .filter(([, response]) => resolve(response).content?.["application/problem+json"])
      .map(([status]) => Number(status));

  test("each operation documents its errors as application/problem+json", () => {
    for (const r of REST_ROUTES) {
      const op = operation(r);
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(status) < 400 || (r.field === "Query.health" && status === "503")) continue;
        const content = resolve(response).content;
        expect([r.field, status, Object.keys(content)]).toEqual([r.field, status, ["application/problem+json"]]);
        expect(content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      }
    }
    expect(problemStatuses("updateProvider")).toEqual([400, 401, 403, 404, 409, 412, 413, 415, 429, 500]);
    // 409 also for an Idempotency-Key still in flight, 422 for one reused with another body.
    expect(problemStatuses("createProvider")).toEqual([400, 401, 409, 413, 415, 422, 429, 500]);
    expect(operation(route("createProvider")).parameters).toContainEqual(
      expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }),
    );
    expect(problemStatuses("decideReview")).toContain(409);
    expect(problemStatuses("issueToken")).toContain(409);
    expect(problemStatuses("reviewQueue")).toEqual([400, 401, 403, 429, 500]);
    expect(problemStatuses("providers")).not.toContain(415);
    expect(resolve(operation(route("updateProvider")).responses["401"]).headers["WWW-Authenticate"]).toBeDefined();
    expect(resolve(operation(route("providers")).responses["429"]).headers["Retry-After"]).toBeDefined();
  });
});

describe("answers", () => {
  test("every answer of a read carries each key its schema requires, with the declared types", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: "doc", components: doc.components });
    const created = await intake({ visibility: "PUBLIC" });
    const code = created.providerCode;
    const owner = { token: created.accessToken };
    const reviewCode = await activeReviewCode(code);
    const reviewer = { token: await reviewerToken() };
    await call("PATCH", `/api/v1/providers/${code}`, { ...owner, body: { summary: "Changed for the schema check" } });
    const reads: [string, string, { token?: string }][] = [
      ["provider", `/providers/${code}`, owner],
      ["providerVersions", `/providers/${code}/versions`, owner],
      ["providerVersion", `/providers/${code}/versions/1`, owner],
      ["versionDiff", `/providers/${code}/versions/1/diff/2`, owner],
      ["agentCard", `/providers/${code}/agent-card.json`, owner],
      ["reviewQueue", "/reviews/queue?limit=5", reviewer],
      ["review", `/reviews/${reviewCode}`, reviewer],
      ["api", "", {}],
    ];
    await approve(code);
    reads.push(["providers", `/providers?search=${code}`, {}]);
    for (const [name, path, options] of reads) {
      const answer = await call("GET", `/api/v1${path}`, options);
      expect([name, answer.status]).toEqual([name, 200]);
      const declared = resolve(operation(route(name)).responses["200"]).content["application/json"].schema;
      const validate = ajv.compile(
        JSON.parse(JSON.stringify(declared).replaceAll('"#/components/', '"doc#/components/')),
      );
      const valid = validate(answer.body);
      expect([name, valid ? "" : ajv.errorsText(validate.errors)]).toEqual([name, ""]);
    }
  });
});
