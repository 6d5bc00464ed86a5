/**
 * `reviewerVerifier` on its own (API.md §3): null for every token it must refuse, the claims for a
 * good one. Shared secret (HS256 only) and JWKS URL (asymmetric only, keys by `kid`, rotation,
 * fetch timeout) — the JWKS is served by a real `node:http` server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportSPKI, generateKeyPair } from "jose";
import { JWKS_DEFAULTS, reviewerVerifier } from "../../src/auth/reviewer.jwt.ts";
import { type Config, loadConfig } from "../../src/config.ts";
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

const SECRET = "unit-test-reviewer-secret-0123456789-abcdefghij";
const hsConfig: Config = loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: SECRET });
const AUD = hsConfig.reviewerJwtAudience;
const claims = claimsFor("unit-reviewer", hsConfig);

describe("reviewerVerifier with the shared secret (HS256)", () => {
  const verify = reviewerVerifier(hsConfig);
  const good = (overrides: Record<string, unknown> = {}) => sign(claims(overrides), encode(SECRET));

  test("a good token answers its subject and roles", async () => {
    expect(await verify(await good())).toEqual({ subject: "unit-reviewer", roles: ["reviewer"] });
    expect(await verify(await good({ roles: ["admin"] }))).toEqual({ subject: "unit-reviewer", roles: ["admin"] });
    // Non-string roles are dropped; the audience may be one of a list (RFC 7519 §4.1.3).
    expect(await verify(await good({ roles: ["viewer", 7, "reviewer"], aud: ["other", AUD] }))).toEqual({
      subject: "unit-reviewer",
      roles: ["viewer", "reviewer"],
    });
  });

  test.each<[string, () => Promise<string> | string]>([
    ["alg none", () => unsigned(claims())],
    ["alg none, upper case", () => unsigned(claims(), { alg: "NONE" })],
    ["wrong audience", () => good({ aud: "someone-else" })],
    ["wrong issuer", () => good({ iss: "https://evil.example.com" })],
    ["expired", () => good({ exp: Math.floor(Date.now() / 1000) - 60 })],
    ["expired a second ago (no clock tolerance)", () => good({ exp: Math.floor(Date.now() / 1000) - 1 })],
    ["not yet valid (nbf in the future)", () => good({ nbf: Math.floor(Date.now() / 1000) + 600 })],
    ["exp that is not a number", () => good({ exp: "tomorrow" })],
    ["without exp", () => good({ exp: undefined })],
    ["without iss", () => good({ iss: undefined })],
    ["without aud", () => good({ aud: undefined })],
    ["without sub", () => good({ sub: undefined })],
    ["with an empty sub", () => good({ sub: "" })],
    ["with a sub that is a number", () => good({ sub: 123 })],
    ["with a sub that is an object", () => good({ sub: { id: "x" } })],
    ["without roles", () => good({ roles: undefined })],
    ["with roles lacking reviewer and admin", () => good({ roles: ["viewer", "agent"] })],
    ["with roles as a string", () => good({ roles: "reviewer" })],
    ["with an empty roles list", () => good({ roles: [] })],
    ["signed with another secret", () => sign(claims(), encode("another-secret-that-is-long-enough-0123456789"))],
    ["signed with HS384", () => sign(claims(), encode(SECRET), { alg: "HS384" })],
    ["signed with HS512", () => sign(claims(), encode(SECRET), { alg: "HS512" })],
    [
      "signed with RS256",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: "k" }),
    ],
    [
      "with its payload swapped after signing",
      async () => {
        const [header, , signature] = (await good()).split(".");
        const forged = Buffer.from(JSON.stringify(claims({ sub: "mallory", roles: ["admin"] }))).toString("base64url");
        return `${header}.${forged}.${signature}`;
      },
    ],
    ["not a JWT", () => "not-a-jwt"],
    ["three empty parts", () => ".."],
    ["empty", () => ""],
  ])("refuses a token %s (null)", async (_what, make) => {
    expect(await verify(await make())).toBeNull();
  });
});

// ── JWKS ───────────────────────────────────────────────────────────────────────────────────────

const jwksConfig = (url: string, reviewerJwks: Config["reviewerJwks"] = {}): Config => ({
  ...hsConfig,
  reviewerJwtSecret: undefined,
  reviewerJwksUrl: url,
  reviewerJwks,
});

describe("reviewerVerifier with a JWKS URL", () => {
  let rsa: KeyPair;
  let ec: KeyPair;
  let jwks: JwksServer;

  beforeAll(async () => {
    rsa = await keyPair("RS256", "rsa-1");
    ec = await keyPair("ES256", "ec-1");
    jwks = await jwksServer([rsa.jwk, ec.jwk]);
  });
  afterAll(() => jwks.close());

  test("RS256 and ES256 tokens with a known kid answer their claims", async () => {
    const verify = reviewerVerifier(jwksConfig(jwks.url));
    const viaRsa = await sign(claims({ sub: "rsa-reviewer" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
    const viaEc = await sign(claims({ sub: "ec-reviewer", roles: ["admin"] }), ec.privateKey, {
      alg: "ES256",
      kid: ec.kid,
    });
    expect(await verify(viaRsa)).toEqual({ subject: "rsa-reviewer", roles: ["reviewer"] });
    expect(await verify(viaEc)).toEqual({ subject: "ec-reviewer", roles: ["admin"] });
  });

  test.each<[string, () => Promise<string> | string]>([
    [
      "with an unknown kid",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: "nobody" }),
    ],
    [
      "with a known kid but signed by another key",
      async () => sign(claims(), (await generateKeyPair("RS256")).privateKey, { alg: "RS256", kid: "rsa-1" }),
    ],
    ["HS256 keyed with the RSA public key PEM", async () => sign(claims(), encode(await exportSPKI(rsa.publicKey)))],
    [
      "HS256 keyed with the RSA public key PEM, naming its kid",
      async () => sign(claims(), encode(await exportSPKI(rsa.publicKey)), { kid: rsa.kid }),
    ],
    [
      "HS256 keyed with the JWK JSON text, naming its kid",
      () => sign(claims(), encode(JSON.stringify(rsa.jwk)), { kid: rsa.kid }),
    ],
    ["HS256 keyed with the shared secret of the other mode", () => sign(claims(), encode(SECRET))],
    ["alg none naming a known kid", () => unsigned(claims(), { kid: rsa.kid })],
    [
      "RS256 for another audience",
      () => sign(claims({ aud: "elsewhere" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
    [
      "RS256 without a reviewer role",
      () => sign(claims({ roles: ["viewer"] }), rsa.privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
    ["RS256 without sub", () => sign(claims({ sub: undefined }), rsa.privateKey, { alg: "RS256", kid: rsa.kid })],
    [
      "RS256 expired",
      () => sign(claims({ exp: Math.floor(Date.now() / 1000) - 5 }), rsa.privateKey, { alg: "RS256", kid: rsa.kid }),
    ],
    ["ES256 header on an RSA kid", () => sign(claims(), ec.privateKey, { alg: "ES256", kid: rsa.kid })],
  ])("refuses a token %s (null)", async (_what, make) => {
    const verify = reviewerVerifier(jwksConfig(jwks.url, { cooldownMs: 0 }));
    expect(await verify(await make())).toBeNull();
  });

  test("an HS256 token keyed with an `oct` key the JWKS itself publishes is refused (asymmetric only)", async () => {
    const octSecret = "a-symmetric-key-published-by-mistake-0123456789";
    const server = await jwksServer([
      rsa.jwk,
      { kty: "oct", kid: "oct-1", k: Buffer.from(octSecret).toString("base64url") },
    ]);
    try {
      const verify = reviewerVerifier(jwksConfig(server.url));
      expect(await verify(await sign(claims(), encode(octSecret), { kid: "oct-1" }))).toBeNull();
    } finally {
      await server.close();
    }
  });

  test("kid rotation: a new kid makes the verifier re-fetch; a dropped key stops working once refreshed", async () => {
    const old = await keyPair("RS256", "2024-old");
    const fresh = await keyPair("RS256", "2025-new");
    const server = await jwksServer([old.jwk]);
    try {
      const verify = reviewerVerifier(jwksConfig(server.url, { cooldownMs: 0 }));
      const oldToken = await sign(claims({ sub: "old" }), old.privateKey, { alg: "RS256", kid: old.kid });
      const newToken = await sign(claims({ sub: "new" }), fresh.privateKey, { alg: "RS256", kid: fresh.kid });

      expect(await verify(oldToken)).toMatchObject({ subject: "old" });
      expect(server.fetches()).toBe(1);

      server.serve([fresh.jwk]); // rotated: the new key in, the old key out
      // Until something makes it refresh, the cached set still holds the old key.
      expect(await verify(oldToken)).toMatchObject({ subject: "old" });
      expect(server.fetches()).toBe(1);

      // An unknown kid makes it re-fetch, and the new key is found.
      expect(await verify(newToken)).toMatchObject({ subject: "new" });
      expect(server.fetches()).toBe(2);
      // The refreshed set no longer holds the old key.
      expect(await verify(oldToken)).toBeNull();
      expect(await verify(newToken)).toMatchObject({ subject: "new" });
    } finally {
      await server.close();
    }
  });

  test("within the cooldown an unknown kid does not re-fetch (no fetch storm from made-up kids)", async () => {
    const server = await jwksServer([rsa.jwk]);
    try {
      const verify = reviewerVerifier(jwksConfig(server.url, { cooldownMs: 60_000 }));
      const fresh = await keyPair("RS256", "later");
      expect(await verify(await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid }))).not.toBeNull();
      server.serve([rsa.jwk, fresh.jwk]);
      for (let i = 0; i < 3; i++) {
        expect(await verify(await sign(claims(), fresh.privateKey, { alg: "RS256", kid: fresh.kid }))).toBeNull();
      }
      expect(server.fetches()).toBe(1);
    } finally {
      await server.close();
    }
  });

  test("once the cache is older than its lifetime, a dropped key stops working with no new kid in sight", async () => {
    const server = await jwksServer([rsa.jwk]);
    try {
      const verify = reviewerVerifier(jwksConfig(server.url, { cacheMaxAgeMs: 50 }));
      const token = await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
      expect(await verify(token)).not.toBeNull();
      server.serve([ec.jwk]);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await verify(token)).toBeNull();
      expect(server.fetches()).toBe(2);
    } finally {
      await server.close();
    }
  });

  test("an unreachable JWKS (closed port) refuses, it does not throw", async () => {
    const verify = reviewerVerifier(jwksConfig(`http://127.0.0.1:${await closedPort()}/jwks.json`));
    expect(await verify(await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid }))).toBeNull();
  });

  test("a JWKS that answers 500 refuses", async () => {
    const server = await jwksServer([], "error");
    try {
      const verify = reviewerVerifier(jwksConfig(server.url));
      expect(await verify(await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid }))).toBeNull();
    } finally {
      await server.close();
    }
  });

  test("a JWKS that never answers refuses after the fetch timeout", async () => {
    const server = await jwksServer([], "hang");
    try {
      const verify = reviewerVerifier(jwksConfig(server.url, { timeoutMs: 200 }));
      // The server never answers: a refusal at all is the fetch's timeout.
      expect(await verify(await sign(claims(), rsa.privateKey, { alg: "RS256", kid: rsa.kid }))).toBeNull();
      expect(server.fetches()).toBe(1);
    } finally {
      await server.close();
    }
  });

  test("the production defaults bound the fetch and keep a cooldown", () => {
    expect(JWKS_DEFAULTS.timeoutMs).toBeGreaterThan(0);
    expect(JWKS_DEFAULTS.timeoutMs).toBeLessThanOrEqual(10_000);
    expect(JWKS_DEFAULTS.cooldownMs).toBeGreaterThanOrEqual(1_000);
    expect(JWKS_DEFAULTS.cacheMaxAgeMs).toBeGreaterThanOrEqual(JWKS_DEFAULTS.cooldownMs);
  });
});
