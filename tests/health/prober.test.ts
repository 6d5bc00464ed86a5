/**
 * The prober as main.ts runs it, against real peers on loopback: it picks up new agents from the
 * event log, checks each on its interval, confirms a change with a second result before the state
 * moves, starts over when the endpoint changes, forgets a retired agent, and stops at once.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { type Prober, startProber } from "../../src/health/health.worker.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type App, appWith, call, closeAfterAll, db } from "../helpers.ts";
import { until } from "../wait.ts";
import { type Peers, startPeers } from "./peers.ts";

let peers: Peers;
let app: App;
let prober: Prober;
const observed: string[] = [];
/** What the toggle host's /health answers now. */
let toggle = 200;

beforeAll(async () => {
  peers = await startPeers();
  closeAfterAll(() => peers.close());
  const toggler = createServer((_req, res) => res.writeHead(toggle).end());
  await new Promise<void>((resolve) => toggler.listen(0, "127.0.0.1", resolve));
  closeAfterAll(() => new Promise((resolve) => toggler.close(resolve)));
  const env = {
    OUTBOUND_TEST_HOSTS: `${peers.testHosts},toggle.test=127.0.0.1:${(toggler.address() as AddressInfo).port}`,
    HEALTH_INTERVAL_SECONDS: "1",
    HEALTH_POLL_MS: "50",
    HEALTH_TIMEOUT_MS: "8000",
    HEALTH_LEASE_MS: "20000",
  };
  app = appWith(env);
  // Results older than HEALTH_RESULT_HOURS and hourly counts older than 30 days, for the prober to prune.
  const hours = (n: number) => new Date(Date.now() - n * 3_600_000);
  await db.healthCheck.createMany({
    data: [
      { providerId: -1, at: hours(49), outcome: "UP", latencyMs: 1, reason: "old" },
      { providerId: -1, at: hours(47), outcome: "UP", latencyMs: 1, reason: "kept" },
    ],
  });
  await db.healthHourly.createMany({
    data: [
      { providerId: -1, hour: hours(31 * 24 + 2), checks: 1, up: 1 },
      { providerId: -1, hour: hours(29 * 24), checks: 1, up: 1 },
    ],
  });
  const config = loadConfig({ ...process.env, NODE_ENV: "test", ...env });
  prober = startProber({
    db,
    outbound: app.health.outbound,
    config: config.health,
    base: "http://registry.test",
    announce: app.announce,
    metrics: { observeCheck: (outcome) => observed.push(outcome) },
    tail: app.feed.follow(),
  });
});

afterAll(async () => {
  await prober.stop();
});

async function register(endpoint: Record<string, unknown>) {
  const answer = await call("POST", "/api/v1/providers", {
    app,
    body: intakeBody({ providerCode: uniqueCode("prober"), endpoint }),
  });
  expect(answer.status).toBe(201);
  return answer.body as { providerCode: string; accessToken: string };
}

async function health(providerCode: string) {
  const answer = await call("GET", `/api/v1/providers/${providerCode}`, { app });
  return (answer.body as { health: { state: string; reason: string | null; checkedAt: string | null } | null }).health;
}

async function checksOf(providerCode: string) {
  const provider = await db.provider.findUniqueOrThrow({ where: { providerCode }, select: { id: true } });
  return db.healthCheck.findMany({ where: { providerId: provider.id }, orderBy: { id: "asc" } });
}

const healthUrl = (path: string) => ({
  url: peers.health.urlOf("/api"),
  protocol: "HTTP_JSON",
  authScheme: "NONE",
  healthUrl: peers.health.urlOf(path),
});

test("old results are pruned: each check's own for HEALTH_RESULT_HOURS (48), the hourly counts for 30 days", async () => {
  await until(
    async () =>
      (await db.healthCheck.count({ where: { providerId: -1 } })) === 1 &&
      (await db.healthHourly.count({ where: { providerId: -1 } })) === 1,
    "the old result and counts pruned",
  );
  expect((await db.healthCheck.findMany({ where: { providerId: -1 } })).map((c) => c.reason)).toEqual(["kept"]);
  expect(await db.healthHourly.count({ where: { providerId: -1 } })).toBe(1);
});

describe("the schedule", () => {
  test("a new agent is found through the log and checked, its first result taken at once, then on every interval", async () => {
    const agent = await register(healthUrl("/health"));
    await until(async () => (await health(agent.providerCode))?.state === "UP", "the agent UP");
    expect((await checksOf(agent.providerCode)).map((c) => c.outcome)).toEqual(["UP"]);
    await until(async () => (await checksOf(agent.providerCode)).length >= 3, "two more checks");
    const checks = await checksOf(agent.providerCode);
    // Each on its interval, less its jitter (at most 10%), never twice at once.
    for (let i = 1; i < checks.length; i++) {
      const gap = checks[i]!.at.getTime() - checks[i - 1]!.at.getTime();
      expect(gap).toBeGreaterThanOrEqual(850);
    }
    expect(observed).toContain("UP");
  });

  test("an endpoint that goes away becomes DOWN only once two checks agree", async () => {
    const agent = await register({
      url: "https://toggle.test/api",
      protocol: "HTTP_JSON",
      authScheme: "NONE",
      healthUrl: "https://toggle.test/health",
    });
    await until(async () => (await health(agent.providerCode))?.state === "UP", "the agent UP");
    const before = (await checksOf(agent.providerCode)).length;
    toggle = 404;
    await until(async () => (await checksOf(agent.providerCode)).length > before, "a check that finds it gone");
    // One DOWN result is not yet a state: it waits for the next check (within 30 s, here the interval).
    expect((await health(agent.providerCode))?.state).toBe("UP");
    await until(async () => (await health(agent.providerCode))?.state === "DOWN", "the agent DOWN");
    const outcomes = (await checksOf(agent.providerCode)).map((c) => c.outcome);
    expect(outcomes.slice(-2)).toEqual(["DOWN", "DOWN"]);
    expect((await health(agent.providerCode))?.reason).toMatch(/404/);
    toggle = 200;
  });

  test("a changed endpoint starts over", async () => {
    const agent = await register(healthUrl("/health"));
    await until(async () => (await health(agent.providerCode))?.state === "UP", "the agent UP");
    const patched = await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
      app,
      token: agent.accessToken,
      body: { endpoint: healthUrl("/gone") },
    });
    expect(patched.status).toBe(200);
    // Another endpoint: its first result is taken at once, as a new agent's is.
    await until(async () => (await health(agent.providerCode))?.state === "DOWN", "the agent DOWN");
    expect((await health(agent.providerCode))?.reason).toMatch(/404/);
  });

  test("a retired agent is no longer probed, and its health is gone", async () => {
    const agent = await register(healthUrl("/health"));
    await until(async () => (await health(agent.providerCode))?.state === "UP", "the agent UP");
    const retired = await call("POST", `/api/v1/providers/${agent.providerCode}/lifecycle`, {
      app,
      token: agent.accessToken,
      body: { state: "RETIRED", message: "gone for good" },
    });
    expect(retired.status).toBe(200);
    await until(async () => (await health(agent.providerCode)) === null, "the health gone");
    const row = await db.provider.findUniqueOrThrow({
      where: { providerCode: agent.providerCode },
      select: { healthState: true, health: true },
    });
    expect(row).toEqual({ healthState: null, health: null });
  });
});
