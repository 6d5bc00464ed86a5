/**
 * The change feed across replicas: two real server processes on one throwaway PostgreSQL
 * database with Redis. A client subscribes over real SSE (HTTP) to replica A while every change is
 * made through replica B: each event arrives once, in order, with the patches that rebuild the
 * provider's public snapshot. An anonymous subscriber on A sees no private or pending provider's
 * events and no review events. A replica holds one Redis subscription for its whole feed, whatever
 * its subscribers; subscribers that leave leave no stream behind, and a draining replica ends its
 * streams (so it exits 0).
 *
 * Needs PostgreSQL and Redis (ARCHITECTURE.md: on every development and CI machine); fails saying
 * so when they cannot be reached.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Redis } from "ioredis";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { type Listening, listen } from "../helpers.ts";
import {
  cleanUp,
  PROCESS_JWT_SECRET,
  REDIS_URL,
  type ReplicaDatabase,
  replicaDatabase,
  request,
  type Server,
  startServer,
  stopServer,
} from "../process/server.process.ts";
import { until } from "../wait.ts";
import { type FeedEvent, replay } from "./patches.ts";
import { FEED_QUERY, readSse, type SseStream } from "./sse.ts";

const RUN = randomBytes(5).toString("hex");
/** This run's own channel, so that nothing else publishing on this Redis reaches it. */
const CHANNEL = `agent-registry-feed-test:${RUN}`;

let database: ReplicaDatabase | undefined;
let a: Server;
let b: Server;
const streams: SseStream[] = [];
let reviewer: string;

beforeAll(async () => {
  database = await replicaDatabase();
  const env = { REDIS_URL, FEED_CHANNEL: CHANNEL };
  [a, b] = await Promise.all([startServer(database.url, env), startServer(database.url, env)]);
  reviewer = await signReviewerToken(
    loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
    "feed-rv",
    {
      roles: ["reviewer"],
    },
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await cleanUp();
}, 30_000);

async function subscribe(
  server: { url: string },
  variables: Record<string, unknown>,
  token?: string,
): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: {
      accept: "text/event-stream",
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query: FEED_QUERY, variables }),
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  const stream = readSse(response, abort);
  streams.push(stream);
  return stream;
}

/** How many connections of this Redis listen on the run's channel. */
async function listeners(): Promise<number> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const answer = (await redis.pubsub("NUMSUB", CHANNEL)) as [string, number];
    return Number(answer[1]);
  } finally {
    redis.disconnect();
  }
}

/**
 * Checks a stream works end to end (B's write reaches A's log reader through Redis or its poll):
 * write a probe through B until its event arrives.
 */
async function untilLive(stream: SseStream, probe: { providerCode: string; token: string }): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await request(b, "PATCH", `/api/v1/providers/${probe.providerCode}`, {
      token: probe.token,
      body: { summary: `probe ${i}` },
    });
    const got = await stream.drain(100);
    if (got.some((m) => m.data?.feed?.providerCode === probe.providerCode)) return;
  }
  throw new Error("the subscription never became live");
}

async function intakeOn(server: Server, overrides: Record<string, unknown> = {}) {
  const answer = await request(server, "POST", "/api/v1/providers", { body: intakeBody(overrides) });
  if (answer.status !== 201) throw new Error(`intake: ${answer.status} ${answer.text}`);
  return answer.body as { providerCode: string; reviewCode: string; accessToken: string };
}

describe("across replicas, through Redis", () => {
  test("a subscriber on A receives each change made through B once, in order", async () => {
    const probe = await intakeOn(b);
    const stream = await subscribe(a, {}, reviewer);
    await untilLive(stream, { providerCode: probe.providerCode, token: probe.accessToken });
    await stream.drain(200);
    // Someone else's messages on the channel are dropped, not a crash of the replica or the stream.
    const other = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await other.publish(CHANNEL, "not a feed event");
    await other.publish(CHANNEL, "7 {broken");
    other.disconnect();

    const p = await intakeOn(b);
    const r = p.reviewCode;
    const steps: [string, string, unknown][] = [
      ["POST", `/api/v1/reviews/${r}/assign`, {}],
      ["POST", `/api/v1/reviews/${r}/comments`, { note: "checking" }],
      [
        "POST",
        `/api/v1/reviews/${r}/decision`,
        { decision: "APPROVE", trustTier: "VERIFIED", note: "approved in tests" },
      ],
    ];
    for (const [method, path, body] of steps) {
      const answer = await request(b, method, path, { token: reviewer, body });
      expect(answer.status).toBeLessThan(300);
    }
    for (let i = 1; i <= 3; i++) {
      const patched = await request(b, "PATCH", `/api/v1/providers/${p.providerCode}`, {
        token: p.accessToken,
        body: { summary: `change ${i}` },
      });
      expect(patched.status).toBe(200);
    }
    const retired = await request(b, "POST", `/api/v1/providers/${p.providerCode}/lifecycle`, {
      token: p.accessToken,
      body: { state: "RETIRED", message: "replaced" },
    });
    expect(retired.status).toBe(200);

    // Provider kinds first within one write: a review move's stage change, then its review event.
    const expected = [
      ["PROVIDER_CREATED", 1],
      ["REVIEW_OPENED", 1],
      ["STAGE_CHANGED", 1],
      ["REVIEW_ASSIGNED", 1],
      ["REVIEW_COMMENTED", 1],
      ["STAGE_CHANGED", 1],
      ["REVIEW_DECIDED", 1],
      ["PROVIDER_UPDATED", 2],
      ["PROVIDER_UPDATED", 3],
      ["PROVIDER_UPDATED", 4],
      ["LIFECYCLE_CHANGED", 5],
    ];
    const events: FeedEvent[] = [];
    while (events.length < expected.length) {
      const message = await stream.next();
      const event = message.data.feed as FeedEvent;
      // Each message's SSE id is its event's seq.
      expect(stream.lastId).toBe(String(event.seq));
      if (event.providerCode === p.providerCode) events.push(event);
    }
    expect(events.map((e) => [e.kind, e.version])).toEqual(expected);
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
    // The state after each change: the approval set the stage and the tier at once; the retirement
    // its lifecycle and message; replaying every patch over {} gives each event's hash.
    expect(events[5]!.patch).toEqual(
      expect.arrayContaining([
        { op: "replace", path: "/reviewStage", from: null, value: "APPROVED" },
        { op: "replace", path: "/trustTier", from: null, value: "VERIFIED" },
      ]),
    );
    expect(events[5]!.patch).toHaveLength(2);
    expect(events[6]!).toMatchObject({ patch: [], stateHash: events[5]!.stateHash });
    expect(events.at(-1)!.patch).toEqual([
      { op: "replace", path: "/lifecycle", from: null, value: "RETIRED" },
      { op: "replace", path: "/lifecycleMessage", from: null, value: "replaced" },
    ]);
    expect(replay(events)).toMatchObject({
      providerCode: p.providerCode,
      summary: "change 3",
      reviewStage: "APPROVED",
      trustTier: "VERIFIED",
      lifecycle: "RETIRED",
      lifecycleMessage: "replaced",
    });
    // Once: nothing more of it arrives.
    const rest = await stream.drain(500);
    expect(rest.filter((m) => m.data.feed.providerCode === p.providerCode)).toEqual([]);
  }, 60_000);

  test("an anonymous subscriber on A sees only listed providers' provider events", async () => {
    const probe = await intakeOn(b);
    await request(b, "POST", `/api/v1/reviews/${probe.reviewCode}/decision`, {
      token: reviewer,
      body: { decision: "APPROVE", note: "approved in tests" },
    });
    const stream = await subscribe(a, {});
    await untilLive(stream, { providerCode: probe.providerCode, token: probe.accessToken });
    await stream.drain(200);

    const hidden = await intakeOn(b, { visibility: "PRIVATE" });
    const pending = await intakeOn(b);
    const listed = await intakeOn(b);
    for (const p of [hidden, listed]) {
      await request(b, "POST", `/api/v1/reviews/${p.reviewCode}/decision`, {
        token: reviewer,
        body: { decision: "APPROVE", note: "approved in tests" },
      });
    }
    for (const p of [hidden, pending, listed]) {
      await request(b, "POST", `/api/v1/reviews/${p.reviewCode}/comments`, {
        token: p.accessToken,
        body: { note: "hi" },
      });
      await request(b, "PATCH", `/api/v1/providers/${p.providerCode}`, {
        token: p.accessToken,
        body: { summary: "seen?" },
      });
    }
    const ours = new Set([hidden.providerCode, pending.providerCode, listed.providerCode]);
    const got = (await stream.collect(2, (m) => ours.has(m.data?.feed?.providerCode), 500))
      .map((m) => m.data.feed)
      .map((e: { kind: string; providerCode: string }) => `${e.kind} ${e.providerCode}`);
    // The approval brought `listed` into the directory: its stage change, then its update. Nothing else.
    expect(got).toEqual([`STAGE_CHANGED ${listed.providerCode}`, `PROVIDER_UPDATED ${listed.providerCode}`]);
  }, 60_000);

  test("one Redis subscription per replica whatever its streams; streams that leave are freed; a draining replica ends its streams", async () => {
    for (const s of streams.splice(0)) await s.close();
    // A and B each listen on the channel once, for their whole feed (and their webhooks).
    await until(async () => (await listeners()) === 2, "two listeners on the channel");

    // A third replica in this process, so that its feed's count of streams can be read.
    const cConfig = loadConfig({
      ...process.env,
      NODE_ENV: "test",
      DATABASE_URL: database!.url,
      REDIS_URL,
      FEED_CHANNEL: CHANNEL,
      REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET,
    });
    const cDb: Db = await openDb(database!.url);
    const c = createApp(cConfig, cDb);
    let served: Listening | undefined;
    try {
      served = await listen(c);
      const onC = await Promise.all(Array.from({ length: 10 }, () => subscribe(served!, {}, reviewer)));
      // "From now" is fixed before a stream is answered: a write made once it is open is in it.
      const p = await intakeOn(b);
      for (const stream of onC) {
        const event = (await stream.next()).data.feed as FeedEvent;
        expect([event.kind, event.providerCode]).toEqual(["PROVIDER_CREATED", p.providerCode]);
      }
      expect(c.feed.subscribers).toBe(10);
      // Ten streams, one subscription: C's.
      expect(await listeners()).toBe(3);

      // Clients that leave leave no stream behind; the replica's one subscription stays.
      for (const stream of onC) await stream.close();
      await until(() => c.feed.subscribers === 0, "no stream left on C");
      expect(await listeners()).toBe(3);
    } finally {
      await served?.close();
      await c.dispose();
      await cDb.$disconnect();
    }
    // A replica that closes gives its subscription up.
    await until(async () => (await listeners()) === 2, "two listeners on the channel");

    const probe = await intakeOn(b);
    const stream = await subscribe(a, {}, reviewer);
    await untilLive(stream, { providerCode: probe.providerCode, token: probe.accessToken });
    // SIGTERM: the stream ends, so the drain is not held up and the replica exits 0.
    const how = await stopServer(a, 10_000);
    expect(stream.ended).toBe(true);
    expect(how.code).toBe(0);
  }, 60_000);
});
