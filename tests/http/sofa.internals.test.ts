/**
 * The SOFA and feTS internals that src/http/rest/sofa.handlers.ts relies on, pinned against the
 * installed sofa-api and feTS: the router's `__routes`, one `{ method, path, handler }` per route of
 * the table, and what a handler does with a request (variables from `request.params` first, the query
 * from its URL, the body from `request.text()`, then `context` and `execute`, errors to
 * `errorHandler`). An upgrade that changes any of them fails here, naming what changed, rather than
 * at run time.
 */
import { describe, expect, test } from "@jest/globals";
import { type ExecutionArgs, print } from "graphql";
import { useSofa } from "sofa-api";
import { notFound } from "../../src/errors.ts";
import { REST_BASE, REST_BASES, REST_ROUTES, type RestRoute } from "../../src/http/rest/rest.routes.ts";
import { runSofaHandler, sofaConfig, sofaHandlers } from "../../src/http/rest/sofa.handlers.ts";
import { schema } from "../../src/schema.ts";
import { documentOf } from "../doors.ts";

/** Fails with what changed in sofa-api or feTS, and where the seam is. */
function pin(holds: boolean, what: string): void {
  if (!holds) {
    throw new Error(`sofa-api/feTS internals changed: ${what}. Update src/http/rest/sofa.handlers.ts to match.`);
  }
}

const routeOf = (method: RestRoute["method"], path: string) => {
  const route = REST_ROUTES.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path} in the table`);
  return route;
};

/** What the stand-ins for the app's context and execute saw, and what execute answers. */
const seen: { serverContexts: unknown[]; executed: ExecutionArgs[]; contexts: object[] } = {
  serverContexts: [],
  executed: [],
  contexts: [],
};
let answer: (args: ExecutionArgs) => unknown = () => ({ data: {} });

/** SOFA's handlers, built once with the stand-ins; each test sets what execute answers. */
const handlers = sofaHandlers(
  schema,
  (serverContext) => {
    seen.serverContexts.push(serverContext);
    const context = { built: true };
    seen.contexts.push(context);
    return context;
  },
  (args) => {
    seen.executed.push(args);
    return answer(args);
  },
);

function harness(answering: (args: ExecutionArgs) => unknown) {
  answer = answering;
  seen.serverContexts.length = 0;
  seen.executed.length = 0;
  seen.contexts.length = 0;
  return { handlers, seen };
}

describe("SOFA's router (feTS)", () => {
  // One SOFA per base path: each lists the routes of the table under it.
  const routers = new Map(
    REST_BASES.map((base) => [base, useSofa(sofaConfig(schema, base) as never) as unknown as { __routes?: unknown }]),
  );

  test("lists its routes in `__routes`", () => {
    for (const router of routers.values()) {
      pin(Array.isArray(router.__routes), "the router returned by useSofa() has no `__routes` array");
    }
  });

  test("has one `{ method, path, handler }` entry per route of the table, as the table spells it", () => {
    for (const route of REST_ROUTES) {
      const routes = routers.get(route.base)?.__routes as { method?: unknown; path?: unknown; handler?: unknown }[];
      const entries = routes.filter(
        (r) => typeof r.method === "string" && r.method.toUpperCase() === route.method && r.path === route.path,
      );
      pin(entries.length === 1, `\`__routes\` has ${entries.length} entries for ${route.method} ${route.path}, not 1`);
      pin(typeof entries[0]?.handler === "function", `the handler of ${route.method} ${route.path} is not a function`);
    }
  });

  test("sofaHandlers finds a handler for every route", () => {
    expect([...handlers.keys()]).toEqual([...REST_ROUTES]);
  });
});

describe("a handler SOFA built", () => {
  test("reads path parameters from `request.params`, not from the URL", async () => {
    const { handlers, seen } = harness(() => ({ data: { provider: { providerCode: "from-params" } } }));
    const route = routeOf("GET", "/providers/:providerCode");
    const request = new Request(`http://localhost${REST_BASE}/providers/from-url`);
    const serverContext: Record<string, unknown> = {};
    const response = await runSofaHandler(
      handlers.get(route)!,
      request,
      { providerCode: "from-params" },
      serverContext,
    );
    pin(seen.executed.length === 1, "the handler did not call the configured `execute` once");
    pin(
      seen.executed[0]?.variableValues?.providerCode === "from-params",
      `the handler did not take the path parameter from request.params (got ${JSON.stringify(seen.executed[0]?.variableValues)})`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ providerCode: "from-params" });
  });

  test("sets `serverContext.request`, builds the context from the server context and executes in it", async () => {
    const { handlers, seen } = harness(() => ({ data: { provider: null } }));
    const route = routeOf("GET", "/providers/:providerCode");
    const request = new Request(`http://localhost${REST_BASE}/providers/a`);
    const serverContext: Record<string, unknown> = {};
    await runSofaHandler(handlers.get(route)!, request, { providerCode: "a" }, serverContext);
    pin(seen.serverContexts[0] === serverContext, "`context` was not called with the server context itself");
    pin(serverContext.request === request, "the handler no longer sets `serverContext.request`");
    const args = seen.executed[0] as ExecutionArgs;
    pin(args.contextValue === seen.contexts[0], "`execute` did not get the context that `context` returned");
    pin(args.schema === schema, "`execute` did not get the configured schema");
    pin(typeof args.operationName === "string", "`execute` got no operation name");
  });

  test("runs the same document object for every request of a route", async () => {
    const { handlers, seen } = harness(() => ({ data: { provider: null } }));
    const handler = handlers.get(routeOf("GET", "/providers/:providerCode"))!;
    for (const code of ["a", "b"]) {
      await runSofaHandler(
        handler,
        new Request(`http://localhost${REST_BASE}/providers/${code}`),
        { providerCode: code },
        {},
      );
    }
    pin(
      seen.executed[0]?.document === seen.executed[1]?.document,
      "a route's document is built again per request: validation verdicts and compiled operations are kept by it",
    );
  });

  test("reads the query string from `request.url`", async () => {
    const { handlers, seen } = harness(() => ({ data: { providers: { items: [] } } }));
    const request = new Request(`http://localhost${REST_BASE}/providers?limit=5&search=agent`);
    await runSofaHandler(handlers.get(routeOf("GET", "/providers"))!, request, {}, {});
    const variables = seen.executed[0]?.variableValues;
    pin(
      variables?.limit === 5 && variables?.search === "agent",
      `query parameters not read: ${JSON.stringify(variables)}`,
    );
  });

  test("takes a query variable from `request.params` before the URL, and a list given there as the list", async () => {
    const { handlers, seen } = harness(() => ({ data: { providers: { items: [] } } }));
    const request = new Request(`http://localhost${REST_BASE}/providers?limit=5&search=from-url`);
    await runSofaHandler(
      handlers.get(routeOf("GET", "/providers"))!,
      request,
      { limit: "7", search: "from-params", labels: ["a", "b"], cursor: undefined },
      {},
    );
    const variables = seen.executed[0]?.variableValues;
    pin(
      variables?.limit === 7 &&
        variables?.search === "from-params" &&
        JSON.stringify(variables?.labels) === '["a","b"]',
      `query variables were not taken from request.params first: ${JSON.stringify(variables)}`,
    );
    // A key present with `undefined` is an absent variable, not one read from the URL.
    const absent = harness(() => ({ data: { providers: { items: [] } } }));
    await runSofaHandler(
      absent.handlers.get(routeOf("GET", "/providers"))!,
      new Request(`http://localhost${REST_BASE}/providers?cursor=from-url`),
      { cursor: undefined },
      {},
    );
    pin(
      !("cursor" in (absent.seen.executed[0]?.variableValues ?? {})),
      "a variable whose key request.params holds as undefined was read from the URL",
    );
  });

  test("reads a body with `request.text()` and answers with the route's status", async () => {
    const { handlers, seen } = harness(() => ({ data: { createProvider: { providerCode: "made" } } }));
    const request = new Request(`http://localhost${REST_BASE}/providers`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Made" }),
    });
    const response = await runSofaHandler(handlers.get(routeOf("POST", "/providers"))!, request, {}, {});
    pin(seen.executed[0]?.variableValues?.name === "Made", "the body's fields did not become variables");
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ providerCode: "made" });
  });

  test("hands a result's errors, or what throws, to the configured errorHandler", async () => {
    const returned = harness(() => ({ errors: [notFound("No such provider")] }));
    const route = routeOf("GET", "/providers/:providerCode");
    const request = () => new Request(`http://localhost${REST_BASE}/providers/a`);
    const answer = await runSofaHandler(returned.handlers.get(route)!, request(), { providerCode: "a" }, {});
    expect(answer.status).toBe(404);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    const thrown = harness(() => {
      throw notFound("No such provider");
    });
    const thrownAnswer = await runSofaHandler(thrown.handlers.get(route)!, request(), { providerCode: "a" }, {});
    expect(thrownAnswer.status).toBe(404);
    expect((await thrownAnswer.json()).code).toBe("NOT_FOUND");
  });
});

describe("the GraphQL door of the feature tests (tests/doors.ts)", () => {
  test("sends, for every route, the very document SOFA runs for it: both doors select the same fields", async () => {
    for (const route of REST_ROUTES) {
      const { handlers, seen } = harness(() => ({ data: {} }));
      const params = Object.fromEntries([...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => [name, "1"]));
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
      const headers = body ? { "content-type": "application/json" } : undefined;
      const request = new Request(`http://localhost${route.base}${route.path}`, {
        method: route.method,
        body,
        headers,
      });
      await runSofaHandler(handlers.get(route)!, request, params, {});
      const document = seen.executed[0]?.document;
      expect({ field: route.field, document: document && print(document) }).toEqual({
        field: route.field,
        document: documentOf(route.field),
      });
    }
  });
});
