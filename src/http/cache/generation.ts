/**
 * The response cache's generation: which kept answers are still true. One generation covers every
 * answer, not a key per provider: a write changes more than its own profile (an approval or a
 * suspension changes every list and search the provider appears in, an intake can turn a cached 404
 * into a profile), and which lists hold a provider is not known without running them again. A
 * registry is read far more than written, so "every write empties the cache" costs little and is
 * plainly right.
 *
 * - Every mutation that executes (successful or not) bumps the generation after it ran and before it
 *   is answered; the bump empties the cache.
 * - A read notes the generation when it arrives and is answered from, or fills, the cache only if it
 *   is still the current one: an answer computed while a write was changing its data is never kept.
 * - With Redis (replicas) the generation is a counter there: a write increments it before it is
 *   answered, and a cacheable read asks for it before answering from memory — one GET shared by the
 *   reads of one turn of the event loop, sent after they arrived — and a replica that finds it moved
 *   empties its cache. A read that arrives anywhere after a write was acknowledged sees the new
 *   generation. (A pub/sub broadcast can reach a replica after the write was acknowledged: a test of
 *   two replicas caught a stale read in that gap.)
 * - While Redis cannot be reached a replica neither reads nor fills its cache: it fails open to the
 *   database, never to stale data. Entries also expire (store.ts), a bound for writes that reach the
 *   database some other way (a migration, a seed, a replica cut off from Redis).
 */
import { Redis } from "ioredis";

export interface GenerationOptions {
  redisUrl?: string;
  /** Prefix of the shared generation's key in Redis (replicas of one database share it). */
  keyPrefix?: string;
  log?: (line: Record<string, unknown>) => void;
}

const UNAVAILABLE = "redis unavailable: the response cache is bypassed until it returns";

/** A generation: this process's counter, or, with Redis, the shared one as last seen. */
export class Generation {
  /** The current generation; a read may use the cache only while the one it noted is this. */
  value = 0;
  private readonly key: string;
  private readonly client: Redis | undefined;
  private readonly log: (line: Record<string, unknown>) => void;
  private lastWarning = 0;
  /** The GET of this turn, shared by every read that asks in it. */
  private asking: Promise<number | null> | undefined;

  /** `store` is emptied whenever the generation moves. */
  constructor(
    private readonly store: { clear(): void },
    options: GenerationOptions,
  ) {
    this.key = `${options.keyPrefix ?? "agent-registry:cache"}:generation`;
    this.log = options.log ?? (() => {});
    if (!options.redisUrl) return;
    this.client = new Redis(options.redisUrl, {
      connectTimeout: 1000,
      // A command while disconnected fails at once: the read goes to the database instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(times * 250, 5000),
      disconnectTimeout: 200,
    });
    this.client.on("error", (error) => this.warn(UNAVAILABLE, error));
  }

  /** Whether the generation is shared with other replicas (through Redis). */
  get isShared(): boolean {
    return this.client !== undefined;
  }

  /** The current generation, after adopting the shared one; null while Redis cannot be asked. */
  current(): number | null | Promise<number | null> {
    if (!this.client) return this.value;
    return this.shared(this.client).then((shared) => {
      if (shared === null) return null;
      if (shared !== this.value) {
        this.value = shared;
        this.store.clear();
      }
      return this.value;
    });
  }

  /** Bumps the generation (a write happened): this process's cache at once, then the shared counter. */
  async invalidate(): Promise<void> {
    this.value += 1;
    this.store.clear();
    if (!this.client) return;
    try {
      this.value = await this.client.incr(this.key);
      this.store.clear();
    } catch (error) {
      // Every replica that cannot reach Redis bypasses its cache; one that still can would not know
      // of this write: entries expire whatever happens.
      this.warn("redis: cannot announce a write to the other replicas", error);
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    if (!client) return;
    if (client.status === "ready") await client.quit().catch(() => client.disconnect());
    else client.disconnect();
  }

  /** The shared generation (null when Redis cannot be asked): one GET for every read of this turn. */
  private shared(redis: Redis): Promise<number | null> {
    this.asking ??= new Promise((resolve) =>
      setImmediate(() => {
        this.asking = undefined;
        redis.get(this.key).then(
          (value) => resolve(Number(value ?? 0)),
          (error: unknown) => {
            this.warn(UNAVAILABLE, error);
            resolve(null);
          },
        );
      }),
    );
    return this.asking;
  }

  private warn(msg: string, error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 30_000) return;
    this.lastWarning = now;
    this.log({ time: new Date().toISOString(), level: "warn", msg, error: (error as Error)?.message ?? String(error) });
  }
}
