/**
 * The response cache across replicas: two real server processes on one PostgreSQL
 * database with Redis, each caching anonymous reads. A write acknowledged by one replica is never
 * followed by the old answer from the other — for the profile, the lists and search, over REST and
 * GraphQL — while the caches are shown to be in use (the same read twice is a hit).
 *
 * It makes its own throwaway database (whatever database the rest of the suite runs on) and needs
 * PostgreSQL and Redis, which run on every development and CI machine (ARCHITECTURE.md): when they
 * cannot be reached it fails and says so.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { intakeBody } from "../builders.ts";
import {
  cleanUp,
  PROCESS_JWT_SECRET,
  REDIS_URL,
  type ReplicaDatabase,
  replicaDatabase,
  request,
  type Server,
  startServer,
} from "../process/server.process.ts";

const RUN = randomBytes(5).toString("hex");

const replicas: Server[] = [];
let database: ReplicaDatabase | undefined;

/** A replica caching anonymous reads, on the shared database, with Redis. */
async function startReplica(): Promise<Server> {
  const replica = await startServer((database as ReplicaDatabase).url, {
    REDIS_URL,
    RESPONSE_CACHE: "on",
    // Its own shared generation: other suites' replicas writing meanwhile would only cost misses.
    RESPONSE_CACHE_KEY_PREFIX: `agent-registry-cache-test:${RUN}`,
  });
  replicas.push(replica);
  return replica;
}

/** A request to a replica, with whether its cache answered it (X-Cache). */
async function send(replica: Server, method: string, path: string, options: { body?: unknown; token?: string } = {}) {
  const answer = await request(replica, method, path, options);
  return { ...answer, cache: answer.headers.get("x-cache") };
}

/** What the replicas reported about Redis, the cache or an internal error. */
const cacheTrouble = () =>
  replicas
    .flatMap((r) => [...r.lines.filter((line) => /"level":"(?:warn|error)"/.test(line)), ...r.stderr])
    .filter((line) => /redis|cache|internal error/i.test(line));

const gqlDetail = (code: string) => ({
  query: "query ($c: String!) { provider(providerCode: $c) { summary version } }",
  variables: { c: code },
});

beforeAll(async () => {
  database = await replicaDatabase();
}, 30_000);

afterAll(async () => {
  await cleanUp();
}, 30_000);

describe("two caching replicas on one PostgreSQL database, with Redis", () => {
  test("no read through one replica returns what a write acknowledged by the other replaced", async () => {
    const [a, b] = await Promise.all([startReplica(), startReplica()]);
    const reviewer = await signReviewerToken(
      loadConfig({ ...process.env, NODE_ENV: "production", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
      "cache-replicas",
      { roles: ["reviewer"] },
    );
    const word = `replicaword${RUN}`;
    const agents: { code: string; token: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const made = await send(i % 2 ? a : b, "POST", "/api/v1/providers", {
        body: intakeBody({ name: `Replica ${word} ${i}` }),
      });
      expect(made.status).toBe(201);
      const queue = await send(a, "GET", `/api/v1/reviews/queue?providerCode=${made.body.providerCode}`, {
        token: reviewer,
      });
      const decided = await send(b, "POST", `/api/v1/reviews/${queue.body.items[0].reviewCode}/decision`, {
        token: reviewer,
        body: { decision: "APPROVE", note: "approved in tests" },
      });
      expect({ status: decided.status, body: decided.body }).toEqual({ status: 200, body: expect.anything() });
      agents.push({ code: made.body.providerCode, token: made.body.accessToken });
    }

    let hits = 0;
    const stale: string[] = [];
    for (let round = 0; round < 24; round++) {
      const [writer, reader] = round % 2 ? [a, b] : [b, a];
      const agent = agents[round % agents.length] as { code: string; token: string };
      const detail = `/api/v1/providers/${agent.code}`;
      const search = `/api/v1/providers?search=${word}&limit=100`;
      // The reader's caches are filled (and shown to be used: the second read is a hit).
      for (const path of [detail, search]) {
        await send(reader, "GET", path);
        if ((await send(reader, "GET", path)).cache === "HIT") hits += 1;
      }
      await send(reader, "POST", "/graphql", { body: gqlDetail(agent.code) });
      if ((await send(reader, "POST", "/graphql", { body: gqlDetail(agent.code) })).cache === "HIT") hits += 1;

      const summary = `Round ${round} through ${writer === a ? "A" : "B"}`;
      const patched = await send(writer, "PATCH", detail, { token: agent.token, body: { summary } });
      expect(patched.status).toBe(200);

      // At once, through the other replica: the new summary everywhere.
      const answers = [
        await send(reader, "GET", detail),
        await send(reader, "GET", search),
        await send(reader, "POST", "/graphql", { body: gqlDetail(agent.code) }),
      ];
      const seen = [
        answers[0]?.body.summary,
        answers[1]?.body.items?.find((p: { providerCode: string }) => p.providerCode === agent.code)?.summary,
        answers[2]?.body.data.provider.summary,
      ];
      seen.forEach((value, i) => {
        if (value !== summary) {
          const answer = answers[i];
          stale.push(
            `${round}: ${value} instead of ${summary} (${answer?.status} ${answer?.cache ?? "database"} ${value === undefined ? JSON.stringify(answer?.body).slice(0, 300) : ""})`,
          );
        }
      });
    }
    expect({ stale, trouble: cacheTrouble() }).toEqual({ stale: [], trouble: [] });
    expect(hits).toBe(24 * 3);

    // A suspension through one replica hides the profile from anonymous readers of the other at once.
    const target = agents[0] as { code: string };
    expect((await send(b, "GET", `/api/v1/providers/${target.code}`)).status).toBe(200);
    expect((await send(b, "GET", `/api/v1/providers/${target.code}`)).cache).toBe("HIT");
    const suspended = await send(a, "POST", `/api/v1/providers/${target.code}/suspend`, {
      token: reviewer,
      body: { note: "checking" },
    });
    expect(suspended.status).toBe(200);
    expect((await send(b, "GET", `/api/v1/providers/${target.code}`)).status).toBe(404);
    const listed = await send(b, "GET", `/api/v1/providers?search=${word}&limit=100`);
    expect(listed.body.items.map((p: { providerCode: string }) => p.providerCode)).not.toContain(target.code);
    expect(cacheTrouble()).toEqual([]);
  }, 60_000);
});
