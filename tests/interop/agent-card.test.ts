/** GET /api/v1/providers/{providerCode}/agent-card.json and Query.agentCard: an A2A v1.0 agent card. */
import { describe, expect, test } from "@jest/globals";
import { Ajv2020 } from "ajv/dist/2020.js";
import { uniqueCode } from "../builders.ts";
import { approve, call, expectProblem, gql, intake, reviewerToken } from "../helpers.ts";

const card = (providerCode: string, token?: string) =>
  call("GET", `/api/v1/providers/${providerCode}/agent-card.json`, token ? { token } : {});

/** Every key of a JSON value, at any depth, whose value is null. */
function nullKeys(value: unknown, path = ""): string[] {
  if (value === null) return [path];
  if (typeof value !== "object") return [];
  return Object.entries(value as object).flatMap(([k, v]) => nullKeys(v, `${path}/${k}`));
}

describe("the agent card", () => {
  test("maps the profile to A2A v1.0 fields, with no nulls, as application/json", async () => {
    const p = await intake({
      description: "Plans delivery routes.\nVans and bikes.",
      roles: [{ subject: "@acme", role: "OWNER" }],
      capabilities: [
        {
          key: "plan",
          name: "Plan a route",
          description: "Plans one route",
          tags: ["maps"],
          inputModes: ["text/plain"],
          outputModes: ["application/json"],
        },
        { key: "eta", name: "Estimate arrival", tags: [], inputModes: ["application/json"] },
      ],
      endpoint: { url: "https://planner.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
    });
    const answer = await card(p.providerCode);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      name: "Route Planner",
      description: "Plans delivery routes.\nVans and bikes.",
      supportedInterfaces: [
        { url: "https://planner.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      provider: { organization: "acme", url: "https://planner.example.com" },
      version: "1",
      documentationUrl: `http://registry.test/providers/${p.providerCode}`,
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: { scheme: "Bearer", description: expect.any(String) } },
      },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["application/json"],
      skills: [
        {
          id: "plan",
          name: "Plan a route",
          description: "Plans one route",
          tags: ["maps"],
          examples: [],
          inputModes: ["text/plain"],
          outputModes: ["application/json"],
        },
        {
          id: "eta",
          name: "Estimate arrival",
          description: "Estimate arrival",
          tags: [],
          examples: [],
          inputModes: ["application/json"],
          outputModes: [],
        },
      ],
      // Not approved: unsigned (tests/trust/signing.test.ts has the signed cards).
      signatures: [],
    });
    expect(nullKeys(answer.body)).toEqual([]);
    // v1 names only: the 0.3 fields are gone.
    for (const legacy of ["url", "preferredTransport", "additionalInterfaces", "protocolVersion", "security"]) {
      expect(answer.body).not.toHaveProperty(legacy);
    }
  });

  test("every card matches the schema the OpenAPI document declares for it", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const operation = doc.paths["/api/v1/providers/{providerCode}/agent-card.json"].get;
    expect(operation.operationId).toBe("agentCard");
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: "doc", components: doc.components });
    const schema = JSON.parse(
      JSON.stringify(operation.responses["200"].content["application/json"].schema).replaceAll(
        '"#/components/',
        '"doc#/components/',
      ),
    );
    const validate = ajv.compile(schema);
    for (const authScheme of ["NONE", "BEARER", "API_KEY", "OAUTH2", "MTLS"]) {
      const p = await intake({
        capabilities: [{ key: "plan", name: "Plan" }],
        endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme },
      });
      const answer = await card(p.providerCode);
      expect({ authScheme, ok: validate(answer.body), errors: validate.errors ?? null }).toEqual({
        authScheme,
        ok: true,
        errors: null,
      });
    }
    // The schema is not vacuous: a card with a null or a scheme of no known kind fails it.
    expect(validate({ ...(await card((await intake()).providerCode)).body, iconUrl: undefined, name: null })).toBe(
      false,
    );
    const bad = (await card((await intake()).providerCode)).body;
    expect(validate({ ...bad, securitySchemes: { x: { basicSecurityScheme: {} } } })).toBe(false);
  });

  test.each([
    ["NONE", {}, []],
    ["API_KEY", { apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: "header" }) } }, ["apiKey"]],
    ["OAUTH2", { oauth2: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "Bearer" }) } }, ["oauth2"]],
    ["MTLS", { mtls: { mtlsSecurityScheme: { description: expect.any(String) } } }, ["mtls"]],
  ])("authScheme %s → its security scheme and requirement", async (authScheme, schemes, required) => {
    const p = await intake({
      summary: "A tool server",
      endpoint: { url: "https://tools.example.com/mcp", protocol: "MCP", authScheme },
    });
    const answer = await card(p.providerCode);
    expect(answer.status).toBe(200);
    expect(answer.body.securitySchemes).toEqual(schemes);
    expect(answer.body.securityRequirements).toEqual(required.map((name) => ({ schemes: { [name]: { list: [] } } })));
    // No description: the summary; no modes anywhere: plain text; MCP keeps its own binding name.
    expect(answer.body.description).toBe("A tool server");
    expect(answer.body.defaultInputModes).toEqual(["text/plain"]);
    expect(answer.body.supportedInterfaces[0].protocolBinding).toBe("MCP");
    expect(answer.body.provider.organization).toBe("Route Planner");
  });

  test("follows the profile's version after a PATCH; an owner's email address is never shown", async () => {
    const p = await intake({ roles: [{ subject: "owner@example.com", role: "OWNER" }] });
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { name: "Route Planner Two" },
    });
    expect(patched.status).toBe(200);
    const answer = await card(p.providerCode);
    expect(answer.body).toMatchObject({ name: "Route Planner Two", version: "2" });
    expect(answer.body.provider.organization).toBe("Route Planner Two");
    expect(answer.text).not.toContain("owner@example.com");
  });

  test("who may see the provider may see its card; others get 404 (never 403)", async () => {
    const p = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    expectProblem(await card(p.providerCode), 404, "NOT_FOUND");
    expectProblem(await card(p.providerCode, other.accessToken), 404, "NOT_FOUND");
    expect((await card(p.providerCode, p.accessToken)).status).toBe(200);
    expect((await card(p.providerCode, await reviewerToken())).status).toBe(200);
    expectProblem(await card(uniqueCode("missing")), 404, "NOT_FOUND");

    // A suspended provider disappears for the public, as its profile does.
    const q = await intake();
    await approve(q.providerCode);
    expect((await card(q.providerCode)).status).toBe(200);
    const suspended = await call("POST", `/api/v1/providers/${q.providerCode}/suspend`, {
      token: await reviewerToken(),
      body: { note: "gone" },
    });
    expect(suspended.status).toBe(200);
    expectProblem(await card(q.providerCode), 404, "NOT_FOUND");
  });

  test("GraphQL agentCard answers the same card", async () => {
    const p = await intake({ capabilities: [{ key: "plan", name: "Plan" }] });
    const answer = await gql(
      `query($code: String!) { agentCard(providerCode: $code) {
        name version supportedInterfaces { url protocolBinding protocolVersion }
        securitySchemes securityRequirements { schemes } skills { id name description } } }`,
      { code: p.providerCode },
    );
    expect(answer.body.errors).toBeUndefined();
    const rest = await card(p.providerCode);
    expect(answer.body.data.agentCard).toEqual({
      name: rest.body.name,
      version: rest.body.version,
      supportedInterfaces: rest.body.supportedInterfaces,
      securitySchemes: rest.body.securitySchemes,
      securityRequirements: rest.body.securityRequirements,
      skills: [{ id: "plan", name: "Plan", description: "Plan" }],
    });
    const hidden = await intake({ visibility: "PRIVATE" });
    const refused = await gql("query($code: String!) { agentCard(providerCode: $code) { name } }", {
      code: hidden.providerCode,
    });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
