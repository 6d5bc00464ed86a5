/**
 * Reviewer JWTs (API.md §3) through both doors, on the shared-secret app of the test configuration
 * and on apps keyed by a JWKS served on 127.0.0.1: every refused token is a 401 with
 * `WWW-Authenticate: Bearer`, the same body whichever the reason, and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportJWK, exportSPKI, generateKeyPair } from "jose";
import type { Config } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { type Door, doors, expectCode, expectOk, type Outcome } from "../doors.ts";
import { type App, config, db, intake, reviewerToken, versionCount } from "../helpers.ts";
import {
  claimsFor,
  closedPort,
  encode,
  type JwksServer,
  jwksServer,
  type KeyPair,
  keyPair,
  sign,
  unsigned,
} from "../jwt.helpers.ts";

const secret = encode(config.reviewerJwtSecret as string);
const claims = claimsFor("jwt-reviewer", config);

/** A refused credential: 401, `WWW-Authenticate: Bearer`, and (when given) exactly the reference refusal's body. */
function expectRefusal(outcome: Outcome, reference?: Outcome): void {
  expectCode(outcome, "UNAUTHENTICATED");
  expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  if (reference) expect(outcome.answer.text).toBe(reference.answer.text);
}

/** The test configuration, keyed by a JWKS URL instead of the shared secret. */
function jwksApp(url: string, reviewerJwks: Config["reviewerJwks"] = {}) {
  return createApp({ ...config, reviewerJwksUrl: url, reviewerJwtSecret: undefined, reviewerJwks }, db);
}

type Provider = Awaited<ReturnType<typeof intake>>;

describe.each(doors)("$name", (door: Door) => {
  const queue = (token?: string, app?: App) =>
    door.run("Query.reviewQueue", { limit: 1 }, { ...(token ? { token } : {}), ...(app ? { app } : {}) });
  const assign = (reviewCode: string, token?: string, app?: App) =>
    door.run("Mutation.assignReview", { reviewCode }, { ...(token ? { token } : {}), ...(app ? { app } : {}) });
  const decide = (reviewCode: string, token?: string) =>
    door.run(
      "Mutation.decideReview",
      { reviewCode, decision: "APPROVE", note: "approved in tests" },
      token ? { token } : {},
    );

  /** What the owner sees of its review and timeline: it must not move when a refused request comes in. */
  async function stateOf(p: Provider) {
    const review = expectOk(await door.run("Query.review", { reviewCode: p.reviewCode }, { token: p.accessToken }));
    const provider = expectOk(
      await door.run("Query.provider", { providerCode: p.providerCode }, { token: p.accessToken }),
    );
    return {
      status: review.status as string,
      assignedTo: review.assignedTo as string | null,
      timeline: provider.reviewTimeline.map((e: { kind: string; actor: string }) => `${e.kind} ${e.actor}`),
      events: await db.reviewEvent.count({ where: { provider: { providerCode: p.providerCode } } }),
    };
  }

  // ── The shared-secret app (the test configuration) ──────────────────────────────────────────

  describe("on the shared-secret (HS256) app", () => {
    let rsaPrivate: CryptoKey;
    /** The refusal of a token that is not a JWT at all. */
    let reference: Outcome;
    beforeAll(async () => {
      rsaPrivate = (await generateKeyPair("RS256")).privateKey;
      reference = await queue("garbage");
      expectRefusal(reference);
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
      // A JWT behind `agr_` is taken as an agent token: its checksum fails.
      ["starting with agr_ (an agent token with a bad checksum)", async () => `agr_${await reviewerToken()}`],
    ])("a token %s: 401, the same body on queue, assign and decide, nothing changed", async (_what, make) => {
      const token = await make();
      const p = await intake();
      const before = await stateOf(p);

      expectRefusal(await assign(p.reviewCode, token), reference);
      expectRefusal(await decide(p.reviewCode, token), reference);
      expectRefusal(await queue(token), reference);

      const after = await stateOf(p);
      expect(after).toEqual(before);
      expect(after.status).toBe("OPEN");
      expect(after.assignedTo).toBeNull();
    });

    test("the same sequence with a good token does change things (the check above can fail)", async () => {
      const p = await intake();
      const before = await stateOf(p);
      const token = await sign(claims({ sub: "good-reviewer" }), secret);
      const assigned = expectOk(await assign(p.reviewCode, token));
      expect(assigned).toMatchObject({ status: "IN_PROGRESS", assignedTo: "good-reviewer" });
      const after = await stateOf(p);
      expect(after.status).toBe("IN_PROGRESS");
      expect(after.assignedTo).toBe("good-reviewer");
      expect(after.events).toBeGreaterThan(before.events);
      expect(after.timeline.slice(before.timeline.length).join("\n")).toContain("reviewer:good-reviewer");
      expect(Array.isArray(expectOk(await queue(token)).items)).toBe(true);
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
      const answers: Outcome[] = [];
      for (const token of tokens) answers.push(await queue(token));
      for (const answer of answers) expectRefusal(answer);
      expect(
        new Set(answers.map((a) => `${a.answer.status} ${a.answer.headers.get("www-authenticate")} ${a.answer.text}`))
          .size,
      ).toBe(1);
    });
  });

  describe("agent tokens and reviewer tokens never pass for each other", () => {
    test("an agent token is FORBIDDEN (403) on the queue (a valid agent, not a reviewer)", async () => {
      const p = await intake();
      expectCode(await queue(p.accessToken), "FORBIDDEN");
    });

    test("an agent token on reviewer mutations of its own review and provider: FORBIDDEN, nothing changed", async () => {
      const p = await intake();
      const before = await stateOf(p);
      const token = p.accessToken;
      expectCode(await assign(p.reviewCode, token), "FORBIDDEN");
      expectCode(await decide(p.reviewCode, token), "FORBIDDEN");
      expectCode(
        await door.run("Mutation.updateReview", { reviewCode: p.reviewCode, priority: "URGENT" }, { token }),
        "FORBIDDEN",
      );
      expectCode(
        await door.run("Mutation.suspendProvider", { providerCode: p.providerCode, note: "no" }, { token }),
        "FORBIDDEN",
      );
      expect(await stateOf(p)).toEqual(before);
      const review = await db.review.findUniqueOrThrow({ where: { reviewCode: p.reviewCode } });
      expect(review.priority).toBe("NORMAL");
    });

    test("a reviewer JWT on an agent-only write (updateProvider) is FORBIDDEN, not a success", async () => {
      const p = await intake();
      const versions = await versionCount(p.providerCode);
      const answer = await door.run(
        "Mutation.updateProvider",
        { providerCode: p.providerCode, name: "Renamed by a reviewer" },
        { token: await reviewerToken("patcher", ["reviewer", "admin"]) },
      );
      expectCode(answer, "FORBIDDEN");
      expect(await versionCount(p.providerCode)).toBe(versions);
      const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: p.providerCode } });
      expect(provider.name).toBe("Route Planner");
    });
  });

  // ── Apps keyed by a JWKS URL ────────────────────────────────────────────────────────────────

  describe("on an app keyed by a JWKS URL", () => {
    let rsa: KeyPair;
    let ec: KeyPair;
    let jwks: JwksServer;
    let app: App;

    beforeAll(async () => {
      rsa = await keyPair("RS256", "rsa-2025");
      ec = await keyPair("ES256", "ec-2025");
      jwks = await jwksServer([rsa.jwk, ec.jwk]);
      // No cooldown: an unknown kid may re-fetch at once (jose's default waits 30 s between fetches).
      app = jwksApp(jwks.url, { cooldownMs: 0 });
    });
    afterAll(() => jwks.close());

    test("a valid RS256 token with a known kid reads the queue, and it can assign", async () => {
      const token = await sign(claims({ sub: "rsa-reviewer" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
      expect(Array.isArray(expectOk(await queue(token, app)).items)).toBe(true);

      const p = await intake();
      expect(expectOk(await assign(p.reviewCode, token, app))).toMatchObject({
        status: "IN_PROGRESS",
        assignedTo: "rsa-reviewer",
      });
    });

    test("a valid ES256 token with a known kid (admin role) reads the queue", async () => {
      const token = await sign(claims({ roles: ["admin"] }), ec.privateKey, { alg: "ES256", kid: ec.kid });
      expect(Array.isArray(expectOk(await queue(token, app)).items)).toBe(true);
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
        "HS256 keyed with the public JWK's JSON text, without kid",
        () => sign(claims(), encode(JSON.stringify(rsa.jwk))),
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
    ])("a token %s: 401, the same body as the shared-secret app's, nothing changed", async (_what, make) => {
      const token = await make();
      const p = await intake();
      const before = await stateOf(p);
      const refused = await queue(token, app);
      // The same refusal as the shared-secret app gives.
      expectRefusal(refused, await queue("garbage"));
      expectRefusal(await assign(p.reviewCode, token, app), refused);
      expectRefusal(await queue(undefined, app));
      const after = await stateOf(p);
      expect(after).toEqual(before);
      expect(after).toMatchObject({ status: "OPEN", assignedTo: null });
    });

    test("an agent token is still FORBIDDEN on the queue of the JWKS app", async () => {
      const p = await intake();
      expectCode(await queue(p.accessToken, app), "FORBIDDEN");
    });

    test("kid rotation: the new key is picked up, and the dropped key is refused once the cache is refreshed", async () => {
      const old = await keyPair("RS256", "2024-q4");
      const next = await keyPair("ES256", "2025-q1");
      const server = await jwksServer([old.jwk]);
      try {
        const rotating = jwksApp(server.url, { cooldownMs: 0 });
        const oldToken = await sign(claims({ sub: "old-key" }), old.privateKey, { alg: "RS256", kid: old.kid });
        const newToken = await sign(claims({ sub: "new-key" }), next.privateKey, { alg: "ES256", kid: next.kid });

        expectOk(await queue(oldToken, rotating));
        expect(server.fetches()).toBe(1);

        server.serve([next.jwk]); // the provider rotates: a new kid in, the old one out
        // The unknown kid makes the app re-fetch the JWKS: the new key is accepted.
        expectOk(await queue(newToken, rotating));
        expect(server.fetches()).toBe(2);
        // The refreshed set no longer holds the old key.
        expectRefusal(await queue(oldToken, rotating), await queue("garbage", rotating));
        expectOk(await queue(newToken, rotating));
      } finally {
        await server.close();
      }
    });

    test("an unreachable JWKS (closed port) answers 401, not 500", async () => {
      const unreachable = jwksApp(`http://127.0.0.1:${await closedPort()}/jwks.json`, { timeoutMs: 1_000 });
      const token = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
      const p = await intake();
      const before = await stateOf(p);
      expectRefusal(await queue(token, unreachable), await queue("garbage"));
      expectRefusal(await assign(p.reviewCode, token, unreachable));
      expect(await stateOf(p)).toEqual(before);
    });

    test("a JWKS that never answers: 401 once the fetch times out", async () => {
      const hanging = await jwksServer([], "hang"); // accepts, never answers
      try {
        const slow = jwksApp(hanging.url, { timeoutMs: 300 });
        const token = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
        // The server never answers: a refusal at all is the fetch's timeout.
        expectRefusal(await queue(token, slow));
      } finally {
        await hanging.close();
      }
    });
  });
});
