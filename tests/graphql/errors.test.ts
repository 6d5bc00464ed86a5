/** GraphQL errors carry the contract's code in extensions.code, and nothing internal. */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { approve, call, db, gql, gqlCodes, intake, uniqueCode } from "../helpers.ts";

afterEach(() => {
  jest.restoreAllMocks();
});

function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/);
  expect(text).not.toMatch(/\/work\/|node_modules|\.ts\b/);
  expect(text).not.toMatch(/SELECT|INSERT|SQLITE|prisma/i);
  expect(text).not.toContain('"stack"');
}

describe("extensions.code", () => {
  test("NOT_FOUND, UNAUTHENTICATED, FORBIDDEN and BAD_USER_INPUT", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const other = await intake();
    const cases: [string, Record<string, unknown>, string | undefined, string][] = [
      [
        "query Q($c: String!) { provider(providerCode: $c) { name } }",
        { c: uniqueCode("none") },
        undefined,
        "NOT_FOUND",
      ],
      ["{ reviewQueue { items { reviewCode } } }", {}, undefined, "UNAUTHENTICATED"],
      ["{ reviewQueue { items { reviewCode } } }", {}, other.accessToken, "FORBIDDEN"],
      [
        'mutation M($c: String!) { updateProvider(providerCode: $c, summary: "x") { version } }',
        { c: visible.providerCode },
        other.accessToken,
        "FORBIDDEN",
      ],
      ["{ providers(limit: 0) { nextCursor } }", {}, undefined, "BAD_USER_INPUT"],
      ["{ providers { nope } }", {}, undefined, "BAD_USER_INPUT"],
      ["{ providers { ", {}, undefined, "BAD_USER_INPUT"],
      ["query Q($l: Int) { providers(limit: $l) { nextCursor } }", { l: "many" }, undefined, "BAD_USER_INPUT"],
    ];
    for (const [query, variables, token, code] of cases) {
      const answer = await gql(query, variables, token ? { token } : {});
      expect({ query, codes: gqlCodes(answer) }).toEqual({ query, codes: [code] });
      expectNothingInternal(answer.text);
    }
  });

  test("an operation compiled after its first runs (src/http/jit.plugin.ts) answers as it did before: data, codes, masking", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const detail = `query D($c: String!) { provider(providerCode: $c) { providerCode name version capabilities { key }
      endpoint { url } reviewTimeline { kind actor } tokens { tokenId } } }`;
    const runs = async (query: string, variables: Record<string, unknown>) => {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await gql(query, variables));
      return answers;
    };
    const reads = await runs(detail, { c: visible.providerCode });
    expect(reads[0]?.body.data.provider.providerCode).toBe(visible.providerCode);
    for (const answer of reads) expect(answer.body).toEqual(reads[0]?.body);

    const missing = await runs(detail, { c: uniqueCode("none") });
    for (const answer of missing) expect(gqlCodes(answer)).toEqual(["NOT_FOUND"]);

    // A variable that does not fit its type is a request error: the same answer, status and words, every time.
    const badVariable = await runs("query L($limit: Int) { providers(limit: $limit) { nextCursor } }", { limit: "x" });
    for (const answer of badVariable) {
      expect(answer.status).toBe(400);
      expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
      expect(answer.body.errors[0].message).toContain('"$limit"');
      expect(answer.body).toEqual(badVariable[0]?.body);
      expectNothingInternal(answer.text);
    }

    jest.spyOn(db.provider, "findMany").mockRejectedValue(new Error("SQLITE_BUSY at /work/main/src/db.ts:3:4"));
    const failing = await runs("query F { providers(limit: 1) { items { name } } }", {});
    for (const answer of failing) {
      expect(gqlCodes(answer)).toEqual(["INTERNAL"]);
      expect(answer.body.errors[0].message).toBe("Internal server error");
      expectNothingInternal(answer.text);
    }
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

  test("an invalid token is refused before GraphQL runs: 401 with WWW-Authenticate", async () => {
    const answer = await gql("{ health { status } }", {}, { token: "agr_definitelyNotAValidTokenAtAll00000000" });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
  });

  test("an unexpected failure is INTERNAL and masked", async () => {
    jest
      .spyOn(db.provider, "findMany")
      .mockRejectedValueOnce(new Error("SQLITE_BUSY: SELECT secret FROM providers at /work/main/src/db.ts:3:4"));
    const answer = await gql("query Q { providers(limit: 1) { items { name } } }");
    expect(gqlCodes(answer)).toEqual(["INTERNAL"]);
    expect(answer.body.errors[0].message).toBe("Internal server error");
    expectNothingInternal(answer.text);
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
