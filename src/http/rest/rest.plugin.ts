/**
 * REST under /api/v1: SOFA runs each route's GraphQL operation; the guard in front of it closes
 * SOFA's gaps (ARCHITECTURE.md, "Known traps"): only the routes of the table exist (no `/webhook`),
 * a wrong method is a 405, a body must be a JSON object whose keys are the operation's arguments
 * (an unknown or read-only key is a 400 naming it, never silently dropped), each value must have its
 * argument's type, a required one must be there, and query parameters are only those the operation takes.
 *
 * The route the guard matched is the one that runs: its request goes straight to the handler SOFA built
 * for it, not through SOFA's own router (sofa.handlers.ts, the one module that knows SOFA's insides),
 * and its operation runs through the app's envelope as a /graphql one does (operation.runner.ts).
 */
import {
  coerceInputValue,
  type GraphQLArgument,
  type GraphQLSchema,
  getNamedType,
  isNonNullType,
  isScalarType,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { apiError, badInput, type FieldError, notFound, unauthenticated } from "../../errors.ts";
import { READ_ONLY_FIELDS } from "../../providers/provider.rules.ts";
import { type OperationRunner, operationRunner } from "../operation.runner.ts";
import { routePattern } from "../request.log.ts";
import { bodyText } from "../text.plugin.ts";
import { problemResponse } from "./problem.ts";
import { pathParams, REST_BASE, type RestRoute, routesOf } from "./rest.routes.ts";
import { runSofaHandler, type SofaHandler, sofaHandlers } from "./sofa.handlers.ts";

const BODY_METHODS = new Set(["POST", "PATCH", "PUT"]);

function argsOf(schema: GraphQLSchema, route: RestRoute): readonly GraphQLArgument[] {
  const [kind, name] = route.field.split(".") as [string, string];
  const type = kind === "Query" ? schema.getQueryType() : schema.getMutationType();
  const field = type?.getFields()[name];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown field ${route.field}`);
  return field.args;
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

/** Why a path or query value is not of its argument's scalar type; undefined when it is. */
function scalarProblem(arg: GraphQLArgument, value: string): string | undefined {
  const type = getNamedType(arg.type);
  if (!isScalarType(type)) return undefined;
  // SOFA reads `true` as true and anything else as false: only the two words are booleans.
  if (type.name === "Boolean") return value === "true" || value === "false" ? undefined : "must be true or false";
  if (type.name === "Int" && !DECIMAL.test(value)) return "must be a whole number in plain decimal digits";
  try {
    type.serialize(type.name === "Int" ? Number(value) : value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Finds the route of a request; 404 when no path matches, 405 when only the method is wrong. */
function routeOf(method: string, path: string): { route: RestRoute; params: Record<string, string> } {
  const candidates = routesOf(path.slice(REST_BASE.length) || "/");
  const hit = candidates.find((m) => m.route.method === method);
  if (hit) return hit;
  if (candidates.length === 0) throw notFound(`No route ${method} ${path}`);
  const allow = [...new Set(candidates.map((m) => m.route.method))].join(", ");
  throw apiError("METHOD_NOT_ALLOWED", `${method} is not allowed on ${path}; allowed: ${allow}`, {
    headers: { Allow: allow },
  });
}

/**
 * Checks a request against its operation's arguments before SOFA sees it. Answers the route it
 * matched, the path's parameters, and the body's keys sent as an explicit `null` (SOFA drops those;
 * `null` clears a field, it is not "absent").
 */
async function check(
  schema: GraphQLSchema,
  request: Request,
  url: URL,
): Promise<{ route: RestRoute; params: Record<string, string>; nulls: string[] }> {
  const { route, params } = routeOf(request.method, url.pathname.replace(/\/+$/, "") || "/");
  // Who is asking comes before what is asked: a protected route without credentials is a 401
  // whatever its body holds. (Credentials that are sent are verified once, in the viewer plugin.)
  if (route.auth !== "none" && route.auth !== "optional" && !request.headers.has("authorization")) {
    throw unauthenticated();
  }
  const { args, inPath, names } = shapeOf(schema, route);
  const errors: FieldError[] = [];

  if (!BODY_METHODS.has(route.method)) {
    for (const key of new Set(url.searchParams.keys())) {
      if (!names.has(key)) errors.push({ path: key, message: "unknown query parameter" });
    }
    if (errors.length) throw badInput(`Unknown query parameter: ${errors.map((e) => e.path).join(", ")}`, errors);
    // SOFA's own refusal of a scalar it cannot read (`limit=abc`) would not name the parameter.
    for (const arg of args) {
      if (inPath.has(arg.name)) continue;
      const problem = url.searchParams
        .getAll(arg.name)
        .map((value) => scalarProblem(arg, value))
        .find(Boolean);
      if (problem) errors.push({ path: arg.name, message: problem });
    }
    if (errors.length) throw badInput(`Invalid query parameter: ${errors.map((e) => e.path).join(", ")}`, errors);
  }
  for (const arg of args) {
    const value = params[arg.name];
    const problem = value === undefined ? undefined : scalarProblem(arg, value);
    if (problem) errors.push({ path: arg.name, message: problem });
  }
  if (errors.length) throw badInput(`Invalid path parameter: ${errors.map((e) => e.path).join(", ")}`, errors);
  if (!BODY_METHODS.has(route.method)) return { route, params, nulls: [] };

  // A body route takes its input from the body only: SOFA would read query parameters too.
  for (const key of new Set(url.searchParams.keys())) {
    errors.push({ path: key, message: "send fields in the JSON body, not the query string" });
  }
  const text = await bodyText(request.clone());
  let body: unknown = {};
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      throw badInput("The body is not valid JSON", [{ path: "(body)", message: "malformed JSON" }]);
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badInput("The body must be a JSON object", [{ path: "(body)", message: "expected a JSON object" }]);
  }
  const byName = new Map(args.map((a) => [a.name, a]));
  for (const [key, value] of Object.entries(body)) {
    const arg = byName.get(key);
    if (arg && names.has(key)) {
      // SOFA serializes top-level scalars (123 becomes "123"): check the value as GraphQL would.
      if (value !== null) {
        coerceInputValue(value, arg.type, (path, _invalid, error) => {
          const unknown = /^Field "([A-Za-z0-9_]+)" is not defined by type/.exec(error.message)?.[1];
          errors.push({ path: [key, ...path, ...(unknown ? [unknown] : [])].join("."), message: error.message });
        });
      }
      continue;
    }
    const readOnly = (READ_ONLY_FIELDS as readonly string[]).includes(key) || inPath.has(key);
    errors.push({ path: key, message: readOnly ? "is not settable here" : "unknown field" });
  }
  for (const arg of args) {
    if (isNonNullType(arg.type) && !inPath.has(arg.name) && (body as Record<string, unknown>)[arg.name] == null) {
      errors.push({ path: arg.name, message: "is required" });
    }
  }
  if (errors.length) {
    throw badInput(`The body is not valid: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`, errors);
  }
  const nulls = Object.entries(body)
    .filter(([key, value]) => value === null && names.has(key))
    .map(([key]) => key);
  return { route, params, nulls };
}

/** What the guard leaves on the server context for the operation SOFA runs. */
interface RestContext {
  restNulls?: string[];
  /** The log line's fields (edge.plugin.ts): the guard names the route it matched. */
  logFields?: { route?: string };
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
  // SOFA's handlers run operations with the app's runner: built once both the schema and the runner are known.
  const build = () => {
    if (schema && runner) handlers = sofaHandlers(schema, runner.context, runner.execute);
  };
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
      build();
    },
    onSchemaChange({ schema: next }) {
      schema = next;
      build();
    },
    async onRequest({ request, url, serverContext, endResponse }) {
      if (url.pathname !== REST_BASE && !url.pathname.startsWith(`${REST_BASE}/`)) return;
      try {
        if (!schema || !handlers) throw new Error("schema not ready");
        const { route, params, nulls } = await check(schema, request, url);
        const rest = serverContext as RestContext;
        rest.restNulls = nulls;
        if (rest.logFields) rest.logFields.route = routePattern(route);
        endResponse(await runSofaHandler(handlers.get(route) as SofaHandler, request, params, serverContext));
      } catch (error) {
        endResponse(problemResponse(error));
      }
    },
  };
  return [nulls, routes];
}
