/**
 * The two doors of one schema, for tests that must hold on both: a feature test runs each case
 * through `describe.each(doors)` and asks for an operation by its GraphQL field. The REST door finds
 * the field's route in the service's own route table; the GraphQL door sends the document SOFA
 * builds for that field (built as SOFA builds it), so both answer the same data for the same arguments.
 */
import { buildOperationNodeForField } from "@graphql-tools/utils";
import { expect } from "@jest/globals";
import { isEnumType, isInputObjectType, isScalarType, type OperationTypeNode, print } from "graphql";
import { unescapeToken } from "rfc6902/pointer.js";
import { createSofa } from "sofa-api";
import { ERROR_STATUS, type ErrorCode, isErrorCode } from "../src/errors.ts";
import { REST_ROUTES, type RestRoute, restPath } from "../src/http/rest/rest.routes.ts";
import { sofaConfig } from "../src/http/rest/sofa.handlers.ts";
import { schema } from "../src/schema.ts";
import { type Answer, type CallOptions, call, expectProblem, gql } from "./helpers.ts";

/** A root field of the schema, as the route table names it: `Query.provider`, `Mutation.updateProvider`. */
export type Field = RestRoute["field"];

/** What a door answered, in terms both doors share. */
export interface Outcome {
  /** The field's data, or null when it failed. */
  data: any;
  /** The contract's error code, or undefined on success. */
  code: ErrorCode | undefined;
  /** The HTTP status REST answered, or the status of GraphQL's error code (the route's status on success). */
  status: number;
  /** The input paths the error names, dotted (`endpoint.url`, `labels.1`, or a variable's name); REST names them by JSON Pointer. */
  paths: string[];
  /** The raw answer, for what only one door has (headers, problem documents). */
  answer: Answer;
}

export interface Door {
  name: "REST" | "GraphQL";
  /** Runs the field's operation with these arguments; `options` are the request's token and headers. */
  run(field: Field, args?: Record<string, unknown>, options?: Omit<CallOptions, "body">): Promise<Outcome>;
}

const routeOf = (field: Field): RestRoute => {
  const route = REST_ROUTES.find((r) => r.field === field);
  if (!route) throw new Error(`no REST route for ${field}`);
  return route;
};

/**
 * GraphQL's words, which no REST refusal may use: its error phrases, `!` of a non-null type, and the
 * names of the schema's input types, enumerations and scalars (JSON aside, an everyday word too).
 */
const GRAPHQL_WORDS = new RegExp(
  [
    String.raw`[\w\]]!`,
    'Field "',
    'Variable "',
    "of required type",
    String.raw`\benum\b`,
    ...Object.values(schema.getTypeMap())
      .filter((t) => (isEnumType(t) || isInputObjectType(t) || isScalarType(t)) && !t.name.startsWith("__"))
      .filter((t) => t.name !== "JSON" && t.name !== "ID")
      .map((t) => String.raw`\b${t.name}\b`),
  ].join("|"),
);

/**
 * A REST refusal names each value at fault by its JSON Pointer in plain words: checked on every
 * refusal the REST door sees, whatever the case checks.
 */
export function expectPlainWords(answer: Answer): void {
  const errors = (answer.body?.errors ?? []) as { path: unknown; message: unknown }[];
  for (const { path, message } of errors) {
    expect({ path, pointer: typeof path === "string" && (path === "" || path.startsWith("/")) }).toEqual({
      path,
      pointer: true,
    });
    expect(String(message)).not.toMatch(GRAPHQL_WORDS);
  }
  expect(String(answer.body?.detail)).not.toMatch(GRAPHQL_WORDS);
}

/** A REST path (a JSON Pointer) as the GraphQL door names it: `/labels/1` is `labels.1`, "" is "(body)". */
const dottedOf = (pointer: string) =>
  pointer === "" ? "(body)" : pointer.slice(1).split("/").map(unescapeToken).join(".");

/** The query-string form of a value: lists joined by commas, as the REST guard reads them. */
const queryValue = (value: unknown) => (Array.isArray(value) ? value.join(",") : String(value));

export const rest: Door = {
  name: "REST",
  async run(field, args = {}, options = {}) {
    const route = routeOf(field);
    const rest = { ...args };
    const path = restPath(route.path, route.base).replace(/:([A-Za-z]+)/g, (_, name: string) => {
      const value = rest[name];
      delete rest[name];
      return encodeURIComponent(String(value));
    });
    let answer: Answer;
    if (route.method === "GET" || route.method === "DELETE") {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(rest)) if (value !== undefined) query.set(key, queryValue(value));
      const search = query.toString();
      answer = await call(route.method, search ? `${path}?${search}` : path, options);
    } else {
      answer = await call(route.method, path, { ...options, body: rest });
    }
    const ok = answer.status < 300;
    // Every REST refusal must be a well-formed problem document, whatever the case checks.
    if (!ok) {
      expectProblem(answer, answer.status, answer.body?.code);
      expectPlainWords(answer);
    }
    const code = ok ? undefined : answer.body?.code;
    return {
      data: ok ? answer.body : null,
      code,
      status: answer.status,
      paths: ((answer.body?.errors ?? []) as { path: string }[]).map((e) => dottedOf(e.path)),
      answer,
    };
  },
};

const documents = new Map<Field, string>();
/** SOFA's settings for the service's schema: its models, ignored fields and `depthLimit`. */
const sofa = createSofa(sofaConfig(schema) as Parameters<typeof createSofa>[0]);

/**
 * SOFA's document for a field (every argument a variable), built once with the arguments SOFA's
 * router passes: its `depthLimit` bounds how often a type may recur on a path
 * (`circularReferenceDepth`), not how deep the selection goes.
 */
export function documentOf(field: Field): string {
  let document = documents.get(field);
  if (!document) {
    const [kind, name] = field.split(".") as ["Query" | "Mutation", string];
    const node = buildOperationNodeForField({
      schema,
      kind: kind.toLowerCase() as OperationTypeNode,
      field: name,
      models: sofa.models,
      ignore: sofa.ignore,
      circularReferenceDepth: sofa.depthLimit,
    });
    document = print(node);
    documents.set(field, document);
  }
  return document;
}

/** Where a graphql-js variable error points: `Variable "$name" got invalid value …` names `name`. */
const variableOf = (message: string) => /^Variable "\$([A-Za-z0-9_]+)"/.exec(message)?.[1];

export const graphql: Door = {
  name: "GraphQL",
  async run(field, args = {}, options = {}) {
    const query = documentOf(field);
    const answer = await gql(query, args, options);
    const name = field.split(".")[1] as string;
    const first = answer.body?.errors?.[0] as
      | { message: string; extensions?: { code?: string; errors?: { path: string }[] } }
      | undefined;
    const raw = first?.extensions?.code;
    const code = first ? (isErrorCode(raw) ? raw : "INTERNAL") : undefined;
    const variable = first && variableOf(first.message);
    // GraphQL over HTTP, as application/json (gql sends no Accept): 200 for an operation that ran and
    // for a request refused for what its GraphQL says; only the transport's refusals (credentials,
    // rate limits, an Idempotency-Key, a body too large) keep their 4xx. tests/graphql/http.test.ts has the rest.
    const ran = typeof answer.body === "object" && answer.body !== null && "data" in answer.body;
    const refusedForItsGraphql = code === "BAD_USER_INPUT" || code?.startsWith("GRAPHQL_");
    if (!code || ran || refusedForItsGraphql) expect({ field, status: answer.status }).toEqual({ field, status: 200 });
    return {
      data: first ? (answer.body?.data?.[name] ?? null) : answer.body.data[name],
      code,
      status: code ? ERROR_STATUS[code] : routeOf(field).status,
      paths: first ? (first.extensions?.errors?.map((e) => e.path) ?? (variable ? [variable] : [])) : [],
      answer,
    };
  },
};

/** Both doors, for `describe.each(doors)("$name", (door) => …)`. */
export const doors: readonly Door[] = [rest, graphql];

/**
 * A refusal with this code: no data, and the code's status — on the wire for REST; GraphQL's wire
 * status follows GraphQL over HTTP, which its door checks on every answer.
 */
export function expectCode(outcome: Outcome, code: ErrorCode): void {
  expect({ code: outcome.code, status: outcome.status, data: outcome.data }).toEqual({
    code,
    status: ERROR_STATUS[code],
    data: null,
  });
}

/** A success: no error code, the route's status; answers the data. */
export function expectOk(outcome: Outcome, status = 200) {
  expect({ code: outcome.code, status: outcome.status }).toEqual({ code: undefined, status });
  return outcome.data;
}
