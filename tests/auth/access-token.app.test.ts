/**
 * Access tokens through the front door: apps configured with a real OpenID provider (tests/auth/idp.ts)
 * as OIDC_ISSUER, its tokens from the client_credentials grant. A token's scopes and groups make it a
 * reader, a reviewer or an admin on every door (REST, GraphQL, the MCP read API); one with no role is
 * a 403 naming the scope; a hostile one (unlisted issuer, wrong audience, expired, `alg: none`, HS256
 * with the public key) is the same 401 as any bad credential and counts toward the address's limit of
 * failed authentications. A key rotated at the IdP is picked up by one re-fetch. Reviewer JWTs, agent
 * tokens and API keys work beside access tokens in the same app. Whatever is refused changes nothing.
 */
import { describe, expect, test } from "@jest/globals";
import { exportSPKI, SignJWT, UnsecuredJWT } from "jose";
import { intakeBody } from "../builders.ts";
import {
  type Answer,
  appWith,
  call,
  closeAfterAll,
  db,
  expectProblem,
  gql,
  intake,
  reviewerToken,
} from "../helpers.ts";
import { crafted, type Idp, JWKS, type SigningKey, signingKey, startIdp, testHosts } from "./idp.ts";

const AUDIENCE = "https://registry.test/api";
/** A resource the IdP also issues tokens for: a real token with the wrong audience. */
const ELSEWHERE = "https://elsewhere.test";
/** `call` asks http://registry.test, and no PUBLIC_URL is set: the metadata is named from the request. */
const METADATA = "http://registry.test/.well-known/oauth-protected-resource";
const UNAUTHENTICATED = `Bearer realm="agent-registry", resource_metadata="${METADATA}"`;
const INSUFFICIENT = `Bearer realm="agent-registry", error="insufficient_scope", scope="registry:read", resource_metadata="${METADATA}"`;

/** The IdP's clients: the `sub` of their tokens, and the groups those carry. */
const CLIENTS = {
  "reader-client": { groups: [] },
  "reviewer-client": { groups: [] },
  "reader-group-client": { groups: ["registry-readers"] },
  "reviewer-group-client": { groups: ["registry-reviewers", "unrelated-group"] },
  "admin-group-client": { groups: ["registry-admins", "unrelated-group"] },
  "no-role-client": { groups: ["unrelated-group"] },
};

async function idpAt(host: string): Promise<Idp> {
  const idp = await startIdp({ issuer: `http://${host}`, audiences: [AUDIENCE, ELSEWHERE], clients: CLIENTS });
  closeAfterAll(() => idp.stop());
  return idp;
}

const idp = await idpAt("idp.test");
/** Another IdP, reachable but not configured: its tokens are from an issuer not listed. */
const unlisted = await idpAt("other-idp.test");
/** An IdP of its own for the rotation, so that no other test's fetches count. */
const rotating = await idpAt("rotating.test");

const oidc = (issuer: Idp = idp) => ({
  OIDC_ISSUER: issuer.issuer,
  OIDC_AUDIENCE: AUDIENCE,
  OUTBOUND_TEST_HOSTS: testHosts(idp, unlisted, rotating),
  OIDC_ROLES_CLAIM: "groups",
  OIDC_ROLE_MAP: "registry-readers=reader,registry-reviewers=reviewer,registry-admins=admin",
});
const closed = appWith({ ...oidc(), READ_ACCESS: "authenticated" });
const open = appWith(oidc());

const readerToken = await idp.token("reader-client", "registry:read");
const reviewToken = await idp.token("reviewer-client", "registry:review");

const READS: [string, string, string, unknown?][] = [
  ["REST", "GET", "/api/v1/providers"],
  ["GraphQL", "POST", "/graphql", { query: "{ providers { items { providerCode } } }" }],
  ["the MCP read API", "GET", "/v0.1/servers"],
];

/** Each read, with this token, on the app that needs a credential. */
async function reads(token: string): Promise<[string, number][]> {
  const answers: [string, number][] = [];
  for (const [what, method, path, body] of READS) {
    const answer = await call(method, path, { app: closed, token, ...(body ? { body } : {}) });
    answers.push([what, answer.status]);
  }
  return answers;
}

const readable = READS.map(([what]) => [what, 200]);

/** What a refused review move must leave as it was. */
async function reviewState(reviewCode: string) {
  const review = await db.review.findUniqueOrThrow({
    where: { reviewCode },
    select: { id: true, status: true, assignedTo: true, decidedAt: true, updatedAt: true, providerId: true },
  });
  const provider = await db.provider.findUniqueOrThrow({
    where: { id: review.providerId },
    select: { reviewStage: true, version: true, updatedAt: true },
  });
  return { review, provider, events: await db.reviewEvent.count({ where: { providerId: review.providerId } }) };
}

/** What a refused key request must leave as it was. */
const keyState = async () => ({
  count: await db.apiKey.count(),
  revoked: await db.apiKey.count({ where: { revokedAt: { not: null } } }),
});

function expectUnauthenticated(answer: Answer): void {
  expectProblem(answer, 401, "UNAUTHENTICATED");
  expect(answer.headers.get("www-authenticate")).toBe(UNAUTHENTICATED);
}

function expectInsufficient(answer: Answer): void {
  expectProblem(answer, 403, "FORBIDDEN");
  expect(answer.headers.get("www-authenticate")).toBe(INSUFFICIENT);
}

describe("what a token's scopes and groups let it do", () => {
  test("registry:read reads REST, GraphQL and the MCP read API; not the queue, nor an API key", async () => {
    expect(await reads(readerToken)).toEqual(readable);
    const graphql = await gql("{ providers { items { providerCode } } }", {}, { app: closed, token: readerToken });
    expect(graphql.body.errors).toBeUndefined();
    expect(Array.isArray(graphql.body.data.providers.items)).toBe(true);

    expectProblem(await call("GET", "/api/v1/reviews/queue", { app: closed, token: readerToken }), 403, "FORBIDDEN");

    const agent = await intake();
    const before = await reviewState(agent.reviewCode);
    const assign = await call("POST", `/api/v1/reviews/${agent.reviewCode}/assign`, {
      app: closed,
      token: readerToken,
    });
    expectProblem(assign, 403, "FORBIDDEN");
    expect(await reviewState(agent.reviewCode)).toEqual(before);

    const keys = await keyState();
    const made = await call("POST", "/api/v1/api-keys", { app: closed, token: readerToken, body: { name: "Mine" } });
    expectProblem(made, 403, "FORBIDDEN");
    const viaGraphql = await gql(
      'mutation { createApiKey(name: "Mine") { secret } }',
      {},
      { app: closed, token: readerToken },
    );
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(viaGraphql.body.data?.createApiKey ?? null).toBeNull();
    expect(await keyState()).toEqual(keys);
  });

  test("the registry-readers group reads as registry:read does", async () => {
    const token = await idp.token("reader-group-client");
    expect(await reads(token)).toEqual(readable);
    expectProblem(await call("GET", "/api/v1/reviews/queue", { app: closed, token }), 403, "FORBIDDEN");
  });

  test("registry:review works the queue: reads it, assigns a review to itself and decides it", async () => {
    const agent = await intake();
    const queue = await call("GET", "/api/v1/reviews/queue?limit=100", { app: closed, token: reviewToken });
    expect(queue.status).toBe(200);

    const assigned = await call("POST", `/api/v1/reviews/${agent.reviewCode}/assign`, {
      app: closed,
      token: reviewToken,
    });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ status: "IN_PROGRESS", assignedTo: "reviewer-client" });

    const decided = await call("POST", `/api/v1/reviews/${agent.reviewCode}/decision`, {
      app: closed,
      token: reviewToken,
      body: { decision: "REQUEST_CHANGES", note: "needs a better summary" },
    });
    expect(decided.status).toBe(200);
    expect(decided.body.status).toBe("CHANGES_REQUESTED");
    const timeline = await db.reviewEvent.findMany({
      where: { provider: { providerCode: agent.providerCode } },
      orderBy: { id: "asc" },
      select: { actor: true },
    });
    expect(timeline.at(-1)?.actor).toBe("reviewer:reviewer-client");

    // The same over GraphQL, and by the registry-reviewers group without any scope.
    const byGroup = await idp.token("reviewer-group-client");
    const graphql = await gql("{ reviewQueue { items { reviewCode } } }", {}, { app: closed, token: byGroup });
    expect(graphql.status).toBe(200);
    expect(graphql.body.errors).toBeUndefined();

    // A reviewer is no admin.
    const keys = await keyState();
    expectProblem(
      await call("POST", "/api/v1/api-keys", { app: closed, token: reviewToken, body: { name: "x" } }),
      403,
      "FORBIDDEN",
    );
    expect(await keyState()).toEqual(keys);
  });

  test("the registry-admins group makes an API key, recorded as the token's subject; the key then reads", async () => {
    const admin = await idp.token("admin-group-client");
    const made = await call("POST", "/api/v1/api-keys", { app: closed, token: admin, body: { name: "From an IdP" } });
    expect(made.status).toBe(201);
    expect(made.body.apiKey).toMatchObject({
      name: "From an IdP",
      createdBy: "reviewer:admin-group-client",
      active: true,
    });
    const key = made.body.secret as string;
    expect(await reads(key)).toEqual(readable);
    // And revokes it: the key is refused from then on.
    const revoked = await call("DELETE", `/api/v1/api-keys/${made.body.apiKey.keyId}`, { app: closed, token: admin });
    expect(revoked.body).toMatchObject({ active: false, revokedBy: "reviewer:admin-group-client" });
    expectUnauthenticated(await call("GET", "/api/v1/providers", { app: closed, token: key }));
  });

  test("neither a registry scope nor a mapped group: 403 insufficient_scope, authenticated or public", async () => {
    const token = await idp.token("no-role-client");
    for (const app of [closed, open]) {
      expectInsufficient(await call("GET", "/api/v1/providers", { app, token }));
      const graphql = await gql("{ providers { items { providerCode } } }", {}, { app, token });
      expect(graphql.status).toBe(403);
      expect(graphql.body.errors[0].extensions.code).toBe("FORBIDDEN");
      expect(graphql.headers.get("www-authenticate")).toBe(INSUFFICIENT);
      const body = intakeBody();
      expectInsufficient(await call("POST", "/api/v1/providers", { app, token, body }));
      expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);
    }
    // Anonymous reads of the public app are not touched by any of this.
    expect((await call("GET", "/api/v1/providers", { app: open })).status).toBe(200);
  });
});

describe("hostile tokens through the door: a 401 naming the resource metadata, and nothing done", () => {
  const hostile: [string, () => Promise<string>][] = [
    ["an issuer that is not listed", () => unlisted.token("admin-group-client", "registry:admin")],
    ["the wrong audience", () => idp.token("admin-group-client", "registry:admin", ELSEWHERE)],
    [
      "an expired token signed with the IdP's key",
      () => {
        const now = Math.floor(Date.now() / 1000);
        return crafted(idp, { scope: "registry:admin", exp: now - 1, iat: now - 301 });
      },
    ],
    [
      "alg: none",
      async () =>
        new UnsecuredJWT({ scope: "registry:admin" })
          .setIssuer(idp.issuer)
          .setAudience(AUDIENCE)
          .setSubject("attacker")
          .setExpirationTime("5m")
          .encode(),
    ],
    [
      "HS256 signed with the IdP's public key",
      async () => {
        const key = idp.keys[0] as SigningKey;
        return new SignJWT({ scope: "registry:admin" })
          .setProtectedHeader({ alg: "HS256", kid: key.kid })
          .setIssuer(idp.issuer)
          .setAudience(AUDIENCE)
          .setSubject("attacker")
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode(await exportSPKI(key.publicKey)));
      },
    ],
  ];

  test.each(hostile)("%s", async (_what, make) => {
    const token = await make();
    const unlistedServed = unlisted.served.length;
    const keys = await keyState();
    for (const app of [closed, open]) {
      expectUnauthenticated(await call("GET", "/api/v1/providers", { app, token }));
      expectUnauthenticated(await call("POST", "/api/v1/api-keys", { app, token, body: { name: "Stolen" } }));
      const graphql = await gql('mutation { createApiKey(name: "Stolen") { secret } }', {}, { app, token });
      expect(graphql.status).toBe(401);
      expect(graphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
      expect(graphql.headers.get("www-authenticate")).toBe(UNAUTHENTICATED);
    }
    expect(await keyState()).toEqual(keys);
    // The app asked nothing of an issuer it does not list.
    expect(unlisted.served.length).toBe(unlistedServed);
  });
});

test("a key rotated in at the IdP is accepted after one re-fetch of its JWKS", async () => {
  const app = appWith({ ...oidc(rotating), READ_ACCESS: "authenticated" });
  const first = rotating.keys[0] as SigningKey;
  expect(
    (await call("GET", "/api/v1/providers", { app, token: await rotating.token("reader-client", "registry:read") }))
      .status,
  ).toBe(200);
  expect(rotating.count(JWKS)).toBe(1);

  const second = await signingKey("rotating.test-2");
  rotating.rekey([second, first]);
  const token = await rotating.token("reviewer-client", "registry:review");
  const answers = await Promise.all([
    call("GET", "/api/v1/reviews/queue", { app, token }),
    call("GET", "/api/v1/providers", { app, token }),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
  expect(rotating.count(JWKS)).toBe(2);
  // Served from the cache from then on.
  expect((await call("GET", "/api/v1/providers", { app, token })).status).toBe(200);
  expect(rotating.count(JWKS)).toBe(2);
});

test("failed authentications count per address: over the limit even a good token is a 429; another address goes on", async () => {
  const app = appWith({
    ...oidc(),
    READ_ACCESS: "authenticated",
    RATE_LIMITS: "on",
    REDIS_URL: "",
    TRUST_PROXY: "",
    RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "3",
  });
  // app.fetch's server context carries the socket the address is read from (src/limits/limits.plugin.ts).
  const from = (remoteAddress: string) => ({ serverContext: { req: { socket: { remoteAddress } } } });
  const now = Math.floor(Date.now() / 1000);
  const bad = [
    await idp.token("reader-client", "registry:read", ELSEWHERE),
    await crafted(idp, { exp: now - 1, iat: now - 301 }),
    await unlisted.token("reader-client", "registry:read"),
  ];
  for (const token of bad) {
    expectUnauthenticated(await call("GET", "/api/v1/providers", { app, token, ...from("192.0.2.10") }));
  }
  const limited = await call("GET", "/api/v1/providers", { app, token: readerToken, ...from("192.0.2.10") });
  expectProblem(limited, 429, "RATE_LIMITED");
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(900);
  const graphql = await gql(
    "{ providers { items { providerCode } } }",
    {},
    {
      app,
      token: reviewToken,
      ...from("192.0.2.10"),
    },
  );
  expect(graphql.status).toBe(429);

  expect((await call("GET", "/api/v1/providers", { app, token: readerToken, ...from("192.0.2.11") })).status).toBe(200);
  // A token with no role is a 403, not a failed authentication: it does not count.
  const noRole = await idp.token("no-role-client");
  for (let i = 0; i < 4; i++) {
    expectInsufficient(await call("GET", "/api/v1/providers", { app, token: noRole, ...from("192.0.2.12") }));
  }
  expect((await call("GET", "/api/v1/providers", { app, token: readerToken, ...from("192.0.2.12") })).status).toBe(200);
});

test("reviewer JWTs, agent tokens and API keys work beside access tokens in the same app", async () => {
  const agent = await intake();
  const reviewerJwt = await reviewerToken("rv-beside");
  const adminJwt = await reviewerToken("admin-beside", ["admin"]);
  const made = await call("POST", "/api/v1/api-keys", { app: closed, token: adminJwt, body: { name: "Beside" } });
  expect(made.status).toBe(201);
  expect(made.body.apiKey.createdBy).toBe("reviewer:admin-beside");

  // All at once, each credential of its kind, on the same app.
  const [queueByJwt, queueByToken, readByAgent, readByKey, readByToken] = await Promise.all([
    call("GET", "/api/v1/reviews/queue", { app: closed, token: reviewerJwt }),
    call("GET", "/api/v1/reviews/queue", { app: closed, token: reviewToken }),
    call("GET", `/api/v1/providers/${agent.providerCode}`, { app: closed, token: agent.accessToken }),
    call("GET", "/api/v1/providers", { app: closed, token: made.body.secret }),
    call("GET", "/api/v1/providers", { app: closed, token: readerToken }),
  ]);
  expect([queueByJwt, queueByToken, readByAgent, readByKey, readByToken].map((a) => a.status)).toEqual([
    200, 200, 200, 200, 200,
  ]);

  // The reviewer JWT assigns, the agent writes its own profile.
  const assigned = await call("POST", `/api/v1/reviews/${agent.reviewCode}/assign`, {
    app: closed,
    token: reviewerJwt,
  });
  expect(assigned.body).toMatchObject({ status: "IN_PROGRESS", assignedTo: "rv-beside" });
  const patched = await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
    app: closed,
    token: agent.accessToken,
    body: { summary: "Written beside access tokens" },
  });
  expect(patched.status).toBe(200);
  expect((await db.provider.findUniqueOrThrow({ where: { providerCode: agent.providerCode } })).summary).toBe(
    "Written beside access tokens",
  );
  // A reviewer JWT that is not an admin's still makes no key.
  const keys = await keyState();
  expectProblem(
    await call("POST", "/api/v1/api-keys", { app: closed, token: reviewerJwt, body: { name: "x" } }),
    403,
    "FORBIDDEN",
  );
  expect(await keyState()).toEqual(keys);
});
