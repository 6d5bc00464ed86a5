/**
 * The facet counts the database keeps (migration 20261211000000_facet_counts): after every kind of
 * write that moves a provider between facets — intake, PATCH of type, labels, endpoint and packages,
 * review decisions, suspension, visibility, lifecycle, the prober's health state — and after many of
 * them at once, the facets answered from the counts are the facets counted from the providers (the
 * scan, the oracle), for an anonymous caller and a reviewer, in the store and through the front door.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import type { Viewer } from "../../src/auth/viewer.ts";
import { queryRows } from "../../src/db/client.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { countable, type FacetRow, facetScan, fromCounts } from "../../src/providers/provider.facets.store.ts";
import { listFilters } from "../../src/providers/provider.filters.ts";
import { activeReviewCode, approve, call, config, db, intake, reviewerToken } from "../helpers.ts";

const VIEWERS: Record<string, Viewer> = {
  anonymous: { kind: "anonymous" },
  reviewer: { kind: "reviewer", subject: "counts", roles: ["reviewer"] },
};

/** Column filters only, so the counts answer each of them. */
const QUERIES: Record<string, unknown>[] = [
  {},
  { agentType: "ASSISTANT" },
  { agentType: "TOOL_SERVER", trustTier: "VERIFIED" },
  { protocol: "MCP" },
  { includeRetired: true },
  { lifecycle: "RETIRED" },
  { lifecycle: "DEPRECATED", agentType: "WORKFLOW" },
  { publisherVerified: true },
  { visibility: "UNLISTED" },
  { reviewStage: "SUBMITTED" },
  { reviewStage: "SUSPENDED", includeRetired: true },
  ...(config.health.enabled ? [{ health: ["UP", "DOWN"] }, { health: ["AUTH_REQUIRED"], protocol: "A2A" }] : []),
];

const npmStdio = { registryType: "NPM", identifier: "@acme/route-mcp", version: "1.4.0", transport: { type: "STDIO" } };
const pypiStdio = { registryType: "PYPI", identifier: "weather-mcp", version: "0.3.1", transport: { type: "STDIO" } };
const ociHttp = {
  registryType: "OCI",
  identifier: "ghcr.io/acme/ledger-sync:2.0.0",
  transport: { type: "STREAMABLE_HTTP", url: "http://localhost:8080/mcp" },
};
const endpointOf = (protocol: string) => ({ url: "https://agent.example.com/x", protocol, authScheme: "BEARER" });

const sorted = (rows: FacetRow[]) =>
  [...rows].sort((a, b) => `${a.facet} ${a.value}`.localeCompare(`${b.facet} ${b.value}`) || a.count - b.count);

/** Every query, for every caller: the counts' answer is the scan's, and the counts did answer it. */
async function expectCountsAgree(after: string): Promise<void> {
  for (const [who, viewer] of Object.entries(VIEWERS)) {
    for (const args of QUERIES) {
      const filters = listFilters(args, { viewer, config });
      expect([who, args, countable(filters)]).toEqual([who, args, true]);
      const [counted, scanned] = [await fromCounts(db, filters), await facetScan(db, filters)];
      expect([after, who, args, sorted(counted)]).toEqual([after, who, args, sorted(scanned)]);
    }
  }
}

/** The REST answer of the facets, and the same asked with a filter only the scan answers (updatedSince: ever). */
async function expectDoorAgrees(query: string, token?: string): Promise<void> {
  const get = async (q: string) => {
    const answer = await call("GET", `/api/v1/providers/facets?${q}`, { token });
    expect([q, answer.status]).toEqual([q, 200]);
    return answer.body;
  };
  const counted = await get(query);
  expect(counted.total).toBeGreaterThan(0);
  expect(await get(`${query}${query ? "&" : ""}updatedSince=1970-01-01T00:00:00.000Z`)).toEqual(counted);
}

let reviewer: string;
const patch = async (code: string, token: string, body: Record<string, unknown>) => {
  const answer = await call("PATCH", `/api/v1/providers/${code}`, { body, token });
  if (answer.status !== 200) throw new Error(`PATCH ${code}: ${answer.status} ${answer.text}`);
};
const decide = async (code: string, decision: string, extra: Record<string, unknown> = {}) => {
  const reviewCode = await activeReviewCode(code);
  const answer = await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
    body: { decision, note: "decided in the counts' test", ...extra },
    token: reviewer,
  });
  if (answer.status !== 200) throw new Error(`${decision} ${code}: ${answer.status} ${answer.text}`);
};
const post = async (path: string, body: Record<string, unknown>, token: string) => {
  const answer = await call("POST", path, { body, token });
  if (answer.status !== 200) throw new Error(`POST ${path}: ${answer.status} ${answer.text}`);
};
/** The prober's write of a health state (src/health/health.store.ts): a plain UPDATE of the row. */
const setHealth = (codes: string[], state: string | null) =>
  queryRows(
    db,
    Prisma.sql`UPDATE "providers" SET "healthState" = ${state} WHERE "providerCode" IN (${Prisma.join(codes)})`,
  );

beforeAll(async () => {
  reviewer = await reviewerToken("counts");
});

describe("the facet counts kept by the database", () => {
  test("equal the scan's after every kind of write, for an anonymous caller and a reviewer", async () => {
    const a = await intake({ labels: ["maps", "routing"] });
    const b = await intake({ agentType: "TOOL_SERVER", endpoint: endpointOf("MCP"), packages: [npmStdio] });
    const c = await intake({ agentType: "TOOL_SERVER", endpoint: null, packages: [pypiStdio, ociHttp], labels: [] });
    const d = await intake({ agentType: "WORKFLOW", endpoint: endpointOf("HTTP_JSON"), labels: ["maps", "tools"] });
    const e = await intake({ visibility: "UNLISTED", labels: ["secret", "maps"] });
    await expectCountsAgree("intake");

    for (const p of [a, c, d, e]) await approve(p.providerCode);
    await approve(b.providerCode, "VERIFIED");
    await expectCountsAgree("approvals");

    await patch(a.providerCode, a.accessToken, { agentType: "WORKFLOW", labels: ["maps", "planning", "zz"] });
    await patch(b.providerCode, b.accessToken, { packages: [ociHttp, npmStdio] });
    await patch(c.providerCode, c.accessToken, { endpoint: endpointOf("A2A"), packages: [] });
    await patch(d.providerCode, d.accessToken, { endpoint: endpointOf("MCP"), visibility: "UNLISTED" });
    await expectCountsAgree("PATCHes");

    // Changes under review, then decided: approved, changes requested, rejected.
    for (const p of [a, b, c]) {
      if (await db.review.count({ where: { provider: { providerCode: p.providerCode }, status: "OPEN" } }))
        await decide(p.providerCode, "APPROVE");
    }
    const f = await intake({ agentType: "AUTONOMOUS", labels: ["tools"] });
    const g = await intake({ agentType: "MULTI_AGENT", labels: ["maps"] });
    await decide(f.providerCode, "REJECT");
    await decide(g.providerCode, "REQUEST_CHANGES");
    await post(`/api/v1/providers/${e.providerCode}/suspend`, { note: "spam in the counts' test" }, reviewer);
    await post(`/api/v1/providers/${a.providerCode}/labels`, { labels: ["curated", "maps"] }, reviewer);
    await expectCountsAgree("decisions, suspension, labels set by a reviewer");

    await post(
      `/api/v1/providers/${d.providerCode}/lifecycle`,
      { state: "DEPRECATED", message: "Use another" },
      d.accessToken,
    );
    await post(`/api/v1/providers/${b.providerCode}/lifecycle`, { state: "RETIRED", message: "Gone" }, b.accessToken);
    await expectCountsAgree("deprecate, retire");

    await setHealth([a.providerCode, b.providerCode, d.providerCode], "UP");
    await setHealth([c.providerCode], "AUTH_REQUIRED");
    await setHealth([a.providerCode], "DOWN");
    await setHealth([d.providerCode], null);
    await db.provider.update({ where: { providerCode: c.providerCode }, data: { publisherVerified: true } });
    await expectCountsAgree("health states, verified publisher");

    await post(`/api/v1/providers/${b.providerCode}/lifecycle`, { state: "ACTIVE" }, reviewer);
    await post(`/api/v1/providers/${e.providerCode}/reinstate`, {}, reviewer);
    await expectCountsAgree("reactivate, reinstate");

    // Through the front door: the counts' answer is the scan's, anonymous and as a reviewer.
    for (const query of ["", "agentType=WORKFLOW", "includeRetired=true", "protocol=MCP&trustTier=VERIFIED"]) {
      await expectDoorAgrees(query);
      await expectDoorAgrees(query, reviewer);
    }
  });

  test("a count the triggers did not keep is seen (the comparison can fail)", async () => {
    await intake({ labels: ["maps"] });
    const filters = listFilters({ includeRetired: true }, { viewer: VIEWERS.reviewer as Viewer, config });
    const bump = (by: number) =>
      queryRows(
        db,
        Prisma.sql`UPDATE "facet_groups" SET "n" = "n" + ${by} WHERE "agentType" = 'ASSISTANT' AND "visibility" = 'PUBLIC' AND "reviewStage" = 'SUBMITTED'`,
      );
    await bump(1);
    try {
      expect(sorted(await fromCounts(db, filters))).not.toEqual(sorted(await facetScan(db, filters)));
    } finally {
      await bump(-1);
    }
    expect(sorted(await fromCounts(db, filters))).toEqual(sorted(await facetScan(db, filters)));
  });

  test("equal a fresh count after forty concurrent intakes, PATCHes and decisions", async () => {
    const made = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        intake({ agentType: i % 2 ? "ASSISTANT" : "TOOL_SERVER", labels: ["race", `race-${i % 3}`] }),
      ),
    );
    const types = ["WORKFLOW", "AUTONOMOUS", "ASSISTANT", "TOOL_SERVER"];
    const writes: Promise<unknown>[] = [
      ...Array.from({ length: 16 }, (_, i) =>
        intake({ agentType: types[i % 4], endpoint: endpointOf(i % 2 ? "MCP" : "A2A"), labels: ["race", "new"] }),
      ),
      ...made.slice(0, 10).map((p, i) => decide(p.providerCode, i % 3 === 2 ? "REJECT" : "APPROVE")),
      ...made.slice(4, 16).map((p, i) =>
        patch(p.providerCode, p.accessToken, {
          agentType: types[i % 4],
          labels: ["race", `moved-${i % 2}`],
          ...(i % 2 ? { packages: [npmStdio] } : { endpoint: endpointOf("MCP") }),
        }),
      ),
      setHealth(
        made.slice(0, 6).map((p) => p.providerCode),
        "UP",
      ),
      setHealth(
        made.slice(3, 9).map((p) => p.providerCode),
        "DOWN",
      ),
    ];
    const outcomes = await Promise.allSettled(writes);
    // Every write succeeded: none lost to a deadlock or a serialization failure.
    expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
    expect(writes.length).toBeGreaterThanOrEqual(40);
    await expectCountsAgree("concurrent writes");

    // The tables themselves: every group's count is the providers' count of it.
    const fresh = await queryRows(
      db,
      Prisma.sql`SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", CASE WHEN "publisherVerified" THEN 1 ELSE 0 END AS "v",
          coalesce("healthState", '') AS "h", coalesce("endpoint" ->> 'protocol', '') AS "p", CAST(COUNT(*) AS INTEGER) AS "n"
        FROM "providers" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
    );
    const kept = await queryRows(
      db,
      Prisma.sql`SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", CASE WHEN "publisherVerified" THEN 1 ELSE 0 END AS "v",
          "healthState" AS "h", "protocol" AS "p", CAST("n" AS INTEGER) AS "n" FROM "facet_groups" WHERE "n" <> 0`,
    );
    const keyed = (rows: Record<string, unknown>[]) =>
      rows.map((r) => JSON.stringify(Object.values(r).map(String))).sort();
    expect(keyed(kept)).toEqual(keyed(fresh));
    const dirty = await queryRows(db, Prisma.sql`SELECT COUNT(*) AS "n" FROM "facet_dirty"`);
    expect(Number(dirty[0]?.n)).toBe(0);
  });
});
