/**
 * Reviewer tokens are JWTs verified with jose: algorithms pinned, `iss`, `aud`, `exp` and `sub`
 * (a non-empty string) required, and a `roles` claim that contains `reviewer` or `admin`. Keys come
 * from a shared secret (HS256) or a JWKS URL (asymmetric algorithms only, keys picked by `kid`).
 * No clock tolerance: an expired token is refused the second it expires.
 */
import { createRemoteJWKSet, type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { Config } from "../config.ts";
import { fits, isStorableText } from "../text.ts";

/** The longest reviewer subject: it is stored as the actor of what the reviewer does, and as an assignee. */
export const MAX_SUBJECT = 200;

export const REVIEWER_ROLES = ["reviewer", "admin"] as const;
const ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

export interface ReviewerClaims {
  subject: string;
  roles: string[];
}

/**
 * How the JWKS is fetched and cached, in milliseconds (jose's createRemoteJWKSet). The fetch always
 * has a timeout, so an unreachable or hanging JWKS refuses the token (401) instead of holding the
 * request. A token with a `kid` the cached set lacks triggers a re-fetch, at most once per cooldown:
 * that is how a rotated-in key is picked up, and how a dropped key stops working.
 */
export const JWKS_DEFAULTS = { timeoutMs: 5_000, cooldownMs: 30_000, cacheMaxAgeMs: 10 * 60_000 } as const;

export type ReviewerVerifier = (token: string) => Promise<ReviewerClaims | null>;

/** Builds the verifier for the configured key source; it answers null for any token it refuses. */
export function reviewerVerifier(config: Config): ReviewerVerifier {
  const options = {
    issuer: config.reviewerJwtIssuer,
    audience: config.reviewerJwtAudience,
    requiredClaims: ["exp", "sub"],
  };
  const verify: (token: string) => Promise<JWTPayload> = config.reviewerJwksUrl
    ? (() => {
        const tuning = { ...JWKS_DEFAULTS, ...config.reviewerJwks };
        const jwks = createRemoteJWKSet(new URL(config.reviewerJwksUrl), {
          timeoutDuration: tuning.timeoutMs,
          cooldownDuration: tuning.cooldownMs,
          cacheMaxAge: tuning.cacheMaxAgeMs,
        });
        return async (token) =>
          (await jwtVerify(token, jwks, { ...options, algorithms: ASYMMETRIC_ALGORITHMS })).payload;
      })()
    : (() => {
        const key = new TextEncoder().encode(config.reviewerJwtSecret);
        return async (token) => (await jwtVerify(token, key, { ...options, algorithms: ["HS256"] })).payload;
      })();

  return async (token) => {
    let payload: JWTPayload;
    try {
      payload = await verify(token);
    } catch {
      return null;
    }
    const roles = Array.isArray(payload.roles) ? payload.roles.filter((r) => typeof r === "string") : [];
    // jose checks that `sub` is present, not that it is a string: `"sub": 123` would reach the database.
    // Nor that it can be stored (it becomes the actor of what the reviewer does): valid text, and
    // no longer than an assignee may be.
    if (
      typeof payload.sub !== "string" ||
      payload.sub === "" ||
      !isStorableText(payload.sub) ||
      !fits(payload.sub, MAX_SUBJECT)
    ) {
      return null;
    }
    if (!roles.some((r) => (REVIEWER_ROLES as readonly string[]).includes(r))) return null;
    return { subject: payload.sub, roles };
  };
}

/** Signs a reviewer token with the shared secret; used by `npm run reviewer-token` and tests. */
export async function signReviewerToken(
  config: Config,
  subject: string,
  options: { roles?: string[]; expiresIn?: string } = {},
): Promise<string> {
  if (!config.reviewerJwtSecret) throw new Error("No REVIEWER_JWT_SECRET to sign with (a JWKS URL is configured)");
  return new SignJWT({ roles: options.roles ?? ["reviewer"] })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(subject)
    .setIssuer(config.reviewerJwtIssuer)
    .setAudience(config.reviewerJwtAudience)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "8h")
    .sign(new TextEncoder().encode(config.reviewerJwtSecret));
}
