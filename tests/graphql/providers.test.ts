/** Every seed operation through /graphql, under the names of API.md §4. */
import { describe, expect, test } from "@jest/globals";
import { approve, db, gql, gqlCodes, intake, intakeBody, reviewerToken, uniqueCode } from "../helpers.ts";

const PROFILE = `
  providerCode name summary description labels agentType visibility trustTier reviewStage contactEmail
  capabilities { key name description tags inputModes outputModes }
  models { vendor model role contextWindow }
  tools { name kind description scopes }
  endpoint { url protocol authScheme healthUrl }
  policy { dataRetentionDays humanOversight allowedUseCases prohibitedUseCases termsUrl privacyUrl }
  roles { subject role }
  tokens { tokenId prefix label createdAt lastUsedAt expiresAt revokedAt }
  reviewTimeline { at kind actor note }
  version createdAt updatedAt
`;

const CREATE = `
  mutation Create(
    $providerCode: String, $name: String!, $summary: String!, $description: String, $labels: [String!],
    $agentType: AgentType!, $visibility: Visibility, $contactEmail: String!, $endpoint: EndpointInput!,
    $capabilities: [CapabilityInput!], $models: [ModelInput!], $tools: [ToolInput!], $policy: PolicyInput,
    $roles: [RoleInput!]
  ) {
    createProvider(
      providerCode: $providerCode, name: $name, summary: $summary, description: $description, labels: $labels,
      agentType: $agentType, visibility: $visibility, contactEmail: $contactEmail, endpoint: $endpoint,
      capabilities: $capabilities, models: $models, tools: $tools, policy: $policy, roles: $roles
    ) { providerCode reviewCode accessToken provider { ${PROFILE} } }
  }`;

describe("Query.api and Query.health", () => {
  test("api describes the service and its routes", async () => {
    const answer = await gql("{ api { name version specUrl graphqlUrl healthUrl routes { method path summary } } }");
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.api).toMatchObject({
      name: "Agent Registry",
      specUrl: "http://registry.test/openapi.yaml",
      graphqlUrl: "http://registry.test/graphql",
      healthUrl: "http://registry.test/api/v1/health",
    });
    expect(answer.body.data.api.routes).toContainEqual({
      method: "GET",
      path: "/api/v1/providers/:providerCode",
      summary: expect.any(String),
    });
  });

  test("health reports the database", async () => {
    const answer = await gql("{ health { status database version } }");
    expect(answer.status).toBe(200);
    expect(answer.body.data.health).toEqual({ status: "ok", database: "ok", version: expect.any(String) });
  });
});

describe("Mutation.createProvider", () => {
  test("registers the agent and answers its token once", async () => {
    const body = intakeBody({
      tools: [{ name: "geocode", kind: "MCP", scopes: ["READ_ONLY", "EXTERNAL"] }],
      policy: { humanOversight: "ALWAYS", dataRetentionDays: 30 },
    });
    const answer = await gql(CREATE, body);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.headers.get("cache-control")).toBe("no-store");
    const result = answer.body.data.createProvider;
    expect(result.providerCode).toBe(body.providerCode);
    expect(result.reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
    expect(result.accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    expect(result.provider).toMatchObject({
      labels: ["maps", "routing"],
      visibility: "PUBLIC",
      trustTier: "UNVERIFIED",
      reviewStage: "SUBMITTED",
      contactEmail: "ops@example.com",
      tools: [{ name: "geocode", kind: "MCP", description: null, scopes: ["READ_ONLY", "EXTERNAL"] }],
      policy: { humanOversight: "ALWAYS", dataRetentionDays: 30, allowedUseCases: [] },
      version: 1,
    });
    expect(result.provider.tokens).toEqual([expect.objectContaining({ label: "intake", revokedAt: null })]);
    expect(await db.provider.count({ where: { providerCode: body.providerCode as string } })).toBe(1);
  });

  test("a missing required argument is BAD_USER_INPUT and writes nothing", async () => {
    const { summary: _dropped, ...body } = intakeBody();
    const answer = await gql(CREATE, body);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.data).toBeUndefined();
    expect(await db.provider.count({ where: { providerCode: body.providerCode as string } })).toBe(0);
  });
});

describe("Query.provider and Query.providers", () => {
  test("provider answers the full profile", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const answer = await gql(`query P($code: String!) { provider(providerCode: $code) { ${PROFILE} } }`, {
      code: created.providerCode,
    });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.provider).toMatchObject({
      providerCode: created.providerCode,
      reviewStage: "APPROVED",
      contactEmail: null,
      tokens: null,
      version: 1,
    });
  });

  test("provider of an unknown code is NOT_FOUND", async () => {
    const answer = await gql(`query P($code: String!) { provider(providerCode: $code) { name } }`, {
      code: uniqueCode("missing"),
    });
    expect(gqlCodes(answer)).toEqual(["NOT_FOUND"]);
    expect(answer.body.data?.provider ?? null).toBeNull();
  });

  test("providers lists summaries", async () => {
    const label = uniqueCode("glist");
    const created = await intake({ labels: [label] });
    await approve(created.providerCode);
    const answer = await gql(
      `query L($labels: [String!]) { providers(labels: $labels) {
        items { providerCode name summary agentType visibility trustTier reviewStage labels endpoint { protocol } updatedAt }
        nextCursor } }`,
      { labels: [label] },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.providers).toEqual({
      items: [
        {
          providerCode: created.providerCode,
          name: "Route Planner",
          summary: "Plans delivery routes across a city",
          agentType: "ASSISTANT",
          visibility: "PUBLIC",
          trustTier: "UNVERIFIED",
          reviewStage: "APPROVED",
          labels: [label],
          endpoint: { protocol: "A2A" },
          updatedAt: expect.any(String),
        },
      ],
      nextCursor: null,
    });
  });
});

describe("Mutation.updateProvider", () => {
  test("the owner changes fields and gets the new version", async () => {
    const created = await intake();
    const answer = await gql(
      `mutation U($code: String!, $summary: String, $labels: [String!]) {
        updateProvider(providerCode: $code, summary: $summary, labels: $labels) { summary labels version }
      }`,
      { code: created.providerCode, summary: "Now with schedules", labels: [" Plans ", "plans", "x"] },
      { token: created.accessToken },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.headers.get("etag")).toBe('"2"');
    expect(answer.body.data.updateProvider).toEqual({
      summary: "Now with schedules",
      labels: ["plans", "x"],
      version: 2,
    });
  });
});

describe("Query.providerVersions and Query.providerVersion", () => {
  test("versions newest first; one version with its snapshot", async () => {
    const created = await intake();
    await gql(
      `mutation U($code: String!, $name: String) { updateProvider(providerCode: $code, name: $name) { version } }`,
      { code: created.providerCode, name: "Route Planner 2" },
      { token: created.accessToken },
    );
    const list = await gql(
      `query V($code: String!) { providerVersions(providerCode: $code) {
        items { providerCode version createdAt actor changedFields } nextCursor } }`,
      { code: created.providerCode },
      { token: created.accessToken },
    );
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.providerVersions.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(list.body.data.providerVersions.items[0]).toMatchObject({
      actor: `agent:${created.providerCode}`,
      changedFields: ["name"],
    });

    const one = await gql(
      `query V($code: String!, $v: Int!) { providerVersion(providerCode: $code, version: $v) {
        version changedFields snapshot { name summary contactEmail labels endpoint { url } } } }`,
      { code: created.providerCode, v: 1 },
      { token: created.accessToken },
    );
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data.providerVersion).toMatchObject({
      version: 1,
      snapshot: {
        name: "Route Planner",
        contactEmail: "ops@example.com",
        labels: ["maps", "routing"],
        endpoint: { url: "https://agent.example.com/a2a" },
      },
    });
  });
});

describe("Query.reviewQueue and Query.review", () => {
  test("a reviewer sees the intake review in the queue and on its own", async () => {
    const created = await intake();
    const token = await reviewerToken();
    const queue = await gql(
      `query Q($code: String) { reviewQueue(providerCode: $code) {
        items { reviewCode providerCode providerName kind status priority assignedTo } nextCursor } }`,
      { code: created.providerCode },
      { token },
    );
    expect(queue.body.errors).toBeUndefined();
    expect(queue.body.data.reviewQueue).toEqual({
      items: [
        {
          reviewCode: created.reviewCode,
          providerCode: created.providerCode,
          providerName: "Route Planner",
          kind: "INTAKE",
          status: "OPEN",
          priority: "NORMAL",
          assignedTo: null,
        },
      ],
      nextCursor: null,
    });
    const review = await gql(
      `query R($code: String!) { review(reviewCode: $code) { reviewCode status } }`,
      { code: created.reviewCode },
      { token: created.accessToken },
    );
    expect(review.body.data.review).toEqual({ reviewCode: created.reviewCode, status: "OPEN" });
  });

  test("the queue without a reviewer token is UNAUTHENTICATED", async () => {
    const answer = await gql("{ reviewQueue { items { reviewCode } } }");
    expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
  });
});

describe("Mutation.issueToken and Mutation.revokeToken", () => {
  test("the owner issues a token, then revokes it", async () => {
    const created = await intake();
    const issued = await gql(
      `mutation I($code: String!) { issueToken(providerCode: $code, label: "ci") {
        accessToken token { tokenId prefix label revokedAt } } }`,
      { code: created.providerCode },
      { token: created.accessToken },
    );
    expect(issued.body.errors).toBeUndefined();
    expect(issued.headers.get("cache-control")).toBe("no-store");
    const { accessToken, token } = issued.body.data.issueToken;
    expect(accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    expect(token).toMatchObject({ label: "ci", revokedAt: null, prefix: accessToken.slice(0, 10) });

    const revoked = await gql(
      `mutation R($code: String!, $id: String!) { revokeToken(providerCode: $code, tokenId: $id) { tokenId revokedAt } }`,
      { code: created.providerCode, id: token.tokenId },
      { token: created.accessToken },
    );
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data.revokeToken.tokenId).toBe(token.tokenId);
    expect(Date.parse(revoked.body.data.revokeToken.revokedAt)).not.toBeNaN();

    const after = await gql("{ health { status } }", {}, { token: accessToken });
    expect(after.status).toBe(401);
    expect(gqlCodes(after)).toEqual(["UNAUTHENTICATED"]);
  });
});
