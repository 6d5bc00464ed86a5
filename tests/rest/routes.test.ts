/**
 * The REST surface is an allow-list: the routes of issues #2 and #3, and nothing else. A new route fails this
 * test until it is added here on purpose (ARCHITECTURE.md, "Habits").
 */
import { describe, expect, test } from "@jest/globals";
import { pathTemplate, REST_ROUTES, restPath } from "../../src/http/rest/rest.routes.ts";
import { call, expectProblem } from "../helpers.ts";

const ALLOWED = [
  "GET /api/v1",
  "GET /api/v1/health",
  "GET /api/v1/providers",
  "POST /api/v1/providers",
  "GET /api/v1/providers/:providerCode",
  "PATCH /api/v1/providers/:providerCode",
  "GET /api/v1/providers/:providerCode/versions",
  "GET /api/v1/providers/:providerCode/versions/:version",
  "POST /api/v1/providers/:providerCode/tokens",
  "DELETE /api/v1/providers/:providerCode/tokens/:tokenId",
  "GET /api/v1/reviews/queue",
  "GET /api/v1/reviews/:reviewCode",
  // The review workflow (#3).
  "PATCH /api/v1/reviews/:reviewCode",
  "POST /api/v1/reviews/:reviewCode/assign",
  "POST /api/v1/reviews/:reviewCode/decision",
  "POST /api/v1/reviews/:reviewCode/comments",
  "POST /api/v1/providers/:providerCode/labels",
  "POST /api/v1/providers/:providerCode/suspend",
  "POST /api/v1/providers/:providerCode/reinstate",
  // Interop (#8, part A): agent cards, import, diffs.
  "GET /api/v1/providers/:providerCode/agent-card.json",
  "GET /api/v1/providers/:providerCode/server.json",
  "POST /api/v1/providers/import",
  "GET /api/v1/providers/:providerCode/versions/:from/diff/:to",
  // Lifecycle (#8, part B). The change feed is a GraphQL subscription only: no route.
  "POST /api/v1/providers/:providerCode/lifecycle",
  // Verified publisher domains.
  "POST /api/v1/providers/:providerCode/domains",
  "POST /api/v1/providers/:providerCode/domains/:domain/check",
  // The event log and its webhooks (#30): our own `/webhooks` routes, not SOFA's `/webhook` ones.
  "GET /api/v1/events",
  "GET /api/v1/webhooks",
  "POST /api/v1/webhooks",
  "GET /api/v1/webhooks/:webhookId",
  "DELETE /api/v1/webhooks/:webhookId",
  "GET /api/v1/webhooks/:webhookId/deliveries",
  "POST /api/v1/webhooks/:webhookId/deliveries/:deliveryId/retry",
  "POST /api/v1/webhooks/:webhookId/test",
  // Health: a check now, and the agents long down (for reviewers).
  "POST /api/v1/providers/:providerCode/health/check",
  "GET /api/v1/health/down",
  // The list's facets: counts for its own filters.
  "GET /api/v1/providers/facets",
  "GET /api/v1/mirror/sources",
  "GET /api/v1/mirror/sources/:sourceId",
  // API keys, for admins.
  "GET /api/v1/api-keys",
  "POST /api/v1/api-keys",
  "POST /api/v1/mirror/sources",
  "POST /api/v1/mirror/sources/:sourceId/sync",
  "DELETE /api/v1/api-keys/:keyId",
  "DELETE /api/v1/mirror/sources/:sourceId",
  // The MCP registry's read API, at the paths its OpenAPI document names.
  "GET /v0.1/servers",
  "GET /v0.1/servers/:serverName/versions",
  "GET /v0.1/servers/:serverName/versions/:version",
  "PATCH /api/v1/mirror/sources/:sourceId",
].sort();

describe("the REST allow-list", () => {
  test("REST_ROUTES is exactly the allow-list", () => {
    const routes = REST_ROUTES.map((r) => `${r.method} ${restPath(r.path, r.base)}`).sort();
    expect(routes).toEqual(ALLOWED);
    expect(new Set(routes).size).toBe(routes.length);
    // SOFA's own webhook routes (`/webhook`, `/webhook/:id`) are never mounted; ours are `/webhooks`.
    expect(routes.filter((r) => /\/webhook(\/|$)/.test(r))).toEqual([]);
  });

  test("the service description lists exactly the allow-list", async () => {
    const answer = await call("GET", "/api/v1");
    expect(answer.status).toBe(200);
    const listed = (answer.body.routes as { method: string; path: string }[]).map((r) => `${r.method} ${r.path}`);
    // Written as the OpenAPI document writes them: `{providerCode}`, not the table's `:providerCode`.
    expect([...listed].sort()).toEqual(ALLOWED.map(pathTemplate).sort());
  });

  test.each([
    ["GET", "/api/v1/provider-versions"],
    ["GET", "/api/v1/provider-version"],
    ["GET", "/api/v1/review-queue"],
    ["GET", "/api/v1/review"],
    ["GET", "/api/v1/api"],
    ["POST", "/api/v1/create-provider"],
    ["POST", "/api/v1/update-provider"],
    ["POST", "/api/v1/issue-token"],
    ["POST", "/api/v1/revoke-token"],
    ["POST", "/api/v1/webhook"],
    ["GET", "/api/v1/webhook"],
    // SOFA's webhook routes, by the shapes it mounts them with.
    ["POST", "/api/v1/webhook/some-id"],
    ["DELETE", "/api/v1/webhook/some-id"],
    ["GET", "/api/v1/provider/some-code"],
  ])("%s %s (not on the list) is a 404", async (method, path) => {
    const answer = await call(method, path, method === "POST" ? { body: {} } : {});
    expectProblem(answer, 404, "NOT_FOUND");
  });

  test("every listed route answers something other than 404 or 405 for its own method", async () => {
    for (const route of REST_ROUTES) {
      const path = restPath(route.path, route.base)
        .replace(":providerCode", "no-such-provider")
        .replace(":serverName", "io.example%2Fno-such-server")
        .replace(":version", "1")
        .replace(":tokenId", "tok_none")
        .replace(":reviewCode", "RV-00000000")
        .replace(":webhookId", "wh_none")
        .replace(":deliveryId", "dlv_none");
      const answer = await call(
        route.method,
        path,
        route.method === "GET" || route.method === "DELETE" ? {} : { body: {} },
      );
      // Unknown resources may be 404s from the operation, but then they are not "No route" 404s.
      expect({ route: `${route.method} ${path}`, status: answer.status }).not.toEqual({
        route: `${route.method} ${path}`,
        status: 405,
      });
      if (answer.status === 404) expect(answer.body.detail).not.toMatch(/^No route/);
    }
  });
});
