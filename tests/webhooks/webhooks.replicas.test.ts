/**
 * Webhook deliveries across replicas: real server processes on one throwaway PostgreSQL database,
 * each running its webhook worker, and one receiver on loopback (OUTBOUND_TEST_HOSTS; the processes
 * run with NODE_ENV=test, the only setting that allows it). With a receiver that fails the first
 * three attempts of every message, every event is delivered, each attempt by exactly one replica,
 * and a message arriving twice does so under one webhook-id. A replica killed (SIGKILL) while the
 * receiver holds its request open leaves the attempt to another replica once the lease runs out.
 *
 * Needs PostgreSQL and Redis (ARCHITECTURE.md: on every development and CI machine).
 */
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { Webhook } from "standardwebhooks";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { readEvents } from "../../src/events/event.store.ts";
import { intakeBody } from "../builders.ts";
import {
  cleanUp,
  PROCESS_JWT_SECRET,
  type ReplicaDatabase,
  replicaDatabase,
  request,
  type Server,
  startServer,
  stopServer,
} from "../process/server.process.ts";
import { until } from "../wait.ts";

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  status: number;
}

const received: Received[] = [];
/** How the receiver answers, by path: a status, or "hold" (keep the request open). */
const answers = new Map<string, (nth: number, id: string) => number | "hold">();
const held: ServerResponse[] = [];
let heldOne: () => void = () => {};

const LEASE_MS = 3000;
let receiver: HttpServer;
let database: ReplicaDatabase | undefined;
let db: Db | undefined;
let env: Record<string, string>;
let a: Server;
let b: Server;
let reviewer: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const id = headers["webhook-id"] ?? "";
      const nth = received.filter((r) => r.path === path && r.headers["webhook-id"] === id).length + 1;
      const answer = answers.get(path)?.(nth, id) ?? 200;
      received.push({
        path,
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
        status: answer === "hold" ? 0 : answer,
      });
      if (answer === "hold") {
        held.push(res);
        heldOne();
      } else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  database = await replicaDatabase();
  db = await openDb(database.url);
  env = {
    NODE_ENV: "test",
    OUTBOUND_TEST_HOSTS: `hooks.test=127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OUTBOUND_TIMEOUT_MS: "2000",
    WEBHOOK_LEASE_MS: String(LEASE_MS),
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_BACKOFF_BASE_MS: "50",
    WEBHOOK_BACKOFF_MAX_MS: "300",
    DRAIN_TIMEOUT_MS: "5000",
  };
  [a, b] = await Promise.all([startServer(database.url, env), startServer(database.url, env)]);
  reviewer = await signReviewerToken(
    loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
    "webhooks-rv",
    { roles: ["reviewer"] },
  );
}, 60_000);

afterAll(async () => {
  for (const res of held) res.destroy();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await cleanUp();
  await db?.$disconnect();
}, 30_000);

/** An agent made through `server`, and a reviewer's subscription to its events posting to `path`. */
async function watched(server: Server, path: string) {
  const agent = await request(server, "POST", "/api/v1/providers", { body: intakeBody() });
  expect(agent.status).toBe(201);
  const made = await request(server, "POST", "/api/v1/webhooks", {
    token: reviewer,
    body: { url: `https://hooks.test${path}`, providerCode: agent.body.providerCode },
  });
  expect(made.status).toBe(201);
  const provider = await db!.provider.findUniqueOrThrow({ where: { providerCode: agent.body.providerCode } });
  return { agent: agent.body, secret: made.body.secret as string, webhook: made.body.webhook, providerId: provider.id };
}

test("a receiver failing three attempts of every message: every event delivered, one replica per attempt", async () => {
  const path = "/fail-three";
  answers.set(path, (nth) => (nth <= 3 ? 500 : 200));
  const { agent, secret, webhook, providerId } = await watched(a, path);
  // Writes through both replicas, two at a time.
  for (let i = 0; i < 10; i++) {
    const answers = await Promise.all(
      [a, b].map((server, j) =>
        request(server, "PATCH", `/api/v1/providers/${agent.providerCode}`, {
          token: agent.accessToken,
          body: { summary: `Change ${i}-${j}` },
        }),
      ),
    );
    expect(answers.map((x) => x.status)).toEqual([200, 200]);
  }
  const events = await readEvents(db!, {
    after: webhook.lastSeq,
    limit: 1000,
    audience: { kind: "reviewer" },
    providerId,
  });
  expect(events.length).toBeGreaterThanOrEqual(20);
  const delivered = () =>
    new Set(
      received
        .filter((r) => r.path === path && r.status === 200)
        .map((r) => (JSON.parse(r.body) as { data: { seq: number } }).data.seq),
    );
  await until(() => events.every((e) => delivered().has(e.seq)), "every event delivered", 30_000);
  await until(
    async () =>
      (await db!.webhookDelivery.findMany({ where: { webhook: { webhookId: webhook.webhookId } } })).every(
        (d) => d.status === "SUCCEEDED",
      ),
    "every delivery recorded",
    30_000,
  );

  const mine = received.filter((r) => r.path === path);
  const verifier = new Webhook(secret);
  const idOfSeq = new Map<number, string>();
  for (const r of mine) {
    const message = verifier.verify(r.body, r.headers) as { data: { seq: number } };
    const id = r.headers["webhook-id"] as string;
    // A message sent again (a retry, or a duplicate at-least-once allows) keeps its webhook-id.
    expect(idOfSeq.get(message.data.seq) ?? id).toBe(id);
    idOfSeq.set(message.data.seq, id);
  }
  expect([...idOfSeq.keys()].sort((x, y) => x - y)).toEqual(events.map((e) => e.seq));
  expect(new Set(idOfSeq.values()).size).toBe(events.length);
  // Exactly one replica per attempt: the receiver saw each attempt the database counted, once. (An
  // attempt slower than its lease, on a busy machine, is made again, and counted again; the waiting
  // covers one still on its way when another recorded the success.)
  const rows = await db!.webhookDelivery.findMany({ where: { webhook: { webhookId: webhook.webhookId } } });
  expect(rows).toHaveLength(events.length);
  const got = (deliveryId: string) => received.filter((r) => r.path === path && r.headers["webhook-id"] === deliveryId);
  await until(
    () => rows.every((row) => got(row.deliveryId).length === row.attempts),
    "every attempt counted received once",
    30_000,
  );
  for (const row of rows) {
    const statuses = got(row.deliveryId).map((r) => r.status);
    expect(statuses.slice(0, 4)).toEqual([500, 500, 500, 200]);
    expect(statuses.slice(4).every((status) => status === 200)).toBe(true);
  }
}, 90_000);

test("a replica killed while its receiver holds the request: the other replica makes the attempt", async () => {
  // One replica sends, so the one killed is the one holding the attempt.
  expect(await stopServer(b)).toEqual({ code: 0, signal: null });
  const path = "/held";
  answers.set(path, (nth) => (nth === 1 ? "hold" : 200));
  const { agent, webhook } = await watched(a, path);
  const holding = new Promise<void>((resolve) => {
    heldOne = resolve;
  });
  const changed = await request(a, "PATCH", `/api/v1/providers/${agent.providerCode}`, {
    token: agent.accessToken,
    body: { summary: "Sent while the replica dies" },
  });
  expect(changed.status).toBe(200);
  await holding;
  a.child.kill("SIGKILL");
  expect((await a.exited).signal).toBe("SIGKILL");
  const c = await startServer(database!.url, env);
  await until(() => received.filter((r) => r.path === path).length >= 2, "the attempt made again", 30_000);
  const [first, second] = received.filter((r) => r.path === path);
  expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
  expect(second?.body).toBe(first?.body);
  // Not before the dead replica's lease ran out.
  expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(LEASE_MS - 100);
  await until(
    async () => {
      const [row] = await db!.webhookDelivery.findMany({ where: { webhook: { webhookId: webhook.webhookId } } });
      return row?.status === "SUCCEEDED";
    },
    "recorded by the new replica",
    30_000,
  );
  const [row] = await db!.webhookDelivery.findMany({ where: { webhook: { webhookId: webhook.webhookId } } });
  expect(row).toMatchObject({ lastStatusCode: 200, leaseToken: null });
  // Two attempts, unless the new replica was itself slower than a lease (a busy machine) and made
  // another: each one the database counted reached the receiver, under the same webhook-id.
  const mine = () => received.filter((r) => r.path === path);
  await until(() => mine().length === row!.attempts, "every attempt counted received", 30_000);
  expect(row!.attempts).toBeGreaterThanOrEqual(2);
  expect(new Set(mine().map((r) => r.headers["webhook-id"]))).toEqual(new Set([first?.headers["webhook-id"]]));
  expect(await stopServer(c)).toEqual({ code: 0, signal: null });
}, 90_000);
