/** What only GraphQL does for intake (Mutation.createProvider): graphql-js's wording of variable errors (never quoting a value) and /graphql's own body checks; the shared rules are in tests/features/intake.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
import { call, db, gql, gqlCodes } from "../helpers.ts";

const CREATE = `
  mutation Create(
    $providerCode: String, $name: String!, $summary: String!, $labels: [String!], $agentType: AgentType!,
    $contactEmail: String!, $endpoint: EndpointInput!, $capabilities: [CapabilityInput!], $tools: [ToolInput!]
  ) {
    createProvider(
      providerCode: $providerCode, name: $name, summary: $summary, labels: $labels, agentType: $agentType,
      contactEmail: $contactEmail, endpoint: $endpoint, capabilities: $capabilities, tools: $tools
    ) { providerCode reviewCode accessToken provider { labels endpoint { url } } }
  }`;

async function refused(variables: Record<string, unknown>) {
  const answer = await gql(CREATE, variables);
  expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
  expect(answer.body.data?.createProvider ?? null).toBeNull();
  expect(await db.provider.count({ where: { providerCode: String(variables.providerCode) } })).toBe(0);
  return answer;
}

describe("variable errors, in graphql-js's words without the values they refused", () => {
  test("a wrong type names the variable and what it takes, never the value it refused", async () => {
    const answer = await refused(intakeBody({ name: 8675309 }));
    expect(answer.body.errors[0].message).toBe(
      'Variable "$name" got an invalid value; Expected a value of type "String".',
    );
    const nested = await refused(
      intakeBody({ endpoint: { url: "https://a.example.com/", protocol: 8675309, authScheme: "NONE" } }),
    );
    expect(nested.body.errors[0].message).toMatch(
      /^Variable "\$endpoint" got an invalid value at "endpoint\.protocol"; Expected one of the values of "EndpointProtocol": A2A, /,
    );
    expect(JSON.stringify([answer.body, nested.body])).not.toContain("8675309");
  });

  test("an unknown nested field names the variable and the field", async () => {
    const answer = await refused(
      intakeBody({ endpoint: { url: "https://a.example.com/", protocol: "A2A", authScheme: "NONE", extra: true } }),
    );
    expect(answer.body.errors[0].message).toMatch(/^Variable "\$endpoint".*Field "extra" is not defined/);
  });
});

describe("the body of a /graphql request", () => {
  test("a body that is not JSON is UNSUPPORTED_MEDIA_TYPE", async () => {
    const answer = await call("POST", "/graphql", {
      body: "query=%7B%20health%20%7B%20status%20%7D%20%7D",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(answer.status).toBe(415);
    expect(gqlCodes(answer)).toEqual(["UNSUPPORTED_MEDIA_TYPE"]);
  });

  test("malformed JSON is BAD_USER_INPUT", async () => {
    const answer = await call("POST", "/graphql", { body: '{"query": "{ health { status } }"' });
    expect(answer.status).toBe(400);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
  });
});
