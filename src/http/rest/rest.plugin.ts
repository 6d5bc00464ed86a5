/**
 * REST under /api/v1 (and the MCP registry's read API under /v0.1): SOFA runs each route's GraphQL
 * operation; the guard in front of it closes SOFA's gaps (ARCHITECTURE.md, "Known traps"): only the
 * routes of the table exist (no `/webhook`), a wrong method is a 405, a body must be a JSON object
 * whose keys are the operation's arguments (an unknown or read-only key is a 400 naming it, never
 * silently dropped), each value must have its argument's type, a required one must be there, and
 * query parameters are only those the operation takes (under /v0.1 others are ignored).
 * Every refusal names the value at fault by its JSON Pointer (`/endpoint/protocol`; a query or path
 * parameter as `/<name>`, the whole body as "") in plain words, never GraphQL's.
 *
 * The route the guard matched is the one that runs: its request goes straight to the handler SOFA built
 * for it, not through SOFA's own router (sofa.handlers.ts, the one module that knows SOFA's insides),
 * and its operation runs through the app's envelope as a /graphql one does (operation.runner.ts).
 */
import {
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLLeafType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isRequiredArgument,
  isRequiredInputField,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { escapeToken } from "rfc6902/pointer.js";
import { apiError, badInput, type FieldError, notFound, unauthenticated } from "../../errors.ts";
import { READ_ONLY_FIELDS } from "../../providers/provider.rules.ts";
import { hasSessionCookie } from "../../signin/signin.rules.ts";
import { executeInEnvelope, type OperationRunner, operationRunner } from "../operation.runner.ts";
import { routePattern } from "../request.log.ts";
import { bodyText } from "../text.plugin.ts";
import { problemResponse } from "./problem.ts";
import {
  HEADER_ARGUMENTS,
  MCP_BASE,
  pathParams,
  type RestBase,
  type RestRoute,
  restArguments,
  restBaseOf,
  routesOf,
} from "./rest.routes.ts";
import { runSofaHandler, type SofaHandler, sofaHandlers } from "./sofa.handlers.ts";

const BODY_METHODS = new Set(["POST", "PATCH", "PUT"]);

/**
 * Bases whose routes ignore a query parameter they do not take, rather than refuse it: MCP clients
 * and aggregators are written against the official registry, which ignores them (a generic pager
 * sends `limit` to a server's versions too). Values of the parameters a route takes are checked alike.
 */
const IGNORES_UNKNOWN_QUERY: ReadonlySet<RestBase> = new Set([MCP_BASE]);

function argsOf(schema: GraphQLSchema, route: RestRoute): readonly GraphQLArgument[] {
  const [kind, name] = route.field.split(".") as [string, string];
  const type = kind === "Query" ? schema.getQueryType() : schema.getMutationType();
  const field = type?.getFields()[name];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown field ${route.field}`);
  return restArguments(field.args);
}

/** A route's arguments: all, those in its path, and those the query string or body may name. Worked out once per schema. */
const shapes = new WeakMap<
  GraphQLSchema,
  Map<RestRoute, { args: readonly GraphQLArgument[]; inPath: Set<string>; names: Set<string> }>
>();
function shapeOf(schema: GraphQLSchema, route: RestRoute) {
  let bySchema = shapes.get(schema);
  if (!bySchema) {
    bySchema = new Map();
    shapes.set(schema, bySchema);
  }
  let shape = bySchema.get(route);
  if (!shape) {
    const args = argsOf(schema, route);
    const inPath = new Set(pathParams(route.path));
    shape = { args, inPath, names: new Set(args.map((a) => a.name).filter((n) => !inPath.has(n))) };
    bySchema.set(route, shape);
  }
  return shape;
}

/** Integers in paths and query strings are plain decimal: SOFA's Number() would read `0x10`, `1e1`, `+5`. */
const DECIMAL = /^(?:0|-?[1-9][0-9]*)$/;
const INT_MAX = 2 ** 31 - 1;

/** Why a JSON value is not of a scalar or enum type, in plain words; undefined when it is. */
function leafProblem(type: GraphQLLeafType, value: unknown): string | undefined {
  if (isEnumType(type)) {
    if (typeof value === "string" && type.getValue(value)) return undefined;
    return `must be one of: ${type
      .getValues()
      .map((v) => v.name)
      .join(", ")}`;
  }
  switch (type.name) {
    case "String":
      return typeof value === "string" ? undefined : "must be a string";
    case "ID":
      return typeof value === "string" || Number.isInteger(value) ? undefined : "must be a string";
    case "Boolean":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "Float":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number";
    case "Int":
      if (!Number.isInteger(value)) return "must be a whole number";
      return Math.abs(value as number) <= INT_MAX
        ? undefined
        : `must be a whole number from ${-INT_MAX - 1} to ${INT_MAX}`;
  }
  // The service's own scalars (DateTime, JSON) say what they take in their own words.
  try {
    type.parseValue(value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Why a path or query value is not of its argument's type; undefined when it is. */
function textProblem(arg: GraphQLArgument, text: string): string | undefined {
  const type = getNamedType(arg.type);
  if (!isLeafType(type)) return undefined;
  // SOFA reads `true` as true and anything else as false: only the two words are booleans.
  if (type.name === "Boolean") return text === "true" || text === "false" ? undefined : "must be true or false";
  if (type.name !== "Int") return leafProblem(type, text);
  return DECIMAL.test(text) ? leafProblem(type, Number(text)) : "must be a whole number in plain decimal digits";
}

/**
 * The problems of a JSON value against a GraphQL input type, each at its JSON Pointer. Stricter than
 * GraphQL's coercion, which SOFA would apply: a single value is never read as a one-item list, and a
 * number never as a string.
 */
function inputProblems(value: unknown, type: GraphQLInputType, at: string, errors: FieldError[]): void {
  if (isNonNullType(type)) {
    if (value === null) errors.push({ path: at, message: "must not be null" });
    else inputProblems(value, type.ofType, at, errors);
    return;
  }
  if (value === null) return;
  if (isListType(type)) {
    if (!Array.isArray(value)) errors.push({ path: at, message: "must be a list" });
    else for (const [i, item] of value.entries()) inputProblems(item, type.ofType, `${at}/${i}`, errors);
    return;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== "object" || Array.isArray(value)) {
      errors.push({ path: at, message: "must be an object" });
      return;
    }
    const fields = type.getFields();
    for (const [key, item] of Object.entries(value)) {
      const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
      if (field) inputProblems(item, field.type, `${at}/${escapeToken(key)}`, errors);
      else errors.push({ path: `${at}/${escapeToken(key)}`, message: "unknown field" });
    }
    for (const field of Object.values(fields)) {
      if (isRequiredInputField(field) && !Object.hasOwn(value, field.name)) {
        errors.push({ path: `${at}/${field.name}`, message: "is required" });
      }
    }
    return;
  }
  const problem = leafProblem(type, value);
  if (problem) errors.push({ path: at, message: problem });
}

/** At most this many problems are named in one answer: a body of 64 KiB could hold tens of thousands. */
const MAX_NAMED = 50;

/** The 400 for these problems, each named in `errors` and the first few in the detail. */
function invalid(what: string, errors: FieldError[]) {
  const named = errors.slice(0, MAX_NAMED);
  const said = named.slice(0, 5).map((e) => `${e.path || "the body"} ${e.message}`);
  return badInput(`${what}: ${said.join("; ")}${errors.length > said.length ? "; …" : ""}`, named);
}

/**
 * The query string's values as SOFA reads them (a repeated parameter is a list, an empty one is absent),
 * read once here: SOFA would parse the whole query string again for each of the operation's variables,
 * unless each has its entry, even an absent one.
 */
function queryValues(url: URL, names: Set<string>): Record<string, string | string[] | undefined> {
  const values: Record<string, string | string[] | undefined> = {};
  for (const name of names) {
    const all = url.searchParams.getAll(name);
    values[name] = all.length > 1 ? all : all[0] || undefined;
  }
  return values;
}

/**
 * Finds the route of a request; 404 when no path matches, 405 when only the method is wrong. HEAD
 * runs the GET route (the edge answers it without the body), so `Allow` names HEAD beside GET.
 */
function routeOf(method: string, path: string, base: RestBase): { route: RestRoute; params: Record<string, string> } {
  const candidates = routesOf(path.slice(base.length) || "/", base);
  const wanted = method === "HEAD" ? "GET" : method;
  const hit = candidates.find((m) => m.route.method === wanted);
  if (hit) return hit;
  if (candidates.length === 0) throw notFound(`No route ${method} ${path}`);
  const methods = new Set<string>(candidates.map((m) => m.route.method));
  const allow = [...methods].flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])).join(", ");
  throw apiError("METHOD_NOT_ALLOWED", `${method} is not allowed on ${path}; allowed: ${allow}`, {
    headers: { Allow: allow },
  });
}

/**
 * Checks a request against its operation's arguments before SOFA sees it. Answers the route it
 * matched, the path's parameters (and the query string's, for a route without a body), and the body's
 * keys sent as an explicit `null` (SOFA drops those; `null` clears a field, it is not "absent").
 */
async function check(
  schema: GraphQLSchema,
  request: Request,
  url: URL,
  base: RestBase,
): Promise<{ route: RestRoute; params: Record<string, string | string[] | undefined>; nulls: string[] }> {
  const { route, params } = routeOf(request.method, url.pathname.replace(/\/+$/, "") || "/", base);
  // Who is asking comes before what is asked: a protected route without credentials (a token, or a
  // person's session cookie) is a 401 whatever its body holds. (Credentials that are sent are
  // verified once, in the viewer plugin.)
  if (
    route.auth !== "none" &&
    route.auth !== "optional" &&
    !request.headers.has("authorization") &&
    !hasSessionCookie(request.headers.get("cookie"))
  ) {
    throw unauthenticated();
  }
  const { args, inPath, names } = shapeOf(schema, route);
  const errors: FieldError[] = [];
  const param = (name: string) => `/${escapeToken(name)}`;

  if (!BODY_METHODS.has(route.method)) {
    for (const key of IGNORES_UNKNOWN_QUERY.has(base) ? [] : new Set(url.searchParams.keys())) {
      if (!names.has(key)) errors.push({ path: param(key), message: "unknown query parameter" });
    }
    if (errors.length) throw invalid("The query string is not valid", errors);
    // SOFA's own refusal of a value it cannot read (`limit=abc`) would not name the parameter.
    for (const arg of args) {
      if (inPath.has(arg.name)) continue;
      const problem = url.searchParams
        .getAll(arg.name)
        .map((value) => textProblem(arg, value))
        .find(Boolean);
      if (problem) errors.push({ path: param(arg.name), message: problem });
    }
    if (errors.length) throw invalid("The query string is not valid", errors);
  }
  for (const arg of args) {
    const value = params[arg.name];
    const problem = value === undefined ? undefined : textProblem(arg, value);
    if (problem) errors.push({ path: param(arg.name), message: problem });
  }
  if (errors.length) throw invalid("The URL path is not valid", errors);
  if (!BODY_METHODS.has(route.method)) return { route, params: { ...params, ...queryValues(url, names) }, nulls: [] };

  // A body route takes its input from the body only: SOFA would read query parameters too.
  for (const key of new Set(url.searchParams.keys())) {
    errors.push({ path: param(key), message: "send fields in the JSON body, not the query string" });
  }
  const text = await bodyText(request.clone());
  let body: unknown = {};
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      throw badInput("The body is not valid JSON", [{ path: "", message: "is not valid JSON" }]);
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badInput("The body must be a JSON object", [{ path: "", message: "must be a JSON object" }]);
  }
  const byName = new Map(args.map((a) => [a.name, a]));
  for (const [key, value] of Object.entries(body)) {
    const arg = names.has(key) ? byName.get(key) : undefined;
    // SOFA would coerce what does not fit (123 to "123", "x" to ["x"]): the value must fit as sent.
    if (arg) inputProblems(value, arg.type, param(key), errors);
    else {
      const readOnly = (READ_ONLY_FIELDS as readonly string[]).includes(key) || inPath.has(key);
      const header = HEADER_ARGUMENTS.get(key);
      const message = header ? `send it as the ${header} header` : readOnly ? "is not settable here" : "unknown field";
      errors.push({ path: param(key), message });
    }
  }
  for (const arg of args) {
    if (isRequiredArgument(arg) && !inPath.has(arg.name) && !Object.hasOwn(body, arg.name)) {
      errors.push({ path: param(arg.name), message: "is required" });
    }
  }
  if (errors.length) throw invalid("The body is not valid", errors);
  // What is left null is a nullable argument: JSON Merge Patch's `null`, which clears its field.
  const nulls = Object.entries(body)
    .filter(([key, value]) => value === null && names.has(key))
    .map(([key]) => key);
  return { route, params, nulls };
}

/** What the guard leaves on the server context for the operation SOFA runs. */
interface RestContext {
  restNulls?: string[];
  /** The app's runner, whose context SOFA's handler builds (`handlersOf`). */
  runner?: OperationRunner;
  /** The log line's fields (edge.plugin.ts): the guard names the route it matched. */
  logFields?: { route?: string };
}

/**
 * SOFA's handlers of a schema, built once however many apps serve it (tests make dozens): each
 * request's server context carries its app's runner, whose context and execution the handler uses.
 */
const built = new WeakMap<GraphQLSchema, Map<RestRoute, SofaHandler>>();
function handlersOf(schema: GraphQLSchema): Map<RestRoute, SofaHandler> {
  let handlers = built.get(schema);
  if (!handlers) {
    handlers = sofaHandlers(
      schema,
      (serverContext) => ((serverContext as RestContext).runner as OperationRunner).context(serverContext),
      executeInEnvelope,
    );
    built.set(schema, handlers);
  }
  return handlers;
}

/**
 * The REST plugins, in order: the restorer of explicit nulls, then the guard, which hands the route it
 * matched to SOFA's handler of that route. SOFA's operation meets every plugin as a /graphql one does:
 * its context and execution are the app's own (the wiring of @graphql-yoga/plugin-sofa, which this replaces).
 */
export function useRest(): Plugin[] {
  let schema: GraphQLSchema | undefined;
  let runner: OperationRunner | undefined;
  let handlers: Map<RestRoute, SofaHandler> | undefined;
  // SOFA turns a body's `null` into an absent variable; put it back so that `null` clears a field.
  const nulls: Plugin = {
    onExecute({ args }) {
      const keys = (args.contextValue as RestContext).restNulls;
      if (!keys?.length) return;
      args.variableValues = { ...args.variableValues, ...Object.fromEntries(keys.map((k) => [k, null])) };
    },
  };
  const routes: Plugin = {
    onYogaInit({ yoga }) {
      runner = operationRunner(yoga);
    },
    onSchemaChange({ schema: next }) {
      schema = next;
      handlers = handlersOf(next);
    },
    async onRequest({ request, url, serverContext, endResponse }) {
      const base = restBaseOf(url.pathname);
      if (!base) return;
      try {
        if (!schema || !handlers) throw new Error("schema not ready");
        const { route, params, nulls } = await check(schema, request, url, base);
        const rest = serverContext as RestContext;
        rest.restNulls = nulls;
        rest.runner = runner;
        if (rest.logFields) rest.logFields.route = routePattern(route);
        endResponse(await runSofaHandler(handlers.get(route) as SofaHandler, request, params, serverContext));
      } catch (error) {
        endResponse(problemResponse(error));
      }
    },
  };
  return [nulls, routes];
}
