/**
 * The rate limits of API.md §6, built once per app from the configuration: intake per client
 * address, failed authentication per client address, writes per agent token. Counting is
 * rate-limiter-flexible's: in this process's memory, or in Redis (REDIS_URL) so that every replica
 * counts against the same limit.
 *
 * When Redis cannot be reached the limits fail open to per-process counting (the library's
 * `insuranceLimiter`), with a logged warning: a rate limit protects the registry from abuse, it
 * guards no data, so an outage of the shared counter should neither take the API down (fail closed)
 * nor leave it unprotected. Each replica then enforces the limit on its own until Redis is back.
 * No path through here answers a 500.
 */
import { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Config } from "../config.ts";
import { apiError } from "../errors.ts";

export type LimitName = "intake" | "authFailures" | "writes";

/** The window of each limit, and the configured number of points in it. */
const LIMITS: Record<LimitName, { seconds: number; points: (c: Config["rateLimits"]) => number; message: string }> = {
  intake: {
    seconds: 3600,
    points: (c) => c.intakePerHour,
    message: "Too many intakes from this address; try again later",
  },
  authFailures: {
    seconds: 900,
    points: (c) => c.authFailuresPer15Min,
    message: "Too many failed authentications from this address; try again later",
  },
  writes: {
    seconds: 60,
    points: (c) => c.writesPerMinute,
    message: "Too many writes with this token; try again later",
  },
};

/** How long a Redis connection attempt may take before the limits count in memory instead. */
const REDIS_CONNECT_TIMEOUT_MS = 1000;
/** How often a Redis outage is logged at most. */
const WARN_EVERY_MS = 30_000;

export interface Limits {
  /** Whether any limit is on. */
  readonly enabled: boolean;
  /** Counts `points` for `key`; throws RATE_LIMITED (with Retry-After) when that goes over the limit. */
  consume(name: LimitName, key: string, points?: number): Promise<void>;
  /** Throws RATE_LIMITED when `key` has used up its limit, without counting anything. */
  check(name: LimitName, key: string): Promise<void>;
  /** Counts `points` for `key` without refusing anything (the refusal comes with the next `check`). */
  penalize(name: LimitName, key: string, points?: number): Promise<void>;
  /** Closes the Redis client, if any. */
  close(): Promise<void>;
}

/** The 429 answer: `Retry-After` in whole seconds, at least 1. */
export function rateLimited(name: LimitName, msBeforeNext: number) {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return apiError("RATE_LIMITED", LIMITS[name].message, { headers: { "Retry-After": String(seconds) } });
}

type Log = (line: Record<string, unknown>) => void;

/** The Redis side: a lazily connected client whose outages are logged, not thrown. */
function redisStore(url: string, log: Log) {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    // A command while disconnected fails at once (and the insurance limiter answers) rather than
    // waiting in a queue for a connection that may not come.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 250, 5000),
    // How long closing waits for a half-open socket before destroying it.
    disconnectTimeout: 200,
  });
  let lastWarning = 0;
  let connecting: Promise<void> | undefined;
  client.on("error", (error: Error) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    log({
      time: new Date().toISOString(),
      level: "warn",
      msg: "redis unavailable: rate limits are counted per process until it returns",
      error: error.message,
    });
  });
  client.on("ready", () => {
    if (lastWarning === 0) return;
    lastWarning = 0;
    log({ time: new Date().toISOString(), level: "info", msg: "redis available again: rate limits are shared" });
  });
  return {
    client,
    /** Connects on first use; later calls never wait (ioredis reconnects in the background). */
    async ready(): Promise<void> {
      if (client.status === "wait") connecting ??= client.connect().catch(() => {});
      if (connecting) await connecting;
    },
    async close(): Promise<void> {
      if (client.status === "ready") await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

const OFF: Limits = {
  enabled: false,
  consume: async () => {},
  check: async () => {},
  penalize: async () => {},
  close: async () => {},
};

/** The limiter set of a configuration; `log` receives the Redis outage warnings. */
export function createLimits(config: Pick<Config, "rateLimits" | "redisUrl">, log: Log = () => {}): Limits {
  const settings = config.rateLimits;
  if (!settings.enabled) return OFF;
  const active = (Object.keys(LIMITS) as LimitName[]).filter((name) => LIMITS[name].points(settings) > 0);
  if (active.length === 0) return OFF;

  const store = config.redisUrl ? redisStore(config.redisUrl, log) : undefined;
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  for (const name of active) {
    const points = LIMITS[name].points(settings);
    const duration = LIMITS[name].seconds;
    const keyPrefix = `${settings.keyPrefix}:${name}`;
    const memory = new RateLimiterMemory({ points, duration, keyPrefix });
    limiters.set(
      name,
      store
        ? new RateLimiterRedis({
            storeClient: store.client,
            points,
            duration,
            keyPrefix,
            rejectIfRedisNotReady: true,
            insuranceLimiter: memory,
          })
        : memory,
    );
  }

  /** Runs a limiter call; a store error (not a refusal) lets the request through with a warning. */
  async function run(name: LimitName, call: (limiter: RateLimiterAbstract) => Promise<unknown>): Promise<unknown> {
    const limiter = limiters.get(name);
    if (!limiter) return undefined;
    await store?.ready();
    try {
      return await call(limiter);
    } catch (error) {
      if (error instanceof RateLimiterRes) throw rateLimited(name, error.msBeforeNext);
      log({ time: new Date().toISOString(), level: "warn", msg: "rate limiter failed open", error: String(error) });
      return undefined;
    }
  }

  return {
    enabled: true,
    consume: async (name, key, points = 1) => {
      await run(name, (l) => l.consume(key, points));
    },
    check: async (name, key) => {
      const res = await run(name, (l) => l.get(key));
      if (res instanceof RateLimiterRes && res.consumedPoints >= LIMITS[name].points(settings)) {
        throw rateLimited(name, res.msBeforeNext);
      }
    },
    penalize: async (name, key, points = 1) => {
      await run(name, (l) => l.penalty(key, points));
    },
    close: async () => {
      await store?.close();
    },
  };
}
