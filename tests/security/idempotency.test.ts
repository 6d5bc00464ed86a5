/**
 * `Idempotency-Key` on intake, REST and GraphQL: a retry replays the first answer without the
 * token, another body under the same key is a 422, a key still in flight a 409, keys live 24 hours
 * in the database (so replicas share them), and concurrent duplicates make exactly one intake.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, test } from "@jest/globals";
import { parse } from "graphql";
import { loadConfig } from "../../src/config.ts";
import { fingerprintOf, REPLAY_NOTICE } from "../../src/idempotency/idempotency.plugin.ts";
import { commitInTransaction, KEY_TTL_MS, LEASE_MS } from "../../src/idempotency/idempotency.store.ts";
import { validateIntake } from "../../src/providers/provider.rules.ts";
import { intakeProvider } from "../../src/providers/provider.write.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type Answer, type App, type CallOptions, call, db, expectProblem, gqlCodes } from "../helpers.ts";

const apps: App[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.dispose()));
});

function post(body: unknown, key: string | undefined, options: CallOptions = {}): Promise<Answer> {
  const headers = { ...options.headers, ...(key === undefined ? {} : { "Idempotency-Key": key }) };
  return call("POST", "/api/v1/providers", { ...options, body, headers });
}

const CREATE = `mutation Create($providerCode: String, $name: String!, $summary: String!, $agentType: AgentType!,
    $contactEmail: String!, $endpoint: EndpointInput!, $labels: [String!]) {
  intake: createProvider(providerCode: $providerCode, name: $name, summary: $summary, agentType: $agentType,
      contactEmail: $contactEmail, endpoint: $endpoint, labels: $labels) {
    providerCode reviewCode token: accessToken why: notice
    provider { providerCode version reviewStage }
  }
}`;

function gqlPost(variables: Record<string, unknown>, key: string, query = CREATE): Promise<Answer> {
  return call("POST", "/graphql", { body: { query, variables }, headers: { "Idempotency-Key": key } });
}

/** How many rows an intake of this name left behind, table by table. */
async function footprint(where: { name?: string; providerCode?: string }) {
  const providers = await db.provider.findMany({ where, select: { id: true } });
  const ids = providers.map((p) => p.id);
  return {
    providers: providers.length,
    versions: await db.providerVersion.count({ where: { providerId: { in: ids } } }),
    reviews: await db.review.count({ where: { providerId: { in: ids } } }),
    tokens: await db.accessToken.count({ where: { providerId: { in: ids } } }),
    events: await db.reviewEvent.count({ where: { providerId: { in: ids } } }),
  };
}
const ONE_INTAKE = { providers: 1, versions: 1, reviews: 1, tokens: 1, events: 2 };

describe("REST: POST /api/v1/providers with Idempotency-Key", () => {
  test("a retry replays the first answer (status, body) without the token, says so, and registers nothing again", async () => {
    const key = randomUUID();
    const body = intakeBody();
    const first = await post(body, key);
    expect(first.status).toBe(201);
    expect(first.body.accessToken).toMatch(/^agr_/);
    expect(first.body.notice).toBeNull();
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    // The same body with its keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await post(reordered, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("cache-control")).toBe("no-store");
    expect(again.body).toEqual({ ...first.body, accessToken: null, notice: REPLAY_NOTICE });
    expect(again.text).not.toContain(first.body.accessToken);
    expect(await footprint({ providerCode: String(body.providerCode) })).toEqual(ONE_INTAKE);

    // The first answer is the one replayed, even after the profile has changed.
    const patched = await call("PATCH", `/api/v1/providers/${body.providerCode}`, {
      token: first.body.accessToken,
      body: { summary: "Changed after the intake" },
    });
    expect(patched.status).toBe(200);
    const later = await post(body, key);
    expect(later.body.provider).toEqual(first.body.provider);
    // No token is stored anywhere in the key's row.
    const row = await db.idempotencyKey.findUniqueOrThrow({ where: { key } });
    expect(JSON.stringify(row)).not.toContain(first.body.accessToken);
    expect(row.state).toBe("DONE");
  });

  test("the same key with another body is a 422 and changes nothing", async () => {
    const key = randomUUID();
    const body = intakeBody();
    expect((await post(body, key)).status).toBe(201);
    const other = intakeBody({ name: "Another agent" });
    const refused = await post(other, key);
    expectProblem(refused, 422, "UNPROCESSABLE_CONTENT");
    expect(refused.body.detail).toMatch(/Idempotency-Key/);
    expect(await db.provider.count({ where: { providerCode: String(other.providerCode) } })).toBe(0);
    // Also when only one value differs.
    expectProblem(await post({ ...body, summary: "Another summary" }, key), 422, "UNPROCESSABLE_CONTENT");
    // The same body without a key is simply another intake (a 409: its code is taken).
    expectProblem(await post(body, undefined), 409, "CONFLICT");
  });

  test("a key still in flight is a 409 with Retry-After; a claim older than the lease is taken over", async () => {
    const body = intakeBody();
    const { labels: _l, ...variables } = body;
    const fingerprint = fingerprintOf("/graphql", parse(CREATE), null, variables);
    const key = randomUUID();
    const now = Date.now();
    await db.idempotencyKey.create({
      data: {
        key,
        fingerprint,
        claimId: "held-elsewhere",
        claimedAt: new Date(now),
        expiresAt: new Date(now + KEY_TTL_MS),
      },
    });
    const busy = await gqlPost(variables, key);
    expect(busy.status).toBe(409);
    expect(gqlCodes(busy)).toEqual(["CONFLICT"]);
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(busy.headers.get("retry-after"))).toBeLessThanOrEqual(LEASE_MS / 1000);
    expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);

    // The holder went quiet (a process that died before its intake committed): a retry takes over.
    await db.idempotencyKey.update({ where: { key }, data: { claimedAt: new Date(now - LEASE_MS - 1000) } });
    const retried = await gqlPost(variables, key);
    expect(retried.status).toBe(200);
    expect(retried.body.data.intake.token).toMatch(/^agr_/);
    expect(await footprint({ providerCode: String(body.providerCode) })).toEqual(ONE_INTAKE);
  });

  test("a failed intake keeps nothing under the key: the corrected retry runs", async () => {
    const key = randomUUID();
    const body = intakeBody();
    expectProblem(await post({ ...body, contactEmail: "not an email" }, key), 400, "BAD_USER_INPUT");
    expect(await db.idempotencyKey.count({ where: { key } })).toBe(0);
    const fixed = await post(body, key);
    expect(fixed.status).toBe(201);
    expect(fixed.body.accessToken).toMatch(/^agr_/);
  });

  test("an unusable key is a 400 naming the header, and nothing is registered", async () => {
    const body = intakeBody();
    for (const key of ["", "has space", "x".repeat(256), "é"]) {
      const refused = await call("POST", "/api/v1/providers", { body, headers: { "Idempotency-Key": key } });
      expectProblem(refused, 400, "BAD_USER_INPUT");
      expect(refused.body.errors).toEqual([{ path: "/Idempotency-Key", message: expect.any(String) }]);
    }
    expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);
    // A quoted key (the IETF draft's form) is the key inside the quotes.
    const key = randomUUID();
    expect((await post(body, `"${key}"`)).status).toBe(201);
    expect((await post(body, key)).headers.get("idempotent-replayed")).toBe("true");
  });

  test("keys expire after 24 hours: an expired key is purged and the request is a new intake", async () => {
    const key = randomUUID();
    const body = intakeBody();
    const first = await post(body, key);
    expect(first.status).toBe(201);
    await db.idempotencyKey.update({ where: { key }, data: { expiresAt: new Date(Date.now() - 1) } });
    // Any claim purges expired keys; this one is a new key for another intake.
    const other = intakeBody();
    expect((await post(other, randomUUID())).status).toBe(201);
    expect(await db.idempotencyKey.count({ where: { key } })).toBe(0);
    // The old key now names a new request: the same body is an intake again (its code is taken: 409).
    expectProblem(await post(body, key), 409, "CONFLICT");
    const row = await db.idempotencyKey.findUnique({ where: { key } });
    expect(row).toBeNull();
    const kept = await db.idempotencyKey.findFirstOrThrow({ where: { providerCode: String(other.providerCode) } });
    expect(kept.expiresAt.getTime() - kept.createdAt.getTime()).toBe(KEY_TTL_MS);
  });
});

describe("GraphQL: createProvider with the Idempotency-Key header", () => {
  test("a retry replays the first answer; aliases do not hide the token; extensions say it is a replay", async () => {
    const key = randomUUID();
    const { labels: _l, ...variables } = intakeBody();
    const first = await gqlPost(variables, key);
    expect(first.status).toBe(200);
    expect(first.body.data.intake.token).toMatch(/^agr_/);
    expect(first.body.data.intake.why).toBeNull();

    const again = await gqlPost(variables, key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.data).toEqual({ intake: { ...first.body.data.intake, token: null, why: REPLAY_NOTICE } });
    expect(again.body.extensions.idempotency).toEqual({ replayed: true, message: REPLAY_NOTICE });
    expect(again.text).not.toContain(first.body.data.intake.token);
    expect(await footprint({ providerCode: String(variables.providerCode) })).toEqual(ONE_INTAKE);

    // The same key on the other door is another request.
    const rest = await post({ ...variables }, key);
    expectProblem(rest, 422, "UNPROCESSABLE_CONTENT");
  });

  test("a key on a mutation that is more than one intake is a 400; on other operations it is ignored", async () => {
    const { labels: _l, ...variables } = intakeBody();
    const twice = CREATE.replace(
      /\}\n\}$/,
      "}\n  again: createProvider(name: $name, summary: $summary, agentType: $agentType, contactEmail: $contactEmail, endpoint: $endpoint) { providerCode }\n}",
    );
    expect(twice).not.toBe(CREATE);
    const refused = await gqlPost(variables, randomUUID(), twice);
    expect(gqlCodes(refused)).toEqual(["BAD_USER_INPUT"]);
    expect(await db.provider.count({ where: { providerCode: String(variables.providerCode) } })).toBe(0);

    const query = await call("POST", "/graphql", {
      body: { query: "{ health { status } }" },
      headers: { "Idempotency-Key": randomUUID() },
    });
    expect(query.body.data.health.status).toBe("ok");
  });

  test("an intake whose answer was lost (committed, not stored) is answered again from the database, not redone", async () => {
    // What a crash between the intake's commit and the storing of its answer leaves behind.
    const { labels: _l, ...variables } = intakeBody();
    const made = await call("POST", "/api/v1/providers", { body: variables });
    expect(made.status).toBe(201);
    const key = randomUUID();
    const fingerprint = fingerprintOf("/graphql", parse(CREATE), null, variables);
    const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: String(variables.providerCode) } });
    await db.idempotencyKey.create({
      data: {
        key,
        fingerprint,
        claimId: "crashed",
        state: "COMMITTED",
        providerId: provider.id,
        providerCode: provider.providerCode,
        reviewCode: made.body.reviewCode,
        expiresAt: new Date(Date.now() + KEY_TTL_MS),
      },
    });
    const replay = await gqlPost(variables, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.data.intake).toMatchObject({
      providerCode: provider.providerCode,
      reviewCode: made.body.reviewCode,
      token: null,
      why: REPLAY_NOTICE,
      provider: { providerCode: provider.providerCode, version: 1, reviewStage: "SUBMITTED" },
    });
    expect(await footprint({ providerCode: provider.providerCode })).toEqual(ONE_INTAKE);
    // The answer is stored now: later replays are this one.
    const row = await db.idempotencyKey.findUniqueOrThrow({ where: { key } });
    expect(row.state).toBe("DONE");
    expect((await gqlPost(variables, key)).body.data).toEqual(replay.body.data);
  });
});

describe("exactly one intake", () => {
  test.each(["REST", "GraphQL"])(
    "concurrent duplicates (%s, 8 at once, same key): one intake, the others replay or 409",
    async (door) => {
      const name = `Concurrent ${uniqueCode()}`;
      // No providerCode: a second intake would not collide on the code, it would make `name-2`.
      const { providerCode: _p, labels: _l, ...body } = intakeBody({ name });
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => (door === "REST" ? post(body, key) : gqlPost(body, key))),
      );
      const tokenOf = (a: Answer) => (door === "REST" ? a.body?.accessToken : a.body?.data?.intake?.token);
      const okStatus = door === "REST" ? 201 : 200;
      const withToken = answers.filter((a) => a.status === okStatus && typeof tokenOf(a) === "string");
      const replays = answers.filter((a) => a.status === okStatus && tokenOf(a) === null);
      const busy = answers.filter((a) => a.status === 409);
      expect(withToken).toHaveLength(1);
      expect(replays.length + busy.length).toBe(7);
      for (const a of busy) expect(a.headers.get("retry-after")).toBeTruthy();
      expect(await footprint({ name })).toEqual(ONE_INTAKE);
      // And once settled, every retry is a replay.
      const settled = door === "REST" ? await post(body, key) : await gqlPost(body, key);
      expect(settled.headers.get("idempotent-replayed")).toBe("true");
    },
  );

  test("the key is recorded in the intake's transaction: if recording it fails, the intake is rolled back", async () => {
    const providerCode = uniqueCode("atomic");
    const intake = validateIntake(intakeBody({ providerCode }));
    if (!intake.ok) throw new Error("test intake is not valid");
    // No claim exists under this key: recording fails inside the transaction.
    await expect(
      intakeProvider(db, intake.value, (tx, done) => commitInTransaction(tx, randomUUID(), "no-such-claim", done)),
    ).rejects.toMatchObject({ extensions: { code: "CONFLICT" } });
    expect(await footprint({ providerCode })).toEqual({ providers: 0, versions: 0, reviews: 0, tokens: 0, events: 0 });
  });

  test("replays and refusals cost no intake from the rate limit", async () => {
    const app = createApp(
      loadConfig({
        ...process.env,
        NODE_ENV: "test",
        RATE_LIMITS: "on",
        REDIS_URL: "",
        RATE_LIMIT_INTAKE_PER_HOUR: "1",
      }),
      db,
    );
    apps.push(app);
    const key = randomUUID();
    const body = intakeBody();
    expect((await post(body, key, { app })).status).toBe(201);
    for (let i = 0; i < 3; i++)
      expect((await post(body, key, { app })).headers.get("idempotent-replayed")).toBe("true");
    expectProblem(await post(intakeBody(), key, { app }), 422, "UNPROCESSABLE_CONTENT");
    // The allowance was used by the one intake: a new one is refused, and its key is given back.
    const newKey = randomUUID();
    const limited = await post(intakeBody(), newKey, { app });
    expectProblem(limited, 429, "RATE_LIMITED");
    expect(await db.idempotencyKey.count({ where: { key: newKey } })).toBe(0);
  });
});
