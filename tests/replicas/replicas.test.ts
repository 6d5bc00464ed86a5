/**
 * The replica proof: two real server processes on one PostgreSQL database with Redis,
 * written through at once. Every acknowledged write is there exactly once, versions run 1..n without
 * gap or duplicate, a stale If-Match answers 412, nothing answers 5xx; a write through one replica
 * is read at once through the other; a rate limit holds across both through Redis.
 *
 * It makes its own throwaway database (whatever database the rest of the suite runs on) and needs
 * PostgreSQL and Redis, which run on every development and CI machine (ARCHITECTURE.md): when they
 * cannot be reached it fails and says so.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Redis } from "ioredis";
import pg from "pg";
import { intakeBody } from "../builders.ts";
import {
  cleanUp,
  pool,
  REDIS_URL,
  type ReplicaDatabase,
  replicaDatabase,
  request,
  type Server,
  startServer,
  stopServer,
} from "../process/server.process.ts";

const RUN = randomBytes(5).toString("hex");
const KEY_PREFIX = `agent-registry-replicas:${RUN}`;

let database: ReplicaDatabase | undefined;

/** A replica: `src/main.ts` on the shared database, with Redis. */
const startReplica = (env: Record<string, string> = {}) =>
  startServer((database as ReplicaDatabase).url, { REDIS_URL, ...env });

/** What a replica logged at warn or error level, and anything on its stderr. */
const trouble = (replica: Server) => [
  ...replica.lines.filter((line) => /"level":"(?:warn|error)"/.test(line)),
  ...replica.stderr,
];

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

beforeAll(async () => {
  database = await replicaDatabase();
}, 30_000);

afterAll(async () => {
  await cleanUp();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 });
  await redis
    .connect()
    .then(async () => {
      const keys = await redis.keys(`${KEY_PREFIX}*`);
      if (keys.length) await redis.del(...keys);
    })
    .catch(() => {})
    .finally(() => redis.disconnect());
}, 30_000);

describe("two replicas on one PostgreSQL database", () => {
  let a: Server;
  let b: Server;
  /** Each provider made through the replicas: its code, token and the summaries acknowledged for it. */
  const made: { code: string; token: string; acknowledged: string[]; refused: string[] }[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startReplica(), startReplica()]);
  }, 30_000);

  test("concurrent intakes and PATCHes through both: every acknowledged write once, versions 1..n, no 5xx", async () => {
    const PROVIDERS = 40;
    const PATCHES = 8;
    const both = [a, b] as const;
    const started = performance.now();

    const intakes = await pool(
      Array.from(
        { length: PROVIDERS },
        () => () => request(pick(both), "POST", "/api/v1/providers", { body: intakeBody() }),
      ),
      32,
    );
    expect(intakes.map((r) => r.status)).toEqual(Array(PROVIDERS).fill(201));
    for (const r of intakes) {
      made.push({ code: r.body.providerCode, token: r.body.accessToken, acknowledged: [], refused: [] });
    }

    // Every PATCH carries a summary of its own; a quarter send If-Match with the version their
    // provider was last seen at (which may be stale by the time they land: then 412).
    const lastSeen = new Map(made.map((p) => [p.code, 1]));
    const outcomes: { status: number; code: unknown; ifMatch: boolean }[] = [];
    const patches = shuffle(
      made.flatMap((p) =>
        Array.from({ length: PATCHES }, (_, j) => async () => {
          const summary = `${p.code} write ${j}`;
          const ifMatch = j % 4 === 3 ? String(lastSeen.get(p.code)) : undefined;
          const answer = await request(pick(both), "PATCH", `/api/v1/providers/${p.code}`, {
            body: { summary },
            token: p.token,
            headers: ifMatch ? { "if-match": `"${ifMatch}"` } : {},
          });
          outcomes.push({ status: answer.status, code: answer.body?.code, ifMatch: ifMatch !== undefined });
          if (answer.status === 200) {
            p.acknowledged.push(summary);
            lastSeen.set(p.code, Math.max(lastSeen.get(p.code) ?? 1, Number(answer.body.version)));
          } else {
            p.refused.push(summary);
          }
        }),
      ),
    );
    await pool(patches, 32);
    const seconds = (performance.now() - started) / 1000;

    // Stale on purpose: every provider is past version 1 now.
    const stale = await pool(
      made.map(
        (p) => () =>
          request(pick(both), "PATCH", `/api/v1/providers/${p.code}`, {
            body: { summary: `${p.code} stale` },
            token: p.token,
            headers: { "if-match": '"1"' },
          }),
      ),
      32,
    );
    for (const answer of stale) {
      expect(answer.status).toBe(412);
      expect(answer.body.code).toBe("PRECONDITION_FAILED");
    }

    const counts: Record<string, number> = {};
    for (const o of outcomes) {
      const key = `${o.status}${o.ifMatch ? " with If-Match" : ""}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    const writes = PROVIDERS + made.reduce((n, p) => n + p.acknowledged.length, 0);
    console.info(
      `replicas: ${PROVIDERS} intakes + ${PROVIDERS * PATCHES} PATCHes through 2 replicas in ${seconds.toFixed(2)} s ` +
        `(${(writes / seconds).toFixed(0)} acknowledged writes/s); PATCH answers ${JSON.stringify(counts)}`,
    );
    // A PATCH without If-Match asked for no precondition: it is never refused for a race. One with
    // If-Match is acknowledged or answers 412; nothing answers 5xx.
    expect(outcomes.filter((o) => !o.ifMatch && o.status !== 200)).toEqual([]);
    expect(
      outcomes.filter(
        (o) => o.ifMatch && !(o.status === 200 || (o.status === 412 && o.code === "PRECONDITION_FAILED")),
      ),
    ).toEqual([]);

    const check = new pg.Client({ connectionString: (database as ReplicaDatabase).url });
    await check.connect();
    try {
      for (const p of made) {
        const provider = await check.query('SELECT "id", "version" FROM "providers" WHERE "providerCode" = $1', [
          p.code,
        ]);
        expect(provider.rows).toHaveLength(1);
        const versions = await check.query(
          `SELECT "version", "snapshot"->>'summary' AS summary FROM "provider_versions"
            WHERE "providerId" = $1 ORDER BY "version"`,
          [provider.rows[0].id],
        );
        const numbers = versions.rows.map((v) => v.version as number);
        expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
        expect(numbers.length - 1).toBe(p.acknowledged.length);
        expect(provider.rows[0].version).toBe(numbers.length);
        const summaries = versions.rows.map((v) => v.summary as string);
        for (const summary of p.acknowledged) expect(summaries.filter((s) => s === summary)).toHaveLength(1);
        for (const summary of p.refused) expect(summaries).not.toContain(summary);
        expect(summaries).not.toContain(`${p.code} stale`);
      }
    } finally {
      await check.end();
    }
    expect([...trouble(a), ...trouble(b)]).toEqual([]);
  }, 45_000);

  test("a write through one replica is read at once through the other (20 rounds)", async () => {
    const owner = made[0] ?? { code: "", token: "" };
    expect(owner.code).not.toBe("");
    for (let round = 0; round < 20; round++) {
      const [writer, reader] = round % 2 === 0 ? [a, b] : [b, a];
      const summary = `read your write ${round}`;
      const written = await request(writer, "PATCH", `/api/v1/providers/${owner.code}`, {
        body: { summary },
        token: owner.token,
      });
      expect(written.status).toBe(200);
      const read = await request(reader, "GET", `/api/v1/providers/${owner.code}`, { token: owner.token });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ summary, version: written.body.version });
    }
  }, 20_000);
});

describe("a rate limit across two replica processes (Redis)", () => {
  test("the combined count trips 429 on either replica", async () => {
    const env = { RATE_LIMITS: "on", RATE_LIMIT_INTAKE_PER_HOUR: "5", RATE_LIMIT_KEY_PREFIX: KEY_PREFIX };
    const [a, b] = await Promise.all([startReplica(env), startReplica(env)]);
    // Both see the client at 127.0.0.1 (no proxy is trusted): 12 intakes at once, split over both.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(i % 2 ? a : b, "POST", "/api/v1/providers", { body: intakeBody() })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(7).fill(429)]);
    for (const replica of [a, b]) {
      const refused = await request(replica, "POST", "/api/v1/providers", { body: intakeBody() });
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe("RATE_LIMITED");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // The drain closes the Redis client and exits 0.
    expect((await stopServer(a)).code).toBe(0);
    expect((await stopServer(b)).code).toBe(0);
    expect([...trouble(a), ...trouble(b)]).toEqual([]);
  }, 30_000);
});
