/** What only GraphQL does for errors (the shared codes and masking are tests/features/errors.test.ts): documents that do not parse or validate, nullable lookups beside their siblings, several operations in a document, the HTTP transport. */
import { describe, expect, test } from "@jest/globals";
import { approve, call, gql, intake } from "../helpers.ts";

function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/);
  expect(text).not.toMatch(/\/work\/|node_modules|\.ts\b/);
  expect(text).not.toMatch(/SELECT|INSERT|SQLITE|prisma/i);
  expect(text).not.toContain('"stack"');
}

describe("documents", () => {
  test.each([
    ["{ providers { nope } }", "GRAPHQL_VALIDATION_FAILED", { line: 1, column: 15 }],
    ["{ providers { ", "GRAPHQL_PARSE_FAILED", { line: 1, column: 15 }],
    ["query {\n  provider(providerCode: 1) { name }\n}", "GRAPHQL_VALIDATION_FAILED", { line: 2, column: 26 }],
  ])("a document that does not parse or validate (%s) is %s, with where", async (query, code, location) => {
    const answer = await gql(query);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toEqual([{ message: expect.any(String), locations: [location], extensions: { code } }]);
    expectNothingInternal(answer.text);
  });

  test("each operation of a document of several runs as itself, before and after it is compiled", async () => {
    const document = `query A { a: __typename } query B { b: __typename } query C($n: Int) { providers(limit: $n) { nextCursor } }`;
    for (const [operationName, data] of [
      ["A", { a: "Query" }],
      ["B", { b: "Query" }],
      ["A", { a: "Query" }],
      ["B", { b: "Query" }],
      ["A", { a: "Query" }],
      ["B", { b: "Query" }],
    ] as const) {
      const answer = await call("POST", "/graphql", { body: { query: document, operationName } });
      expect({ operationName, body: answer.body }).toEqual({ operationName, body: { data } });
    }
  });
});

describe("lookups by code are nullable", () => {
  test("a provider that is not there is null with NOT_FOUND at its path; its siblings are answered", async () => {
    const listed = await intake();
    await approve(listed.providerCode);
    const answer = await gql(
      `{ a: provider(providerCode: "missing") { name } b: providers(limit: 100) { items { providerCode } } }`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data.a).toBeNull();
    expect(answer.body.data.b.items.length).toBeGreaterThan(0);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ path: ["a"], extensions: { code: "NOT_FOUND" }, message: 'No provider "missing"' }),
    ]);
  });

  test("each lookup by code answers null beside its siblings: provider, providerVersion, agentCard, review", async () => {
    const hidden = await intake({ visibility: "PRIVATE" });
    const answer = await gql(
      `query($c: String!, $r: String!) {
        provider(providerCode: $c) { name }
        providerVersion(providerCode: $c, version: 1) { version }
        agentCard(providerCode: $c) { name }
        review(reviewCode: $r) { status }
        health { status }
      }`,
      { c: hidden.providerCode, r: hidden.reviewCode },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({
      provider: null,
      providerVersion: null,
      agentCard: null,
      review: null,
      health: { status: "ok" },
    });
    const byPath = Object.fromEntries(
      (answer.body.errors as { path: string[]; extensions: { code: string } }[]).map((e) => [
        e.path[0],
        e.extensions.code,
      ]),
    );
    expect(byPath).toEqual({
      provider: "NOT_FOUND",
      providerVersion: "NOT_FOUND",
      agentCard: "NOT_FOUND",
      review: "UNAUTHENTICATED",
    });
    // Its owner sees all of them.
    const owned = await gql(
      `query($c: String!, $r: String!) { provider(providerCode: $c) { providerCode } review(reviewCode: $r) { reviewCode } }`,
      { c: hidden.providerCode, r: hidden.reviewCode },
      { token: hidden.accessToken },
    );
    expect(owned.body).toEqual({
      data: { provider: { providerCode: hidden.providerCode }, review: { reviewCode: hidden.reviewCode } },
    });
  });
});

describe("transport", () => {
  test("GET /graphql runs a query", async () => {
    const answer = await call("GET", `/graphql?query=${encodeURIComponent("{ health { status } }")}`, {
      headers: { accept: "application/json" },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data.health.status).toBe("ok");
  });

  test("GET /graphql does not run mutations", async () => {
    const answer = await call(
      "GET",
      `/graphql?query=${encodeURIComponent('mutation { revokeToken(providerCode: "x", tokenId: "y") { tokenId } }')}`,
      { headers: { accept: "application/json" } },
    );
    expect(answer.status).toBe(405);
    expect(answer.body.data).toBeUndefined();
  });

  test("batching is off", async () => {
    const answer = await call("POST", "/graphql", {
      body: [{ query: "{ health { status } }" }, { query: "{ health { status } }" }],
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(Array.isArray(answer.body)).toBe(false);
  });
});
