/** Intake validation through Mutation.createProvider: the same rules and codes as REST. */
import { describe, expect, test } from "@jest/globals";
import { call, db, errorPaths, gql, gqlCodes, intake, intakeBody, uniqueCode } from "../helpers.ts";

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

describe("Mutation.createProvider validation", () => {
  test.each(["name", "summary", "agentType", "endpoint", "contactEmail"])(
    "a missing %s is BAD_USER_INPUT naming it",
    async (field) => {
      const body = intakeBody();
      delete body[field];
      const answer = await refused(body);
      expect(answer.body.errors[0].message).toContain(`"$${field}"`);
    },
  );

  test("a wrong type is BAD_USER_INPUT naming it", async () => {
    const answer = await refused(intakeBody({ name: 123 }));
    expect(answer.body.errors[0].message).toMatch(/^Variable "\$name" got invalid value 123/);
  });

  test("a bad email is BAD_USER_INPUT naming contactEmail", async () => {
    const answer = await refused(intakeBody({ contactEmail: "ops-at-example.com" }));
    expect(errorPaths(answer)).toEqual(["contactEmail"]);
  });

  test("labels are normalised", async () => {
    const answer = await gql(CREATE, intakeBody({ labels: [" B ", "a", "b", "A", "c"] }));
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.createProvider.provider.labels).toEqual(["b", "a", "c"]);
  });

  test("a label with forbidden characters is refused", async () => {
    const answer = await refused(intakeBody({ labels: ["ok", "not ok!"] }));
    expect(errorPaths(answer)).toEqual(["labels.1"]);
  });

  test("an http: endpoint off loopback is refused; http://localhost is allowed", async () => {
    const answer = await refused(
      intakeBody({ endpoint: { url: "http://agent.example.com/", protocol: "A2A", authScheme: "NONE" } }),
    );
    expect(errorPaths(answer)).toEqual(["endpoint.url"]);
    const allowed = await gql(
      CREATE,
      intakeBody({ endpoint: { url: "http://localhost:7000/", protocol: "A2A", authScheme: "NONE" } }),
    );
    expect(allowed.body.errors).toBeUndefined();
    expect(allowed.body.data.createProvider.provider.endpoint.url).toBe("http://localhost:7000/");
  });

  test("duplicate capability keys and tool names are refused", async () => {
    const caps = await refused(
      intakeBody({
        capabilities: [
          { key: "a", name: "A" },
          { key: "a", name: "B" },
        ],
      }),
    );
    expect(errorPaths(caps)).toEqual(["capabilities.1.key"]);
    const tools = await refused(
      intakeBody({
        tools: [
          { name: "t", kind: "MCP" },
          { name: "t", kind: "HTTP" },
        ],
      }),
    );
    expect(errorPaths(tools)).toEqual(["tools.1.name"]);
  });

  test("an unknown nested field is refused", async () => {
    const answer = await refused(
      intakeBody({ endpoint: { url: "https://a.example.com/", protocol: "A2A", authScheme: "NONE", extra: true } }),
    );
    expect(answer.body.errors[0].message).toMatch(/^Variable "\$endpoint".*Field "extra" is not defined/);
  });

  test("a code already taken is CONFLICT", async () => {
    const first = await intake();
    const answer = await gql(CREATE, intakeBody({ providerCode: first.providerCode }));
    expect(gqlCodes(answer)).toEqual(["CONFLICT"]);
    expect(await db.provider.count({ where: { providerCode: first.providerCode } })).toBe(1);
  });

  test("without a code, one is derived from the name", async () => {
    const word = uniqueCode("gderived");
    const answer = await gql(CREATE, intakeBody({ providerCode: undefined, name: `Weather Bot ${word}` }));
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.createProvider.providerCode).toBe(`weather-bot-${word}`);
  });

  test("the answer is not cached and the token authenticates", async () => {
    const answer = await gql(CREATE, intakeBody({ visibility: undefined }));
    expect(answer.headers.get("cache-control")).toBe("no-store");
    const { providerCode, accessToken, reviewCode } = answer.body.data.createProvider;
    expect(reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
    const review = await call("GET", `/api/v1/reviews/${reviewCode}`, { token: accessToken });
    expect(review.status).toBe(200);
    expect(review.body.providerCode).toBe(providerCode);
  });

  test("a body over 64 KiB is PAYLOAD_TOO_LARGE", async () => {
    const body = intakeBody({ name: "x".repeat(70 * 1024) });
    const answer = await gql(CREATE, body);
    expect(answer.status).toBe(413);
    expect(gqlCodes(answer)).toEqual(["PAYLOAD_TOO_LARGE"]);
    expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);
  });

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
