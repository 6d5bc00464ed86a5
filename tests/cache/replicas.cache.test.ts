/**
 * The response cache across replicas (issue #7): two real server processes on one PostgreSQL
 * database with Redis, each caching anonymous reads. A write acknowledged by one replica is never
 * followed by the old answer from the other — for the profile, the lists and search, over REST and
 * GraphQL — while the caches are shown to be in use (the same read twice is a hit).
 *
 * It makes its own throwaway database (whatever database the rest of the suite runs on) and needs
 * PostgreSQL and Redis, which run on every development and CI machine (ARCHITECTURE.md): when they
 * cannot be reached it fails and says so.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Redis } from "ioredis";
import pg from "pg";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db.migrate.ts";
import { intakeBody } from "../helpers.ts";

const PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = "redis://127.0.0.1:6379";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RUN = randomBytes(5).toString("hex");
const DATABASE = `cache_replicas_${RUN}`;
const DATABASE_URL = `postgresql://postgres@127.0.0.1:5432/${DATABASE}`;
const SECRET = "cache-replica-test-secret-0123456789-0123456789";

interface Replica {
  name: string;
  url: string;
  child: ChildProcess;
  trouble: string[];
}

const replicas: Replica[] = [];
let admin: pg.Client | undefined;
let databaseCreated = false;

async function startReplica(name: string): Promise<Replica> {
  const { NODE_OPTIONS: _jestOnly, ...inherited } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: {
      ...inherited,
      NODE_ENV: "production",
      REVIEWER_JWT_SECRET: SECRET,
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL,
      REDIS_URL,
      RESPONSE_CACHE: "on",
      // Its own shared generation: other suites' replicas writing meanwhile would only cost misses.
      RESPONSE_CACHE_KEY_PREFIX: `agent-registry-cache-test:${RUN}`,
      RATE_LIMITS: "off",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const replica: Replica = { name, url: "", child, trouble: [] };
  replicas.push(replica);
  replica.url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (/"level":"(?:warn|error)"/.test(line)) replica.trouble.push(line);
        const url = /"msg":"listening","url":"([^"]+)"/.exec(line)?.[1];
        if (url) resolve(url);
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => replica.trouble.push(chunk));
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}) before listening: ${replica.trouble}`)));
  });
  for (let i = 0; ; i++) {
    const ready = await fetch(`${replica.url}/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return replica;
    if (i > 100) throw new Error(`${name} never became ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stop(replica: Replica): Promise<void> {
  const { child } = replica;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

interface Answer {
  status: number;
  cache: string | null;
  body: any;
}

async function send(
  replica: Replica,
  method: string,
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${replica.url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, cache: res.headers.get("x-cache"), body };
}

/** What the replicas reported about Redis, the cache or an internal error. */
const cacheTrouble = () =>
  replicas.flatMap((r) => r.trouble).filter((line) => /redis|cache|internal error/i.test(line));

const gqlDetail = (code: string) => ({
  query: "query ($c: String!) { provider(providerCode: $c) { summary version } }",
  variables: { c: code },
});

beforeAll(async () => {
  admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    admin = undefined;
    throw new Error(
      `PostgreSQL must run at ${PG_ADMIN_URL} for this test (ARCHITECTURE.md): ${(error as Error).message}`,
    );
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Redis must run at ${REDIS_URL} for this test (ARCHITECTURE.md): ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
  await admin.query(`CREATE DATABASE "${DATABASE}"`);
  databaseCreated = true;
  await migrate(DATABASE_URL);
}, 30_000);

afterAll(async () => {
  await Promise.all(replicas.map(stop));
  if (admin) {
    if (databaseCreated) await admin.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
    await admin.end();
  }
}, 30_000);

describe("two caching replicas on one PostgreSQL database, with Redis", () => {
  test("no read through one replica returns what a write acknowledged by the other replaced", async () => {
    const [a, b] = await Promise.all([startReplica("A"), startReplica("B")]);
    const reviewer = await signReviewerToken(
      loadConfig({ ...process.env, NODE_ENV: "production", REVIEWER_JWT_SECRET: SECRET }),
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
        body: { decision: "APPROVE" },
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

      const summary = `Round ${round} through ${writer.name}`;
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
