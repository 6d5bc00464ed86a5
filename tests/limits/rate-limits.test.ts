/**
 * Rate limits (API.md §6): intake per client address, failed authentication per client address,
 * writes per agent token; 429 problem+json (or a GraphQL error with extensions.code) with
 * Retry-After. Each test builds its own app with small limits on; the shared app of the helpers
 * has them off. With Redis, two apps (two replicas' limiter sets) count against one limit.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Redis } from "ioredis";
import { loadConfig } from "../../src/config.ts";
import { addressKey, clientAddress } from "../../src/limits/limits.plugin.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { ON_POSTGRES } from "../database.ts";
import {
  type Answer,
  type App,
  type CallOptions,
  call,
  config,
  db,
  expectProblem,
  gqlCodes,
  intake,
} from "../helpers.ts";

const REDIS_URL = "redis://127.0.0.1:6379";

const apps: App[] = [];

/** An app with the limits on; clients are told apart by X-Forwarded-For (TRUST_PROXY=1). */
function limitedApp(env: Record<string, string> = {}): App {
  const app = createApp(
    loadConfig({
      ...process.env,
      NODE_ENV: "test",
      RATE_LIMITS: "on",
      REDIS_URL: "",
      TRUST_PROXY: "1",
      RATE_LIMIT_INTAKE_PER_HOUR: "3",
      RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "4",
      RATE_LIMIT_WRITES_PER_MINUTE: "5",
      ...env,
    }),
    db,
  );
  apps.push(app);
  return app;
}

afterAll(async () => {
  await Promise.all(apps.map((app) => app.dispose()));
});

/**
 * A documentation address (RFC 5737) no other test uses: consecutive calls never repeat one (picked
 * at random, two addresses in a test were the same one time in 256 — a flaky 429), and the run
 * starts at a random one (with Redis, counts outlive a run).
 */
let lastAddress = randomBytes(1)[0] as number;
function address(): string {
  lastAddress = (lastAddress + 1) % 254;
  return `198.51.100.${1 + lastAddress}`;
}

/** A request to one of these apps, from `from` as the proxy's X-Forwarded-For tells it. */
function send(
  app: App,
  method: string,
  path: string,
  { from, ...options }: Omit<CallOptions, "app" | "headers"> & { from?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = from ? { "x-forwarded-for": `10.9.9.9, ${from}` } : {};
  return call(method, path, { ...options, headers, app });
}

const CREATE = `
  mutation Create($name: String!, $summary: String!, $agentType: AgentType!, $contactEmail: String!,
                  $endpoint: EndpointInput!, $providerCode: String) {
    createProvider(name: $name, summary: $summary, agentType: $agentType, contactEmail: $contactEmail,
                   endpoint: $endpoint, providerCode: $providerCode) { providerCode }
  }`;
const UPDATE = `mutation U($code: String!, $summary: String) { updateProvider(providerCode: $code, summary: $summary) { version } }`;

function gqlIntake(app: App, from: string, overrides: Record<string, unknown> = {}) {
  const { labels: _labels, ...variables } = intakeBody(overrides);
  return send(app, "POST", "/graphql", { body: { query: CREATE, variables }, from });
}

/** A 429 answer: the contract's problem, Retry-After whole seconds within the window. */
function expectLimited(answer: Answer, windowSeconds: number): void {
  expectProblem(answer, 429, "RATE_LIMITED");
  const retryAfter = Number(answer.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
}

function expectGqlLimited(answer: Answer, windowSeconds: number): void {
  expect(answer.status).toBe(429);
  expect(gqlCodes(answer)).toEqual(["RATE_LIMITED"]);
  const retryAfter = Number(answer.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(answer.text).not.toMatch(/stack|RateLimiter|redis/i);
}

describe("intake per client address", () => {
  test("REST and GraphQL share one count; over it, 429 + Retry-After and nothing is created", async () => {
    const app = limitedApp();
    const from = address();
    expect((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from })).status).toBe(201);
    const viaGraphql = await gqlIntake(app, from);
    expect(viaGraphql.status).toBe(200);
    expect(viaGraphql.body.data.createProvider.providerCode).toBeTruthy();
    expect((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from })).status).toBe(201);

    const refusedBody = intakeBody();
    const refused = await send(app, "POST", "/api/v1/providers", { body: refusedBody, from });
    expectLimited(refused, 3600);
    expect(refused.body).toMatchObject({ type: "about:blank", title: "Too many requests", status: 429 });
    expect(await db.provider.count({ where: { providerCode: String(refusedBody.providerCode) } })).toBe(0);

    const refusedCode = `gql-${randomBytes(4).toString("hex")}`;
    const refusedGraphql = await gqlIntake(app, from, { providerCode: refusedCode });
    expectGqlLimited(refusedGraphql, 3600);
    expect(refusedGraphql.body.data ?? null).toBeNull();
    expect(await db.provider.count({ where: { providerCode: refusedCode } })).toBe(0);

    // Another address is not affected.
    expect((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from: address() })).status).toBe(201);
  });

  test("every createProvider of an operation counts (aliases cannot multiply an allowance)", async () => {
    const app = limitedApp();
    const from = address();
    const query = `mutation { ${[1, 2, 3, 4]
      .map(
        (n) => `a${n}: createProvider(name: "Alias ${n}", summary: "s", agentType: ASSISTANT,
          contactEmail: "a@example.com", endpoint: { url: "https://a.example.com", protocol: A2A, authScheme: BEARER })
          { providerCode }`,
      )
      .join("\n")} }`;
    const before = await db.provider.count();
    expectGqlLimited(await send(app, "POST", "/graphql", { body: { query }, from }), 3600);
    expect(await db.provider.count()).toBe(before);
  });

  test("without TRUST_PROXY the socket's address counts and X-Forwarded-For is ignored", async () => {
    const app = limitedApp({ TRUST_PROXY: "", RATE_LIMIT_INTAKE_PER_HOUR: "1" });
    const socket = (remoteAddress: string) => ({ req: { socket: { remoteAddress } } });
    const peer = address();
    const first = await send(app, "POST", "/api/v1/providers", {
      body: intakeBody(),
      from: address(),
      serverContext: socket(`::ffff:${peer}`),
    });
    expect(first.status).toBe(201);
    // A different forwarded address does not make a different client.
    expectLimited(
      await send(app, "POST", "/api/v1/providers", {
        body: intakeBody(),
        from: address(),
        serverContext: socket(peer),
      }),
      3600,
    );
    expect(
      (await send(app, "POST", "/api/v1/providers", { body: intakeBody(), serverContext: socket(address()) })).status,
    ).toBe(201);
  });
});

describe("the client address", () => {
  const req = (xff: string | null, remoteAddress = "192.0.2.1") => ({
    request: new Request("http://x/", { headers: xff === null ? {} : { "x-forwarded-for": xff } }),
    req: { socket: { remoteAddress } },
  });
  test("counted from the right of X-Forwarded-For, as many hops as TRUST_PROXY says", () => {
    expect(clientAddress(req("1.1.1.1, 2.2.2.2, 3.3.3.3"), 0)).toBe("192.0.2.1");
    expect(clientAddress(req("1.1.1.1, 2.2.2.2, 3.3.3.3"), 1)).toBe("3.3.3.3");
    expect(clientAddress(req("1.1.1.1, 2.2.2.2, 3.3.3.3"), 2)).toBe("2.2.2.2");
    expect(clientAddress(req("1.1.1.1"), 3)).toBe("1.1.1.1");
    expect(clientAddress(req(null), 1)).toBe("192.0.2.1");
    expect(clientAddress(req("not-an-address"), 1)).toBe("192.0.2.1");
    expect(clientAddress({ request: new Request("http://x/") }, 0)).toBe("unknown");
  });
  test("IPv4-mapped IPv6 is IPv4; IPv6 counts by its /64", () => {
    expect(addressKey("::ffff:203.0.113.5")).toBe("203.0.113.5");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
  });
});

describe("failed authentication per client address", () => {
  test("after the limit of 401s, credentialed requests get 429 before verification; others go on", async () => {
    const app = limitedApp();
    const from = address();
    const owner = await intake();
    for (let i = 0; i < 4; i++) {
      const bad = await send(app, "GET", "/api/v1/providers", { token: `agr_wrong${i}`, from });
      expectProblem(bad, 401, "UNAUTHENTICATED");
    }
    // Even a valid token is refused now: the address is over its limit.
    const rest = await send(app, "GET", `/api/v1/providers/${owner.providerCode}`, { token: owner.accessToken, from });
    expectLimited(rest, 900);
    const graphql = await send(app, "POST", "/graphql", {
      body: { query: "{ providers { items { providerCode } } }" },
      token: owner.accessToken,
      from,
    });
    expectGqlLimited(graphql, 900);
    // Without credentials the address may still read; another address is not affected.
    expect((await send(app, "GET", "/api/v1/providers", { from })).status).toBe(200);
    expect(
      (await send(app, "GET", `/api/v1/providers/${owner.providerCode}`, { token: owner.accessToken, from: address() }))
        .status,
    ).toBe(200);
    expectProblem(
      await send(app, "GET", "/api/v1/providers", { token: "agr_wrong", from: address() }),
      401,
      "UNAUTHENTICATED",
    );
  });

  test("successful authentications do not count", async () => {
    const app = limitedApp();
    const from = address();
    const owner = await intake();
    for (let i = 0; i < 8; i++) {
      const ok = await send(app, "GET", `/api/v1/providers/${owner.providerCode}`, { token: owner.accessToken, from });
      expect(ok.status).toBe(200);
    }
  });
});

describe("writes per agent token", () => {
  test("over the limit, 429 on REST and GraphQL; another token and reads are unaffected", async () => {
    const app = limitedApp();
    const owner = await intake();
    const other = await intake();
    const patch = (token: string, code: string, summary: string) =>
      send(app, "PATCH", `/api/v1/providers/${code}`, { body: { summary }, token, from: address() });
    for (let i = 0; i < 4; i++) expect((await patch(owner.accessToken, owner.providerCode, `s${i}`)).status).toBe(200);
    const viaGraphql = await send(app, "POST", "/graphql", {
      body: { query: UPDATE, variables: { code: owner.providerCode, summary: "s4" } },
      token: owner.accessToken,
    });
    expect(viaGraphql.body.data?.updateProvider.version).toBe(6);

    expectLimited(await patch(owner.accessToken, owner.providerCode, "over"), 60);
    expectGqlLimited(
      await send(app, "POST", "/graphql", {
        body: { query: UPDATE, variables: { code: owner.providerCode, summary: "over" } },
        token: owner.accessToken,
      }),
      60,
    );
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: owner.providerCode } });
    expect(row).toMatchObject({ version: 6, summary: "s4" });

    expect((await patch(other.accessToken, other.providerCode, "fine")).status).toBe(200);
    const read = await send(app, "GET", `/api/v1/providers/${owner.providerCode}`, { token: owner.accessToken });
    expect(read.status).toBe(200);
  });
});

describe("configuration", () => {
  test("off in tests unless turned on; RATE_LIMITS=off turns all off; 0 turns one off", () => {
    expect(config.rateLimits.enabled).toBe(false);
    const production = { NODE_ENV: "production", REVIEWER_JWT_SECRET: "x".repeat(32) };
    expect(loadConfig(production).rateLimits).toMatchObject({
      enabled: true,
      intakePerHour: 20,
      authFailuresPer15Min: 30,
      writesPerMinute: 120,
    });
    expect(loadConfig({ ...production, RATE_LIMITS: "off" }).rateLimits.enabled).toBe(false);
    expect(loadConfig({ NODE_ENV: "test", RATE_LIMITS: "on" }).rateLimits.enabled).toBe(true);
    expect(() => loadConfig({ RATE_LIMITS: "maybe" })).toThrow(/RATE_LIMITS/);
    expect(() => loadConfig({ RATE_LIMIT_WRITES_PER_MINUTE: "-1" })).toThrow(/RATE_LIMIT_WRITES_PER_MINUTE/);
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
  });

  test("the helpers' app never answers 429: more intakes and failed logins than any default", async () => {
    for (let i = 0; i < 22; i++) {
      expect((await call("POST", "/api/v1/providers", { body: intakeBody() })).status).toBe(201);
    }
    for (let i = 0; i < 32; i++)
      expect((await call("GET", "/api/v1/providers", { token: "agr_bad" })).status).toBe(401);
  });

  test("a limit of 0 is off while the others hold", async () => {
    const app = limitedApp({ RATE_LIMIT_INTAKE_PER_HOUR: "0" });
    const from = address();
    for (let i = 0; i < 5; i++) {
      expect((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from })).status).toBe(201);
    }
    for (let i = 0; i < 4; i++)
      expect((await send(app, "GET", "/api/v1/providers", { token: "agr_x", from })).status).toBe(401);
    expect((await send(app, "GET", "/api/v1/providers", { token: "agr_x", from })).status).toBe(429);
  });
});

// The scale-out setup, tested when the suite runs on PostgreSQL (tests/database.ts).
if (ON_POSTGRES) {
  describe("with Redis (REDIS_URL)", () => {
    const prefix = `agent-registry-test:${randomBytes(6).toString("hex")}`;
    let redis: Redis;

    beforeAll(async () => {
      redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        await redis.ping();
      } catch (error) {
        throw new Error(
          `Redis must run at ${REDIS_URL} for these tests (ARCHITECTURE.md: it runs on every development and CI machine): ${(error as Error).message}`,
        );
      }
    });

    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    });

    test("two apps (two replicas) share one limit: requests split across both hit 429 at the combined count", async () => {
      const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, RATE_LIMIT_INTAKE_PER_HOUR: "4" };
      const replicas = [limitedApp(env), limitedApp(env)] as const;
      const from = address();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const app = replicas[i % 2] as App;
        statuses.push((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from })).status);
      }
      expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
      expect(await redis.keys(`${prefix}:intake*`)).toHaveLength(1);
      expectGqlLimited(await gqlIntake(replicas[1], from), 3600);
      expect(
        (await send(replicas[0], "POST", "/api/v1/providers", { body: intakeBody(), from: address() })).status,
      ).toBe(201);
    });

    test("failed authentications count across replicas too", async () => {
      const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "3" };
      const [a, b] = [limitedApp(env), limitedApp(env)];
      const from = address();
      expect((await send(a, "GET", "/api/v1/providers", { token: "agr_1", from })).status).toBe(401);
      expect((await send(b, "GET", "/api/v1/providers", { token: "agr_2", from })).status).toBe(401);
      expect((await send(a, "GET", "/api/v1/providers", { token: "agr_3", from })).status).toBe(401);
      expectLimited(await send(b, "GET", "/api/v1/providers", { token: "agr_4", from }), 900);
    });

    test("Redis unreachable: never a 500; the limits fail open to per-process counting", async () => {
      const app = limitedApp({ REDIS_URL: "redis://127.0.0.1:1", RATE_LIMIT_KEY_PREFIX: prefix });
      const from = address();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await send(app, "POST", "/api/v1/providers", { body: intakeBody(), from })).status);
      }
      expect(statuses).toEqual([201, 201, 201, 429]);
    });
  });
}
