/**
 * OAuth access tokens: JWTs from the issuers the operator lists (AccessTokenConfig), each checked for
 * its own audience, with asymmetric algorithms only (an HS256 token "signed" with a public key, or
 * `alg: none`, is refused), `exp` and `sub` required and no clock tolerance. Keys come from each
 * issuer's discovery document and JWKS, fetched through the outbound door (never by jose itself,
 * which would bypass the door's checks), cached, and fetched again when a token names a `kid` the
 * cached set lacks (a key rotated in at the issuer), at most once per cooldown. Roles come from the
 * scopes and from the claim the operator names.
 */
import {
  createLocalJWKSet,
  decodeJwt,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { AccessTokenConfig, AccessTokenIssuer } from "../config.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { fits, isStorableText } from "../text.ts";
import { ASYMMETRIC_JWS_ALGORITHMS } from "./jws.algorithms.ts";
import { MAX_SUBJECT } from "./reviewer.jwt.ts";
import { ROLES, type Role, SCOPE_ROLES } from "./roles.ts";

/**
 * How long a discovery document and JWKS are used before they are fetched again, and how long after
 * a fetch for an unknown `kid` the next one may happen, in milliseconds: a stream of tokens with made
 * up `kid`s costs the issuer one request per cooldown, not one per token.
 */
export const ACCESS_TOKEN_KEYS_DEFAULTS = { cooldownMs: 60_000, cacheMaxAgeMs: 10 * 60_000 } as const;

export interface AccessTokenClaims {
  /** `sub` for OIDC_ISSUER; `<issuer>#<sub>` for the further issuers. */
  subject: string;
  issuer: string;
  /** The distinct roles the scopes and the roles claim grant, in the order of ROLES; may be empty. */
  roles: Role[];
}

export type AccessTokenVerifier = (token: string) => Promise<AccessTokenClaims | null>;

/**
 * The listed issuer a JWT names in its `iss`, unverified, or undefined: cheap, so the viewer can tell
 * an access token from a reviewer token before verifying either.
 */
export function accessTokenIssuer(config: AccessTokenConfig, token: string): AccessTokenIssuer | undefined {
  if (config.issuers.length === 0) return undefined;
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    return undefined;
  }
  return config.issuers.find((listed) => listed.issuer === iss);
}

/** Builds the verifier of the listed issuers; it answers null for any token it refuses. */
export function accessTokenVerifier(config: AccessTokenConfig, outbound: Outbound): AccessTokenVerifier {
  const tuning = { ...ACCESS_TOKEN_KEYS_DEFAULTS, ...config.keys };
  const keysOf = new Map(config.issuers.map((listed) => [listed.issuer, issuerKeys(listed.issuer, outbound, tuning)]));
  const primary = config.issuers[0]?.issuer;
  const furtherPrefixes = config.issuers.slice(1).map((listed) => `${listed.issuer}#`);

  async function verify(token: string, listed: AccessTokenIssuer): Promise<JWTPayload | null> {
    const keys = keysOf.get(listed.issuer);
    if (!keys) return null;
    const options = {
      issuer: listed.issuer,
      audience: listed.audience,
      algorithms: ASYMMETRIC_JWS_ALGORITHMS,
      requiredClaims: ["exp", "sub"],
    };
    const { jwks, fetched } = await keys.current();
    try {
      return (await jwtVerify(token, jwks, options)).payload;
    } catch (error) {
      // A `kid` the cached set lacks may be a key the issuer rotated in since it was fetched.
      if (fetched || !(error instanceof errors.JWKSNoMatchingKey)) throw error;
      const again = keys.refetch();
      if (!again) throw error;
      return (await jwtVerify(token, await again, options)).payload;
    }
  }

  return async (token) => {
    const listed = accessTokenIssuer(config, token);
    if (!listed) return null;
    let payload: JWTPayload | null;
    try {
      payload = await verify(token, listed);
    } catch {
      return null;
    }
    const sub = payload?.sub;
    // jose checks that `sub` is present, not that it is a string that can be stored (it becomes the
    // actor of what the caller does).
    if (!payload || typeof sub !== "string" || sub === "" || !isStorableText(sub)) return null;
    // The further issuers' subjects carry their issuer, so `alice` at one is not `alice` at another
    // (an issuer has no fragment, so `#` ends it); OIDC_ISSUER's may not pose as one of those.
    if (listed.issuer === primary && furtherPrefixes.some((prefix) => sub.startsWith(prefix))) return null;
    const subject = listed.issuer === primary ? sub : `${listed.issuer}#${sub}`;
    if (!fits(subject, MAX_SUBJECT)) return null;
    return { subject, issuer: listed.issuer, roles: rolesOf(payload, config) };
  };
}

interface KeysTuning {
  cooldownMs: number;
  cacheMaxAgeMs: number;
}

/**
 * One issuer's discovery document and JWKS, cached for `cacheMaxAgeMs` and then fetched again when a
 * token needs them. Tokens arriving together share the one fetch under way; a failed fetch is not
 * kept, so the token is refused and the next one tries again.
 */
function issuerKeys(issuer: string, outbound: Outbound, tuning: KeysTuning) {
  let discovery: { jwksUri: string; fetchedAt: number } | undefined;
  let keys: { jwks: JWTVerifyGetKey; fetchedAt: number } | undefined;
  let inFlight: Promise<JWTVerifyGetKey> | undefined;
  let lastRefetch = Number.NEGATIVE_INFINITY;

  const stale = (fetchedAt: number) => Date.now() - fetchedAt >= tuning.cacheMaxAgeMs;

  async function json(url: string, what: string): Promise<unknown> {
    const answer = await outbound.get(url, { accept: "application/json" });
    if (answer.status !== 200) throw new Error(`${what} of ${issuer} answered ${answer.status}`);
    return JSON.parse(answer.body);
  }

  async function load(): Promise<JWTVerifyGetKey> {
    if (!discovery || stale(discovery.fetchedAt)) {
      const document = (await json(
        `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
        "the discovery document",
      )) as { issuer?: unknown; jwks_uri?: unknown } | null;
      // A document that names another issuer is not this issuer's keys (OpenID Connect Discovery §4.3).
      if (document?.issuer !== issuer || typeof document.jwks_uri !== "string") {
        throw new Error(`the discovery document of ${issuer} does not name it as issuer, or has no jwks_uri`);
      }
      discovery = { jwksUri: document.jwks_uri, fetchedAt: Date.now() };
    }
    const jwks = createLocalJWKSet((await json(discovery.jwksUri, "the JWKS")) as JSONWebKeySet);
    keys = { jwks, fetchedAt: Date.now() };
    return jwks;
  }

  function fetchKeys(): Promise<JWTVerifyGetKey> {
    inFlight ??= load().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  return {
    /** The keys, fetched first when there are none yet or they are stale (`fetched` then says so). */
    async current(): Promise<{ jwks: JWTVerifyGetKey; fetched: boolean }> {
      if (keys && !stale(keys.fetchedAt)) return { jwks: keys.jwks, fetched: false };
      return { jwks: await fetchKeys(), fetched: true };
    },
    /** The keys fetched again for an unknown `kid`, or undefined within the cooldown of the last such fetch. */
    refetch(): Promise<JWTVerifyGetKey> | undefined {
      if (inFlight) return inFlight;
      if (Date.now() - lastRefetch < tuning.cooldownMs) return undefined;
      lastRefetch = Date.now();
      return fetchKeys();
    },
  };
}

/** The roles the scopes (`scope`, RFC 9068; `scp`, as Entra and Okta write it) and the roles claim grant. */
function rolesOf(payload: JWTPayload, config: AccessTokenConfig): Role[] {
  const found = new Set<Role>(claimRoles(payload, config));
  for (const scope of [...words(payload.scope), ...words(payload.scp)]) {
    // Own properties only: a scope named `constructor` grants nothing.
    const role = Object.hasOwn(SCOPE_ROLES, scope) ? SCOPE_ROLES[scope] : undefined;
    if (role) found.add(role);
  }
  return ROLES.filter((role) => found.has(role));
}

/**
 * The roles the claim OIDC_ROLES_CLAIM names grants through OIDC_ROLE_MAP, in the order of ROLES:
 * all a person signing in gets from their ID token (src/signin/), where scopes grant nothing.
 */
export function claimRoles(payload: JWTPayload, config: Pick<AccessTokenConfig, "rolesClaim" | "roleMap">): Role[] {
  const found = new Set<Role>();
  if (config.rolesClaim) {
    const claim = claimAt(payload, config.rolesClaim);
    for (const value of typeof claim === "string" ? [claim] : strings(claim)) {
      const role = config.roleMap.get(value);
      if (role) found.add(role);
    }
  }
  return ROLES.filter((role) => found.has(role));
}

/** A space-separated string's words, or an array's strings. */
function words(value: unknown): string[] {
  return typeof value === "string" ? value.split(" ").filter(Boolean) : strings(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/**
 * The claim named `path`, else the value at its dotted path (Keycloak's `realm_access.roles`): some
 * issuers name claims with dots (`https://example.com/roles`).
 */
function claimAt(payload: JWTPayload, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let value: unknown = payload;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value) || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
