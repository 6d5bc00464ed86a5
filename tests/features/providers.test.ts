/** The seed operations (service description, health, intake, profiles, lists, versions, reviews, tokens) through both doors, with the same data on each. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody, uniqueCode } from "../builders.ts";
import { doors } from "../doors.ts";
import { approve, db, intake, reviewerToken } from "../helpers.ts";

const versionsOf = (data: { items: { version: number }[] }) => data.items.map((v) => v.version);

describe.each(doors)("$name", (door) => {
  describe("the service", () => {
    test("api names the service, its spec, GraphQL and health URLs and its routes", async () => {
      const outcome = await door.run("Query.api");
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.status).toBe(200);
      expect(outcome.data).toMatchObject({
        name: "Agent Registry",
        version: expect.any(String),
        specUrl: "http://registry.test/openapi.yaml",
        graphqlUrl: "http://registry.test/graphql",
        healthUrl: "http://registry.test/api/v1/health",
      });
      expect(outcome.data.routes).toEqual(
        expect.arrayContaining([
          { method: "GET", path: "/api/v1/providers", summary: expect.any(String) },
          { method: "POST", path: "/api/v1/providers", summary: expect.any(String) },
          { method: "GET", path: "/api/v1/providers/{providerCode}", summary: expect.any(String) },
          { method: "PATCH", path: "/api/v1/providers/{providerCode}", summary: expect.any(String) },
        ]),
      );
    });

    test("health reports the service and the database, in the service's version", async () => {
      const outcome = await door.run("Query.health");
      expect(outcome.answer.status).toBe(200);
      expect(outcome.data).toEqual({ status: "ok", database: "ok", version: expect.any(String) });
      const description = await door.run("Query.api");
      expect(outcome.data.version).toBe(description.data.version);
    });
  });

  describe("createProvider (intake)", () => {
    test.each([
      ["no visibility", undefined, "PUBLIC"],
      ["UNLISTED", "UNLISTED", "UNLISTED"],
    ])(
      "answers the code, a review code, the token once, and the owner's view (%s asked)",
      async (_asked, visibility, shown) => {
        const body = intakeBody({
          description: "Finds **routes**",
          visibility,
          tools: [{ name: "geocode", kind: "MCP", scopes: ["READ_ONLY", "EXTERNAL"] }],
          policy: { humanOversight: "ALWAYS", dataRetentionDays: 30 },
        });
        const outcome = await door.run("Mutation.createProvider", body);
        expect(outcome.code).toBeUndefined();
        expect(outcome.status).toBe(201);
        expect(outcome.answer.headers.get("cache-control")).toBe("no-store");
        const result = outcome.data;
        expect(result.providerCode).toBe(body.providerCode);
        expect(result.reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
        expect(result.accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
        expect(result.provider).toMatchObject({
          providerCode: body.providerCode,
          name: "Route Planner",
          summary: "Plans delivery routes across a city",
          description: "Finds **routes**",
          labels: ["maps", "routing"],
          agentType: "ASSISTANT",
          visibility: shown,
          trustTier: "UNVERIFIED",
          reviewStage: "SUBMITTED",
          contactEmail: "ops@example.com",
          endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER", healthUrl: null },
          tools: [{ name: "geocode", kind: "MCP", description: null, scopes: ["READ_ONLY", "EXTERNAL"] }],
          policy: { humanOversight: "ALWAYS", dataRetentionDays: 30, allowedUseCases: [] },
          version: 1,
        });
        expect(result.provider.tokens).toEqual([expect.objectContaining({ label: "intake", revokedAt: null })]);
        expect(result.provider.reviewTimeline.map((e: { kind: string }) => e.kind)).toEqual([
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
          expect.objectContaining({ reviewCode: result.reviewCode, kind: "INTAKE", status: "OPEN" }),
        ]);
        expect(row?.tokens).toHaveLength(1);
      },
    );

    test("the answered token authenticates as the new agent", async () => {
      const created = await intake({ visibility: "PRIVATE" });
      const anonymous = await door.run("Query.provider", { providerCode: created.providerCode });
      expect(anonymous.code).toBe("NOT_FOUND");
      expect(anonymous.status).toBe(404);
      const owner = await door.run(
        "Query.provider",
        { providerCode: created.providerCode },
        { token: created.accessToken },
      );
      expect(owner.code).toBeUndefined();
      expect(owner.data.contactEmail).toBe("ops@example.com");
    });
  });

  describe("provider", () => {
    test("answers the full profile with an ETag of its version; no contact or tokens for anonymous callers", async () => {
      const created = await intake({
        capabilities: [{ key: "plan", name: "Plan a route", tags: ["maps"], inputModes: ["text/plain"] }],
        models: [{ vendor: "acme", model: "m-1", role: "PRIMARY", contextWindow: 128000 }],
        tools: [{ name: "geocode", kind: "HTTP", scopes: ["READ_ONLY"] }],
        policy: { humanOversight: "ON_REQUEST", allowedUseCases: ["logistics"] },
        roles: [{ subject: "ops@example.com", role: "OWNER" }],
      });
      await approve(created.providerCode);
      const outcome = await door.run("Query.provider", { providerCode: created.providerCode });
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.status).toBe(200);
      // GraphQL answers carry the version; a REST read's tag is the version and its bytes (src/http/conditional.ts).
      expect(outcome.answer.headers.get("etag")).toMatch(door.name === "REST" ? /^"1-[\w-]{16}"$/ : /^"1"$/);
      expect(outcome.data).toMatchObject({
        providerCode: created.providerCode,
        reviewStage: "APPROVED",
        contactEmail: null,
        tokens: null,
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
      expect(Date.parse(outcome.data.createdAt)).not.toBeNaN();
    });

    test("an unknown code is NOT_FOUND", async () => {
      const outcome = await door.run("Query.provider", { providerCode: uniqueCode("missing") });
      expect(outcome.code).toBe("NOT_FOUND");
      expect(outcome.status).toBe(404);
      expect(outcome.data).toBeNull();
    });
  });

  describe("providers", () => {
    test("answers summaries, and a null nextCursor on the last page", async () => {
      const label = uniqueCode("list");
      const created = await intake({ labels: [label] });
      await approve(created.providerCode);
      const outcome = await door.run("Query.providers", { labels: [label] });
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.status).toBe(200);
      expect(outcome.data.nextCursor).toBeNull();
      expect(outcome.data.items).toHaveLength(1);
      const item = outcome.data.items[0];
      expect(Object.keys(item).sort()).toEqual(
        [
          "agentType",
          "endpoint",
          "id",
          "labels",
          "lifecycle",
          "lifecycleMessage",
          "name",
          "providerCode",
          "publisherVerified",
          "healthState",
          "reviewStage",
          "successorCode",
          "summary",
          "trustTier",
          "updatedAt",
          "visibility",
        ].sort(),
      );
      expect(item).toEqual({
        id: Buffer.from(`ProviderSummary:${created.providerCode}`).toString("base64"),
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
        lifecycle: "ACTIVE",
        lifecycleMessage: null,
        successorCode: null,
        publisherVerified: false,
        // Nothing probes in tests unless asked: not probed yet.
        healthState: null,
      });
    });
  });

  describe("updateProvider", () => {
    test.each([
      [
        ["Routing", "schedules"],
        ["routing", "schedules"],
      ],
      [
        [" Plans ", "plans", "x"],
        ["plans", "x"],
      ],
    ])("the owner changes fields (labels %j) and gets the new version and its ETag", async (labels, normalised) => {
      const created = await intake();
      const outcome = await door.run(
        "Mutation.updateProvider",
        { providerCode: created.providerCode, summary: "Plans routes and schedules", labels },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.status).toBe(200);
      expect(outcome.answer.headers.get("etag")).toBe('"2"');
      expect(outcome.data).toMatchObject({
        providerCode: created.providerCode,
        summary: "Plans routes and schedules",
        labels: normalised,
        version: 2,
      });
    });
  });

  describe("providerVersions and providerVersion", () => {
    test("the list is newest first, pages, and carries no snapshots", async () => {
      const created = await intake();
      await approve(created.providerCode);
      for (const summary of ["Second summary", "Third summary"]) {
        const patched = await door.run(
          "Mutation.updateProvider",
          { providerCode: created.providerCode, summary },
          { token: created.accessToken },
        );
        expect(patched.code).toBeUndefined();
      }
      const outcome = await door.run("Query.providerVersions", { providerCode: created.providerCode });
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.nextCursor).toBeNull();
      expect(versionsOf(outcome.data)).toEqual([3, 2, 1]);
      for (const item of outcome.data.items) expect(item).not.toHaveProperty("snapshot");
      expect(outcome.data.items[0]).toMatchObject({
        providerCode: created.providerCode,
        actor: `agent:${created.providerCode}`,
        changedFields: ["summary"],
      });
      expect(outcome.data.items[2].changedFields).toContain("name");

      const paged = await door.run("Query.providerVersions", { providerCode: created.providerCode, limit: 2 });
      expect(versionsOf(paged.data)).toEqual([3, 2]);
      const rest = await door.run("Query.providerVersions", {
        providerCode: created.providerCode,
        limit: 2,
        cursor: paged.data.nextCursor,
      });
      expect(versionsOf(rest.data)).toEqual([1]);
      expect(rest.data.nextCursor).toBeNull();
    });

    test("the owner reads the versions of an unreviewed provider, newest first, and one with its snapshot", async () => {
      const created = await intake();
      const renamed = await door.run(
        "Mutation.updateProvider",
        { providerCode: created.providerCode, name: "Route Planner 2" },
        { token: created.accessToken },
      );
      expect(renamed.code).toBeUndefined();
      const list = await door.run(
        "Query.providerVersions",
        { providerCode: created.providerCode },
        { token: created.accessToken },
      );
      expect(list.code).toBeUndefined();
      expect(versionsOf(list.data)).toEqual([2, 1]);
      expect(list.data.items[0]).toMatchObject({ actor: `agent:${created.providerCode}`, changedFields: ["name"] });

      const one = await door.run(
        "Query.providerVersion",
        { providerCode: created.providerCode, version: 1 },
        { token: created.accessToken },
      );
      expect(one.code).toBeUndefined();
      expect(one.data).toMatchObject({
        version: 1,
        snapshot: {
          name: "Route Planner",
          contactEmail: "ops@example.com",
          labels: ["maps", "routing"],
          endpoint: { url: "https://agent.example.com/a2a" },
        },
      });
    });

    test("one version carries the snapshot of the profile after it; a version not written is NOT_FOUND", async () => {
      const created = await intake();
      await door.run(
        "Mutation.updateProvider",
        { providerCode: created.providerCode, summary: "A newer summary" },
        { token: created.accessToken },
      );
      const read = (version: number) =>
        door.run(
          "Query.providerVersion",
          { providerCode: created.providerCode, version },
          { token: created.accessToken },
        );
      const first = await read(1);
      expect(first.code).toBeUndefined();
      expect(first.answer.status).toBe(200);
      expect(first.data).toMatchObject({
        providerCode: created.providerCode,
        version: 1,
        snapshot: { summary: "Plans delivery routes across a city", labels: ["maps", "routing"] },
      });
      const second = await read(2);
      expect(second.data).toMatchObject({
        version: 2,
        changedFields: ["summary"],
        snapshot: { summary: "A newer summary", contactEmail: "ops@example.com" },
      });
      const third = await read(3);
      expect(third.code).toBe("NOT_FOUND");
      expect(third.status).toBe(404);
    });
  });

  describe("reviewQueue and review", () => {
    test("the reviewer's queue holds the new intake review", async () => {
      const created = await intake();
      const outcome = await door.run(
        "Query.reviewQueue",
        { providerCode: created.providerCode },
        { token: await reviewerToken() },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.status).toBe(200);
      expect(outcome.data.nextCursor).toBeNull();
      expect(outcome.data.items).toEqual([
        expect.objectContaining({
          reviewCode: created.reviewCode,
          providerCode: created.providerCode,
          providerName: "Route Planner",
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
      const read = (token?: string) => door.run("Query.review", { reviewCode: created.reviewCode }, { token });
      const byReviewer = await read(await reviewerToken());
      expect(byReviewer.code).toBeUndefined();
      expect(byReviewer.data).toMatchObject({ reviewCode: created.reviewCode, providerCode: created.providerCode });
      const byOwner = await read(created.accessToken);
      expect(byOwner.code).toBeUndefined();
      expect(byOwner.data).toMatchObject({ reviewCode: created.reviewCode, status: "OPEN" });
      expect((await read(other.accessToken)).code).toBe("NOT_FOUND");
      const anonymous = await read();
      expect(anonymous.code).toBe("UNAUTHENTICATED");
      expect(anonymous.status).toBe(401);
      expect(anonymous.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    });

    test("the queue without a reviewer token is UNAUTHENTICATED", async () => {
      const outcome = await door.run("Query.reviewQueue");
      expect(outcome.code).toBe("UNAUTHENTICATED");
      expect(outcome.data).toBeNull();
    });
  });

  describe("issueToken and revokeToken", () => {
    test("the owner issues a token, then revokes it; the revoked token no longer authenticates", async () => {
      const created = await intake();
      const issued = await door.run(
        "Mutation.issueToken",
        { providerCode: created.providerCode, label: "ci" },
        { token: created.accessToken },
      );
      expect(issued.code).toBeUndefined();
      expect(issued.status).toBe(201);
      expect(issued.answer.headers.get("cache-control")).toBe("no-store");
      const { accessToken, token } = issued.data;
      expect(accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
      expect(token).toMatchObject({ label: "ci", revokedAt: null, prefix: accessToken.slice(0, 10) });

      const revoked = await door.run(
        "Mutation.revokeToken",
        { providerCode: created.providerCode, tokenId: token.tokenId },
        { token: created.accessToken },
      );
      expect(revoked.code).toBeUndefined();
      expect(revoked.data.tokenId).toBe(token.tokenId);
      expect(Date.parse(revoked.data.revokedAt)).not.toBeNaN();

      const after = await door.run("Query.health", {}, { token: accessToken });
      expect(after.code).toBe("UNAUTHENTICATED");
      expect(after.answer.status).toBe(401);
    });
  });
});
