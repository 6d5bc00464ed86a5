/**
 * The seam with SOFA: the one module that knows how sofa-api and its router, feTS, work inside.
 *
 * The guard (rest.plugin.ts) has matched the route before SOFA sees the request, so the request goes
 * straight to the handler SOFA built for that route, not through feTS's router, which would match
 * the path again (URLPattern), copy the server context onto a fresh object and validate again what
 * the guard checked: a third of the CPU of an uncached read. That relies on these internals, which
 * tests/http/sofa.internals.test.ts pins against the installed versions:
 *
 * - `useSofa(config)` answers feTS's router, whose `__routes` lists every route SOFA registered,
 *   each `{ method, path, handler }`: `path` relative to the base path and `method` as given in
 *   SOFA's `routes` option (SOFA adds its `/webhook` routes, which are never called).
 * - SOFA builds each route's GraphQL document once, in `useSofa`; its handler runs that same object
 *   for every request (validation verdicts and compiled operations are kept by it).
 * - A handler is `(request, serverContext) => Promise<Response>`. It reads each variable from
 *   `request.params` when that has the key, even with `undefined` (feTS's router puts the path's
 *   parameters there when it matches; `runSofaHandler` puts what the guard read), else from the query
 *   string of `request.url` (parsed again for each variable), else from the body, read with
 *   `request.text()`; it sets
 *   `serverContext.request`, calls the configured `context(serverContext)`, then `execute({ schema,
 *   document, contextValue, variableValues, operationName })`, hands `result.errors` or what throws
 *   to `errorHandler`, and answers `data[field]` as JSON with the route's status.
 */
import { type ExecutionArgs, type GraphQLSchema, type ObjectTypeDefinitionNode, parse, printType } from "graphql";
import { useSofa } from "sofa-api";
import { sofaErrorHandler } from "./problem.ts";
import { REST_BASE, REST_BASES, REST_ROUTES, type RestBase, type RestRoute } from "./rest.routes.ts";

/**
 * The SOFA configuration of a schema for one base path: the routes of the table under it, the
 * base, our error answers. SOFA has one base path, so each base has its own SOFA.
 */
export function sofaConfig(schema: GraphQLSchema, base: RestBase = REST_BASE) {
  withRootDefinitions(schema);
  return {
    schema,
    basePath: base,
    depthLimit: 3,
    routes: Object.fromEntries(
      REST_ROUTES.filter((r) => r.base === base).map((r) => [
        r.field,
        { method: r.method, path: r.path, responseStatus: r.status, tags: [r.tag], description: r.summary },
      ]),
    ),
    errorHandler: sofaErrorHandler,
  };
}

/**
 * SOFA reads each argument's description from its root type's definition node and, for a schema
 * built in code (no such nodes), prints and parses the whole root type again for every argument
 * of every route: most of the second it takes to build. The same node, made once, is kept on the type.
 */
function withRootDefinitions(schema: GraphQLSchema): void {
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    if (type && !type.astNode) type.astNode = parse(printType(type)).definitions[0] as ObjectTypeDefinitionNode;
  }
}

/** A route handler SOFA built. */
export type SofaHandler = (request: Request, serverContext: unknown) => Response | Promise<Response>;

/**
 * SOFA's handler of each route of the table, for a schema, running operations with `context` and
 * `execute` (the app's, operation.runner.ts).
 */
export function sofaHandlers(
  schema: GraphQLSchema,
  context: (serverContext: unknown) => unknown,
  execute: (args: ExecutionArgs) => unknown,
): Map<RestRoute, SofaHandler> {
  type Router = { __routes: { method?: string; path: string; handler: SofaHandler }[] };
  const routers = new Map(
    REST_BASES.map((base) => [
      base,
      useSofa({ ...sofaConfig(schema, base), context, execute } as never) as unknown as Router,
    ]),
  );
  const handlers = new Map<RestRoute, SofaHandler>();
  for (const route of REST_ROUTES) {
    const router = routers.get(route.base) as Router;
    const found = router.__routes.find((r) => r.method?.toUpperCase() === route.method && r.path === route.path);
    if (!found) throw new Error(`SOFA built no handler for ${route.method} ${route.path}`);
    handlers.set(route, found.handler);
  }
  return handlers;
}

/**
 * Calls a route's handler with the parameters the guard read, where SOFA reads them: SOFA takes a
 * variable from `request.params` before it looks at the query string or the body.
 */
export function runSofaHandler(
  handler: SofaHandler,
  request: Request,
  params: Record<string, string | string[] | undefined>,
  serverContext: unknown,
): Response | Promise<Response> {
  Object.defineProperty(request, "params", { value: params, configurable: true });
  return handler(request, serverContext);
}
