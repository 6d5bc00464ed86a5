/** Every seed endpoint through /api/v1, on the embedded SQLite database. */
import { describe, expect, test } from "@jest/globals";
import { approve, call, db, expectProblem, intake, intakeBody, reviewerToken, uniqueCode } from "../helpers.ts";

describe("GET /api/v1 (service description)", () => {
  test("names the service, its spec, GraphQL and health URLs and its routes", async () => {
    const answer = await call("GET", "/api/v1");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.body).toMatchObject({
      name: "Agent Registry",
      version: expect.any(String),
      specUrl: "http://registry.test/openapi.yaml",
      graphqlUrl: "http://registry.test/graphql",
      healthUrl: "http://registry.test/api/v1/health",
    });
    expect(answer.body.routes).toEqual(
      expect.arrayContaining([
        { method: "GET", path: "/api/v1/providers", summary: expect.any(String) },
        { method: "POST", path: "/api/v1/providers", summary: expect.any(String) },
        { method: "PATCH", path: "/api/v1/providers/:providerCode", summary: expect.any(String) },
      ]),
    );
  });
});

describe("health", () => {
  test("GET /api/v1/health reports the service and the database", async () => {
    const answer = await call("GET", "/api/v1/health");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: "ok", database: "ok", version: expect.any(String) });
    const description = await call("GET", "/api/v1");
    expect(answer.body.version).toBe(description.body.version);
  });

  test("GET /health is liveness and GET /ready readiness", async () => {
    const live = await call("GET", "/health");
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: "ok" });
    const ready = await call("GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });
});

describe("POST /api/v1/providers (intake)", () => {
  test("answers 201 with the code, a review code, the token once, and the owner's view", async () => {
    const body = intakeBody({ description: "Finds **routes**", visibility: "UNLISTED" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body.providerCode).toBe(body.providerCode);
    expect(answer.body.reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
    expect(answer.body.accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    expect(answer.body.provider).toMatchObject({
      providerCode: body.providerCode,
      name: "Route Planner",
      summary: "Plans delivery routes across a city",
      description: "Finds **routes**",
      labels: ["maps", "routing"],
      agentType: "ASSISTANT",
      visibility: "UNLISTED",
      trustTier: "UNVERIFIED",
      reviewStage: "SUBMITTED",
      contactEmail: "ops@example.com",
      endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER", healthUrl: null },
      version: 1,
    });
    expect(answer.body.provider.tokens).toHaveLength(1);
    expect(answer.body.provider.reviewTimeline.map((e: { kind: string }) => e.kind)).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
    ]);

    const row = await db.provider.findUnique({
      where: { providerCode: body.providerCode as string },
      include: { versions: true, reviews: true, tokens: true },
    });
    expect(row?.reviewStage).toBe("SUBMITTED");
    expect(row?.versions.map((v) => v.version)).toEqual([1]);
    expect(row?.reviews).toEqual([
      expect.objectContaining({ reviewCode: answer.body.reviewCode, kind: "INTAKE", status: "OPEN" }),
    ]);
    expect(row?.tokens).toHaveLength(1);
  });

  test("the answered token authenticates as the new agent", async () => {
    const created = await intake({ visibility: "PRIVATE" });
    const anonymous = await call("GET", `/api/v1/providers/${created.providerCode}`);
    expect(anonymous.status).toBe(404);
    const owner = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expect(owner.status).toBe(200);
    expect(owner.body.contactEmail).toBe("ops@example.com");
  });
});

describe("GET /api/v1/providers/{providerCode}", () => {
  test("answers the full profile with an ETag of its version", async () => {
    const created = await intake({
      capabilities: [{ key: "plan", name: "Plan a route", tags: ["maps"], inputModes: ["text/plain"] }],
      models: [{ vendor: "acme", model: "m-1", role: "PRIMARY", contextWindow: 128000 }],
      tools: [{ name: "geocode", kind: "HTTP", scopes: ["READ_ONLY"] }],
      policy: { humanOversight: "ON_REQUEST", allowedUseCases: ["logistics"] },
      roles: [{ subject: "ops@example.com", role: "OWNER" }],
    });
    await approve(created.providerCode);
    const answer = await call("GET", `/api/v1/providers/${created.providerCode}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"1"');
    expect(answer.body).toMatchObject({
      providerCode: created.providerCode,
      reviewStage: "APPROVED",
      capabilities: [
        {
          key: "plan",
          name: "Plan a route",
          description: null,
          tags: ["maps"],
          inputModes: ["text/plain"],
          outputModes: [],
        },
      ],
      models: [{ vendor: "acme", model: "m-1", role: "PRIMARY", contextWindow: 128000 }],
      tools: [{ name: "geocode", kind: "HTTP", description: null, scopes: ["READ_ONLY"] }],
      policy: {
        dataRetentionDays: null,
        humanOversight: "ON_REQUEST",
        allowedUseCases: ["logistics"],
        prohibitedUseCases: [],
        termsUrl: null,
        privacyUrl: null,
      },
      roles: [{ subject: "ops@example.com", role: "OWNER" }],
      version: 1,
    });
    expect(Date.parse(answer.body.createdAt)).not.toBeNaN();
  });

  test("an unknown code is a 404 problem", async () => {
    expectProblem(await call("GET", `/api/v1/providers/${uniqueCode("missing")}`), 404, "NOT_FOUND");
  });
});

describe("GET /api/v1/providers", () => {
  test("answers summaries and a null nextCursor on the last page", async () => {
    const label = uniqueCode("list");
    const created = await intake({ labels: [label] });
    await approve(created.providerCode);
    const answer = await call("GET", `/api/v1/providers?labels=${label}`);
    expect(answer.status).toBe(200);
    expect(answer.body.nextCursor).toBeNull();
    expect(answer.body.items).toHaveLength(1);
    const item = answer.body.items[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        "agentType",
        "endpoint",
        "labels",
        "lifecycle",
        "lifecycleMessage",
        "name",
        "providerCode",
        "reviewStage",
        "successorCode",
        "summary",
        "trustTier",
        "updatedAt",
        "visibility",
      ].sort(),
    );
    expect(item).toMatchObject({
      providerCode: created.providerCode,
      labels: [label],
      endpoint: { protocol: "A2A" },
      reviewStage: "APPROVED",
    });
  });
});

describe("PATCH /api/v1/providers/{providerCode}", () => {
  test("the owner changes fields: 200, new version, ETag", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      token: created.accessToken,
      body: { summary: "Plans routes and schedules", labels: ["Routing", "schedules"] },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"2"');
    expect(answer.body).toMatchObject({
      providerCode: created.providerCode,
      summary: "Plans routes and schedules",
      labels: ["routing", "schedules"],
      version: 2,
    });
  });
});

describe("versions", () => {
  test("the list is newest first and carries no snapshots", async () => {
    const created = await intake();
    await approve(created.providerCode);
    for (const summary of ["Second summary", "Third summary"]) {
      const patched = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
        token: created.accessToken,
        body: { summary },
      });
      expect(patched.status).toBe(200);
    }
    const answer = await call("GET", `/api/v1/providers/${created.providerCode}/versions`);
    expect(answer.status).toBe(200);
    expect(answer.body.nextCursor).toBeNull();
    expect(answer.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    for (const item of answer.body.items) expect(item).not.toHaveProperty("snapshot");
    expect(answer.body.items[0]).toMatchObject({
      providerCode: created.providerCode,
      actor: `agent:${created.providerCode}`,
      changedFields: ["summary"],
    });
    expect(answer.body.items[2].changedFields).toContain("name");

    const paged = await call("GET", `/api/v1/providers/${created.providerCode}/versions?limit=2`);
    expect(paged.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    const rest = await call(
      "GET",
      `/api/v1/providers/${created.providerCode}/versions?limit=2&cursor=${paged.body.nextCursor}`,
    );
    expect(rest.body.items.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(rest.body.nextCursor).toBeNull();
  });

  test("one version carries the snapshot of the profile after it", async () => {
    const created = await intake();
    await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      token: created.accessToken,
      body: { summary: "A newer summary" },
    });
    const first = await call("GET", `/api/v1/providers/${created.providerCode}/versions/1`, {
      token: created.accessToken,
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      providerCode: created.providerCode,
      version: 1,
      snapshot: { summary: "Plans delivery routes across a city", labels: ["maps", "routing"] },
    });
    const second = await call("GET", `/api/v1/providers/${created.providerCode}/versions/2`, {
      token: created.accessToken,
    });
    expect(second.body).toMatchObject({
      version: 2,
      changedFields: ["summary"],
      snapshot: { summary: "A newer summary", contactEmail: "ops@example.com" },
    });
    expectProblem(
      await call("GET", `/api/v1/providers/${created.providerCode}/versions/3`, { token: created.accessToken }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("reviews", () => {
  test("the reviewer's queue holds the new intake review", async () => {
    const created = await intake();
    const answer = await call("GET", `/api/v1/reviews/queue?providerCode=${created.providerCode}`, {
      token: await reviewerToken(),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.nextCursor).toBeNull();
    expect(answer.body.items).toEqual([
      expect.objectContaining({
        reviewCode: created.reviewCode,
        providerCode: created.providerCode,
        kind: "INTAKE",
        status: "OPEN",
        priority: "NORMAL",
        assignedTo: null,
        decidedAt: null,
      }),
    ]);
  });

  test("one review: for a reviewer and for the owner, not for anyone else", async () => {
    const created = await intake();
    const other = await intake();
    const path = `/api/v1/reviews/${created.reviewCode}`;
    const byReviewer = await call("GET", path, { token: await reviewerToken() });
    expect(byReviewer.status).toBe(200);
    expect(byReviewer.body).toMatchObject({ reviewCode: created.reviewCode, providerCode: created.providerCode });
    const byOwner = await call("GET", path, { token: created.accessToken });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.reviewCode).toBe(created.reviewCode);
    expectProblem(await call("GET", path, { token: other.accessToken }), 404, "NOT_FOUND");
    const anonymous = await call("GET", path);
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  });
});
