/**
 * Reviewer JWTs through the front door of /api/v1 (API.md §3), against the run's database: the
 * shared-secret app of the test configuration, and a second app whose keys come from a JWKS served
 * by a `node:http` server on 127.0.0.1. Every refusal is a 401 with `WWW-Authenticate: Bearer`, the
 * same body whichever the reason, and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportJWK, exportSPKI, generateKeyPair } from "jose";
import type { Config } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { type Answer, call, config, db, expectProblem, intake, reviewerToken, versionCount } from "../helpers.ts";
import { claimsFor, closedPort, encode, type JwksServer, jwksServer, keyPair, sign, unsigned } from "../jwt.helpers.ts";

const secret = encode(config.reviewerJwtSecret as string);
const claims = claimsFor("jwt-reviewer", config);

/** What an owner sees of its review and timeline: it must not move when a refused request comes in. */
async function stateOf(p: { providerCode: string; reviewCode: string; accessToken: string }) {
  const review = await call("GET", `/api/v1/reviews/${p.reviewCode}`, { token: p.accessToken });
  const provider = await call("GET", `/api/v1/providers/${p.providerCode}`, { token: p.accessToken });
  expect(review.status).toBe(200);
  expect(provider.status).toBe(200);
  return {
    status: review.body.status,
    assignedTo: review.body.assignedTo,
    timeline: provider.body.reviewTimeline.map((e: { kind: string; actor: string }) => `${e.kind} ${e.actor}`),
    events: await db.reviewEvent.count({ where: { provider: { providerCode: p.providerCode } } }),
  };
}

/** Checks a refusal: 401, `WWW-Authenticate: Bearer`, and exactly the body of the reference refusal. */
function expectRefusal(answer: Answer, reference: Answer): void {
  expectProblem(answer, 401, "UNAUTHENTICATED");
  expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  expect(answer.body).toEqual(reference.body);
  expect(answer.text).toBe(reference.text);
}

// ── The shared-secret app (the test configuration) ────────────────────────────────────────────

describe("reviewer JWTs on the shared-secret (HS256) app", () => {
  let rsaPrivate: CryptoKey;
  beforeAll(async () => {
    rsaPrivate = (await generateKeyPair("RS256")).privateKey;
  });

  test.each<[string, () => Promise<string> | string]>([
    ["alg none (unsigned, made by hand)", () => unsigned(claims())],
    ["for another audience", () => sign(claims({ aud: "someone-else" }), secret)],
    ["from another issuer", () => sign(claims({ iss: "https://evil.example.com" }), secret)],
    ["expired", () => sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 }), secret)],
    ["without exp", () => sign(claims({ exp: undefined }), secret)],
    ["without roles", () => sign(claims({ roles: undefined }), secret)],
    ["with roles lacking reviewer and admin", () => sign(claims({ roles: ["viewer", "agent"] }), secret)],
    ["without sub", () => sign(claims({ sub: undefined }), secret)],
    ["with a sub that is not a string", () => sign(claims({ sub: 123 }), secret)],
    ["signed with another secret", () => sign(claims(), encode("another-secret-that-is-long-enough-0123456789"))],
    ["signed with RS256 (algorithm pinned to HS256)", () => sign(claims(), rsaPrivate, { alg: "RS256", kid: "k1" })],
    ["that is not a JWT", () => "not.a.jwt"],
  ])("a token %s: 401, same body, nothing changed", async (_what, make) => {
    const token = await make();
    const p = await intake();
    const before = await stateOf(p);

    const referenceAssign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`);
    expectProblem(referenceAssign, 401, "UNAUTHENTICATED");
    const assign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token });
    expectRefusal(assign, referenceAssign);

    const decision = await call("POST", `/api/v1/reviews/${p.reviewCode}/decision`, {
      token,
      body: { decision: "APPROVE" },
    });
    expectRefusal(decision, referenceAssign);

    const referenceQueue = await call("GET", "/api/v1/reviews/queue");
    const queue = await call("GET", "/api/v1/reviews/queue", { token });
    expectRefusal(queue, referenceQueue);

    const after = await stateOf(p);
    expect(after).toEqual(before);
    expect(after.status).toBe("OPEN");
    expect(after.assignedTo).toBeNull();
  });

  test("the same sequence with a good token does change things (the check above can fail)", async () => {
    const p = await intake();
    const before = await stateOf(p);
    const token = await sign(claims({ sub: "good-reviewer" }), secret);
    const assign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token });
    expect(assign.status).toBe(200);
    const after = await stateOf(p);
    expect(after.status).toBe("IN_PROGRESS");
    expect(after.assignedTo).toBe("good-reviewer");
    expect(after.events).toBeGreaterThan(before.events);
    expect(after.timeline.slice(before.timeline.length).join("\n")).toContain("reviewer:good-reviewer");
    expect((await call("GET", "/api/v1/reviews/queue?limit=1", { token })).status).toBe(200);
  });

  test("every reason gives byte-for-byte the same refusal", async () => {
    const tokens = [
      unsigned(claims()),
      await sign(claims({ aud: "x" }), secret),
      await sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 }), secret),
      await sign(claims({ roles: ["viewer"] }), secret),
      await sign(claims({ sub: undefined }), secret),
      await sign(claims(), rsaPrivate, { alg: "RS256" }),
      "garbage",
    ];
    const answers = [await call("GET", "/api/v1/reviews/queue")];
    for (const token of tokens) answers.push(await call("GET", "/api/v1/reviews/queue", { token }));
    expect(new Set(answers.map((a) => `${a.status} ${a.headers.get("www-authenticate")} ${a.text}`)).size).toBe(1);
  });
});

describe("agent tokens and reviewer tokens never pass for each other", () => {
  test("an agent token on the queue is a 403 (a valid agent, not a reviewer)", async () => {
    const p = await intake();
    expectProblem(await call("GET", "/api/v1/reviews/queue", { token: p.accessToken }), 403, "FORBIDDEN");
  });

  test("an agent token on reviewer mutations of its own review and provider: 403, nothing changed", async () => {
    const p = await intake();
    const before = await stateOf(p);
    const base = `/api/v1/reviews/${p.reviewCode}`;
    const token = p.accessToken;
    expectProblem(await call("POST", `${base}/assign`, { token, body: {} }), 403, "FORBIDDEN");
    expectProblem(await call("POST", `${base}/decision`, { token, body: { decision: "APPROVE" } }), 403, "FORBIDDEN");
    expectProblem(await call("PATCH", base, { token, body: { priority: "URGENT" } }), 403, "FORBIDDEN");
    expectProblem(
      await call("POST", `/api/v1/providers/${p.providerCode}/suspend`, { token, body: { note: "no" } }),
      403,
      "FORBIDDEN",
    );
    expect(await stateOf(p)).toEqual(before);
    const review = await db.review.findUniqueOrThrow({ where: { reviewCode: p.reviewCode } });
    expect(review.priority).toBe("NORMAL");
  });

  test("a reviewer JWT on an agent-only write (PATCH a provider) is a 403, not a 200", async () => {
    const p = await intake();
    const versions = await versionCount(p.providerCode);
    const answer = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: await reviewerToken("patcher", ["reviewer", "admin"]),
      body: { name: "Renamed by a reviewer" },
    });
    expectProblem(answer, 403, "FORBIDDEN");
    expect(await versionCount(p.providerCode)).toBe(versions);
    const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: p.providerCode } });
    expect(provider.name).toBe("Route Planner");
  });

  test("a JWT that starts with agr_ is taken as an agent token: its checksum fails, 401", async () => {
    const p = await intake();
    const before = await stateOf(p);
    const reference = await call("GET", "/api/v1/reviews/queue");
    const token = `agr_${await reviewerToken()}`;
    expectRefusal(await call("GET", "/api/v1/reviews/queue", { token }), reference);
    const referenceAssign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`);
    expectRefusal(await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token }), referenceAssign);
    expect(await stateOf(p)).toEqual(before);
  });
});

// ── The JWKS app ───────────────────────────────────────────────────────────────────────────────

/** The test configuration, keyed by a JWKS URL instead of the shared secret. */
function jwksApp(url: string, reviewerJwks: Config["reviewerJwks"] = {}) {
  return createApp({ ...config, reviewerJwksUrl: url, reviewerJwtSecret: undefined, reviewerJwks }, db);
}

describe("reviewer JWTs on an app keyed by a JWKS URL", () => {
  let rsa: Awaited<ReturnType<typeof keyPair>>;
  let ec: Awaited<ReturnType<typeof keyPair>>;
  let jwks: JwksServer;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    rsa = await keyPair("RS256", "rsa-2025");
    ec = await keyPair("ES256", "ec-2025");
    jwks = await jwksServer([rsa.jwk, ec.jwk]);
    // No cooldown: an unknown kid may re-fetch at once (jose's default waits 30 s between fetches).
    app = jwksApp(jwks.url, { cooldownMs: 0 });
  });
  afterAll(() => jwks.close());

  test("a valid RS256 token with a known kid: 200 on the queue, and it can assign", async () => {
    const token = await sign(claims({ sub: "rsa-reviewer" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
    const queue = await call("GET", "/api/v1/reviews/queue?limit=1", { token, app: app });
    expect(queue.status).toBe(200);
    expect(Array.isArray(queue.body.items)).toBe(true);

    const p = await intake();
    const assign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token, app: app });
    expect(assign.status).toBe(200);
    expect(assign.body).toMatchObject({ status: "IN_PROGRESS", assignedTo: "rsa-reviewer" });
  });

  test("a valid ES256 token with a known kid: 200 on the queue", async () => {
    const token = await sign(claims({ roles: ["admin"] }), ec.privateKey, { alg: "ES256", kid: ec.kid });
    const queue = await call("GET", "/api/v1/reviews/queue?limit=1", { token, app: app });
    expect(queue.status).toBe(200);
  });

  test.each<[string, () => Promise<string> | string]>([
    [
      "with an unknown kid",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: "nobody" }),
    ],
    [
      "naming a known kid but signed by another key",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
    [
      "HS256 keyed with the RSA public key PEM (key confusion)",
      async () => sign(claims(), encode(await exportSPKI(rsa.publicKey)), { kid: rsa.kid }),
    ],
    [
      "HS256 keyed with the RSA public key PEM, without kid",
      async () => sign(claims(), encode(await exportSPKI(rsa.publicKey))),
    ],
    [
      "HS256 keyed with the public JWK's JSON text (key confusion)",
      () => sign(claims(), encode(JSON.stringify(rsa.jwk)), { kid: rsa.kid }),
    ],
    [
      "HS256 keyed with the exported JWK JSON text, without kid",
      async () => sign(claims(), encode(JSON.stringify(await exportJWK(rsa.publicKey)))),
    ],
    ["HS256 with the shared secret of the test configuration", () => sign(claims(), secret)],
    ["alg none", () => unsigned(claims(), { kid: rsa.kid })],
    ["RS256 for another audience", () => sign(claims({ aud: "x" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid })],
    [
      "RS256 expired",
      () => sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 }), rsa.privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
    [
      "RS256 without a reviewer role",
      () => sign(claims({ roles: ["viewer"] }), rsa.privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
  ])("a token %s: 401, same body, nothing changed", async (_what, make) => {
    const token = await make();
    const p = await intake();
    const before = await stateOf(p);
    const referenceQueue = await call("GET", "/api/v1/reviews/queue", { app: app });
    expectRefusal(await call("GET", "/api/v1/reviews/queue", { token, app: app }), referenceQueue);
    const referenceAssign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { app: app });
    expectRefusal(await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token, app: app }), referenceAssign);
    // The same refusal as the shared-secret app gives.
    expect(referenceQueue.text).toBe((await call("GET", "/api/v1/reviews/queue")).text);
    const after = await stateOf(p);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ status: "OPEN", assignedTo: null });
  });

  test("an agent token is still a 403 on the queue of the JWKS app", async () => {
    const p = await intake();
    expectProblem(await call("GET", "/api/v1/reviews/queue", { token: p.accessToken, app: app }), 403, "FORBIDDEN");
  });

  test("kid rotation: the new key is picked up, and the dropped key is refused once the cache is refreshed", async () => {
    const old = await keyPair("RS256", "2024-q4");
    const next = await keyPair("ES256", "2025-q1");
    const server = await jwksServer([old.jwk]);
    try {
      const rotating = jwksApp(server.url, { cooldownMs: 0 });
      const oldToken = await sign(claims({ sub: "old-key" }), old.privateKey, { alg: "RS256", kid: old.kid });
      const newToken = await sign(claims({ sub: "new-key" }), next.privateKey, { alg: "ES256", kid: next.kid });
      const queue = (token: string) => call("GET", "/api/v1/reviews/queue?limit=1", { token, app: rotating });

      expect((await queue(oldToken)).status).toBe(200);
      expect(server.fetches()).toBe(1);

      server.serve([next.jwk]); // the provider rotates: a new kid in, the old one out
      // The unknown kid makes the app re-fetch the JWKS: the new key is accepted.
      expect((await queue(newToken)).status).toBe(200);
      expect(server.fetches()).toBe(2);
      // The refreshed set no longer holds the old key.
      const refused = await queue(oldToken);
      expectRefusal(refused, await call("GET", "/api/v1/reviews/queue?limit=1", { app: rotating }));
      expect((await queue(newToken)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test("an unreachable JWKS (closed port) answers 401, not 500", async () => {
    const unreachable = jwksApp(`http://127.0.0.1:${await closedPort()}/jwks.json`, { timeoutMs: 1_000 });
    const token = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
    const p = await intake();
    const before = await stateOf(p);
    const queue = await call("GET", "/api/v1/reviews/queue", { token, app: unreachable });
    expectRefusal(queue, await call("GET", "/api/v1/reviews/queue"));
    const assign = await call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, { token, app: unreachable });
    expectProblem(assign, 401, "UNAUTHENTICATED");
    expect(await stateOf(p)).toEqual(before);
  });

  test("a JWKS that never answers: 401 once the fetch times out", async () => {
    const hanging = await jwksServer([], "hang"); // accepts, never answers
    try {
      const slow = jwksApp(hanging.url, { timeoutMs: 300 });
      const token = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
      const started = Date.now();
      const queue = await call("GET", "/api/v1/reviews/queue", { token, app: slow });
      expectProblem(queue, 401, "UNAUTHENTICATED");
      expect(queue.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await hanging.close();
    }
  });
});
