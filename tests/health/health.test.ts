/**
 * The prober against real peers on loopback (tests/health/peers.ts): MCP servers built with the MCP
 * SDK, server-everything, A2A agents built with the A2A SDK, plain hosts. Each check goes through the
 * front door ("check now", REST) and is then read back where users see it: the profile, the list and
 * its `health` filter, the event log, drift. Refused addresses are refused before any connection.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type App, activeReviewCode, appWith, call, closeAfterAll, db, reviewerToken } from "../helpers.ts";
import { OPEN_TOOLS, type Peers, startDns, startPeers, type TestDns } from "./peers.ts";

let peers: Peers;
let dns: TestDns;
let app: App;
/** A host that redirects every request to a name of its own domain that resolves to a private address. */
let redirectHost: string;

beforeAll(async () => {
  peers = await startPeers();
  closeAfterAll(() => peers.close());
  dns = await startDns({ "private.test": ["10.0.0.1"], "inner.redirect.test": ["10.1.2.3"] });
  closeAfterAll(() => dns.close());
  let redirected = 0;
  const redirector = createServer((req, res) => {
    redirected += 1;
    res.writeHead(302, { location: `https://inner.redirect.test${req.url}` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  closeAfterAll(() => new Promise((resolve) => redirector.close(resolve)));
  redirectHost = `redirect.test=127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  expect(redirected).toBe(0);
  app = appWith({
    OUTBOUND_TEST_HOSTS: `${peers.testHosts},${redirectHost}`,
    OUTBOUND_TEST_DNS: dns.address,
    // Generous: a busy machine must not turn a slow answer into UNKNOWN (the hang test has its own).
    HEALTH_TIMEOUT_MS: "8000",
    HEALTH_LEASE_MS: "20000",
    HEALTH_CHECK_NOW_SECONDS: "0",
    DRIFT_REVIEW: "on",
  });
});

afterAll(() => {
  // The door asked the test DNS only for names that are not peers.
  expect(dns.asked.every((q) => !q.includes(".test") || /private|inner\.redirect/.test(q))).toBe(true);
});

interface Registered {
  providerCode: string;
  accessToken: string;
}

async function register(endpoint: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Registered> {
  const answer = await call("POST", "/api/v1/providers", {
    app,
    body: intakeBody({ providerCode: uniqueCode("health"), endpoint, ...extra }),
  });
  expect(answer.status).toBe(201);
  return answer.body as Registered;
}

interface HealthBody {
  state: string;
  since: string;
  checkedAt: string | null;
  latencyMs: number | null;
  reason: string | null;
  uptime24h: number | null;
  uptime7d: number | null;
  uptime30d: number | null;
}

async function checkNow(agent: Registered, on: App = app): Promise<HealthBody> {
  const answer = await call("POST", `/api/v1/providers/${agent.providerCode}/health/check`, {
    app: on,
    token: agent.accessToken,
  });
  expect(answer.status).toBe(200);
  return answer.body as HealthBody;
}

async function profile(agent: Registered, token?: string) {
  const answer = await call("GET", `/api/v1/providers/${agent.providerCode}`, { app, ...(token ? { token } : {}) });
  expect(answer.status).toBe(200);
  return answer.body as { health: HealthBody | null; drift: Record<string, unknown> | null };
}

async function events(agent: Registered, token?: string) {
  const answer = await call("GET", `/api/v1/events?providerCode=${agent.providerCode}&after=0`, {
    app,
    ...(token ? { token } : {}),
  });
  expect(answer.status).toBe(200);
  return (answer.body as { items: { kind: string; note: string | null; patch: unknown[] }[] }).items;
}

const mcp = (url: string, transport?: string) => ({
  url,
  protocol: "MCP",
  authScheme: "NONE",
  ...(transport ? { transport } : {}),
});

describe("each protocol spoken with its library, each state said in plain words", () => {
  test("an open MCP server is UP, its tools listed; the state is on the profile, the list and its filter", async () => {
    const agent = await register(mcp(peers.mcpOpen.url), {
      tools: OPEN_TOOLS.map((name) => ({ name, kind: "FUNCTION" })),
    });
    // No prober runs in this file: nothing is known until a check is asked for.
    expect((await profile(agent)).health).toBeNull();

    const [requests, connections] = [peers.mcpOpen.requests(), peers.mcpOpen.connections()];
    const health = await checkNow(agent);
    expect(health.state).toBe("UP");
    expect(health.reason).toMatch(/answers MCP and lists 2 tools/);
    // initialize, its notification and tools/list, on one kept-alive connection (one TLS handshake).
    expect(peers.mcpOpen.requests() - requests).toBe(3);
    expect(peers.mcpOpen.connections() - connections).toBeLessThanOrEqual(1);
    expect(health.latencyMs).toEqual(expect.any(Number));
    expect(health.uptime24h).toBe(1);
    // A first result has nothing to confirm: one check.
    const checks = await db.healthCheck.count({ where: { providerId: await idOf(agent) } });
    expect(checks).toBe(1);

    expect((await profile(agent)).health).toMatchObject({ state: "UP", uptime7d: 1, uptime30d: 1 });
    const list = await call("GET", `/api/v1/providers?health=UP,AUTH_REQUIRED&limit=100`, {
      app,
      token: agent.accessToken,
    });
    const item = (list.body as { items: { providerCode: string; healthState: string }[] }).items.find(
      (i) => i.providerCode === agent.providerCode,
    );
    expect(item?.healthState).toBe("UP");
    const down = await call("GET", `/api/v1/providers?health=DOWN&limit=100`, { app, token: agent.accessToken });
    expect(JSON.stringify(down.body)).not.toContain(agent.providerCode);
    // The declared tools match the live ones: no drift.
    expect((await profile(agent, agent.accessToken)).drift).toBeNull();
    // Reviewers see the health of the agent under review in their queue.
    const queue = await call("GET", `/api/v1/reviews/queue?providerCode=${agent.providerCode}`, {
      app,
      token: await reviewerToken(),
    });
    expect((queue.body as { items: { healthState: string }[] }).items[0]?.healthState).toBe("UP");
  });

  test("a server that answers 401 is AUTH_REQUIRED, and is sent no credential", async () => {
    const agent = await register({ ...mcp(peers.mcpAuth.url), authScheme: "BEARER" });
    const health = await checkNow(agent);
    expect(health).toMatchObject({ state: "AUTH_REQUIRED", reason: "Answers, but asks for credentials (HTTP 401)." });
  });

  test("a host answering HTML is WRONG_PROTOCOL; so is an SSE server declared as Streamable HTTP", async () => {
    const html = await register(mcp(peers.html.url));
    expect(await checkNow(html)).toMatchObject({ state: "WRONG_PROTOCOL" });
    const misdeclared = await register(mcp(peers.mcpSse.url, "STREAMABLE_HTTP"));
    const health = await checkNow(misdeclared);
    expect(health.state).toBe("WRONG_PROTOCOL");
    expect(health.reason).toMatch(/HTTP 405/);
  });

  test("the legacy SSE transport, when declared, is spoken and UP", async () => {
    const agent = await register(mcp(peers.mcpSse.url, "SSE"));
    expect(await checkNow(agent)).toMatchObject({ state: "UP", reason: expect.stringMatching(/lists 2 tools/) });
  });

  test("server-everything is UP with its many tools", async () => {
    const agent = await register(mcp(peers.mcpEverything.url));
    const health = await checkNow(agent);
    expect(health.state).toBe("UP");
    const [, count] = /lists (\d+) tools/.exec(health.reason ?? "") ?? [];
    expect(Number(count)).toBeGreaterThan(5);
  });

  test("a server that hangs is UNKNOWN at the check's deadline, not DOWN", async () => {
    const agent = await register(mcp(peers.mcpHang.url));
    const short = appWith({
      OUTBOUND_TEST_HOSTS: peers.testHosts,
      HEALTH_TIMEOUT_MS: "1500",
      HEALTH_LEASE_MS: "10000",
    });
    const started = Date.now();
    const health = await checkNow(agent, short);
    expect(health).toMatchObject({ state: "UNKNOWN", latencyMs: null });
    expect(health.reason).toMatch(/in time/);
    // One check, cut at its deadline: UNKNOWN is the state already, so there is nothing to confirm.
    expect(Date.now() - started).toBeLessThan(6000);
  });

  test("a 10 MB answer is cut at the cap and judged UNKNOWN", async () => {
    const agent = await register(mcp(peers.mcpHuge.url));
    const health = await checkNow(agent);
    expect(health.state).toBe("UNKNOWN");
    expect(health.reason).toMatch(/larger than 1048576 bytes/);
    await peers.mcpHuge.settled();
    expect(peers.mcpHuge.written()).toBeLessThan(10 * 1024 * 1024);
  });

  test("an A2A agent is UP by its card; a card only at the older path is found too", async () => {
    const agent = await register({ url: peers.a2a.url, protocol: "A2A", authScheme: "NONE" });
    expect(await checkNow(agent)).toMatchObject({
      state: "UP",
      reason: expect.stringMatching(/agent-card\.json \(2 skills\)/),
    });
    const legacy = await register({ url: peers.a2aLegacy.url, protocol: "A2A", authScheme: "NONE" });
    expect(await checkNow(legacy)).toMatchObject({ state: "UP", reason: expect.stringMatching(/agent\.json/) });
  });

  test("other protocols are judged by their health URL: 200 UP, 503 UNKNOWN, 404 DOWN", async () => {
    const of = (path: string) => ({
      url: peers.health.urlOf("/api"),
      protocol: "HTTP_JSON",
      authScheme: "NONE",
      healthUrl: peers.health.urlOf(path),
    });
    expect(await checkNow(await register(of("/health")))).toMatchObject({ state: "UP" });
    expect(await checkNow(await register(of("/broken")))).toMatchObject({
      state: "UNKNOWN",
      reason: expect.stringMatching(/503/),
    });
    expect(await checkNow(await register(of("/gone")))).toMatchObject({
      state: "DOWN",
      reason: expect.stringMatching(/404/),
    });
    // Without a health URL there is nothing to probe: no health at all.
    const none = await register({ url: peers.health.urlOf("/api"), protocol: "HTTP_JSON", authScheme: "NONE" });
    expect((await profile(none)).health).toBeNull();
  });

  test("a name resolving to a private address, and a redirect to one, are refused before any connection", async () => {
    const privateOne = await register({ url: "https://private.test/a2a", protocol: "A2A", authScheme: "NONE" });
    const health = await checkNow(privateOne);
    expect(health).toMatchObject({ state: "UNKNOWN", latencyMs: null });
    expect(health.reason).toMatch(/Not checked: the address of private\.test is private \(10\.0\.0\.1\)/);

    const redirected = await register({ url: "https://redirect.test/a2a", protocol: "A2A", authScheme: "NONE" });
    const after = await checkNow(redirected);
    expect(after.state).toBe("UNKNOWN");
    expect(after.reason).toMatch(/inner\.redirect\.test is private \(10\.1\.2\.3\)/);
  });
});

async function idOf(agent: Registered): Promise<number> {
  const row = await db.provider.findUnique({ where: { providerCode: agent.providerCode }, select: { id: true } });
  return row?.id as number;
}

describe("state changes and drift are in the event log, for those the log's rules allow", () => {
  test("HEALTH_CHANGED is logged on a change only, never per check, and the public reads it", async () => {
    const agent = await register(mcp(peers.mcpOpen.url), {
      tools: OPEN_TOOLS.map((name) => ({ name, kind: "FUNCTION" })),
    });
    const reviewer = await reviewerToken();
    await call("POST", `/api/v1/reviews/${await activeReviewCode(agent.providerCode)}/decision`, {
      app,
      token: reviewer,
      body: { decision: "APPROVE", note: "health test" },
    });
    await checkNow(agent);
    await checkNow(agent);
    await checkNow(agent);
    const kinds = (await events(agent)).map((e) => e.kind);
    expect(kinds.filter((k) => k === "HEALTH_CHANGED")).toHaveLength(1);
    const changed = (await events(agent)).find((e) => e.kind === "HEALTH_CHANGED");
    expect(changed?.note).toMatch(/^UNKNOWN → UP: /);
    // Checks add no versions.
    const versions = await call("GET", `/api/v1/providers/${agent.providerCode}/versions`, { app });
    expect((versions.body as { items: unknown[] }).items).toHaveLength(1);
  });

  test("MCP drift: tools that changed are seen with their patch by the owner; an approved agent gets an UPDATE review", async () => {
    const agent = await register(mcp(peers.mcpChanging.url), {
      tools: peers.mcpChanging.tools().map((name) => ({ name, kind: "FUNCTION" })),
    });
    const reviewer = await reviewerToken();
    await call("POST", `/api/v1/reviews/${await activeReviewCode(agent.providerCode)}/decision`, {
      app,
      token: reviewer,
      body: { decision: "APPROVE", note: "drift test" },
    });
    expect((await checkNow(agent)).state).toBe("UP");
    expect((await profile(agent, agent.accessToken)).drift).toBeNull();

    peers.mcpChanging.changeTools();
    await checkNow(agent);
    const seen = await profile(agent, agent.accessToken);
    expect(seen.drift).toMatchObject({ kind: "MCP_TOOLS", undeclaredTools: [expect.stringMatching(/^added_/)] });
    const patch = (seen.drift as { sinceLastCheck: { op: string; path: string }[] }).sinceLastCheck;
    expect(patch).toEqual(
      expect.arrayContaining([expect.objectContaining({ op: "add", path: expect.stringMatching(/^\/added_/) })]),
    );
    // Anyone else sees no drift, and the public log has no DRIFT_DETECTED.
    expect((await profile(agent)).drift).toBeNull();
    expect((await events(agent)).map((e) => e.kind)).not.toContain("DRIFT_DETECTED");
    const own = await events(agent, agent.accessToken);
    expect(own.filter((e) => e.kind === "DRIFT_DETECTED")).toHaveLength(1);
    expect(own.map((e) => e.kind)).toContain("REVIEW_OPENED");
    const review = await call("GET", `/api/v1/reviews/${await activeReviewCode(agent.providerCode)}`, {
      app,
      token: reviewer,
    });
    expect(review.body).toMatchObject({ kind: "UPDATE", status: "OPEN" });
    // Reviewers see the drift in words in the queue (read with the page) and on the review itself.
    const drift = { driftSummary: seen.drift?.summary, driftDetectedAt: expect.any(String) };
    expect(drift.driftSummary).toEqual(expect.stringContaining("added_"));
    const queue = await call("GET", `/api/v1/reviews/queue?providerCode=${agent.providerCode}`, {
      app,
      token: reviewer,
    });
    expect(queue.body.items).toEqual([expect.objectContaining({ kind: "UPDATE", ...drift })]);
    const one = await call("POST", "/graphql", {
      app,
      token: reviewer,
      body: {
        query: "query ($code: String!) { review(reviewCode: $code) { driftSummary driftDetectedAt } }",
        variables: { code: review.body.reviewCode },
      },
    });
    expect(one.body).toEqual({ data: { review: drift } });
    expect(queue.body.items[0].driftDetectedAt).toBe(one.body.data.review.driftDetectedAt);

    // The same tools again: nothing new is detected.
    await checkNow(agent);
    expect((await events(agent, agent.accessToken)).filter((e) => e.kind === "DRIFT_DETECTED")).toHaveLength(1);
  });

  test("A2A drift: the live card against the registry's card, and a skill added since the last check", async () => {
    const agent = await register({ url: peers.a2aDrift.url, protocol: "A2A", authScheme: "BEARER" });
    expect((await checkNow(agent)).state).toBe("UP");
    const first = (await profile(agent, agent.accessToken)).drift as {
      fromDeclared: unknown[];
      sinceLastCheck: unknown[];
    };
    expect(first.fromDeclared.length).toBeGreaterThan(0);
    expect(first.sinceLastCheck).toEqual([]);

    peers.a2aDrift.drift();
    await checkNow(agent);
    const second = (await profile(agent, agent.accessToken)).drift as { sinceLastCheck: { path: string }[] };
    expect(second.sinceLastCheck.map((op) => op.path)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/skills\//)]),
    );
    expect((await events(agent, agent.accessToken)).filter((e) => e.kind === "DRIFT_DETECTED")).toHaveLength(2);
  });
});

describe("for reviewers", () => {
  test("approved agents DOWN for more than 24 hours are listed, longest first; nobody else may read the list", async () => {
    const reviewer = await reviewerToken();
    const gone = await register({
      url: peers.health.urlOf("/api"),
      protocol: "HTTP_JSON",
      authScheme: "NONE",
      healthUrl: peers.health.urlOf("/gone"),
    });
    const fresh = await register({
      url: peers.health.urlOf("/api"),
      protocol: "HTTP_JSON",
      authScheme: "NONE",
      healthUrl: peers.health.urlOf("/gone"),
    });
    for (const agent of [gone, fresh]) {
      await call("POST", `/api/v1/reviews/${await activeReviewCode(agent.providerCode)}/decision`, {
        app,
        token: reviewer,
        body: { decision: "APPROVE", note: "down list" },
      });
      expect((await checkNow(agent)).state).toBe("DOWN");
    }
    // A day and more ago, as far as the record goes: a test cannot wait 24 hours.
    await db.providerHealth.update({
      where: { providerId: await idOf(gone) },
      data: { since: new Date(Date.now() - 25 * 3_600_000) },
    });
    const answer = await call("GET", "/api/v1/health/down", { app, token: reviewer });
    expect(answer.status).toBe(200);
    const codes = (answer.body as { providerCode: string }[]).map((d) => d.providerCode);
    expect(codes).toContain(gone.providerCode);
    expect(codes).not.toContain(fresh.providerCode);
    expect(
      (answer.body as { providerCode: string; reason: string }[]).find((d) => d.providerCode === gone.providerCode)
        ?.reason,
    ).toMatch(/404/);
    expect((await call("GET", "/api/v1/health/down", { app })).status).toBe(401);
    expect((await call("GET", "/api/v1/health/down", { app, token: gone.accessToken })).status).toBe(403);
    // Search takes the health filter too.
    const search = await call(
      "GET",
      `/api/v1/providers?search=${encodeURIComponent("Route Planner")}&health=DOWN&limit=100`,
      { app, token: reviewer },
    );
    expect(
      (search.body as { items: { providerCode: string; healthState: string }[] }).items.every(
        (i) => i.healthState === "DOWN",
      ),
    ).toBe(true);
    expect(JSON.stringify(search.body)).toContain(gone.providerCode);
  });
});

describe("check now", () => {
  test("is for the owner and reviewers, at most once per HEALTH_CHECK_NOW_SECONDS; nothing changes when refused", async () => {
    const limited = appWith({ OUTBOUND_TEST_HOSTS: peers.testHosts, HEALTH_CHECK_NOW_SECONDS: "60" });
    const agent = await register(mcp(peers.mcpOpen.url));
    const path = `/api/v1/providers/${agent.providerCode}/health/check`;
    expect((await call("POST", path, { app: limited })).status).toBe(401);
    const other = await register(mcp(peers.mcpOpen.url));
    expect((await call("POST", path, { app: limited, token: other.accessToken })).status).toBe(403);

    expect((await call("POST", path, { app: limited, token: agent.accessToken })).status).toBe(200);
    const checks = await db.healthCheck.count({ where: { providerId: await idOf(agent) } });
    const again = await call("POST", path, { app: limited, token: await reviewerToken() });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(50);
    expect(await db.healthCheck.count({ where: { providerId: await idOf(agent) } })).toBe(checks);
  });

  test("HEALTH=off turns it all off: no check now, no health shown, no health filter", async () => {
    const agent = await register(mcp(peers.mcpOpen.url));
    expect((await checkNow(agent)).state).toBe("UP");
    const off = appWith({ HEALTH: "off" });
    const check = await call("POST", `/api/v1/providers/${agent.providerCode}/health/check`, {
      app: off,
      token: agent.accessToken,
    });
    expect(check.status).toBe(409);
    const read = await call("GET", `/api/v1/providers/${agent.providerCode}`, { app: off, token: agent.accessToken });
    expect(read.body).toMatchObject({ health: null, drift: null });
    const list = await call("GET", `/api/v1/providers?limit=100`, { app: off, token: agent.accessToken });
    const item = (list.body as { items: { providerCode: string; healthState: string | null }[] }).items.find(
      (i) => i.providerCode === agent.providerCode,
    );
    expect(item?.healthState).toBeNull();
    const filtered = await call("GET", `/api/v1/providers?health=UP`, { app: off });
    expect(filtered.status).toBe(400);
  });

  test("an agent with nothing to probe is a 409", async () => {
    const agent = await register({ url: peers.health.urlOf("/api"), protocol: "OTHER", authScheme: "NONE" });
    const answer = await call("POST", `/api/v1/providers/${agent.providerCode}/health/check`, {
      app,
      token: agent.accessToken,
    });
    expect(answer.status).toBe(409);
  });
});
