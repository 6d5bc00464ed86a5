/**
 * The prober across replicas: two real server processes on one throwaway PostgreSQL database, each
 * running its prober, and one health endpoint on loopback that counts what it is asked. Each check
 * is claimed by one replica: the peer is asked exactly as often as checks are recorded, and no agent
 * is checked twice within one interval.
 *
 * Needs PostgreSQL (ARCHITECTURE.md: on every development and CI machine).
 */
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { type Db, openDb } from "../../src/db/client.ts";
import { intakeBody } from "../builders.ts";
import {
  cleanUp,
  pool,
  type ReplicaDatabase,
  replicaDatabase,
  request,
  type Server,
  startServer,
} from "../process/server.process.ts";
import { until } from "../wait.ts";
import { type Peers, startPeers } from "./peers.ts";

const INTERVAL_S = 2;
const AGENTS = 24;
let peers: Peers;
let database: ReplicaDatabase | undefined;
let db: Db | undefined;
let a: Server;
let b: Server;

beforeAll(async () => {
  peers = await startPeers();
  database = await replicaDatabase();
  db = await openDb(database.url);
  const env = {
    NODE_ENV: "test",
    HEALTH: "on",
    OUTBOUND_TEST_HOSTS: peers.testHosts,
    HEALTH_INTERVAL_SECONDS: String(INTERVAL_S),
    HEALTH_POLL_MS: "20",
    HEALTH_TIMEOUT_MS: "8000",
    HEALTH_LEASE_MS: "20000",
    // Enough at once on one host that both replicas claim from the same due rows together.
    HEALTH_PER_HOST: "8",
  };
  [a, b] = await Promise.all([startServer(database.url, env), startServer(database.url, env)]);
}, 60_000);

afterAll(async () => {
  await cleanUp();
  await db?.$disconnect();
  await peers?.close();
}, 30_000);

test("two replicas share the checks: each made once, none twice in one interval", async () => {
  const made = await pool(
    Array.from(
      { length: AGENTS },
      (_, i) => () =>
        request(i % 2 === 0 ? a : b, "POST", "/api/v1/providers", {
          body: intakeBody({
            endpoint: {
              url: peers.health.urlOf("/api"),
              protocol: "HTTP_JSON",
              authScheme: "NONE",
              healthUrl: peers.health.urlOf("/health"),
            },
          }),
        }),
    ),
    8,
  );
  expect(made.map((m) => m.status)).toEqual(Array(AGENTS).fill(201));
  const ids = (
    await db!.provider.findMany({
      where: { providerCode: { in: made.map((m) => m.body.providerCode as string) } },
      select: { id: true },
    })
  ).map((p) => p.id);
  // Three checks of every agent: the two that make it UP, and one on its interval.
  await until(
    async () => {
      const counts = await db!.healthCheck.groupBy({
        by: ["providerId"],
        where: { providerId: { in: ids } },
        _count: true,
      });
      return counts.length === AGENTS && counts.every((c) => c._count >= 3);
    },
    "three checks of every agent",
    30_000,
  );
  const states = await db!.provider.findMany({ where: { id: { in: ids } }, select: { healthState: true } });
  expect(states.every((s) => s.healthState === "UP")).toBe(true);

  const checks = await db!.healthCheck.findMany({ where: { providerId: { in: ids } }, orderBy: { at: "asc" } });
  const byAgent = new Map<number, number[]>();
  for (const c of checks) byAgent.set(c.providerId, [...(byAgent.get(c.providerId) ?? []), c.at.getTime()]);
  for (const times of byAgent.values()) {
    for (let i = 1; i < times.length; i++) {
      // The confirming check comes after at most 30 s, capped by the interval; every other one after the
      // interval less at most 10% of jitter: never two checks of one agent at once.
      expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(INTERVAL_S * 900 - 50);
    }
  }
});

test("the peer was asked once per recorded check: no check ran on both replicas", async () => {
  // SIGTERM stops each prober: it claims no more and cuts the checks under way short, unrecorded.
  for (const server of [a, b]) server.child.kill("SIGTERM");
  await Promise.all([a.exited, b.exited]);
  const recorded = await db!.healthCheck.count();
  const asked = peers.health.requests();
  expect(recorded).toBeGreaterThanOrEqual(3 * AGENTS);
  expect(asked).toBeGreaterThanOrEqual(recorded);
  // Only the checks cut short at the stop (at most a host's share on each replica) went unrecorded;
  // a check run by both replicas would have doubled the peer's count.
  expect(asked - recorded).toBeLessThanOrEqual(2 * 8);
});
