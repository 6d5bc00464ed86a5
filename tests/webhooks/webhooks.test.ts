/**
 * Webhooks through the front door, with the worker running in this process and a real HTTP
 * receiver on loopback (OUTBOUND_TEST_HOSTS sends https://hooks.test there): subscriptions, who may
 * see and make them, refusals, the secret shown once, signed deliveries verified with the
 * `standardwebhooks` package, retries with the same webhook-id, a ping, a redelivery, giving up
 * (the subscription disabled, with WEBHOOK_DISABLED in the log), the limit per agent under a race,
 * and leases: two workers on one database, and a claim that ran out.
 *
 * Every subscription posts to a path of its own, so what each receives is told apart; the only
 * worker of the run's shared database is this file's.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Webhook } from "standardwebhooks";
import { loadConfig, type WebhooksConfig } from "../../src/config.ts";
import { readEvents } from "../../src/events/event.store.ts";
import { startWebhooks, type WebhookWorker } from "../../src/webhooks/webhook.delivery.ts";
import { claimDue, recordAttempt } from "../../src/webhooks/webhook.store.ts";
import {
  type App,
  approve,
  appWith,
  call,
  db,
  errorPaths,
  expectProblem,
  gql,
  gqlCodes,
  intake,
  reviewerToken,
} from "../helpers.ts";
import { until } from "../wait.ts";

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What the receiver got, in order; how it answers, by path (200 when nothing is set). */
const received: Received[] = [];
const answers = new Map<string, (nth: number) => number>();

let receiver: Server;
let app: App;
let env: Record<string, string>;
let worker: WebhookWorker;
let rv: string;

/** Small numbers: a message not delivered within 2 s is given up. */
const WORKER: WebhooksConfig = {
  maxAgeMs: 2000,
  backoffBaseMs: 20,
  backoffMaxMs: 200,
  leaseMs: 3000,
  pollIntervalMs: 25,
  concurrency: 8,
  maxPerProvider: 10,
};

beforeAll(async () => {
  receiver = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      received.push({ path, headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const nth = received.filter((r) => r.path === path).length;
      res.writeHead(answers.get(path)?.(nth) ?? 200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  env = {
    OUTBOUND_TEST_HOSTS: `hooks.test=127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OUTBOUND_TIMEOUT_MS: "1000",
  };
  app = appWith(env);
  rv = await reviewerToken("webhooks-reviewer");
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

/**
 * The worker, for the tests of one describe block: stopped in the block's afterAll, which runs
 * before the file's (tests/helpers.ts closes the database in the file's).
 */
function withWorker(): void {
  beforeAll(() => {
    worker = startWebhooks({ db, outbound: app.outbound, config: WORKER });
  });
  afterAll(async () => {
    await worker.stop();
  });
}

/** A path of its own for a subscription, and its URL. */
function target(): { path: string; url: string } {
  const path = `/in/${randomBytes(6).toString("hex")}`;
  return { path, url: `https://hooks.test${path}` };
}

const subscribe = (token: string, body: Record<string, unknown>) =>
  call("POST", "/api/v1/webhooks", { app, token, body });
const at = (path: string) => received.filter((r) => r.path === path);

const patch = (code: string, token: string, summary: string) =>
  call("PATCH", `/api/v1/providers/${code}`, { app, token, body: { summary } });

describe("subscriptions", () => {
  test("an agent subscribes to its own provider: 201, the secret once, never again", async () => {
    const agent = await intake();
    const { url } = target();
    const created = await subscribe(agent.accessToken, { url });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toContain("no-store");
    expect(created.body).toEqual({
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      webhook: {
        id: expect.any(String),
        webhookId: expect.stringMatching(/^wh_[A-Za-z0-9_-]{22}$/),
        url,
        providerCode: agent.providerCode,
        kinds: null,
        createdBy: `agent:${agent.providerCode}`,
        createdAt: expect.any(String),
        enabled: true,
        disabledAt: null,
        disabledReason: null,
        lastSeq: expect.any(Number),
      },
    });
    const { webhookId } = created.body.webhook;
    const read = await call("GET", `/api/v1/webhooks/${webhookId}`, { app, token: agent.accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body.webhook);
    const list = await call("GET", "/api/v1/webhooks", { app, token: agent.accessToken });
    expect(list.body).toEqual({ items: [created.body.webhook], nextCursor: null });
    for (const answer of [read, list]) expect(answer.text).not.toContain(created.body.secret);
  });

  test("who sees what: the owner and reviewers; another agent 404, no token 401", async () => {
    const owner = await intake();
    const other = await intake();
    const mine = (await subscribe(owner.accessToken, { url: target().url })).body.webhook.webhookId;
    const theirs = (await subscribe(other.accessToken, { url: target().url })).body.webhook.webhookId;
    for (const [method, path] of [
      ["GET", `/api/v1/webhooks/${mine}`],
      ["GET", `/api/v1/webhooks/${mine}/deliveries`],
      ["POST", `/api/v1/webhooks/${mine}/test`],
      ["DELETE", `/api/v1/webhooks/${mine}`],
      ["GET", "/api/v1/webhooks/wh_nothing"],
    ] as const) {
      expectProblem(await call(method, path, { app, token: other.accessToken }), 404, "NOT_FOUND");
      expectProblem(await call(method, path, { app }), 401, "UNAUTHENTICATED");
    }
    const otherList = await call("GET", "/api/v1/webhooks?limit=100", { app, token: other.accessToken });
    expect(otherList.body.items.map((w: { webhookId: string }) => w.webhookId)).toEqual([theirs]);
    expect((await call("GET", `/api/v1/webhooks/${mine}`, { app, token: rv })).status).toBe(200);
    // A reviewer lists every subscription, a page at a time.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const pageOf: { body: { items: { webhookId: string }[]; nextCursor: string | null } } = await call(
        "GET",
        `/api/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { app, token: rv },
      );
      for (const w of pageOf.body.items) seen.add(w.webhookId);
      cursor = pageOf.body.nextCursor;
    } while (cursor);
    expect(seen.has(mine) && seen.has(theirs)).toBe(true);
    const deleted = await call("DELETE", `/api/v1/webhooks/${mine}`, { app, token: owner.accessToken });
    expect([deleted.status, deleted.body.webhookId]).toEqual([200, mine]);
    expectProblem(await call("GET", `/api/v1/webhooks/${mine}`, { app, token: rv }), 404, "NOT_FOUND");
  });

  test("an agent subscribes to its own provider only: another's listed one 403, a hidden one 404", async () => {
    const agent = await intake();
    const listed = await intake();
    await approve(listed.providerCode);
    const hidden = await intake({ visibility: "PRIVATE" });
    const url = target().url;
    expectProblem(await subscribe(agent.accessToken, { url, providerCode: listed.providerCode }), 403, "FORBIDDEN");
    expectProblem(await subscribe(agent.accessToken, { url, providerCode: hidden.providerCode }), 404, "NOT_FOUND");
    expectProblem(await subscribe(agent.accessToken, { url, providerCode: "no-such-agent" }), 404, "NOT_FOUND");
    const own = await subscribe(agent.accessToken, { url, providerCode: agent.providerCode });
    expect(own.status).toBe(201);
    // A reviewer names any provider, or none; a code that names nothing is 404.
    const byReviewer = await subscribe(rv, { url, providerCode: hidden.providerCode, kinds: ["REVIEW_DECIDED"] });
    expect(byReviewer.body.webhook).toMatchObject({
      providerCode: hidden.providerCode,
      kinds: ["REVIEW_DECIDED"],
      createdBy: "reviewer:webhooks-reviewer",
    });
    const everything = await subscribe(rv, { url });
    expect(everything.body.webhook.providerCode).toBeNull();
    // It would receive every event of the run: gone before it gets any to send.
    await call("DELETE", `/api/v1/webhooks/${everything.body.webhook.webhookId}`, { app, token: rv });
    expectProblem(await subscribe(rv, { url, providerCode: "no-such-agent" }), 404, "NOT_FOUND");
  });

  test.each([
    ["an http: URL", { url: "http://hooks.test/x" }, ["/url"]],
    ["a private address", { url: "https://10.0.0.1/x" }, ["/url"]],
    ["localhost", { url: "https://localhost/x" }, ["/url"]],
    ["not a URL", { url: "hooks" }, ["/url"]],
    ["an unknown kind and an empty URL", { url: "", kinds: ["PROVIDER_UPDATED", "NOPE"] }, ["/url", "/kinds/1"]],
    ["no kinds at all", { url: "https://hooks.test/x", kinds: [] }, ["/kinds"]],
  ])("refuses %s: 400 naming each field", async (_what, body, paths) => {
    const agent = await intake();
    const answer = await subscribe(agent.accessToken, body);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(paths);
  });

  test("refuses a missing URL and an unknown key", async () => {
    const agent = await intake();
    expectProblem(await subscribe(agent.accessToken, {}), 400, "BAD_USER_INPUT");
    expectProblem(await subscribe(agent.accessToken, { url: target().url, secret: "mine" }), 400, "BAD_USER_INPUT");
  });

  test("GraphQL: the same fields, errors and codes", async () => {
    const agent = await intake();
    const made = await gql(
      `mutation($url: String!) { createWebhook(url: $url) { secret webhook { id webhookId providerCode enabled } } }`,
      { url: target().url },
      { app, token: agent.accessToken },
    );
    const webhook = made.body.data.createWebhook.webhook;
    expect(webhook).toMatchObject({ providerCode: agent.providerCode, enabled: true });
    const node = await gql(
      `query($id: ID!) { node(id: $id) { ... on Webhook { webhookId } } }`,
      { id: webhook.id },
      { app, token: agent.accessToken },
    );
    expect(node.body.data.node).toEqual({ webhookId: webhook.webhookId });
    const missing = await gql(
      `query($id: String!) { webhook(webhookId: $id) { webhookId } }`,
      { id: "wh_missing" },
      { app, token: agent.accessToken },
    );
    expect([missing.body.data.webhook, gqlCodes(missing)]).toEqual([null, ["NOT_FOUND"]]);
    const bad = await gql(
      `mutation { createWebhook(url: "http://x.test", kinds: ["NOPE"]) { secret } }`,
      {},
      { app, token: agent.accessToken },
    );
    expect(gqlCodes(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(errorPaths(bad)).toEqual(["url", "kinds.0"]);
  });

  test("an agent holds at most WEBHOOK_MAX_PER_PROVIDER, even when its creations race", async () => {
    const limited = appWith({ ...env, WEBHOOK_MAX_PER_PROVIDER: "3" });
    const agent = await intake();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        call("POST", "/api/v1/webhooks", { app: limited, token: agent.accessToken, body: { url: target().url } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    expect(await db.webhook.count({ where: { providerCode: agent.providerCode } })).toBe(3);
  });
});

describe("deliveries", () => {
  withWorker();

  test("each event the owner may see, signed: standardwebhooks verifies it; the log shows it", async () => {
    const agent = await intake();
    const { url, path } = target();
    const created = await subscribe(agent.accessToken, { url });
    const { secret, webhook } = created.body;
    await patch(agent.providerCode, agent.accessToken, "First change");
    await patch(agent.providerCode, agent.accessToken, "Second change");
    await until(() => at(path).length >= 2, "two deliveries");
    const verifier = new Webhook(secret);
    const messages = at(path).map((r) => {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["webhook-id"]).toMatch(/^msg_/);
      return verifier.verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, unknown> };
    });
    expect(messages.map((m) => [m.type, m.data.providerCode])).toEqual([
      ["PROVIDER_UPDATED", agent.providerCode],
      ["PROVIDER_UPDATED", agent.providerCode],
    ]);
    const seqs = messages.map((m) => m.data.seq as number);
    expect(seqs[0]).toBeLessThan(seqs[1] as number);
    expect(seqs[0]).toBeGreaterThan(webhook.lastSeq);
    expect(messages[0]?.timestamp).toBe(messages[0]?.data.at);
    // Another key does not verify it.
    expect(() =>
      new Webhook(`whsec_${randomBytes(24).toString("base64")}`).verify(at(path)[0]!.body, at(path)[0]!.headers),
    ).toThrow();
    await until(async () => {
      const log = await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries`, {
        app,
        token: agent.accessToken,
      });
      return log.body.items.length === 2 && log.body.items.every((d: { status: string }) => d.status === "SUCCEEDED");
    }, "both recorded");
    const log = await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries?limit=1`, {
      app,
      token: agent.accessToken,
    });
    expect(log.body.items).toEqual([
      {
        id: expect.any(String),
        deliveryId: at(path)[1]?.headers["webhook-id"],
        seq: seqs[1],
        kind: "PROVIDER_UPDATED",
        status: "SUCCEEDED",
        attempts: 1,
        lastAttemptAt: expect.any(String),
        nextAttemptAt: null,
        lastStatusCode: 200,
        latencyMs: expect.any(Number),
        lastError: null,
        deliveredAt: expect.any(String),
        createdAt: expect.any(String),
      },
    ]);
    expect(log.body.nextCursor).toEqual(expect.any(String));
    const older = await call(
      "GET",
      `/api/v1/webhooks/${webhook.webhookId}/deliveries?limit=1&cursor=${log.body.nextCursor}`,
      { app, token: agent.accessToken },
    );
    expect(older.body.items.map((d: { seq: number }) => d.seq)).toEqual([seqs[0]]);
  });

  test("a reviewer's subscription keeps to its provider and kinds", async () => {
    const watched = await intake();
    const other = await intake();
    const { url, path } = target();
    await subscribe(rv, { url, providerCode: watched.providerCode, kinds: ["REVIEW_DECIDED", "STAGE_CHANGED"] });
    await patch(watched.providerCode, watched.accessToken, "Not a decision");
    await approve(other.providerCode);
    await approve(watched.providerCode);
    await until(() => at(path).length >= 2, "the decision");
    await new Promise((r) => setTimeout(r, 200));
    const types = at(path).map((r) => JSON.parse(r.body) as { type: string; data: { providerCode: string } });
    expect(types.map((m) => m.data.providerCode)).toEqual([watched.providerCode, watched.providerCode]);
    expect(types.map((m) => m.type).sort()).toEqual(["REVIEW_DECIDED", "STAGE_CHANGED"]);
  });

  test("failed attempts are retried with backoff under the same webhook-id until one succeeds", async () => {
    const agent = await intake();
    const { url, path } = target();
    answers.set(path, (nth) => (nth <= 3 ? 503 : 200));
    const { webhook } = (await subscribe(agent.accessToken, { url })).body;
    await patch(agent.providerCode, agent.accessToken, "Retried change");
    await until(() => at(path).length >= 4, "four attempts");
    const attempts = at(path);
    expect(new Set(attempts.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
    await until(async () => {
      const log = await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries`, {
        app,
        token: agent.accessToken,
      });
      return log.body.items[0]?.status === "SUCCEEDED";
    }, "the success recorded");
    const [delivery] = (
      await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries`, { app, token: agent.accessToken })
    ).body.items;
    expect(delivery).toMatchObject({ status: "SUCCEEDED", attempts: 4, lastStatusCode: 200, lastError: null });
    expect(at(path)).toHaveLength(4);
  });

  test("a redirect is not followed: it is a failed attempt", async () => {
    const agent = await intake();
    const { url, path } = target();
    answers.set(path, (nth) => (nth === 1 ? 302 : 200));
    const { webhook } = (await subscribe(agent.accessToken, { url })).body;
    await patch(agent.providerCode, agent.accessToken, "Redirected change");
    await until(() => at(path).length >= 2, "the second attempt");
    await until(async () => {
      const [d] = (await db.webhookDelivery.findMany({ where: { webhook: { webhookId: webhook.webhookId } } })) ?? [];
      return d?.status === "SUCCEEDED";
    }, "recorded");
    expect(at(path)).toHaveLength(2);
  });

  test("a test ping and a redelivery: same webhook-id again, 202", async () => {
    const agent = await intake();
    const { url, path } = target();
    const { secret, webhook } = (await subscribe(agent.accessToken, { url })).body;
    const ping = await call("POST", `/api/v1/webhooks/${webhook.webhookId}/test`, { app, token: agent.accessToken });
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ kind: "PING", seq: null, status: "PENDING", attempts: 0 });
    await until(() => at(path).length === 1, "the ping");
    const pinged = new Webhook(secret).verify(at(path)[0]!.body, at(path)[0]!.headers) as Record<string, unknown>;
    expect(pinged).toMatchObject({ type: "PING", data: { webhookId: webhook.webhookId } });
    expect(at(path)[0]?.headers["webhook-id"]).toBe(ping.body.deliveryId);
    await until(async () => {
      const d = await db.webhookDelivery.findUnique({ where: { deliveryId: ping.body.deliveryId } });
      return d?.status === "SUCCEEDED";
    }, "the ping recorded");
    const again = await call("POST", `/api/v1/webhooks/${webhook.webhookId}/deliveries/${ping.body.deliveryId}/retry`, {
      app,
      token: agent.accessToken,
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ deliveryId: ping.body.deliveryId, status: "PENDING", attempts: 0 });
    await until(() => at(path).length === 2, "the redelivery");
    expect(at(path)[1]?.headers["webhook-id"]).toBe(ping.body.deliveryId);
    expectProblem(
      await call("POST", `/api/v1/webhooks/${webhook.webhookId}/deliveries/msg_nothing/retry`, {
        app,
        token: agent.accessToken,
      }),
      404,
      "NOT_FOUND",
    );
  });

  test("a message not delivered by its deadline disables the subscription, with WEBHOOK_DISABLED in the log", async () => {
    const agent = await intake();
    const { url, path } = target();
    answers.set(path, () => 500);
    const { webhook } = (await subscribe(agent.accessToken, { url })).body;
    await patch(agent.providerCode, agent.accessToken, "Never delivered");
    await until(
      async () =>
        (await call("GET", `/api/v1/webhooks/${webhook.webhookId}`, { app, token: rv })).body.enabled === false,
      "the subscription disabled",
    );
    const read = await call("GET", `/api/v1/webhooks/${webhook.webhookId}`, { app, token: agent.accessToken });
    expect(read.body).toMatchObject({ enabled: false, disabledAt: expect.any(String) });
    expect(read.body.disabledReason).toMatch(/was not delivered by its deadline.*the receiver answered 500/);
    const attempts = at(path).length;
    expect(attempts).toBeGreaterThan(2);
    const [delivery] = (await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries`, { app, token: rv })).body
      .items;
    expect(delivery).toMatchObject({ status: "FAILED", attempts, nextAttemptAt: null, lastStatusCode: 500 });
    // The owner reads why in the event log; nothing more is sent.
    const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: agent.providerCode } });
    const events = await readEvents(db, {
      after: webhook.lastSeq,
      limit: 100,
      audience: { kind: "agent", providerId: provider.id },
      providerId: provider.id,
      kinds: ["WEBHOOK_DISABLED"],
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ providerCode: agent.providerCode, listed: false });
    expect(events[0]?.note).toContain(webhook.webhookId);
    const anonymous = await readEvents(db, {
      after: webhook.lastSeq,
      limit: 100,
      audience: { kind: "anonymous" },
      kinds: ["WEBHOOK_DISABLED"],
    });
    expect(anonymous).toEqual([]);
    await patch(agent.providerCode, agent.accessToken, "After it was disabled");
    await new Promise((r) => setTimeout(r, 300));
    expect(at(path)).toHaveLength(attempts);
    expectProblem(
      await call("POST", `/api/v1/webhooks/${webhook.webhookId}/test`, { app, token: agent.accessToken }),
      409,
      "CONFLICT",
    );
    expectProblem(
      await call("POST", `/api/v1/webhooks/${webhook.webhookId}/deliveries/${delivery.deliveryId}/retry`, {
        app,
        token: agent.accessToken,
      }),
      409,
      "CONFLICT",
    );
  });
});

describe("leases", () => {
  withWorker();

  test("two workers on one database send each message once when nothing fails", async () => {
    const second = startWebhooks({ db, outbound: app.outbound, config: WORKER });
    try {
      const agent = await intake();
      const { url, path } = target();
      await subscribe(agent.accessToken, { url });
      for (let i = 0; i < 12; i++) await patch(agent.providerCode, agent.accessToken, `Change ${i}`);
      await until(() => at(path).length >= 12, "twelve deliveries");
      await new Promise((r) => setTimeout(r, 300));
      const ids = at(path).map((r) => r.headers["webhook-id"]);
      expect(new Set(ids).size).toBe(12);
      expect(ids).toHaveLength(12);
    } finally {
      await second.stop();
    }
  });

  test("an attempt whose lease ran out is another's: the first records nothing", async () => {
    const agent = await intake();
    const { url } = target();
    const { webhook } = (await subscribe(agent.accessToken, { url })).body;
    const row = await db.webhook.findUniqueOrThrow({ where: { webhookId: webhook.webhookId } });
    // A delivery due in the past, as if left behind: claimed here with a lease that has already run out.
    const past = new Date(Date.now() - 600_000);
    await db.webhookDelivery.create({
      data: {
        deliveryId: `msg_lease_${randomBytes(4).toString("hex")}`,
        webhookRowId: row.id,
        kind: "PING",
        data: {},
        at: past,
        nextAttemptAt: past,
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    await worker.stop();
    try {
      const [first] = await claimDue(db, { now: past, leaseUntil: new Date(past.getTime() + 1000), limit: 1 });
      expect(first?.webhookRowId).toBe(row.id);
      const [second] = await claimDue(db, { now: new Date(), leaseUntil: new Date(Date.now() + 5000), limit: 1 });
      expect(second?.id).toBe(first?.id);
      expect(second?.attempts).toBe(2);
      const record = { ok: true, statusCode: 200, error: null, latencyMs: 1, at: new Date(), next: null };
      expect(await recordAttempt(db, first!, record)).toBe("lost");
      expect(await recordAttempt(db, second!, record)).toBe("delivered");
      expect(await db.webhookDelivery.findUnique({ where: { id: first!.id } })).toMatchObject({
        status: "SUCCEEDED",
        attempts: 2,
        leaseToken: null,
        leaseUntil: null,
      });
    } finally {
      worker = startWebhooks({ db, outbound: app.outbound, config: WORKER });
    }
  });
});

test("the configuration refuses a lease no longer than the outbound deadline", () => {
  expect(() => loadConfig({ NODE_ENV: "test", WEBHOOK_LEASE_MS: "5000", OUTBOUND_TIMEOUT_MS: "5000" })).toThrow(
    /WEBHOOK_LEASE_MS/,
  );
  expect(loadConfig({ NODE_ENV: "test" }).webhooks).toEqual({
    maxAgeMs: 86_400_000,
    backoffBaseMs: 5000,
    backoffMaxMs: 3_600_000,
    leaseMs: 60_000,
    pollIntervalMs: 1000,
    concurrency: 16,
    maxPerProvider: 10,
  });
});
