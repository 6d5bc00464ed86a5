/** What only REST does for the lifecycle route (POST /api/v1/providers/{providerCode}/lifecycle): its guard on body keys and its OpenAPI description; the shared rules are in tests/features/lifecycle.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { call, db, errorPaths, expectProblem, intake, versionCount } from "../helpers.ts";

const lifecycle = (code: string, body: unknown, options: { token?: string } = {}) =>
  call("POST", `/api/v1/providers/${code}/lifecycle`, { body, ...options });

/** The lifecycle columns and version of a provider, straight from the database. */
async function stored(providerCode: string) {
  return db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { lifecycle: true, lifecycleMessage: true, successorCode: true, version: true },
  });
}

describe("the guard: a 400 naming the key, nothing changed", () => {
  test.each([
    ["a read-only key", { state: "RETIRED", version: 9 }, "version"],
    ["an unknown key", { state: "RETIRED", successor: "x" }, "successor"],
  ])("%s", async (_what, body, path) => {
    const p = await intake();
    const answer = await lifecycle(p.providerCode, body, { token: p.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toContain(`/${path}`);
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    expect(await versionCount(p.providerCode)).toBe(1);
  });
});

describe("the REST surface", () => {
  test("the OpenAPI document describes the route and the list arguments", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const list = doc.paths["/api/v1/providers"].get.parameters as { name: string; schema: { type: string } }[];
    expect(list.find((x) => x.name === "includeRetired")?.schema.type).toBe("boolean");
    expect(list.find((x) => x.name === "updatedSince")?.schema.type).toBe("string");
    const route = doc.paths["/api/v1/providers/{providerCode}/lifecycle"].post;
    expect(route.operationId).toBe("setProviderLifecycle");
    expect(route.parameters.map((x: { name: string }) => x.name)).toEqual(["providerCode", "If-Match"]);
    expect(Object.keys(route.requestBody.content["application/json"].schema.properties)).toEqual([
      "state",
      "message",
      "successorCode",
    ]);
    expect(Object.keys(route.responses)).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "404", "409", "412"]),
    );
    expect(doc.components.schemas.ProviderSummary.properties.lifecycle.$ref).toBe("#/components/schemas/Lifecycle");
  });
});
