/**
 * GraphQL limits (API.md §6): depth, aliases, tokens, cost and directives on /graphql and on the
 * operations REST routes run (SOFA executes its own documents without Yoga's parse/validate: the
 * limits must still hold for them); batching off; introspection and GraphiQL off in production.
 */
import { describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type Answer, type App, appWith, call, config, db, expectProblem, gqlCodes, PRODUCTION } from "../helpers.ts";

/** A GraphQL request asking for the GraphQL-over-HTTP media type, where a request error is a 400. */
function gql(query: string, app?: App, variables: Record<string, unknown> = {}): Promise<Answer> {
  return call("POST", "/graphql", {
    body: { query, variables },
    headers: { accept: "application/graphql-response+json" },
    ...(app ? { app } : {}),
  });
}

/**
 * A 400 whose errors all carry `code` (a document over a limit does not validate; one over the token
 * limit does not even parse), one of them matching `pattern`; nothing ran.
 */
function expectRefused(answer: Answer, pattern: RegExp, code = "GRAPHQL_VALIDATION_FAILED"): void {
  expect(answer.status).toBe(400);
  expect(new Set(gqlCodes(answer))).toEqual(new Set([code]));
  expect(answer.body.data ?? null).toBeNull();
  const messages = (answer.body.errors as { message: string }[]).map((e) => e.message);
  expect(messages).toContainEqual(expect.stringMatching(pattern));
}

const nested = (levels: number) => `{ ${"... on Query { ".repeat(levels)}__typename${" }".repeat(levels)} }`;

describe("the defaults on /graphql", () => {
  test("are the documented ones", () => {
    expect(config.graphqlLimits).toEqual({
      maxDepth: 8,
      maxAliases: 15,
      maxTokens: 2000,
      maxCost: 5000,
      maxDirectives: 20,
      introspection: true,
    });
  });

  test("depth: 8 levels pass, 9 are refused", async () => {
    expect((await gql(nested(7))).body.data).toEqual({ __typename: "Query" });
    expectRefused(await gql(nested(9)), /depth limit of 8 exceeded/);
  });

  test("aliases: 15 pass, 16 are refused (and nothing of a refused mutation runs)", async () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: health { status }`).join(" ")} }`;
    expect(Object.keys((await gql(aliased(15))).body.data)).toHaveLength(15);
    expectRefused(await gql(aliased(16)), /Aliases limit of 15 exceeded/);

    const name = `Alias flood ${uniqueCode()}`;
    const { labels: _l, providerCode: _p, ...variables } = intakeBody({ name });
    const mutation = `mutation M($name: String!, $summary: String!, $agentType: AgentType!, $contactEmail: String!, $endpoint: EndpointInput!) {
      ${Array.from({ length: 16 }, (_, i) => `c${i}: createProvider(name: $name, summary: $summary, agentType: $agentType, contactEmail: $contactEmail, endpoint: $endpoint) { providerCode }`).join("\n")}
    }`;
    expectRefused(await gql(mutation, undefined, variables), /Aliases limit/);
    expect(await db.provider.count({ where: { name } })).toBe(0);
  });

  test("tokens: a document of more than 2000 tokens is refused while parsing, well under the body limit", async () => {
    const query = `{ ${"__typename ".repeat(2001)}}`;
    expect(query.length).toBeLessThan(64 * 1024);
    expectRefused(await gql(query), /Token limit of 2000 exceeded/, "GRAPHQL_PARSE_FAILED");
    // Just under it (the repeated label is one filter once de-duplicated).
    const under = `{ providers(labels: [${'"a" '.repeat(1980)}], limit: 1) { nextCursor } }`;
    expect((await gql(under)).status).toBe(200);
  });

  test("directives: more than 20 are refused", async () => {
    const query = `{ __typename ${"@include(if: true) ".repeat(21)}}`;
    expectRefused(await gql(query), /Directives limit of 20 exceeded/);
  });

  test("cost: a selection over the budget is refused (GRAPHQL_MAX_COST=500 here; 5000 by default)", async () => {
    const fields =
      "providerCode name summary description labels agentType visibility trustTier reviewStage contactEmail version createdAt updatedAt";
    const deep = `capabilities { key name description tags inputModes outputModes } models { vendor model role contextWindow } tools { name kind description scopes } endpoint { url protocol authScheme healthUrl } policy { dataRetentionDays humanOversight allowedUseCases prohibitedUseCases termsUrl privacyUrl } roles { subject role } tokens { tokenId prefix label createdAt lastUsedAt expiresAt revokedAt } reviewTimeline { at kind actor note }`;
    const one = (i: number) => `p${i}: provider(providerCode: "x${i}") { ${fields} ${deep} }`;
    const query = `{ ${Array.from({ length: 15 }, (_, i) => one(i)).join(" ")} }`;
    expectRefused(await gql(query, appWith({ GRAPHQL_MAX_COST: "500" })), /Query Cost limit of 500 exceeded/);
    // Under the default budget the same selection runs (every provider is simply not found).
    expect(gqlCodes(await gql(query))).toContain("NOT_FOUND");
  });

  test("batching is off: an array body is a 400 and none of its operations runs", async () => {
    const name = `Batch ${uniqueCode()}`;
    const { labels: _l, providerCode: _p, ...variables } = intakeBody({ name });
    const op = {
      query: `mutation M($name: String!, $summary: String!, $agentType: AgentType!, $contactEmail: String!, $endpoint: EndpointInput!) {
        createProvider(name: $name, summary: $summary, agentType: $agentType, contactEmail: $contactEmail, endpoint: $endpoint) { providerCode } }`,
      variables,
    };
    const answer = await call("POST", "/graphql", { body: [op, op] });
    expect(answer.status).toBe(400);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.errors[0].message).toMatch(/Batching is not supported/);
    expect(await db.provider.count({ where: { name } })).toBe(0);
  });
});

describe("the same limits on the operations REST routes run", () => {
  test("depth: with GRAPHQL_MAX_DEPTH=2 a deeper route's operation is a 400 problem (not a 500); a shallow one runs", async () => {
    const app = appWith({ GRAPHQL_MAX_DEPTH: "2" });
    const refused = await call("GET", "/api/v1/providers", { app });
    expectProblem(refused, 400, "BAD_USER_INPUT");
    expect(refused.body.detail).toMatch(/depth limit of 2 exceeded/);
    expect(refused.text).not.toMatch(/stack|node_modules|\.ts:/);
    // The service description's operation is shallow: it runs.
    expect((await call("GET", "/api/v1/health", { app })).status).toBe(200);
    // The same limit on /graphql, for the same selection.
    expectRefused(await gql("{ providers { items { endpoint { protocol } } } }", app), /depth limit of 2/);
  });

  test("an intake refused by a limit writes nothing", async () => {
    const app = appWith({ GRAPHQL_MAX_COST: "50" });
    const body = intakeBody();
    const refused = await call("POST", "/api/v1/providers", { app, body });
    expectProblem(refused, 400, "BAD_USER_INPUT");
    expect(refused.body.detail).toMatch(/Cost limit of 50 exceeded/);
    expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);
    // The default limits let the same intake through.
    expect((await call("POST", "/api/v1/providers", { body })).status).toBe(201);
  });

  test("tokens count for REST operations too; a limit of 0 turns a limit off", async () => {
    const tokens = await call("GET", "/api/v1/providers", { app: appWith({ GRAPHQL_MAX_TOKENS: "40" }) });
    expectProblem(tokens, 400, "BAD_USER_INPUT");
    expect(tokens.body.detail).toMatch(/Token limit of 40 exceeded/);
    // A limit of 0 is off: the same route runs with every limit off.
    const off = appWith({
      GRAPHQL_MAX_DEPTH: "0",
      GRAPHQL_MAX_TOKENS: "0",
      GRAPHQL_MAX_COST: "0",
      GRAPHQL_MAX_ALIASES: "0",
      GRAPHQL_MAX_DIRECTIVES: "0",
    });
    expect((await call("GET", "/api/v1/providers", { app: off })).status).toBe(200);
    expect((await gql(nested(30), off)).status).toBe(200);
  });

  test("repeated REST requests keep being refused (the verdict is kept per operation, not lost)", async () => {
    const app = appWith({ GRAPHQL_MAX_DEPTH: "2" });
    for (let i = 0; i < 3; i++) expectProblem(await call("GET", "/api/v1/providers", { app }), 400, "BAD_USER_INPUT");
  });
});

describe("production", () => {
  const INTROSPECTION = "{ __schema { queryType { name } } }";

  test("introspection is refused in production and allowed otherwise", async () => {
    const production = appWith(PRODUCTION);
    expect(loadConfig({ ...process.env, ...PRODUCTION }).graphqlLimits.introspection).toBe(false);
    expectRefused(await gql(INTROSPECTION, production), /introspection has been disabled/);
    expectRefused(await gql('{ __type(name: "Provider") { name } }', production), /introspection has been disabled/);
    // __typename is not introspection of the schema: it stays.
    expect((await gql("{ __typename }", production)).body.data).toEqual({ __typename: "Query" });

    expect((await gql(INTROSPECTION)).body.data).toEqual({ __schema: { queryType: { name: "Query" } } });
  });

  test("field suggestions are hidden in production (they would spell out the schema)", async () => {
    const production = appWith(PRODUCTION);
    const hidden = await gql("{ provderz }", production);
    expect(gqlCodes(hidden)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
    expect(hidden.text).not.toMatch(/Did you mean/);
    expect((await gql("{ provderz }")).text).toMatch(/Did you mean/);
  });

  test("GraphiQL is off in production (a 404 in the GraphQL error shape) and served otherwise", async () => {
    const production = appWith(PRODUCTION);
    const off = await call("GET", "/graphql", { app: production, headers: { accept: "text/html" } });
    expect(off.status).toBe(404);
    expect(off.headers.get("content-type")).toMatch(/^application\/graphql-response\+json/);
    expect(gqlCodes(off)).toEqual(["NOT_FOUND"]);
    expect(off.text).not.toMatch(/<html|<script/i);

    const on = await call("GET", "/graphql", { headers: { accept: "text/html" } });
    expect(on.status).toBe(200);
    expect(on.headers.get("content-type")).toMatch(/^text\/html/);
    expect(on.text).toMatch(/GraphiQL/);
  });
});
