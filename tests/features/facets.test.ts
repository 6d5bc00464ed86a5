/**
 * The list's facets (Query.providerFacets, GET /api/v1/providers/facets) through both doors: every
 * count is what the list answers for that value, for several queries and callers; what a caller may
 * not list is counted for no one else; labels' top 20 and their ties; search; bad input.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { doors } from "../doors.ts";
import { approve, appWith, call, db, intake, reviewerToken } from "../helpers.ts";

const npmStdio = {
  registryType: "NPM",
  identifier: "@acme-tools/route-finder-mcp",
  version: "1.4.0",
  transport: { type: "STDIO" },
};
const pypiStdio = {
  registryType: "PYPI",
  identifier: "weather-mcp-server",
  version: "0.3.1",
  transport: { type: "STDIO" },
};
const ociHttp = {
  registryType: "OCI",
  identifier: "ghcr.io/acme/ledger-sync:2.0.0",
  transport: { type: "STREAMABLE_HTTP", url: "http://localhost:8080/mcp" },
};

const scope = uniqueCode("facets");
const word = `zq${scope.slice(-8)}`;
let reviewer: string;
/** The token of a pending agent of the scope: it lists itself beside the public directory. */
let ownToken: string;

type Row = { agentType?: string; protocol?: string | null; packages?: unknown[]; labels?: string[]; summary?: string };

/** Makes one provider of the scope through intake, then sets what only reviewers or the prober set. */
async function provider(row: Row, set: Record<string, unknown> = {}, approved = true) {
  const { protocol = "A2A", labels = [], ...rest } = row;
  const endpoint = protocol === null ? null : { url: "https://agent.example.com/x", protocol, authScheme: "BEARER" };
  const created = await intake({ ...rest, endpoint, labels: [scope, ...labels] });
  if (approved) await approve(created.providerCode);
  if (Object.keys(set).length > 0)
    await db.provider.update({ where: { providerCode: created.providerCode }, data: set });
  return created;
}

beforeAll(async () => {
  reviewer = await reviewerToken("facets");
  await provider({ labels: ["maps"], summary: `Plans ${word} routes` }, { trustTier: "VERIFIED", healthState: "UP" });
  await provider(
    { agentType: "TOOL_SERVER", protocol: "MCP", packages: [npmStdio], labels: ["maps", "tools"] },
    { trustTier: "VERIFIED", publisherVerified: true, healthState: "DOWN" },
  );
  await provider(
    { agentType: "TOOL_SERVER", protocol: null, packages: [pypiStdio, ociHttp], labels: ["tools"] },
    { trustTier: "TRUSTED" },
  );
  await provider(
    { agentType: "WORKFLOW", protocol: "HTTP_JSON", labels: ["maps"], summary: `A ${word} workflow` },
    { lifecycle: "DEPRECATED", healthState: "UP" },
  );
  await provider(
    { agentType: "WORKFLOW", protocol: "MCP", packages: [npmStdio] },
    { lifecycle: "RETIRED", publisherVerified: true },
  );
  await provider({ protocol: "MCP", labels: ["tools"] }, { trustTier: "OFFICIAL", healthState: "AUTH_REQUIRED" });
  // Not in the public directory: private though approved, unlisted, and pending review.
  await provider(
    { agentType: "AUTONOMOUS", labels: ["secret"], summary: `A ${word} secret` },
    { visibility: "PRIVATE" },
  );
  await provider({ agentType: "AUTONOMOUS", labels: ["secret"] }, { visibility: "UNLISTED" });
  const pending = await provider(
    { agentType: "MULTI_AGENT", protocol: "MCP", labels: ["secret"], summary: `${word}` },
    {},
    false,
  );
  ownToken = pending.accessToken;
});

/** The list's argument that selects a facet's value, added to `args` (labels: one more of all). */
function withValue(args: Record<string, unknown>, facet: string, value: string): Record<string, unknown> {
  if (facet === "labels") return { ...args, labels: [...((args.labels as string[]) ?? []), value] };
  if (facet === "health") return { ...args, health: [value] };
  if (facet === "publisherVerified") return { ...args, publisherVerified: value === "true" };
  return { ...args, [facet]: value };
}

const CALLERS = ["anonymous", "reviewer", "own agent"] as const;
const tokenOf = (caller: (typeof CALLERS)[number]) =>
  caller === "reviewer" ? reviewer : caller === "own agent" ? ownToken : undefined;

/** Filter combinations, each within the scope's label. */
const QUERIES: Record<string, unknown>[] = [
  {},
  { agentType: "TOOL_SERVER" },
  { protocol: "MCP", trustTier: "VERIFIED" },
  { includeRetired: true },
  { lifecycle: "RETIRED" },
  { packageRegistry: "NPM" },
  { packageRegistry: "NPM", transport: "STDIO" },
  { transport: "STDIO" },
  { health: ["UP", "DOWN"] },
  { publisherVerified: true },
  { labels: ["maps"] },
  { search: word },
  { search: word, agentType: "WORKFLOW" },
  { visibility: "PRIVATE" },
  { reviewStage: "SUBMITTED" },
];

describe.each(doors)("$name", (door) => {
  async function facets(args: Record<string, unknown>, token?: string) {
    const outcome = await door.run("Query.providerFacets", { labels: [scope], ...args }, token ? { token } : {});
    expect([args, outcome.code]).toEqual([args, undefined]);
    return outcome.data as { total: number; facets: Record<string, { value: string; count: number }[]> };
  }

  async function listed(args: Record<string, unknown>, token?: string): Promise<number> {
    const outcome = await door.run("Query.providers", { limit: 100, ...args }, token ? { token } : {});
    expect([args, outcome.code]).toEqual([args, undefined]);
    return outcome.data.items.length;
  }

  test.each(CALLERS)("every count is the list's for that value, for every query (%s)", async (caller) => {
    const token = tokenOf(caller);
    for (const query of QUERIES) {
      const args = { labels: [scope], ...query };
      const answer = await facets(query, token);
      const expected: Record<string, unknown> = { total: await listed(args, token) };
      const actual: Record<string, unknown> = { total: answer.total };
      for (const [facet, values] of Object.entries(answer.facets)) {
        for (const { value, count } of values) {
          const key = `${JSON.stringify(query)} ${facet}=${value}`;
          actual[key] = count;
          expected[key] = await listed(withValue(args, facet, value), token);
        }
      }
      expect(actual).toEqual(expected);
    }
  });

  test("counts leave out the facet's own filter, and every value is answered, zeros too", async () => {
    const { total, facets: f } = await facets({ agentType: "TOOL_SERVER" });
    expect(total).toBe(2);
    expect(f.agentType).toEqual([
      { value: "ASSISTANT", count: 2 },
      { value: "AUTONOMOUS", count: 0 },
      { value: "WORKFLOW", count: 1 },
      { value: "TOOL_SERVER", count: 2 },
      { value: "MULTI_AGENT", count: 0 },
    ]);
    // Every other facet counts tool servers only; the package-only one has no protocol.
    expect(f.protocol?.filter((v) => v.count > 0)).toEqual([{ value: "MCP", count: 1 }]);
    expect(f.packageRegistry?.filter((v) => v.count > 0)).toEqual([
      { value: "NPM", count: 1 },
      { value: "PYPI", count: 1 },
      { value: "OCI", count: 1 },
    ]);
    expect(f.transport?.filter((v) => v.count > 0)).toEqual([
      { value: "STDIO", count: 2 },
      { value: "STREAMABLE_HTTP", count: 1 },
    ]);
    expect(f.publisherVerified).toEqual([
      { value: "true", count: 1 },
      { value: "false", count: 1 },
    ]);
    // RETIRED is hidden from the list unless asked, but counted: asking for it lists it.
    const all = await facets({});
    expect(all.facets.lifecycle).toEqual([
      { value: "ACTIVE", count: 4 },
      { value: "DEPRECATED", count: 1 },
      { value: "RETIRED", count: 1 },
    ]);
    expect(all.total).toBe(5);
  });

  test("what a caller may not list is counted for no one else", async () => {
    const anonymous = await facets({});
    expect(anonymous.facets.labels?.map((l) => l.value)).not.toContain("secret");
    expect(anonymous.facets.agentType?.find((v) => v.value === "AUTONOMOUS")?.count).toBe(0);
    expect(anonymous.facets.visibility).toEqual([
      { value: "PUBLIC", count: 5 },
      { value: "UNLISTED", count: 0 },
      { value: "PRIVATE", count: 0 },
    ]);
    expect((await facets({ search: word })).total).toBe(2);
    // The pending agent sees itself, and nothing else that is hidden.
    const own = await facets({}, ownToken);
    expect(own.total).toBe(6);
    expect(own.facets.labels?.find((l) => l.value === "secret")?.count).toBe(1);
    expect(own.facets.reviewStage?.find((v) => v.value === "SUBMITTED")?.count).toBe(1);
    // Reviewers count everything, and filter by what only they may.
    const all = await facets({ includeRetired: true }, reviewer);
    expect(all.total).toBe(9);
    expect(all.facets.labels?.find((l) => l.value === "secret")?.count).toBe(3);
    expect((await facets({ visibility: "PRIVATE" }, reviewer)).total).toBe(1);
    expect((await facets({ visibility: "PRIVATE" })).total).toBe(0);
  });

  test("search narrows every facet as it narrows the list", async () => {
    const found = await facets({ search: word }, reviewer);
    expect(found.total).toBe(4);
    expect(found.facets.agentType?.filter((v) => v.count > 0)).toEqual([
      { value: "ASSISTANT", count: 1 },
      { value: "AUTONOMOUS", count: 1 },
      { value: "WORKFLOW", count: 1 },
      { value: "MULTI_AGENT", count: 1 },
    ]);
    expect((await facets({ search: `${word} workflow` })).total).toBe(1);
  });

  test("bad input is refused as the list refuses it, naming the argument", async () => {
    for (const [args, path] of [
      [{ agentType: "ROBOT" }, "agentType"],
      [{ labels: ["has space"] }, "labels"],
      [{ health: ["SLEEPY"] }, "health"],
      [{ search: "x".repeat(201) }, "search"],
    ] as const) {
      const outcome = await door.run("Query.providerFacets", args);
      expect([args, outcome.code, outcome.status]).toEqual([args, "BAD_USER_INPUT", 400]);
      expect(outcome.paths[0]).toMatch(new RegExp(`^${path}`));
    }
  });
});

describe("labels: the 20 most carried", () => {
  test("most first, ties by label byte by byte, within the list's labels filter", async () => {
    const top = uniqueCode("top");
    // 24 labels of the same prefix over 10 providers; names that collations order differently.
    const names = Array.from({ length: 24 }, (_, j) => `${top}${["-", ".", "_", "0", "a", "z"][j % 6]}${j}`);
    const counts = names.map((_, j) => (j < 4 ? 5 : j < 10 ? 3 : 2));
    const carried: string[][] = Array.from({ length: 10 }, () => []);
    names.forEach((name, j) => {
      for (let k = 0; k < (counts[j] as number); k++) carried[(j * 3 + k) % 10]?.push(name);
    });
    for (const labels of carried) {
      const created = await intake({ labels: [top, ...labels] });
      await approve(created.providerCode);
    }
    const byCount = [top, ...names]
      .map((value) => ({ value, count: value === top ? 10 : (counts[names.indexOf(value)] as number) }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
    const answer = await call("GET", `/api/v1/providers/facets?labels=${top}`);
    expect(answer.status).toBe(200);
    expect(answer.body.facets.labels).toEqual(byCount.slice(0, 20));
    // With a label chosen, the counts are of the providers carrying it too.
    const chosen = names[0] as string;
    const within = await call("GET", `/api/v1/providers/facets?labels=${top},${encodeURIComponent(chosen)}`);
    expect(within.body.total).toBe(5);
    expect(within.body.facets.labels.slice(0, 2)).toEqual([chosen, top].sort().map((value) => ({ value, count: 5 })));
  });
});

describe("REST", () => {
  test("the route is the facets', not a profile's, and takes only the list's filters", async () => {
    const answer = await call("GET", `/api/v1/providers/facets?labels=${scope}&agentType=WORKFLOW`);
    expect(answer.status).toBe(200);
    expect(answer.body.total).toBe(1);
    expect(Object.keys(answer.body.facets).sort()).toEqual(
      [
        "agentType",
        "health",
        "labels",
        "lifecycle",
        "packageRegistry",
        "protocol",
        "publisherVerified",
        "reviewStage",
        "transport",
        "trustTier",
        "visibility",
      ].sort(),
    );
    const paged = await call("GET", "/api/v1/providers/facets?limit=5");
    expect([paged.status, paged.body.code]).toEqual([400, "BAD_USER_INPUT"]);
    const reserved = await call("POST", "/api/v1/providers", {
      body: { ...(await import("../builders.ts")).intakeBody(), providerCode: "facets" },
    });
    expect(reserved.status).toBe(400);
  });

  test("with health checks off there is no health facet, and its filter is refused", async () => {
    const off = appWith({ HEALTH: "off" });
    const answer = await call("GET", `/api/v1/providers/facets?labels=${scope}`, { app: off });
    expect(answer.status).toBe(200);
    expect(answer.body.facets.health).toEqual([]);
    const refused = await call("GET", `/api/v1/providers/facets?labels=${scope}&health=UP`, { app: off });
    expect(refused.status).toBe(400);
  });
});
