/**
 * Reviewer JWTs through /graphql (API.md §3): every refused token is HTTP 401 with
 * `WWW-Authenticate: Bearer` and `extensions.code` UNAUTHENTICATED, the same body whichever the
 * reason, and nothing changed. Shared-secret app and an app keyed by a JWKS on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportSPKI, generateKeyPair } from "jose";
import { createApp } from "../../src/yoga.ts";
import { type Answer, config, db, gql, gqlCodes, intake, reviewerToken, versionCount } from "../helpers.ts";
import {
  claimsFor,
  encode,
  type JwksServer,
  jwksServer,
  type KeyPair,
  keyPair,
  sign,
  unsigned,
} from "../jwt.helpers.ts";

const secret = encode(config.reviewerJwtSecret as string);
const claims = claimsFor("gql-reviewer", config);

const QUEUE = "query { reviewQueue(limit: 1) { items { reviewCode } } }";
const ASSIGN = "mutation A($code: String!) { assignReview(reviewCode: $code) { status assignedTo } }";
const DECIDE = "mutation D($code: String!) { decideReview(reviewCode: $code, decision: APPROVE) { status } }";
const PATCH = `mutation P($code: String!) { updateProvider(providerCode: $code, name: "Renamed") { name } }`;

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
    ["for another audience", () => sign(claims({ aud: "someone-else" }), secret)],
    ["from another issuer", () => sign(claims({ iss: "https://evil.example.com" }), secret)],
    ["expired", () => sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 }), secret)],
    ["without exp", () => sign(claims({ exp: undefined }), secret)],
    ["without roles", () => sign(claims({ roles: undefined }), secret)],
    ["with roles lacking reviewer and admin", () => sign(claims({ roles: ["viewer"] }), secret)],
    ["without sub", () => sign(claims({ sub: undefined }), secret)],
    ["with a sub that is not a string", () => sign(claims({ sub: 42 }), secret)],
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
    const answer = await gql(
      ASSIGN,
      { code: p.reviewCode },
      { token: await sign(claims({ sub: "gql-good" }), secret) },
    );
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
  let jwks: JwksServer;
  let app: ReturnType<typeof createApp>;
  let rsa: KeyPair;
  let ec: KeyPair;

  beforeAll(async () => {
    rsa = await keyPair("RS256", "gql-rsa");
    ec = await keyPair("ES256", "gql-ec");
    jwks = await jwksServer([rsa.jwk, ec.jwk]);
    app = createApp(
      { ...config, reviewerJwksUrl: jwks.url, reviewerJwtSecret: undefined, reviewerJwks: { cooldownMs: 0 } },
      db,
    );
  });
  afterAll(() => jwks.close());

  test("RS256 and ES256 tokens with known kids read the queue", async () => {
    const viaRsa = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: "gql-rsa" });
    const viaEc = await sign(claims(), ec.privateKey, { alg: "ES256", kid: "gql-ec" });
    for (const token of [viaRsa, viaEc]) {
      const answer = await gql(QUEUE, {}, { token, app });
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
    ["HS256 keyed with the public JWK's JSON text", () => sign(claims(), encode(JSON.stringify(rsa.jwk)))],
    ["HS256 with the shared secret", () => sign(claims(), secret)],
    ["alg none", () => unsigned(claims(), { kid: "gql-rsa" })],
  ])("a token %s: 401 UNAUTHENTICATED, nothing changed", async (_what, make) => {
    const token = await make();
    const p = await intake();
    const before = await stateOf(p.reviewCode);
    const queue = await gql(QUEUE, {}, { token, app });
    expectUnauthenticated(queue);
    const assign = await gql(ASSIGN, { code: p.reviewCode }, { token, app });
    expectUnauthenticated(assign);
    expect(assign.text).toBe(queue.text);
    expect(await stateOf(p.reviewCode)).toEqual(before);
  });
});
