/**
 * Access tokens from listed issuers, against real OpenID providers on loopback (tests/auth/idp.ts):
 * OUTBOUND_TEST_HOSTS sends the door's requests for http://idp.test and the others there. Real tokens
 * come from the client_credentials grant with resource indicators; the hostile ones are crafted and
 * signed with the provider's own private key. Every IdP counts the requests it serves, so fetches of
 * the discovery document and the JWKS are counted, not timed. Also the configuration's refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { decodeProtectedHeader, exportJWK, exportSPKI, type JWTPayload, SignJWT, UnsecuredJWT } from "jose";
import { accessTokenIssuer, accessTokenVerifier } from "../../src/auth/access.token.ts";
import { type AccessTokenConfig, loadConfig } from "../../src/config.ts";
import { createOutbound } from "../../src/outbound/outbound.ts";
import { crafted, DISCOVERY, type Idp, JWKS, SCOPES, type SigningKey, signingKey, startIdp, testHosts } from "./idp.ts";

const AUDIENCE = "https://registry.test";
const AUDIENCE_B = "urn:registry:b";
/** A resource the IdPs also issue tokens for: a real token with the wrong audience. */
const ELSEWHERE = "https://elsewhere.test";
const ROLE_MAP = "registry-reviewers=reviewer,registry-admins=admin";

/** The clients of every IdP, with the `groups` each one's tokens carry. */
const CLIENTS = {
  reader: { groups: [] },
  reviewer: { groups: [] },
  grouped: { groups: ["registry-admins", "unrelated-group"] },
};

const idps: Idp[] = [];

/** An IdP of these clients issuing tokens for `audience` (its default) and ELSEWHERE, stopped after the file. */
async function idpOf(host: string, audience: string): Promise<Idp> {
  const idp = await startIdp({ issuer: `http://${host}`, audiences: [audience, ELSEWHERE], clients: CLIENTS });
  idps.push(idp);
  return idp;
}

/** A verifier as the service would build it from this environment (and key cache tuning). */
function verifierFor(env: Record<string, string>, keys?: AccessTokenConfig["keys"]) {
  const config = loadConfig({ NODE_ENV: "test", ...env });
  const accessTokens: AccessTokenConfig = { ...config.accessTokens, keys };
  return { config: accessTokens, verify: accessTokenVerifier(accessTokens, createOutbound(config.outbound)) };
}

let idp: Idp;
let idpB: Idp;
let env: Record<string, string>;

beforeAll(async () => {
  idp = await idpOf("idp.test", AUDIENCE);
  idpB = await idpOf("idp-b.test", AUDIENCE_B);
  env = {
    OIDC_ISSUER: idp.issuer,
    OIDC_AUDIENCE: AUDIENCE,
    OIDC_ROLES_CLAIM: "groups",
    OIDC_ROLE_MAP: ROLE_MAP,
    OUTBOUND_TEST_HOSTS: testHosts(idp, idpB),
  };
});

afterAll(async () => {
  await Promise.all(idps.map((each) => each.stop()));
});

describe("tokens of OIDC_ISSUER", () => {
  test("registry:read makes a reader, and the token is routed to this verifier", async () => {
    const { config, verify } = verifierFor(env);
    const token = await idp.token("reader", "registry:read");
    expect(accessTokenIssuer(config, token)).toEqual({ issuer: "http://idp.test", audience: AUDIENCE });
    expect(await verify(token)).toEqual({ subject: "reader", issuer: "http://idp.test", roles: ["reader"] });
  });

  test("registry:review makes a reviewer; several scopes, several roles", async () => {
    const { verify } = verifierFor(env);
    const review = await idp.token("reviewer", "registry:review");
    expect(await verify(review)).toEqual({ subject: "reviewer", issuer: "http://idp.test", roles: ["reviewer"] });
    const all = await idp.token("reviewer", SCOPES);
    expect((await verify(all))?.roles).toEqual(["reader", "reviewer", "admin"]);
  });

  test("the groups claim grants admin through OIDC_ROLE_MAP; other groups are ignored", async () => {
    const { verify } = verifierFor(env);
    const token = await idp.token("grouped", "registry:read");
    expect(await verify(token)).toEqual({ subject: "grouped", issuer: "http://idp.test", roles: ["reader", "admin"] });
    // Without the roles claim configured, the same token is only what its scope says.
    const { verify: scopesOnly } = verifierFor({ ...env, OIDC_ROLES_CLAIM: "", OIDC_ROLE_MAP: "" });
    expect((await scopesOnly(token))?.roles).toEqual(["reader"]);
  });

  test("a valid token without registry scopes or groups is accepted with no roles", async () => {
    const { verify } = verifierFor(env);
    const token = await idp.token("reader");
    expect(await verify(token)).toEqual({ subject: "reader", issuer: "http://idp.test", roles: [] });
  });

  test("scp (array or string), a dotted roles claim, and names that are not own properties", async () => {
    const { verify } = verifierFor({ ...env, OIDC_ROLES_CLAIM: "realm_access.roles" });
    const roles = async (claims: JWTPayload) => (await verify(await crafted(idp, claims)))?.roles;
    expect(await roles({ scope: undefined, scp: ["registry:review", "openid"] })).toEqual(["reviewer"]);
    expect(await roles({ scope: undefined, scp: "registry:read registry:admin" })).toEqual(["reader", "admin"]);
    expect(await roles({ scope: "", realm_access: { roles: ["registry-reviewers", "x"] } })).toEqual(["reviewer"]);
    expect(await roles({ scope: "", realm_access: { roles: "registry-admins" } })).toEqual(["admin"]);
    expect(await roles({ scope: "constructor toString", realm_access: { roles: ["__proto__"] } })).toEqual([]);
    // A claim whose own name has dots wins over the path.
    const { verify: dotted } = verifierFor({ ...env, OIDC_ROLES_CLAIM: "https://example.com/roles" });
    expect(
      (await dotted(await crafted(idp, { scope: "", "https://example.com/roles": "registry-admins" })))?.roles,
    ).toEqual(["admin"]);
  });
});

describe("refused tokens", () => {
  test("a token crafted with the IdP's key is accepted, so the refusals below are for what they change", async () => {
    const { verify } = verifierFor(env);
    expect(await verify(await crafted(idp, {}))).toEqual({
      subject: "crafted-client",
      issuer: "http://idp.test",
      roles: ["reader"],
    });
  });

  test("an issuer that is not listed: refused without a request to it", async () => {
    const { config, verify } = verifierFor(env);
    const token = await idpB.token("reader", "registry:read", AUDIENCE_B);
    const before = idpB.served.length;
    expect(accessTokenIssuer(config, token)).toBeUndefined();
    expect(await verify(token)).toBeNull();
    expect(await verify(await crafted(idpB, { aud: AUDIENCE }))).toBeNull();
    expect(idpB.served.length).toBe(before);
  });

  test("expired, by a second: no clock tolerance", async () => {
    const { verify } = verifierFor(env);
    const now = Math.floor(Date.now() / 1000);
    expect(await verify(await crafted(idp, { exp: now - 1, iat: now - 301 }))).toBeNull();
    expect(await verify(await crafted(idp, { exp: undefined }))).toBeNull();
  });

  test("the wrong audience: a real token for another resource, and a crafted one", async () => {
    const { verify } = verifierFor(env);
    expect(await verify(await idp.token("reader", "registry:read", ELSEWHERE))).toBeNull();
    expect(await verify(await crafted(idp, { aud: ELSEWHERE }))).toBeNull();
    expect(await verify(await crafted(idp, { aud: undefined }))).toBeNull();
  });

  test("alg none", async () => {
    const { verify } = verifierFor(env);
    const token = new UnsecuredJWT({ scope: "registry:admin" })
      .setIssuer(idp.issuer)
      .setAudience(AUDIENCE)
      .setSubject("attacker")
      .setExpirationTime("5m")
      .encode();
    expect(await verify(token)).toBeNull();
  });

  test("HS256 signed with the issuer's public key as the secret", async () => {
    const { verify } = verifierFor(env);
    const key = idp.keys[0] as SigningKey;
    const secrets = [
      new TextEncoder().encode(await exportSPKI(key.publicKey)),
      new TextEncoder().encode(JSON.stringify(await exportJWK(key.publicKey))),
    ];
    for (const secret of secrets) {
      const token = await new SignJWT({ scope: "registry:admin" })
        .setProtectedHeader({ alg: "HS256", kid: key.kid })
        .setIssuer(idp.issuer)
        .setAudience(AUDIENCE)
        .setSubject("attacker")
        .setExpirationTime("5m")
        .sign(secret);
      expect(await verify(token)).toBeNull();
    }
  });

  test("a sub that is missing, empty, not a string, not storable or too long", async () => {
    const { verify } = verifierFor(env);
    for (const sub of [undefined, "", 42, ["a"], "a\u0000b", "\ud800", "x".repeat(201)]) {
      expect(await verify(await crafted(idp, { sub: sub as string }))).toBeNull();
    }
    expect((await verify(await crafted(idp, { sub: "x".repeat(200) })))?.subject).toHaveLength(200);
  });

  test("a listed iss signed by a key not in that issuer's JWKS, and what that costs the issuer", async () => {
    const { verify } = verifierFor(env);
    const jwks = idp.count(JWKS);
    const stray = await signingKey("stray");
    // Keys fetched for this very token are as fresh as they get: no second fetch.
    expect(await verify(await crafted(idp, {}, stray))).toBeNull();
    expect(idp.count(JWKS)).toBe(jwks + 1);
    // The same kid as the IdP's own key, another key behind it: a bad signature, no fetch.
    expect(await verify(await crafted(idp, {}, { ...stray, kid: (idp.keys[0] as SigningKey).kid }))).toBeNull();
    expect(idp.count(JWKS)).toBe(jwks + 1);
    // Signed by another IdP's key: an unknown kid, fetched again once, then the cooldown holds.
    expect(await verify(await crafted(idp, {}, idpB.keys[0]))).toBeNull();
    expect(await verify(await crafted(idp, {}, stray))).toBeNull();
    expect(idp.count(JWKS)).toBe(jwks + 2);
  });

  test("garbage is refused, not thrown", async () => {
    const { config, verify } = verifierFor(env);
    for (const token of ["", "not-a-jwt", "a.b.c", "eyJhbGciOiJFUzI1NiJ9.e30."]) {
      expect(accessTokenIssuer(config, token)).toBeUndefined();
      expect(await verify(token)).toBeNull();
    }
  });

  test("a discovery document that names another issuer: refused, its JWKS never fetched", async () => {
    // idp.test answered by IdP B, whose discovery document says http://idp-b.test.
    const { verify } = verifierFor({ ...env, OUTBOUND_TEST_HOSTS: `idp.test=127.0.0.1:${idpB.port}` });
    const discoveries = idpB.count(DISCOVERY);
    const jwks = idpB.count(JWKS);
    expect(await verify(await crafted(idp, {}, idpB.keys[0]))).toBeNull();
    expect(idpB.count(DISCOVERY)).toBe(discoveries + 1);
    expect(idpB.count(JWKS)).toBe(jwks);
  });
});

describe("ACCESS_TOKEN_ISSUERS", () => {
  test("a further issuer with its own audience; its subjects carry the issuer", async () => {
    const { verify } = verifierFor({ ...env, ACCESS_TOKEN_ISSUERS: `${idpB.issuer}|${AUDIENCE_B}` });
    const token = await idpB.token("reader", "registry:read", AUDIENCE_B);
    expect(await verify(token)).toEqual({
      subject: "http://idp-b.test#reader",
      issuer: "http://idp-b.test",
      roles: ["reader"],
    });
    // The other issuer's audience is not this one's.
    expect(await verify(await crafted(idpB, { aud: AUDIENCE }))).toBeNull();
    expect(await verify(await crafted(idp, { aud: AUDIENCE_B }))).toBeNull();
    // OIDC_ISSUER's tokens still work, their subjects as they are.
    expect((await verify(await idp.token("reader", "registry:read")))?.subject).toBe("reader");
    // ...but may not pose as a subject of the further issuer.
    expect(await verify(await crafted(idp, { sub: "http://idp-b.test#reader" }))).toBeNull();
  });
});

describe("keys: cache, rotation, cooldown, failures", () => {
  test("fetched once for tokens arriving together, then served from the cache", async () => {
    const { verify } = verifierFor(env);
    const token = await idp.token("reader", "registry:read");
    const discoveries = idp.count(DISCOVERY);
    const jwks = idp.count(JWKS);
    const answers = await Promise.all(Array.from({ length: 5 }, () => verify(token)));
    expect(answers.every((answer) => answer?.subject === "reader")).toBe(true);
    expect(await verify(token)).not.toBeNull();
    expect([idp.count(DISCOVERY) - discoveries, idp.count(JWKS) - jwks]).toEqual([1, 1]);
  });

  test("a key rotated in is accepted after one re-fetch; another unknown kid within the cooldown fetches nothing", async () => {
    const rotating = await idpOf("rotating.test", AUDIENCE);
    const rotatingEnv = { ...env, OIDC_ISSUER: rotating.issuer, OUTBOUND_TEST_HOSTS: testHosts(rotating) };
    const { verify } = verifierFor(rotatingEnv);
    const first = rotating.keys[0] as SigningKey;
    expect(await verify(await rotating.token("reader", "registry:read"))).not.toBeNull();
    expect(rotating.count(JWKS)).toBe(1);

    const second = await signingKey("rotating.test-2");
    rotating.rekey([second, first]);
    const [a, b] = await Promise.all([
      rotating.token("reader", "registry:read"),
      rotating.token("reviewer", "registry:review"),
    ]);
    expect(decodeProtectedHeader(a as string).kid).toBe(second.kid);
    // Two tokens with the new kid together: one re-fetch, both accepted.
    const answers = await Promise.all([verify(a as string), verify(b as string)]);
    expect(answers.map((answer) => answer?.subject)).toEqual(["reader", "reviewer"]);
    expect(rotating.count(JWKS)).toBe(2);
    expect(await verify(a as string)).not.toBeNull();
    expect(rotating.count(JWKS)).toBe(2);

    // A third key within the cooldown of that re-fetch: refused, nothing fetched.
    const third = await signingKey("rotating.test-3");
    rotating.rekey([third, second, first]);
    const c = await rotating.token("reader", "registry:read");
    expect(await verify(c)).toBeNull();
    expect(await verify(await crafted(rotating, {}, await signingKey("made-up")))).toBeNull();
    expect(rotating.count(JWKS)).toBe(2);

    // With the cooldown over (a verifier whose cooldown is 0), the third key is fetched and accepted;
    // a made-up kid then costs a fetch each time.
    const { verify: noCooldown } = verifierFor(rotatingEnv, { cooldownMs: 0 });
    expect(await noCooldown(a as string)).not.toBeNull();
    rotating.rekey([await signingKey("rotating.test-4"), third, second, first]);
    expect(await noCooldown(await rotating.token("reader", "registry:read"))).not.toBeNull();
    expect(await noCooldown(await crafted(rotating, {}, await signingKey("made-up")))).toBeNull();
    expect(rotating.count(JWKS)).toBe(2 + 3);
  });

  test("a failed fetch refuses the token and is not kept: accepted again once the IdP is back", async () => {
    const flaky = await idpOf("flaky.test", AUDIENCE);
    const flakyEnv = { ...env, OIDC_ISSUER: flaky.issuer, OUTBOUND_TEST_HOSTS: testHosts(flaky) };
    const token = await flaky.token("reader", "registry:read");
    // Keys never older than 0 ms: every token fetches them.
    const { verify: uncached } = verifierFor(flakyEnv, { cacheMaxAgeMs: 0 });
    const { verify: cold } = verifierFor(flakyEnv);
    expect(await uncached(token)).not.toBeNull();

    await flaky.stop();
    expect(await uncached(token)).toBeNull();
    expect(await cold(token)).toBeNull();

    await flaky.start();
    expect(await uncached(token)).not.toBeNull();
    expect(await cold(token)).not.toBeNull();
  });
});

describe("configuration", () => {
  const PRODUCTION = { NODE_ENV: "production", REVIEWER_JWT_SECRET: "s".repeat(40) };
  const accessTokens = (settings: Record<string, string>) => loadConfig({ NODE_ENV: "test", ...settings }).accessTokens;

  test("nothing set: no issuer, and every token refused", async () => {
    const config = accessTokens({});
    expect(config).toEqual({ issuers: [], rolesClaim: undefined, roleMap: new Map() });
    const token = await idp.token("reader", "registry:read");
    expect(accessTokenIssuer(config, token)).toBeUndefined();
    expect(await accessTokenVerifier(config, createOutbound(loadConfig({}).outbound))(token)).toBeNull();
  });

  test("the issuers, their audiences, the roles claim and map", () => {
    expect(
      accessTokens({
        OIDC_ISSUER: "https://login.example.com/realms/registry",
        PUBLIC_URL: "https://registry.example.com",
        ACCESS_TOKEN_ISSUERS: " https://a.example.com | api://registry , https://b.example.com/|urn:b",
        OIDC_ROLES_CLAIM: "realm_access.roles",
        OIDC_ROLE_MAP: "registry-reviewers=reviewer, registry-admins=admin,cn=x=reader",
      }),
    ).toEqual({
      issuers: [
        { issuer: "https://login.example.com/realms/registry", audience: "https://registry.example.com" },
        { issuer: "https://a.example.com", audience: "api://registry" },
        { issuer: "https://b.example.com/", audience: "urn:b" },
      ],
      rolesClaim: "realm_access.roles",
      roleMap: new Map([
        ["registry-reviewers", "reviewer"],
        ["registry-admins", "admin"],
        ["cn=x", "reader"],
      ]),
    });
    expect(
      accessTokens({ OIDC_ISSUER: "https://idp.example", OIDC_AUDIENCE: "api", PUBLIC_URL: "https://r" }).issuers,
    ).toEqual([{ issuer: "https://idp.example", audience: "api" }]);
  });

  test("malformed ACCESS_TOKEN_ISSUERS are refused at start", () => {
    const base = { OIDC_ISSUER: "https://idp.example", OIDC_AUDIENCE: "api" };
    for (const value of [
      "https://a.example",
      "https://a.example|",
      "|aud",
      "https://a.example|aud|more",
      "https://a.example|aud,",
      "not a url|aud",
      "ftp://a.example|aud",
      "https://a.example?x=1|aud",
      "https://a.example#f|aud",
      "https://user:pw@a.example|aud",
    ]) {
      expect(() => accessTokens({ ...base, ACCESS_TOKEN_ISSUERS: value })).toThrow(/ACCESS_TOKEN_ISSUERS must/);
    }
    expect(() => accessTokens({ ...base, ACCESS_TOKEN_ISSUERS: "https://idp.example|other" })).toThrow(
      "ACCESS_TOKEN_ISSUERS lists https://idp.example twice, or OIDC_ISSUER again",
    );
  });

  test("OIDC_ROLE_MAP: roles of roles.ts only, value=role pairs", () => {
    const base = { OIDC_ISSUER: "https://idp.example", OIDC_AUDIENCE: "api", OIDC_ROLES_CLAIM: "groups" };
    expect(() => accessTokens({ ...base, OIDC_ROLE_MAP: "registry-admins=superuser" })).toThrow(
      'OIDC_ROLE_MAP maps "registry-admins" to "superuser", which is not a role (reader, reviewer, admin)',
    );
    expect(() => accessTokens({ ...base, OIDC_ROLE_MAP: "registry-admins" })).toThrow(
      /OIDC_ROLE_MAP must be value=role/,
    );
    expect(() => accessTokens({ ...base, OIDC_ROLE_MAP: "=admin" })).toThrow(/OIDC_ROLE_MAP must be value=role/);
    expect(() => accessTokens({ ...base, OIDC_ROLE_MAP: "a=admin,a=reader" })).toThrow('OIDC_ROLE_MAP maps "a" twice');
    expect(() => accessTokens({ ...base, OIDC_ROLE_MAP: "" })).toThrow("OIDC_ROLES_CLAIM needs OIDC_ROLE_MAP");
    expect(() => accessTokens({ ...base, OIDC_ROLES_CLAIM: "", OIDC_ROLE_MAP: "a=admin" })).toThrow(
      "OIDC_ROLE_MAP needs OIDC_ROLES_CLAIM",
    );
  });

  test("OIDC_ISSUER needs an audience: OIDC_AUDIENCE or PUBLIC_URL", () => {
    expect(() => accessTokens({ OIDC_ISSUER: "https://idp.example" })).toThrow(
      "OIDC_ISSUER needs the audience its access tokens carry: set OIDC_AUDIENCE or PUBLIC_URL",
    );
  });

  test("the other settings without OIDC_ISSUER are refused", () => {
    for (const name of ["OIDC_AUDIENCE", "ACCESS_TOKEN_ISSUERS", "OIDC_ROLES_CLAIM", "OIDC_ROLE_MAP"]) {
      expect(() => accessTokens({ [name]: "x" })).toThrow(`${name} is set but OIDC_ISSUER is not`);
    }
  });

  test("issuers must be https: in production; http: only outside it", () => {
    const http = { OIDC_ISSUER: "http://idp.example", OIDC_AUDIENCE: "api" };
    expect(accessTokens(http).issuers).toEqual([{ issuer: "http://idp.example", audience: "api" }]);
    expect(() => loadConfig({ ...PRODUCTION, ...http })).toThrow(/OIDC_ISSUER must name issuers by URL \(https:;/);
    expect(() =>
      loadConfig({
        ...PRODUCTION,
        OIDC_ISSUER: "https://idp.example",
        OIDC_AUDIENCE: "api",
        ACCESS_TOKEN_ISSUERS: "http://b.example|api",
      }),
    ).toThrow(/ACCESS_TOKEN_ISSUERS must name issuers by URL/);
    expect(
      loadConfig({ ...PRODUCTION, OIDC_ISSUER: "https://idp.example", OIDC_AUDIENCE: "api" }).accessTokens.issuers,
    ).toEqual([{ issuer: "https://idp.example", audience: "api" }]);
  });
});
