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
  /** Redis for state shared by replicas (rate limits); unset: each process keeps its own. */
  redisUrl: string | undefined;
  /**
   * How many proxies in front of the service append to `X-Forwarded-For` (TRUST_PROXY). 0: the
   * header is ignored and the client address is the socket's peer; n: the n-th address from the
   * right of the header (the one the outermost trusted proxy saw).
   */
  trustProxy: number;
  rateLimits: RateLimitsConfig;
}

/** The rate limits of API.md §6; a limit of 0 is off. */
export interface RateLimitsConfig {
  /** All off (RATE_LIMITS=off; also the default when NODE_ENV=test). */
  enabled: boolean;
  /** Intakes (createProvider) per client address per hour. */
  intakePerHour: number;
  /** Failed authentications (401 from credentials) per client address per 15 minutes. */
  authFailuresPer15Min: number;
  /** Mutations made with one agent token per minute. */
  writesPerMinute: number;
  /** Prefix of the limiters' keys in Redis (replicas that share limits use the same one). */
  keyPrefix: string;
}

/** The secret used when neither a secret nor a JWKS URL is configured, outside production only. */
export const LOCAL_REVIEWER_SECRET = "local-development-reviewer-secret-change-me-0123456789";

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${value}"`);
  return n;
}

/** RATE_LIMITS: `on` or `off`; unset means on, except in tests where it means off. */
function rateLimitsEnabled(value: string | undefined, test: boolean): boolean {
  if (value === undefined || value === "") return !test;
  if (/^(?:on|true|1)$/i.test(value)) return true;
  if (/^(?:off|false|0)$/i.test(value)) return false;
  throw new Error(`RATE_LIMITS must be "on" or "off", got "${value}"`);
}

/** TRUST_PROXY: off (unset, `false`, `0`), `true` (one proxy) or the number of proxies in front. */
function trustProxy(value: string | undefined): number {
  if (value === undefined || value === "" || /^false$/i.test(value)) return 0;
  if (/^true$/i.test(value)) return 1;
  return int("TRUST_PROXY", value, 0);
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
    redisUrl: env.REDIS_URL || undefined,
    trustProxy: trustProxy(env.TRUST_PROXY),
    rateLimits: {
      enabled: rateLimitsEnabled(env.RATE_LIMITS, env.NODE_ENV === "test"),
      intakePerHour: int("RATE_LIMIT_INTAKE_PER_HOUR", env.RATE_LIMIT_INTAKE_PER_HOUR, 20),
      authFailuresPer15Min: int("RATE_LIMIT_AUTH_FAILURES_PER_15MIN", env.RATE_LIMIT_AUTH_FAILURES_PER_15MIN, 30),
      writesPerMinute: int("RATE_LIMIT_WRITES_PER_MINUTE", env.RATE_LIMIT_WRITES_PER_MINUTE, 120),
      keyPrefix: env.RATE_LIMIT_KEY_PREFIX || "agent-registry:rl",
    },
  };
}

export const SERVICE_NAME = "Agent Registry";
/** The service's version, from package.json. */
export const SERVICE_VERSION: string = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;
