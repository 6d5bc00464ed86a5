/**
 * POST /graphql: the common request is answered from `onRequest` (src/http/graphql.http.ts), everything
 * else by Yoga. Either way the answer must be Yoga's: a query sent as GET always goes through Yoga,
 * so the same query sent as POST must get the same status, media type, headers and body, whatever
 * the `Accept` header and whatever the outcome. What is left to Yoga must reach it intact.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { jsonMediaTypeFor } from "../../src/http/graphql.http.ts";
import { uniqueCode } from "../builders.ts";
import { app, approve, call, intake } from "../helpers.ts";

const visible = await intake();
await approve(visible.providerCode);
const hidden = await intake();

const PROFILE = "providerCode name contactEmail tokens { prefix } reviewTimeline { kind }";

/** The headers that must agree (a request id and a date differ between any two answers). */
const COMPARED = ["content-type", "content-length", "www-authenticate", "allow", "cache-control", "vary"];

async function both(query: string, variables: Record<string, unknown>, headers: Record<string, string>) {
  const search = new URLSearchParams({ query, variables: JSON.stringify(variables) });
  // Run once first: a document runs compiled from its second run on (src/http/jit.plugin.ts), so both
  // answers compared are those of compiled runs.
  await call("GET", `/graphql?${search}`, { headers });
  const viaGet = await call("GET", `/graphql?${search}`, { headers });
  const viaPost = await call("POST", "/graphql", { body: { query, variables }, headers });
  return { viaGet, viaPost };
}

const ACCEPTS = [
  undefined,
  "*/*",
  "application/json",
  "application/graphql-response+json",
  "application/graphql-response+json, application/json;q=0.9",
  "application/json, application/graphql-response+json",
  "application/*",
  "text/plain, application/json",
  "application/json; charset=iso-8859-1",
  "text/plain",
];

const OPERATIONS: [string, string, Record<string, unknown>, string | undefined][] = [
  [
    "a public profile",
    `query Q($c: String!) { provider(providerCode: $c) { ${PROFILE} } }`,
    { c: "visible" },
    undefined,
  ],
  [
    "the owner's profile",
    `query Q($c: String!) { provider(providerCode: $c) { ${PROFILE} } }`,
    { c: "hidden" },
    "owner",
  ],
  ["a profile not shown", `query Q($c: String!) { provider(providerCode: $c) { name } }`, { c: "hidden" }, undefined],
  ["an unknown agent", `query Q($c: String!) { provider(providerCode: $c) { name } }`, { c: "none" }, undefined],
  ["a credential that does not verify", "{ providers(limit: 1) { nextCursor } }", {}, "bad"],
  ["a list with bad input", "{ providers(limit: 0) { nextCursor } }", {}, undefined],
  [
    "a variable of the wrong type",
    "query Q($l: Int) { providers(limit: $l) { nextCursor } }",
    { l: "many" },
    undefined,
  ],
  ["a document that does not validate", "{ providers { nope } }", {}, undefined],
  ["a document that does not parse", "{ providers { ", {}, undefined],
  ["introspection", "{ __schema { queryType { name } } }", {}, undefined],
];

describe("POST /graphql answers as Yoga does", () => {
  for (const [what, query, given, who] of OPERATIONS) {
    test(`${what}, for every Accept`, async () => {
      const codes: Record<string, string> = {
        visible: visible.providerCode,
        hidden: hidden.providerCode,
        none: uniqueCode("none"),
      };
      const variables = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, codes[v as string] ?? v]));
      const token = who === "owner" ? hidden.accessToken : who === "bad" ? "ar_not-a-token" : undefined;
      for (const accept of ACCEPTS) {
        const headers: Record<string, string> = {};
        if (accept) headers.accept = accept;
        if (token) headers.authorization = `Bearer ${token}`;
        const { viaGet, viaPost } = await both(query, variables, headers);
        const label = `${what}, Accept: ${accept ?? "(none)"}`;
        expect({ label, status: viaPost.status }).toEqual({ label, status: viaGet.status });
        for (const name of COMPARED) {
          expect({ label, name, value: viaPost.headers.get(name) }).toEqual({
            label,
            name,
            value: viaGet.headers.get(name),
          });
        }
        expect({ label, body: viaPost.text }).toEqual({ label, body: viaGet.text });
      }
    });
  }

  test("the answers compared are the ones meant: data, each error code, 406", async () => {
    const profile = `query Q($c: String!) { provider(providerCode: $c) { ${PROFILE} } }`;
    const ok = await call("POST", "/graphql", {
      body: { query: profile, variables: { c: hidden.providerCode } },
      token: hidden.accessToken,
      headers: { accept: "application/graphql-response+json" },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/graphql-response+json; charset=utf-8");
    expect(ok.body.data.provider.contactEmail).toBe("ops@example.com");
    const bad = await call("POST", "/graphql", {
      body: { query: "{ providers(limit: 1) { nextCursor } }" },
      token: "ar_x",
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain("Bearer");
    expect(bad.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    const refused = await call("POST", "/graphql", {
      body: { query: "{ providers(limit: 1) { nextCursor } }" },
      headers: { accept: "text/plain" },
    });
    expect(refused.status).toBe(406);
  });
});

describe("what is left to Yoga reaches it intact", () => {
  // Over a real socket, served as main.ts serves the app: there a body can be read only once.
  const server = createServer(app);
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  async function post(body: unknown) {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  // Yoga's answers, with the statuses of GraphQL over HTTP for `Accept: */*` (answered as
  // application/json): a body lost or changed on its way to Yoga would be answered differently.
  const cases: [string, string, number, string][] = [
    ["a body that is not JSON", "{ query: ", 400, "POST body sent invalid JSON."],
    ["a body that is null", "null", 400, "POST body is expected to be object but received null"],
    ["a body that is a list", JSON.stringify([{ query: "{ __typename }" }]), 400, "Batching is not supported."],
    [
      "an unknown parameter",
      JSON.stringify({ query: "{ __typename }", foo: 1 }),
      400,
      'Unexpected parameter "foo" in the request body.',
    ],
    [
      "variables that are a list",
      JSON.stringify({ query: "{ __typename }", variables: [1] }),
      400,
      'Expected "variables" param to be empty or an object, but given array.',
    ],
    [
      "a query that is not a string",
      JSON.stringify({ query: 1 }),
      400,
      'Expected "query" param to be a string, but given number.',
    ],
    ["no query", JSON.stringify({ variables: {} }), 400, "Must provide query string."],
    [
      "an operation name that names none of the operations",
      JSON.stringify({ query: "query A { __typename }", operationName: "B" }),
      200,
      "Could not determine what operation to execute.",
    ],
    [
      "two operations and no name",
      JSON.stringify({ query: "query A { __typename } query B { __typename }" }),
      200,
      "Could not determine what operation to execute.",
    ],
  ];
  for (const [what, body, status, message] of cases) {
    test(what, async () => {
      const answer = await post(body);
      expect(answer.status).toBe(status);
      expect(answer.body.errors.map((e: { message: string }) => e.message)).toEqual([message]);
      expect(answer.body.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    });
  }

  test("extensions, and a named operation among two, run", async () => {
    for (const body of [
      { query: "{ __typename }", extensions: { any: 1 } },
      { query: "query A { __typename } query B { __typename }", operationName: "B" },
      { query: "{ __typename }", variables: null, operationName: null, extensions: null },
    ]) {
      const answer = await post(body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { __typename: "Query" } });
    }
  });
});

describe("statuses follow GraphQL over HTTP, for each media type", () => {
  const JSON_TYPE = "application/json";
  const GRAPHQL_TYPE = "application/graphql-response+json";
  const json = (body: unknown) => JSON.stringify(body);
  // [what, body, content type, token, status as application/json, as graphql-response+json, code]
  const cases: [string, string, string, string | undefined, number, number, string][] = [
    // An operation that ran is 200 whatever its field errors, data or not.
    [
      "a field error beside data",
      json({ query: '{ a: provider(providerCode: "none-x") { name } b: health { status } }' }),
      JSON_TYPE,
      undefined,
      200,
      200,
      "NOT_FOUND",
    ],
    [
      "a field error that nulls data",
      json({ query: "{ reviewQueue { nextCursor } }" }),
      JSON_TYPE,
      undefined,
      200,
      200,
      "UNAUTHENTICATED",
    ],
    [
      "a resolver's refusal of an argument",
      json({ query: "{ providers(limit: 0) { nextCursor } }" }),
      JSON_TYPE,
      undefined,
      200,
      200,
      "BAD_USER_INPUT",
    ],
    // GraphQL's request errors: 200 as application/json, 400 as graphql-response+json.
    [
      "a document that does not parse",
      json({ query: "{ providers { " }),
      JSON_TYPE,
      undefined,
      200,
      400,
      "GRAPHQL_PARSE_FAILED",
    ],
    [
      "a document that does not validate",
      json({ query: "{ providers { nope } }" }),
      JSON_TYPE,
      undefined,
      200,
      400,
      "GRAPHQL_VALIDATION_FAILED",
    ],
    [
      "variables that do not fit",
      json({ query: "query Q($l: Int) { providers(limit: $l) { nextCursor } }", variables: { l: "x" } }),
      JSON_TYPE,
      undefined,
      200,
      400,
      "BAD_USER_INPUT",
    ],
    [
      "an operation name that names none",
      json({ query: "query A { __typename }", operationName: "B" }),
      JSON_TYPE,
      undefined,
      200,
      400,
      "BAD_USER_INPUT",
    ],
    // Requests that are not well-formed, and the transport's refusals: 4xx under both.
    ["no query", json({ variables: {} }), JSON_TYPE, undefined, 400, 400, "BAD_USER_INPUT"],
    ["a body that is not JSON", "{ query: ", JSON_TYPE, undefined, 400, 400, "BAD_USER_INPUT"],
    [
      "a body that is not application/json",
      json({ query: "{ __typename }" }),
      "text/plain",
      undefined,
      415,
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    [
      "a body over the limit",
      json({ query: `{ __typename }${" ".repeat(70_000)}` }),
      JSON_TYPE,
      undefined,
      413,
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    [
      "a credential that does not verify",
      json({ query: "{ __typename }" }),
      JSON_TYPE,
      "agr_not-a-token",
      401,
      401,
      "UNAUTHENTICATED",
    ],
  ];
  for (const [what, body, contentType, token, asJson, asGraphql, code] of cases) {
    test(`${what}: ${asJson} as ${JSON_TYPE}, ${asGraphql} as ${GRAPHQL_TYPE}, ${code}`, async () => {
      for (const [accept, status] of [
        [JSON_TYPE, asJson],
        [GRAPHQL_TYPE, asGraphql],
      ] as const) {
        const answer = await call("POST", "/graphql", {
          body,
          token,
          headers: { accept, "content-type": contentType },
        });
        expect({ accept, status: answer.status, code: answer.body.errors?.[0]?.extensions?.code }).toEqual({
          accept,
          status,
          code,
        });
      }
    });
  }

  test("a field error keeps its headers on a 200: WWW-Authenticate for a missing credential", async () => {
    const answer = await call("POST", "/graphql", { body: { query: "{ reviewQueue { nextCursor } }" } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("www-authenticate")).toContain("Bearer");
    expect(answer.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ path: ["reviewQueue"], extensions: { code: "UNAUTHENTICATED" } })],
    });
  });

  test("a mutation sent as GET is 405 under both", async () => {
    const query = encodeURIComponent('mutation { revokeToken(providerCode: "x", tokenId: "y") { tokenId } }');
    for (const accept of [JSON_TYPE, GRAPHQL_TYPE]) {
      const answer = await call("GET", `/graphql?query=${query}`, { headers: { accept } });
      expect({ accept, status: answer.status }).toEqual({ accept, status: 405 });
    }
  });
});

describe("jsonMediaTypeFor", () => {
  test("picks what Yoga's negotiation picks, or nothing when Yoga would not answer JSON", () => {
    expect(jsonMediaTypeFor(null)).toBe("application/json");
    expect(jsonMediaTypeFor("*/*")).toBe("application/json");
    expect(jsonMediaTypeFor("application/graphql-response+json, application/json;q=0.9")).toBe(
      "application/graphql-response+json",
    );
    expect(jsonMediaTypeFor("application/json, application/graphql-response+json")).toBe("application/json");
    expect(jsonMediaTypeFor("text/event-stream")).toBeUndefined();
    expect(jsonMediaTypeFor("application/json; charset=latin1")).toBeUndefined();
  });
});
