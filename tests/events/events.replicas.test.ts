/**
 * The event log across replicas: two real server processes on one throwaway PostgreSQL database,
 * with Redis, written concurrently through both.
 *
 * - A reader paging by seq while the writes run never misses an event that commits after a higher
 *   one: what it collected is exactly the log.
 * - A stream killed 100 times at random moments, and resumed each time with Last-Event-ID on either
 *   replica, reassembles the log: no gap, no duplicate, and each provider's patches replayed from
 *   `{}` give every event's hash, the last one included.
 *
 * Needs PostgreSQL and Redis (ARCHITECTURE.md: on every development and CI machine).
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import canonicalize from "canonicalize";
import { applyPatch } from "rfc6902";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { intakeBody } from "../builders.ts";
import { FEED_QUERY, readSse } from "../feed/sse.ts";
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

type Event = { seq: number; kind: string; providerCode: string; patch: any[]; stateHash: string };

let database: ReplicaDatabase | undefined;
let replicas: Server[] = [];
let reviewer: string;

beforeAll(async () => {
  database = await replicaDatabase();
  const env = { REDIS_URL, FEED_CHANNEL: `agent-registry-events-test:${randomBytes(5).toString("hex")}` };
  replicas = await Promise.all([startServer(database.url, env), startServer(database.url, env)]);
  reviewer = await signReviewerToken(
    loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
    "ev-rv",
    {
      roles: ["reviewer"],
    },
  );
}, 60_000);

afterAll(async () => {
  await cleanUp();
}, 30_000);

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)] as T;

/** Registers providers, half through each replica. */
async function providers(count: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const answer = await request(replicas[i % 2] as Server, "POST", "/api/v1/providers", { body: intakeBody() });
      expect(answer.status).toBe(201);
      return answer.body as { providerCode: string; accessToken: string; reviewCode: string };
    }),
  );
}

/** Writes through both replicas, `workers` at a time, until `stop` says so; answers how many. */
async function writeUntil(
  made: { providerCode: string; accessToken: string }[],
  workers: number,
  stop: () => boolean,
): Promise<number> {
  let written = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; !stop(); i++) {
        const target = pick(made);
        const answer = await request(
          replicas[(w + i) % 2] as Server,
          "PATCH",
          `/api/v1/providers/${target.providerCode}`,
          {
            token: target.accessToken,
            body: { summary: `w${w} #${i} ${randomBytes(3).toString("hex")}` },
          },
        );
        expect(answer.status).toBe(200);
        written += 1;
      }
    }),
  );
  return written;
}

/** The whole log, as a reviewer reads it. */
async function wholeLog(after = 0): Promise<Event[]> {
  const all: Event[] = [];
  for (let last = after; ; ) {
    const page = await request(replicas[0] as Server, "GET", `/api/v1/events?after=${last}&limit=500`, {
      token: reviewer,
    });
    expect(page.status).toBe(200);
    all.push(...page.body.items);
    if (page.body.items.length < 500) return all;
    last = all[all.length - 1]?.seq as number;
  }
}

const sha256 = (value: unknown) =>
  createHash("sha256")
    .update(canonicalize(value) as string)
    .digest("hex");

describe("the log's order across replicas", () => {
  test("a reader paging by seq during concurrent writes on two replicas collects exactly the log", async () => {
    const made = await providers(6);
    const start = (await wholeLog()).at(-1)?.seq ?? 0;
    let done = false;
    const writing = writeUntil(made, 16, () => done);
    const collected: number[] = [];
    let last = start;
    const until = Date.now() + 4000;
    for (let i = 0; Date.now() < until; i++) {
      const page = await request(replicas[i % 2] as Server, "GET", `/api/v1/events?after=${last}&limit=500`, {
        token: reviewer,
      });
      for (const event of page.body.items as Event[]) collected.push(event.seq);
      last = collected.at(-1) ?? last;
    }
    done = true;
    const written = await writing;
    for (;;) {
      const page = await request(replicas[0] as Server, "GET", `/api/v1/events?after=${last}&limit=500`, {
        token: reviewer,
      });
      if (page.body.items.length === 0) break;
      for (const event of page.body.items as Event[]) collected.push(event.seq);
      last = collected.at(-1) as number;
    }
    const log = (await wholeLog(start)).map((e) => e.seq);
    expect(log).toHaveLength(written);
    expect(collected).toEqual(log);
  }, 60_000);
});

describe("a stream killed and resumed", () => {
  test("100 kills at random moments, resumed with Last-Event-ID on either replica: no gap, no duplicate, hashes replay", async () => {
    const made = await providers(4);
    let done = false;
    const writing = writeUntil(made, 6, () => done);
    const received: Event[] = [];
    const open = async (server: Server, after: number) => {
      const abort = new AbortController();
      const response = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: {
          accept: "text/event-stream",
          "content-type": "application/json",
          authorization: `Bearer ${reviewer}`,
          // The first connection asks with `after`; every later one resumes as EventSource does.
          ...(after > 0 ? { "last-event-id": String(after) } : {}),
        },
        body: JSON.stringify({ query: FEED_QUERY, variables: after > 0 ? {} : { after: 0 } }),
        signal: abort.signal,
      });
      expect(response.status).toBe(200);
      return { stream: readSse(response, abort), abort };
    };
    let last = 0;
    for (let kill = 0; kill < 100; kill++) {
      const { stream, abort } = await open(pick(replicas), last);
      await new Promise((r) => setTimeout(r, Math.random() * 60));
      abort.abort();
      // What arrived whole before the cut; a message cut in half is not counted, and comes again.
      for (const message of await stream.drain(0)) {
        const event = message.data.feed as Event;
        received.push(event);
        last = event.seq;
      }
      await stream.close();
    }
    done = true;
    await writing;
    // Catch up to the end of the log once the writes have stopped.
    const log = await wholeLog();
    const end = log.at(-1)?.seq as number;
    while (last < end) {
      const { stream, abort } = await open(pick(replicas), last);
      try {
        for (;;) {
          const event = (await stream.next()).data.feed as Event;
          received.push(event);
          last = event.seq;
          if (last >= end) break;
        }
      } finally {
        abort.abort();
        await stream.close();
      }
    }
    expect(received.length).toBeGreaterThan(100);
    expect(received.map((e) => e.seq)).toEqual(log.map((e) => e.seq));

    // Each provider's patches, replayed from {}, give each event's hash; the last is the provider's now.
    for (const { providerCode } of made) {
      let state: Record<string, unknown> = {};
      const own = received.filter((e) => e.providerCode === providerCode);
      expect(own[0]?.kind).toBe("PROVIDER_CREATED");
      for (const event of own) {
        const ops = event.patch.map(({ from, ...op }: any) => (from ? { ...op, from } : op));
        expect(applyPatch(state, ops).filter((r) => r !== null)).toEqual([]);
        state = JSON.parse(JSON.stringify(state));
        expect(sha256(state)).toBe(event.stateHash);
      }
      const profile = await request(replicas[1] as Server, "GET", `/api/v1/providers/${providerCode}`, {
        token: reviewer,
      });
      expect(state.summary).toBe(profile.body.summary);
    }
  }, 120_000);
});
