/** What only GraphQL does for errors (the shared codes and masking are tests/features/errors.test.ts): documents that do not parse or validate, several operations in a document, the HTTP transport. */
import { describe, expect, test } from "@jest/globals";
import { call, gql, gqlCodes } from "../helpers.ts";

function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/);
  expect(text).not.toMatch(/\/work\/|node_modules|\.ts\b/);
  expect(text).not.toMatch(/SELECT|INSERT|SQLITE|prisma/i);
  expect(text).not.toContain('"stack"');
}

describe("documents", () => {
  test.each(["{ providers { nope } }", "{ providers { "])(
    "a document that does not validate or parse (%s) is BAD_USER_INPUT",
    async (query) => {
      const answer = await gql(query);
      expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
      expectNothingInternal(answer.text);
    },
  );

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
