/** What only REST has among the seed endpoints: the media type of GET /api/v1 and the transport's liveness and readiness routes; the shared operations are in tests/features/providers.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { call } from "../helpers.ts";

describe("GET /api/v1 (service description)", () => {
  test("answers JSON describing the service", async () => {
    const answer = await call("GET", "/api/v1");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.body).toMatchObject({ name: "Agent Registry", specUrl: "http://registry.test/openapi.yaml" });
  });
});

describe("health", () => {
  test("GET /health is liveness and GET /ready readiness", async () => {
    const live = await call("GET", "/health");
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: "ok" });
    const ready = await call("GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });
});
