import { readFileSync } from "node:fs";

/**
 * Every environment variable the service reads, parsed once, with its default.
 * Nothing else in the code reads `process.env`.
 */

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  production: boolean;
  reviewerJwtSecret: string | undefined;
  reviewerJwksUrl: string | undefined;
  reviewerJwtIssuer: string;
  reviewerJwtAudience: string;
  /**
   * Tuning of the reviewer JWKS client in milliseconds (fetch timeout, cooldown before an unknown
   * `kid` may trigger a re-fetch, cache lifetime). Not read from the environment: the defaults of
   * `JWKS_DEFAULTS` (reviewer.jwt.ts) suit production; tests shorten them.
   */
  reviewerJwks?: { timeoutMs?: number; cooldownMs?: number; cacheMaxAgeMs?: number };
  /** Public base URL used in the service description; derived from the request when unset. */
  publicUrl: string | undefined;
  logLevel: "silent" | "info";
}

/** The secret used when neither a secret nor a JWKS URL is configured, outside production only. */
export const LOCAL_REVIEWER_SECRET = "local-development-reviewer-secret-change-me-0123456789";

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${value}"`);
  return n;
}

/** Parses a configuration from an environment (by default the process's). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const production = env.NODE_ENV === "production";
  const reviewerJwksUrl = env.REVIEWER_JWKS_URL || undefined;
  let reviewerJwtSecret = env.REVIEWER_JWT_SECRET || undefined;
  if (!reviewerJwtSecret && !reviewerJwksUrl) {
    if (production) throw new Error("REVIEWER_JWT_SECRET or REVIEWER_JWKS_URL must be set in production");
    reviewerJwtSecret = LOCAL_REVIEWER_SECRET;
  }
  if (reviewerJwtSecret && reviewerJwtSecret.length < 32) {
    throw new Error("REVIEWER_JWT_SECRET must be at least 32 characters (HS256 needs 256 bits)");
  }
  return {
    port: int("PORT", env.PORT, 4000),
    host: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || "file:./data/registry.db",
    production,
    reviewerJwtSecret,
    reviewerJwksUrl,
    reviewerJwtIssuer: env.REVIEWER_JWT_ISSUER || "agent-registry",
    reviewerJwtAudience: env.REVIEWER_JWT_AUDIENCE || "agent-registry",
    publicUrl: env.PUBLIC_URL || undefined,
    logLevel: env.LOG_LEVEL === "silent" || env.NODE_ENV === "test" ? "silent" : "info",
  };
}

export const SERVICE_NAME = "Agent Registry";
/** The service's version, from package.json. */
export const SERVICE_VERSION: string = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;
