/**
 * Reviewer JWTs through /graphql (API.md §3): every refused token is HTTP 401 with
 * `WWW-Authenticate: Bearer` and `extensions.code` UNAUTHENTICATED, the same body whichever the
 * reason, and nothing changed. Shared-secret app and an app keyed by a JWKS on 127.0.0.1.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import { createApp } from "../../src/yoga.ts";
import { type Answer, config, db, gql, gqlCodes, intake, reviewerToken, versionCount } from "../helpers.ts";

const encode = (s: string) => new TextEncoder().encode(s);
const secret = encode(config.reviewerJwtSecret as string);

const QUEUE = "query { reviewQueue(limit: 1) { items { reviewCode } } }";
const ASSIGN = "mutation A($code: String!) { assignReview(reviewCode: $code) { status assignedTo } }";
const DECIDE = "mutation D($code: String!) { decideReview(reviewCode: $code, decision: APPROVE) { status } }";
const PATCH = `mutation P($code: String!) { updateProvider(providerCode: $code, name: "Renamed") { name } }`;

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  const all: Record<string, unknown> = {
    sub: "gql-reviewer",
    iss: config.reviewerJwtIssuer,
    aud: config.reviewerJwtAudience,
    iat: now - 10,
    exp: now + 600,
    roles: ["reviewer"],
    ...overrides,
  };
  for (const key of Object.keys(all)) if (all[key] === undefined) delete all[key];
  return all;
}

function sign(
  payload: Record<string, unknown>,
  key: Parameters<SignJWT["sign"]>[0] = secret,
  header: { alg?: string; kid?: string } = {},
): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT", ...header }).sign(key);
}

function unsigned(payload: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT", ...header })}.${part(payload)}.`;
}

/** A GraphQL request to another app (the JWKS one). */
async function gqlApp(
  target: ReturnType<typeof createApp>,
  query: string,
  variables: Record<string, unknown>,
  token?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await target.fetch("http://registry.test/graphql", {
    method: "POST",
    headers,
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
}

function expectUnauthenticated(answer: Answer): void {
  expect(answer.status).toBe(401);
  expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
  expect(answer.body.data ?? null).toBeNull();
}

/** The review and its provider's timeline, read straight from the database. */
async function stateOf(reviewCode: string) {
  const review = await db.review.findUniqueOrThrow({
    where: { reviewCode },
    select: { status: true, assignedTo: true, providerId: true },
  });
  return { ...review, events: await db.reviewEvent.count({ where: { providerId: review.providerId } }) };
}

describe("reviewer JWTs through /graphql on the shared-secret app", () => {
  let rsaPrivate: CryptoKey;
  let reference: Answer;
  beforeAll(async () => {
    rsaPrivate = (await generateKeyPair("RS256")).privateKey;
    reference = await gql(QUEUE, {}, { token: "not-a-jwt" });
    expectUnauthenticated(reference);
  });

  test.each<[string, () => Promise<string> | string]>([
    ["alg none (made by hand)", () => unsigned(claims())],
    ["for another audience", () => sign(claims({ aud: "someone-else" }))],
    ["from another issuer", () => sign(claims({ iss: "https://evil.example.com" }))],
    ["expired", () => sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 }))],
    ["without exp", () => sign(claims({ exp: undefined }))],
    ["without roles", () => sign(claims({ roles: undefined }))],
    ["with roles lacking reviewer and admin", () => sign(claims({ roles: ["viewer"] }))],
    ["without sub", () => sign(claims({ sub: undefined }))],
    ["with a sub that is not a string", () => sign(claims({ sub: 42 }))],
    ["signed with another secret", () => sign(claims(), encode("another-secret-that-is-long-enough-0123456789"))],
    ["signed with RS256 (algorithm pinned)", () => sign(claims(), rsaPrivate, { alg: "RS256" })],
    ["starting with agr_ (an agent token with a bad checksum)", async () => `agr_${await reviewerToken()}`],
  ])("a token %s: 401 UNAUTHENTICATED, same body, nothing changed", async (_what, make) => {
    const token = await make();
    const p = await intake();
    const before = await stateOf(p.reviewCode);

    const queue = await gql(QUEUE, {}, { token });
    expectUnauthenticated(queue);
    expect(queue.text).toBe(reference.text);

    const assign = await gql(ASSIGN, { code: p.reviewCode }, { token });
    expectUnauthenticated(assign);
    expect(assign.text).toBe(reference.text);

    const decide = await gql(DECIDE, { code: p.reviewCode }, { token });
    expectUnauthenticated(decide);
    expect(decide.text).toBe(reference.text);

    expect(await stateOf(p.reviewCode)).toEqual(before);
    expect(before).toMatchObject({ status: "OPEN", assignedTo: null });
  });

  test("a good token assigns (the check above can fail)", async () => {
    const p = await intake();
    const before = await stateOf(p.reviewCode);
    const answer = await gql(ASSIGN, { code: p.reviewCode }, { token: await sign(claims({ sub: "gql-good" })) });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.assignReview).toEqual({ status: "IN_PROGRESS", assignedTo: "gql-good" });
    expect((await stateOf(p.reviewCode)).events).toBeGreaterThan(before.events);
  });

  test("an agent token is FORBIDDEN (403) on the queue and on assignReview", async () => {
    const p = await intake();
    const before = await stateOf(p.reviewCode);
    const queue = await gql(QUEUE, {}, { token: p.accessToken });
    expect(queue.status).toBe(403);
    expect(gqlCodes(queue)).toEqual(["FORBIDDEN"]);
    const assign = await gql(ASSIGN, { code: p.reviewCode }, { token: p.accessToken });
    expect(assign.status).toBe(403);
    expect(gqlCodes(assign)).toEqual(["FORBIDDEN"]);
    expect(await stateOf(p.reviewCode)).toEqual(before);
  });

  test("a reviewer JWT is FORBIDDEN (403) on updateProvider, an agent-only write", async () => {
    const p = await intake();
    const versions = await versionCount(p.providerCode);
    const answer = await gql(PATCH, { code: p.providerCode }, { token: await reviewerToken("gql-patcher") });
    expect(answer.status).toBe(403);
    expect(gqlCodes(answer)).toEqual(["FORBIDDEN"]);
    expect(await versionCount(p.providerCode)).toBe(versions);
  });
});

// ── The JWKS app ───────────────────────────────────────────────────────────────────────────────

describe("reviewer JWTs through /graphql on an app keyed by a JWKS URL", () => {
  let server: Server;
  let app: ReturnType<typeof createApp>;
  let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
  let ec: Awaited<ReturnType<typeof generateKeyPair>>;
  let rsaJwk: JWK;

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256", { extractable: true });
    ec = await generateKeyPair("ES256", { extractable: true });
    rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: "gql-rsa", alg: "RS256", use: "sig" };
    const keys = [rsaJwk, { ...(await exportJWK(ec.publicKey)), kid: "gql-ec", alg: "ES256", use: "sig" }];
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    app = createApp(
      {
        ...config,
        reviewerJwksUrl: `http://127.0.0.1:${port}/jwks.json`,
        reviewerJwtSecret: undefined,
        reviewerJwks: { cooldownMs: 0 },
      },
      db,
    );
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  test("RS256 and ES256 tokens with known kids read the queue", async () => {
    const viaRsa = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: "gql-rsa" });
    const viaEc = await sign(claims(), ec.privateKey, { alg: "ES256", kid: "gql-ec" });
    for (const token of [viaRsa, viaEc]) {
      const answer = await gqlApp(app, QUEUE, {}, token);
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      expect(Array.isArray(answer.body.data.reviewQueue.items)).toBe(true);
    }
  });

  test.each<[string, () => Promise<string> | string]>([
    [
      "with an unknown kid",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: "nobody" }),
    ],
    [
      "HS256 keyed with the RSA public key PEM",
      async () => sign(claims(), encode(await exportSPKI(rsa.publicKey)), { kid: "gql-rsa" }),
    ],
    ["HS256 keyed with the public JWK's JSON text", () => sign(claims(), encode(JSON.stringify(rsaJwk)))],
    ["HS256 with the shared secret", () => sign(claims())],
    ["alg none", () => unsigned(claims(), { kid: "gql-rsa" })],
  ])("a token %s: 401 UNAUTHENTICATED, nothing changed", async (_what, make) => {
    const token = await make();
    const p = await intake();
    const before = await stateOf(p.reviewCode);
    const queue = await gqlApp(app, QUEUE, {}, token);
    expectUnauthenticated(queue);
    const assign = await gqlApp(app, ASSIGN, { code: p.reviewCode }, token);
    expectUnauthenticated(assign);
    expect(assign.text).toBe(queue.text);
    expect(await stateOf(p.reviewCode)).toEqual(before);
  });
});
