import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROLES, type Role } from "./auth/roles.ts";

/**
 * Every environment variable the service reads, parsed once, with its default.
 * Nothing else in the code reads `process.env`.
 */

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /**
   * DATABASE_POOL_SIZE: PostgreSQL connections a replica keeps at most in each of its two pools (10,
   * pg's own default; db/postgres.ts). A replica is one event loop: a few connections keep PostgreSQL
   * busy while it works; more only queue there. Replicas × 2 × size must stay under max_connections.
   */
  databasePoolSize: number;
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
  /**
   * READ_ACCESS: `public` (anyone reads what is public) or `authenticated` (every request but
   * /health, /ready, /openapi.* and /.well-known/* needs a credential that carries the reader role;
   * src/auth/roles.ts). With `authenticated` the response cache is off: it keeps anonymous answers.
   */
  readAccess: "public" | "authenticated";
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
  /** Request bodies larger than this are refused with 413, streamed ones included (MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /** The GraphQL limits of API.md §6, for /graphql and for the operations REST routes run. */
  graphqlLimits: GraphqlLimitsConfig;
  /** SIGTERM's drain (main.ts): see `DrainConfig`. */
  drain: DrainConfig;
  /**
   * RESPONSE_CACHE: anonymous GET answers of public resources kept in memory until the next write
   * (src/http/cache/). On by default, off in tests (the suites that test it turn it on).
   */
  responseCache: boolean;
  /**
   * HTTP_CACHE_MAX_AGE: how many seconds shared caches (a CDN, a proxy) may keep an anonymous read of
   * the API (`Cache-Control: public, max-age=…`; src/http/conditional.ts). 0: they must ask every time.
   */
  httpCacheMaxAge: number;
  /** RESPONSE_CACHE_KEY_PREFIX: prefix of the cache's shared generation in Redis (replicas of one database share it). */
  responseCacheKeyPrefix: string;
  /**
   * FEED_CHANNEL: the Redis channel of the change feed (src/feed), and the prefix of its sequence
   * counter. Replicas of one registry share it; registries sharing a Redis use different ones.
   */
  feedChannel: string;
  /** The change log (src/events): see `EventsConfig`. */
  events: EventsConfig;
  /**
   * CORS_ORIGINS: the browser origins allowed to call the API from their pages, comma-separated
   * (`https://app.example.com`), or `*` for any. Unset: CORS is off, no page of another origin may
   * read an answer. Never with credentials: the API's credentials are bearer tokens a page sends
   * itself, not cookies.
   */
  corsOrigins: readonly string[] | "*";
  /**
   * GRAPHIQL (`on`/`off`): GraphiQL at /graphql for a browser. On by default, off in production,
   * where `on` (a registry that wants public exploration) also turns schema introspection on.
   */
  graphiql: boolean;
  /** Requests the service makes to addresses callers gave (src/outbound/): see `OutboundConfig`. */
  outbound: OutboundConfig;
  /** Verified publisher domains and signed agent cards (src/trust/): see `TrustConfig`. */
  trust: TrustConfig;
  /** Webhook deliveries (src/webhooks/): see `WebhooksConfig`. */
  webhooks: WebhooksConfig;
  /** Probing the agents' endpoints (src/health/): see `HealthConfig`. */
  health: HealthConfig;
  /** Mirroring other registries (src/mirror/): see `MirrorConfig`. */
  mirror: MirrorConfig;
  /** OAuth access tokens from listed issuers (src/auth/access.token.ts): see `AccessTokenConfig`. */
  accessTokens: AccessTokenConfig;
  /** People signing in at OIDC_ISSUER (src/signin/): see `SignInConfig`; undefined without OIDC_CLIENT_ID. */
  signIn: SignInConfig | undefined;
  /** Prometheus metrics at GET /metrics (src/metrics/): see `MetricsConfig`. */
  metrics: MetricsConfig;
}

/** The change log (src/events) and its readers. */
export interface EventsConfig {
  /** EVENT_RETENTION_DAYS: events older than this are deleted (90); asking from before them is a 410. */
  retentionDays: number;
  /**
   * FEED_POLL_MS: how often each replica looks at the log's end without being woken (1000): the
   * longest an event waits for a stream or a webhook when a note between replicas is lost.
   */
  pollMs: number;
}

/**
 * Webhook deliveries: attempts with exponential backoff and full jitter until the message is
 * `maxAgeMs` old, each attempt held by one replica under a lease.
 */
export interface WebhooksConfig {
  /** WEBHOOK_MAX_AGE_SECONDS (default 24 hours): no attempt after this; the subscription is then disabled. */
  maxAgeMs: number;
  /** WEBHOOK_BACKOFF_BASE_MS: the ceiling of the first retry's delay; it doubles with each attempt. */
  backoffBaseMs: number;
  /** WEBHOOK_BACKOFF_MAX_MS: the highest ceiling of a retry's delay (default an hour). */
  backoffMaxMs: number;
  /** WEBHOOK_LEASE_MS: how long a claimed attempt is this replica's; longer than the outbound deadline. */
  leaseMs: number;
  /** WEBHOOK_POLL_INTERVAL_MS: how often a replica looks for new events and due attempts; 0 turns its worker off. */
  pollIntervalMs: number;
  /** WEBHOOK_CONCURRENCY: attempts under way at once in this process. */
  concurrency: number;
  /** WEBHOOK_MAX_PER_PROVIDER: subscriptions an agent may hold (reviewers' are not counted). */
  maxPerProvider: number;
}

/**
 * The one outbound door (API.md §4, "Outbound requests"): `https:` only, every hop's address
 * checked, timeouts, a body cap and a concurrency cap.
 */
export interface OutboundConfig {
  /** OUTBOUND_TIMEOUT_MS: the connect timeout, and the deadline of the whole request, redirects included. */
  timeoutMs: number;
  /** OUTBOUND_MAX_BODY_BYTES: an answer larger than this is refused. */
  maxBodyBytes: number;
  /** OUTBOUND_CONCURRENCY: requests under way at once in this process; more wait their turn. */
  concurrency: number;
  /** Connections kept open for the next request to the same host (the prober's door); else one per request. */
  keepAlive?: boolean;
  /**
   * OUTBOUND_TEST_HOSTS (tests only, refused in production): `name=127.0.0.1:port,…` sends requests
   * for those names over plain `http:` to those loopback ports; `*.fake.test=…` does for every name
   * one label under fake.test.
   */
  testHosts: ReadonlyMap<string, { host: string; port: number }>;
  /**
   * OUTBOUND_TEST_DNS (tests only, refused in production): `127.0.0.1:port`, a local DNS server that
   * answers the door's look-ups (TXT records, and the addresses of names not in OUTBOUND_TEST_HOSTS).
   */
  testDns: { host: string; port: number } | undefined;
}

export interface TrustConfig {
  /** DOMAIN_CHALLENGE_TTL_SECONDS: how long a domain challenge may be checked (default 7 days). */
  challengeTtlSeconds: number;
  /** DOMAIN_RECHECK_INTERVAL_SECONDS: how often a verified domain is checked again (default daily); 0 turns re-checks off. */
  recheckIntervalSeconds: number;
  /**
   * SIGNING_KEYS: the registry's private signing keys as a JWK set (JSON), each key with `kid` and
   * `alg` (ES256 or EdDSA). Unset: the key file below, generated at first start.
   */
  signingKeys: string | undefined;
  /** SIGNING_KEYS_FILE: where the generated keys are kept (owner-only); default `signing-keys.json` in the data folder. */
  signingKeysFile: string;
  /** SIGNING_KEY_GRACE_DAYS: how long a rotated-out key stays published, so cards it signed still verify. */
  signingKeyGraceDays: number;
  /**
   * CARD_TRUST_JWKS: public keys (a JWK set, JSON) trusted to sign imported agent cards whatever
   * their domain, beside the JWKS of a provider's verified domains.
   */
  cardTrustJwks: string | undefined;
}

/**
 * The drain on SIGTERM (API.md §6). Readiness answers 503 at once; the listener stays open for
 * `delayMs` (so a load balancer that probes /ready sees the replica leave before connections are
 * refused), then closes: new connections are refused and requests in flight finish. Whatever is still
 * open `timeoutMs` after the signal is cut and the process exits 1; a clean drain exits 0.
 */
export interface DrainConfig {
  /** DRAIN_DELAY_MS: how long the listener stays open after SIGTERM, answering /ready with 503. */
  delayMs: number;
  /** DRAIN_TIMEOUT_MS: the deadline, counted from the signal, for the whole drain. */
  timeoutMs: number;
}

/**
 * GraphQL limits (graphql-armor), checked for every executed operation: what /graphql receives and
 * what SOFA runs for a REST route. A limit of 0 is off. Introspection is refused in production.
 */
export interface GraphqlLimitsConfig {
  /** GRAPHQL_MAX_DEPTH: nesting of selections (introspection's own nesting not counted). */
  maxDepth: number;
  /** GRAPHQL_MAX_ALIASES: aliases in one operation. */
  maxAliases: number;
  /** GRAPHQL_MAX_TOKENS: lexical tokens of one document (checked while parsing). */
  maxTokens: number;
  /** GRAPHQL_MAX_COST: graphql-armor's cost (objects 2, scalars 1, times 1.5 per level). */
  maxCost: number;
  /** GRAPHQL_MAX_DIRECTIVES: directives in one operation. */
  maxDirectives: number;
  /** Schema introspection (`__schema`, `__type`): on except in production, where GRAPHIQL=on turns it on. */
  introspection: boolean;
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

/** A whole number of at least 1 (a limit that cannot be turned off). */
function positive(name: string, value: string | undefined, fallback: number): number {
  const n = int(name, value, fallback);
  if (n < 1) throw new Error(`${name} must be at least 1, got "${value}"`);
  return n;
}

/** RATE_LIMITS: `on` or `off`; unset means on, except in tests where it means off. */
function rateLimitsEnabled(value: string | undefined, test: boolean): boolean {
  if (value === undefined || value === "") return !test;
  if (/^(?:on|true|1)$/i.test(value)) return true;
  if (/^(?:off|false|0)$/i.test(value)) return false;
  throw new Error(`RATE_LIMITS must be "on" or "off", got "${value}"`);
}

/** An `on`/`off` switch; unset means `fallback`. */
function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (/^(?:on|true|1)$/i.test(value)) return true;
  if (/^(?:off|false|0)$/i.test(value)) return false;
  throw new Error(`${name} must be "on" or "off", got "${value}"`);
}

/** CORS_ORIGINS: `*`, or origins (`scheme://host[:port]`, nothing more) separated by commas. */
function corsOrigins(value: string | undefined): readonly string[] | "*" {
  if (value === undefined || value.trim() === "") return [];
  if (value.trim() === "*") return "*";
  return value.split(",").map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {}
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new Error(`CORS_ORIGINS must list origins such as https://app.example.com, got "${origin}"`);
    }
    return origin;
  });
}

/** TRUST_PROXY: off (unset, `false`, `0`), `true` (one proxy) or the number of proxies in front. */
function trustProxy(value: string | undefined): number {
  if (value === undefined || value === "" || /^false$/i.test(value)) return 0;
  if (/^true$/i.test(value)) return 1;
  return int("TRUST_PROXY", value, 0);
}

/** `host:port` with a loopback IP address: where a test-only setting may point. */
function loopback(name: string, value: string): { host: string; port: number } {
  const match = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535)
    throw new Error(`${name} must point at a loopback address and port, got "${value}"`);
  return { host: (match[1] as string).replace(/^\[|\]$/g, ""), port };
}

/** OUTBOUND_TEST_HOSTS and OUTBOUND_TEST_DNS: tests only, never in production. */
function outboundConfig(env: NodeJS.ProcessEnv, production: boolean): OutboundConfig {
  const hosts = env.OUTBOUND_TEST_HOSTS?.trim() ?? "";
  const dns = env.OUTBOUND_TEST_DNS?.trim() ?? "";
  if (production && (hosts || dns)) {
    throw new Error(
      "OUTBOUND_TEST_HOSTS and OUTBOUND_TEST_DNS are for tests only and are refused when NODE_ENV=production",
    );
  }
  const testHosts = new Map<string, { host: string; port: number }>();
  for (const entry of hosts ? hosts.split(",") : []) {
    const [name, target] = entry.split("=");
    if (!name?.trim() || !target) throw new Error(`OUTBOUND_TEST_HOSTS must be name=127.0.0.1:port,…, got "${entry}"`);
    testHosts.set(name.trim().toLowerCase(), loopback("OUTBOUND_TEST_HOSTS", target));
  }
  return {
    timeoutMs: positive("OUTBOUND_TIMEOUT_MS", env.OUTBOUND_TIMEOUT_MS, 5000),
    maxBodyBytes: positive("OUTBOUND_MAX_BODY_BYTES", env.OUTBOUND_MAX_BODY_BYTES, 64 * 1024),
    concurrency: positive("OUTBOUND_CONCURRENCY", env.OUTBOUND_CONCURRENCY, 8),
    testHosts,
    testDns: dns ? loopback("OUTBOUND_TEST_DNS", dns) : undefined,
  };
}

/** The data folder: the SQLite file's, else `./data`. */
function dataDir(databaseUrl: string): string {
  return databaseUrl.startsWith("file:") ? dirname(databaseUrl.slice("file:".length)) : "data";
}

/** A JWK set as JSON text (`{"keys":[…]}`), checked at start; unset or blank: undefined. */
function jwkSet(name: string, value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let keys: unknown;
  try {
    keys = (JSON.parse(text) as { keys?: unknown } | null)?.keys;
  } catch {}
  if (!Array.isArray(keys) || !keys.every((k) => k !== null && typeof k === "object" && typeof k.kid === "string")) {
    throw new Error(`${name} must be a JWK set as JSON, {"keys":[…]}, each key with a "kid"`);
  }
  return text;
}

function trustConfig(env: NodeJS.ProcessEnv, databaseUrl: string): TrustConfig {
  return {
    challengeTtlSeconds: positive("DOMAIN_CHALLENGE_TTL_SECONDS", env.DOMAIN_CHALLENGE_TTL_SECONDS, 7 * 86_400),
    recheckIntervalSeconds: int("DOMAIN_RECHECK_INTERVAL_SECONDS", env.DOMAIN_RECHECK_INTERVAL_SECONDS, 86_400),
    signingKeys: env.SIGNING_KEYS?.trim() || undefined,
    signingKeysFile: env.SIGNING_KEYS_FILE || join(dataDir(databaseUrl), "signing-keys.json"),
    signingKeyGraceDays: int("SIGNING_KEY_GRACE_DAYS", env.SIGNING_KEY_GRACE_DAYS, 30),
    cardTrustJwks: jwkSet("CARD_TRUST_JWKS", env.CARD_TRUST_JWKS),
  };
}

function webhooksConfig(env: NodeJS.ProcessEnv, outbound: OutboundConfig): WebhooksConfig {
  const leaseMs = positive("WEBHOOK_LEASE_MS", env.WEBHOOK_LEASE_MS, 60_000);
  // A lease that ran out while its attempt was still under way would let a second replica send it too.
  if (leaseMs <= outbound.timeoutMs) {
    throw new Error(`WEBHOOK_LEASE_MS (${leaseMs}) must be longer than OUTBOUND_TIMEOUT_MS (${outbound.timeoutMs})`);
  }
  return {
    maxAgeMs: positive("WEBHOOK_MAX_AGE_SECONDS", env.WEBHOOK_MAX_AGE_SECONDS, 86_400) * 1000,
    backoffBaseMs: positive("WEBHOOK_BACKOFF_BASE_MS", env.WEBHOOK_BACKOFF_BASE_MS, 5000),
    backoffMaxMs: positive("WEBHOOK_BACKOFF_MAX_MS", env.WEBHOOK_BACKOFF_MAX_MS, 3_600_000),
    leaseMs,
    pollIntervalMs: int("WEBHOOK_POLL_INTERVAL_MS", env.WEBHOOK_POLL_INTERVAL_MS, 1000),
    concurrency: positive("WEBHOOK_CONCURRENCY", env.WEBHOOK_CONCURRENCY, 16),
    maxPerProvider: positive("WEBHOOK_MAX_PER_PROVIDER", env.WEBHOOK_MAX_PER_PROVIDER, 10),
  };
}

/**
 * The prober (src/health): every agent's endpoint checked on a schedule, each check claimed by one
 * replica under a lease, through a door of its own (the outbound module's rules, its own cap on
 * requests at once, so probes never queue ahead of webhooks).
 */
export interface HealthConfig {
  /** HEALTH (`on`/`off`, default on): off, nothing is probed and no replica runs the prober. */
  enabled: boolean;
  /** HEALTH_INTERVAL_SECONDS: how often each agent is checked (300), with up to 10% of jitter. */
  intervalSeconds: number;
  /** HEALTH_CONFIRMATIONS: results in a row that must agree before the state changes (2). */
  confirmations: number;
  /** HEALTH_CONCURRENCY: checks under way at once in this process (64). */
  concurrency: number;
  /** HEALTH_PER_HOST: checks of one host under way at once (2). */
  perHost: number;
  /** HEALTH_MAX_BACKOFF_SECONDS: the longest wait between checks of an agent that stays DOWN (3600). */
  maxBackoffSeconds: number;
  /** HEALTH_TIMEOUT_MS: the deadline of one whole check, every request of it included (10000). */
  timeoutMs: number;
  /** HEALTH_LEASE_MS: how long a claimed check is this replica's; longer than the check's deadline. */
  leaseMs: number;
  /** HEALTH_POLL_MS: how often a replica looks for due checks (1000). */
  pollMs: number;
  /** HEALTH_CHECK_NOW_SECONDS: how often the owner or a reviewer may ask for a check now (60). */
  checkNowSeconds: number;
  /** HEALTH_RESULT_HOURS: how long each check's own result is kept (48); hourly counts are kept 30 days. */
  resultHours: number;
  /** DRIFT_REVIEW (`on`/`off`, default off): an approved agent whose live tools or skills changed gets an UPDATE review. */
  driftReview: boolean;
  /** The prober's door: the outbound rules with HEALTH_MAX_BODY_BYTES (1 MiB) and a cap of its own. */
  outbound: OutboundConfig;
}

function healthConfig(env: NodeJS.ProcessEnv, outbound: OutboundConfig): HealthConfig {
  const timeoutMs = positive("HEALTH_TIMEOUT_MS", env.HEALTH_TIMEOUT_MS, 10_000);
  const leaseMs = positive("HEALTH_LEASE_MS", env.HEALTH_LEASE_MS, 60_000);
  // A lease that ran out while its check was under way would let a second replica run it too.
  if (leaseMs <= timeoutMs)
    throw new Error(`HEALTH_LEASE_MS (${leaseMs}) must be longer than HEALTH_TIMEOUT_MS (${timeoutMs})`);
  // Real agents take 0.5–2 s a check: 10,000 every 300 s need about 33 checks/s, so about 64 at once.
  const concurrency = positive("HEALTH_CONCURRENCY", env.HEALTH_CONCURRENCY, 64);
  return {
    enabled: onOff("HEALTH", env.HEALTH, true),
    intervalSeconds: positive("HEALTH_INTERVAL_SECONDS", env.HEALTH_INTERVAL_SECONDS, 300),
    confirmations: positive("HEALTH_CONFIRMATIONS", env.HEALTH_CONFIRMATIONS, 2),
    concurrency,
    perHost: positive("HEALTH_PER_HOST", env.HEALTH_PER_HOST, 2),
    maxBackoffSeconds: positive("HEALTH_MAX_BACKOFF_SECONDS", env.HEALTH_MAX_BACKOFF_SECONDS, 3600),
    timeoutMs,
    leaseMs,
    pollMs: positive("HEALTH_POLL_MS", env.HEALTH_POLL_MS, 1000),
    checkNowSeconds: int("HEALTH_CHECK_NOW_SECONDS", env.HEALTH_CHECK_NOW_SECONDS, 60),
    resultHours: positive("HEALTH_RESULT_HOURS", env.HEALTH_RESULT_HOURS, 48),
    driftReview: onOff("DRIFT_REVIEW", env.DRIFT_REVIEW, false),
    // A check may hold two requests at once (an MCP stream beside a message), so twice the checks.
    outbound: {
      ...outbound,
      timeoutMs: Math.min(outbound.timeoutMs, timeoutMs),
      maxBodyBytes: positive("HEALTH_MAX_BODY_BYTES", env.HEALTH_MAX_BODY_BYTES, 1024 * 1024),
      concurrency: 2 * concurrency,
      // A check's requests share a connection (one TLS handshake, not three or four).
      keepAlive: true,
    },
  };
}

/**
 * Mirror sources (src/mirror): registries this one pulls from, each synced by one replica at a time
 * under a lease, through a door of its own (a page of 100 servers is larger than a webhook's answer).
 */
export interface MirrorConfig {
  /** MIRROR (`on`/`off`, default on): off, no replica syncs (sources may still be managed). */
  enabled: boolean;
  /** MIRROR_SOURCES: sources declared at start, as a JSON list or MCP registry URLs separated by commas. */
  sources: string | undefined;
  /** MIRROR_POLL_MS: how often a replica looks for a due source (5000). */
  pollMs: number;
  /** MIRROR_LEASE_MS: how long a claimed sync is this replica's without renewal (60000; renewed each page). */
  leaseMs: number;
  /** The mirror's door: the outbound rules with MIRROR_MAX_BODY_BYTES (16 MiB) and MIRROR_TIMEOUT_MS (30000). */
  outbound: OutboundConfig;
}

function mirrorConfig(env: NodeJS.ProcessEnv, outbound: OutboundConfig): MirrorConfig {
  const timeoutMs = positive("MIRROR_TIMEOUT_MS", env.MIRROR_TIMEOUT_MS, 30_000);
  const leaseMs = positive("MIRROR_LEASE_MS", env.MIRROR_LEASE_MS, 60_000);
  if (leaseMs <= timeoutMs)
    throw new Error(`MIRROR_LEASE_MS (${leaseMs}) must be longer than MIRROR_TIMEOUT_MS (${timeoutMs})`);
  return {
    enabled: onOff("MIRROR", env.MIRROR, true),
    sources: env.MIRROR_SOURCES || undefined,
    pollMs: positive("MIRROR_POLL_MS", env.MIRROR_POLL_MS, 5000),
    leaseMs,
    outbound: {
      ...outbound,
      timeoutMs,
      maxBodyBytes: positive("MIRROR_MAX_BODY_BYTES", env.MIRROR_MAX_BODY_BYTES, 16 * 1024 * 1024),
      concurrency: 4,
      keepAlive: true,
    },
  };
}

/**
 * The OAuth 2.1 resource server (src/auth/access.token.ts): access tokens are JWTs from the issuers
 * listed here, each with the audience its tokens must carry. Nothing set: no access token is accepted.
 */
export interface AccessTokenConfig {
  /**
   * OIDC_ISSUER with OIDC_AUDIENCE (default PUBLIC_URL) first, then the further issuers of
   * ACCESS_TOKEN_ISSUERS: `https://issuer-a|audience-a,https://issuer-b|audience-b` (an audience
   * holds no `,` or `|`). Each issuer is written exactly as its tokens' `iss` spells it.
   */
  issuers: readonly AccessTokenIssuer[];
  /**
   * OIDC_ROLES_CLAIM: the claim whose values grant roles through `roleMap`, beside the scopes: the
   * claim of that exact name if the token has one, else a dotted path (`realm_access.roles`).
   */
  rolesClaim: string | undefined;
  /** OIDC_ROLE_MAP: `value=role,…` (`registry-reviewers=reviewer,registry-admins=admin`), roles of roles.ts. */
  roleMap: ReadonlyMap<string, Role>;
  /**
   * Tuning of the key cache in milliseconds (how long a discovery document and JWKS are used, the
   * cooldown before an unknown `kid` may fetch the JWKS again). Not read from the environment: the
   * defaults of `ACCESS_TOKEN_KEYS_DEFAULTS` (access.token.ts) suit production; tests change them.
   */
  keys?: { cooldownMs?: number; cacheMaxAgeMs?: number };
}

export interface AccessTokenIssuer {
  /** The `iss` of its tokens and the `issuer` of its discovery document, exactly. */
  issuer: string;
  /** The `aud` its access tokens must carry. */
  audience: string;
}

/** An issuer: an https: URL (http: outside production) without credentials, query or fragment. */
function issuerUrl(name: string, value: string, production: boolean): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  const scheme = url?.protocol === "https:" || (!production && url?.protocol === "http:");
  if (!url || !scheme || url.username || url.password || /[?#\s]/.test(value)) {
    throw new Error(
      `${name} must name issuers by URL (https:${production ? "" : ", or http: outside production"}; no query or fragment), got "${value}"`,
    );
  }
  return value;
}

function accessTokenConfig(env: NodeJS.ProcessEnv, publicUrl: string | undefined): AccessTokenConfig {
  const production = env.NODE_ENV === "production";
  const primary = env.OIDC_ISSUER?.trim();
  const further = env.ACCESS_TOKEN_ISSUERS?.trim();
  const rolesClaim = env.OIDC_ROLES_CLAIM?.trim() || undefined;
  const roleMapText = env.OIDC_ROLE_MAP?.trim();
  if (!primary) {
    // A half-configured resource server would accept nothing while its operator believes otherwise.
    for (const name of ["OIDC_AUDIENCE", "ACCESS_TOKEN_ISSUERS", "OIDC_ROLES_CLAIM", "OIDC_ROLE_MAP"]) {
      if (env[name]?.trim()) throw new Error(`${name} is set but OIDC_ISSUER is not`);
    }
    return { issuers: [], rolesClaim: undefined, roleMap: new Map() };
  }
  const audience = env.OIDC_AUDIENCE?.trim() || publicUrl;
  if (!audience)
    throw new Error("OIDC_ISSUER needs the audience its access tokens carry: set OIDC_AUDIENCE or PUBLIC_URL");
  const issuers: AccessTokenIssuer[] = [{ issuer: issuerUrl("OIDC_ISSUER", primary, production), audience }];
  for (const entry of further ? further.split(",") : []) {
    const [issuer, issuerAudience, extra] = entry.split("|").map((part) => part.trim());
    if (!issuer || !issuerAudience || extra !== undefined) {
      throw new Error(`ACCESS_TOKEN_ISSUERS must be https://issuer|audience,…, got "${entry}"`);
    }
    if (issuers.some((listed) => listed.issuer === issuer)) {
      throw new Error(`ACCESS_TOKEN_ISSUERS lists ${issuer} twice, or OIDC_ISSUER again`);
    }
    issuers.push({ issuer: issuerUrl("ACCESS_TOKEN_ISSUERS", issuer, production), audience: issuerAudience });
  }
  const roleMap = new Map<string, Role>();
  for (const entry of roleMapText ? roleMapText.split(",") : []) {
    const at = entry.lastIndexOf("=");
    const value = entry.slice(0, Math.max(at, 0)).trim();
    const role = entry.slice(at + 1).trim();
    if (at < 0 || !value) throw new Error(`OIDC_ROLE_MAP must be value=role,…, got "${entry}"`);
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new Error(`OIDC_ROLE_MAP maps "${value}" to "${role}", which is not a role (${ROLES.join(", ")})`);
    }
    if (roleMap.has(value)) throw new Error(`OIDC_ROLE_MAP maps "${value}" twice`);
    roleMap.set(value, role as Role);
  }
  // Either without the other grants nothing, which is never what the operator meant.
  if (rolesClaim && roleMap.size === 0) throw new Error("OIDC_ROLES_CLAIM needs OIDC_ROLE_MAP (value=role,…)");
  if (!rolesClaim && roleMap.size > 0) throw new Error("OIDC_ROLE_MAP needs OIDC_ROLES_CLAIM, the claim it maps");
  return { issuers, rolesClaim, roleMap };
}

/**
 * People sign in at OIDC_ISSUER with the authorization code flow and PKCE (src/signin/); a session in
 * the database, behind a cookie, then stands for them.
 */
export interface SignInConfig {
  /** OIDC_ISSUER, as its discovery document names it. */
  issuer: string;
  /** OIDC_CLIENT_ID: the registry's client at the issuer; setting it turns sign-in on. */
  clientId: string;
  /** OIDC_CLIENT_SECRET: unset for a public client, which PKCE alone protects. */
  clientSecret: string | undefined;
  /** OIDC_SCOPES: what the sign-in asks for, `openid` among them (default `openid profile email`). */
  scopes: string;
  /** SESSION_IDLE_MINUTES: a session unused this long is over (default 60). */
  idleMinutes: number;
  /** SESSION_MAX_HOURS: a session is over this long after its sign-in, however busy (default 12). */
  maxHours: number;
}

function signInConfig(env: NodeJS.ProcessEnv, publicUrl: string | undefined): SignInConfig | undefined {
  const issuer = env.OIDC_ISSUER?.trim();
  const clientId = env.OIDC_CLIENT_ID?.trim();
  if (!clientId) {
    for (const name of ["OIDC_CLIENT_SECRET", "OIDC_SCOPES", "SESSION_IDLE_MINUTES", "SESSION_MAX_HOURS"]) {
      if (env[name]?.trim()) throw new Error(`${name} is set but OIDC_CLIENT_ID is not`);
    }
    return undefined;
  }
  if (!issuer) throw new Error("OIDC_CLIENT_ID is set but OIDC_ISSUER is not");
  // An ID token's `aud` is the client id: were it also the access tokens' audience, every ID token
  // the sign-in receives (and hands the issuer's sign-out as a hint, in a URL) would be a bearer token.
  if ((env.OIDC_AUDIENCE?.trim() || publicUrl) === clientId) {
    throw new Error("OIDC_AUDIENCE must not be OIDC_CLIENT_ID: give the registry's API a client of its own");
  }
  const scopes = (env.OIDC_SCOPES?.trim() || "openid profile email").split(/\s+/);
  if (!scopes.includes("openid")) throw new Error(`OIDC_SCOPES must include openid, got "${scopes.join(" ")}"`);
  // Behind a proxy that ends TLS the request looks like http: only PUBLIC_URL says the cookie is
  // Secure and which Origin the pages send.
  if (env.NODE_ENV === "production" && !publicUrl?.startsWith("https://")) {
    throw new Error("OIDC_CLIENT_ID (people signing in) needs PUBLIC_URL, an https: URL, in production");
  }
  return {
    issuer,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET?.trim() || undefined,
    scopes: scopes.join(" "),
    idleMinutes: positive("SESSION_IDLE_MINUTES", env.SESSION_IDLE_MINUTES, 60),
    maxHours: positive("SESSION_MAX_HOURS", env.SESSION_MAX_HOURS, 12),
  };
}

/** Prometheus metrics at GET /metrics (src/metrics/): what is counted, and who may scrape it. */
export interface MetricsConfig {
  /**
   * METRICS (`on`/`off`): count requests, checks and the rest, and answer /metrics. On by default,
   * except under READ_ACCESS=authenticated without METRICS_TOKEN: a private registry's numbers are
   * not public, and the token is the only credential /metrics takes.
   */
  enabled: boolean;
  /** METRICS_TOKEN: when set, /metrics needs `Authorization: Bearer <token>` (at least 16 characters). */
  token: string | undefined;
}

function metricsConfig(env: NodeJS.ProcessEnv, readAccess: Config["readAccess"]): MetricsConfig {
  const token = env.METRICS_TOKEN?.trim() || undefined;
  if (token !== undefined && token.length < 16) throw new Error("METRICS_TOKEN must be at least 16 characters");
  const guarded = readAccess === "public" || token !== undefined;
  const enabled = onOff("METRICS", env.METRICS, guarded);
  if (enabled && !guarded) {
    throw new Error("METRICS=on under READ_ACCESS=authenticated needs METRICS_TOKEN (or METRICS=off)");
  }
  return { enabled, token };
}

function drainConfig(env: NodeJS.ProcessEnv): DrainConfig {
  const delayMs = int("DRAIN_DELAY_MS", env.DRAIN_DELAY_MS, 0);
  const timeoutMs = int("DRAIN_TIMEOUT_MS", env.DRAIN_TIMEOUT_MS, 10_000);
  if (timeoutMs < 1 || delayMs >= timeoutMs) {
    throw new Error(`DRAIN_TIMEOUT_MS (${timeoutMs}) must be positive and longer than DRAIN_DELAY_MS (${delayMs})`);
  }
  return { delayMs, timeoutMs };
}

/** One of some words, or the default when unset or blank. */
function oneOf<T extends string>(name: string, value: string | undefined, words: readonly T[], fallback: T): T {
  const word = value?.trim();
  if (!word) return fallback;
  if (!(words as readonly string[]).includes(word))
    throw new Error(`${name} must be one of ${words.join(", ")}, got "${word}"`);
  return word as T;
}

/** DATABASE_POOL_SIZE's default, also what `openDb` takes when not told (tests, scripts). */
export const DEFAULT_DATABASE_POOL_SIZE = 10;

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
  const graphiql = onOff("GRAPHIQL", env.GRAPHIQL, !production);
  const databaseUrl = env.DATABASE_URL || "file:./data/registry.db";
  const outbound = outboundConfig(env, production);
  const readAccess = oneOf("READ_ACCESS", env.READ_ACCESS, ["public", "authenticated"] as const, "public");
  return {
    port: int("PORT", env.PORT, 4000),
    host: env.HOST || "0.0.0.0",
    databaseUrl,
    databasePoolSize: positive("DATABASE_POOL_SIZE", env.DATABASE_POOL_SIZE, DEFAULT_DATABASE_POOL_SIZE),
    production,
    reviewerJwtSecret,
    reviewerJwksUrl,
    reviewerJwtIssuer: env.REVIEWER_JWT_ISSUER || "agent-registry",
    reviewerJwtAudience: env.REVIEWER_JWT_AUDIENCE || "agent-registry",
    publicUrl: env.PUBLIC_URL || undefined,
    readAccess,
    logLevel: env.LOG_LEVEL === "silent" || env.NODE_ENV === "test" ? "silent" : "info",
    redisUrl: env.REDIS_URL || undefined,
    trustProxy: trustProxy(env.TRUST_PROXY),
    drain: drainConfig(env),
    responseCache: readAccess === "public" && onOff("RESPONSE_CACHE", env.RESPONSE_CACHE, env.NODE_ENV !== "test"),
    httpCacheMaxAge: int("HTTP_CACHE_MAX_AGE", env.HTTP_CACHE_MAX_AGE, 10),
    responseCacheKeyPrefix: env.RESPONSE_CACHE_KEY_PREFIX || "agent-registry:cache",
    feedChannel: env.FEED_CHANNEL || "agent-registry:feed",
    events: {
      retentionDays: positive("EVENT_RETENTION_DAYS", env.EVENT_RETENTION_DAYS, 90),
      pollMs: positive("FEED_POLL_MS", env.FEED_POLL_MS, 1000),
    },
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    graphiql,
    outbound,
    trust: trustConfig(env, databaseUrl),
    webhooks: webhooksConfig(env, outbound),
    health: healthConfig(env, outbound),
    mirror: mirrorConfig(env, outbound),
    accessTokens: accessTokenConfig(env, env.PUBLIC_URL || undefined),
    signIn: signInConfig(env, env.PUBLIC_URL || undefined),
    metrics: metricsConfig(env, readAccess),
    maxBodyBytes: positive("MAX_BODY_BYTES", env.MAX_BODY_BYTES, 64 * 1024),
    graphqlLimits: {
      maxDepth: int("GRAPHQL_MAX_DEPTH", env.GRAPHQL_MAX_DEPTH, 8),
      maxAliases: int("GRAPHQL_MAX_ALIASES", env.GRAPHQL_MAX_ALIASES, 15),
      maxTokens: int("GRAPHQL_MAX_TOKENS", env.GRAPHQL_MAX_TOKENS, 2000),
      maxCost: int("GRAPHQL_MAX_COST", env.GRAPHQL_MAX_COST, 5000),
      maxDirectives: int("GRAPHQL_MAX_DIRECTIVES", env.GRAPHQL_MAX_DIRECTIVES, 20),
      // GraphiQL is useless without the schema: turning it on in production opens introspection too.
      introspection: !production || graphiql,
    },
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
