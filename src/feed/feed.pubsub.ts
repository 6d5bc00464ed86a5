/**
 * The change feed's transport: graphql-yoga's `createPubSub`, over Redis (REDIS_URL, through
 * `@graphql-yoga/redis-event-target`) so that an event published by one replica reaches the
 * subscribers of every replica, or in this process's memory without Redis.
 *
 * - Publication: the feed plugin (`useFeed`) runs each mutation with an outbox (feed.outbox.ts);
 *   the writes note what they changed once their transaction has committed, and when the operation
 *   has run the plugin reads the state of the providers and reviews concerned (after the commit) and
 *   publishes one event per note, before the mutation is answered. A rolled-back write is never
 *   announced; an answered write has been announced.
 * - Order: every event gets a sequence number `seq` when it is published: with Redis, one Lua script
 *   increments a counter and publishes in one step, so the numbers follow the order in which Redis
 *   delivers the events to every subscriber (across replicas); without Redis, a counter of the
 *   process. A subscriber sees `seq` increase; gaps are events it may not see.
 * - Delivery is at most once: an event published while Redis is unreachable, or while a subscriber
 *   is disconnected, is not replayed. The database is the truth; a client catches up with the
 *   lists' `updatedSince` (README, "Lifecycle and change feed"). A Redis outage never fails a write
 *   (it is logged, like the rate limits' fail-open).
 * - Who sees what is decided per subscriber when an event arrives (feed.schema.ts, `visibleTo`).
 */
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { getOperationAST } from "graphql";
import { createPubSub, type Plugin, Repeater } from "graphql-yoga";
import { Redis } from "ioredis";
import type { Db } from "../db/client.ts";
import { summariesByIds } from "../providers/provider.store.ts";
import { type FeedKind, type FeedNote, withOutbox } from "./feed.outbox.ts";

/** The provider as an event carries it: its list form plus what decides who may see the event. */
export interface FeedProvider {
  id: number;
  providerCode: string;
  name: string;
  summary: string;
  agentType: string;
  visibility: string;
  trustTier: string;
  reviewStage: string;
  labels: unknown;
  endpoint: unknown;
  updatedAt: string;
  version: number;
  lifecycle: string;
  lifecycleMessage: string | null;
  successorCode: string | null;
  publisherVerified: boolean;
}

export interface FeedReview {
  reviewCode: string;
  kind: string;
  status: string;
  priority: string;
  assignedTo: string | null;
}

/** One published event (JSON as it travels through Redis). */
export interface FeedEvent {
  seq: number;
  at: string;
  kind: FeedKind;
  provider: FeedProvider;
  review: FeedReview | null;
  /** TOKENS_REVOKED only (never shown to a subscriber). */
  tokenIds?: string[];
}

type Log = (line: Record<string, unknown>) => void;

/** Increments the sequence and publishes `<seq> <json>` in one step, so numbers follow delivery order. */
const PUBLISH_SCRIPT = `local seq = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], seq .. ' ' .. ARGV[2])
return seq`;

export interface Feed {
  /** Publishes the events of committed notes (reads their providers and reviews first). */
  announce(db: Db, notes: readonly FeedNote[]): Promise<void>;
  /** The events from now on that `accept` lets through, until the subscriber leaves or the feed closes. */
  subscribe(
    accept: (event: FeedEvent) => boolean,
    options?: { until?: (event: FeedEvent) => boolean },
  ): Repeater<FeedEvent>;
  /** How many subscriptions are open (tests, and draining). */
  readonly subscribers: number;
  /** Ends every open subscription (their streams complete, so clients reconnect elsewhere). */
  endSubscriptions(): void;
  /** Ends every subscription and closes the Redis connections. */
  close(): Promise<void>;
}

/**
 * The feed of an app. `state` is the app's (yoga.ts): while the replica drains, open subscriptions
 * are ended so their clients reconnect to another replica, and the drain is not held up by streams
 * that never finish.
 */
export function createFeed(options: {
  redisUrl?: string | undefined;
  /** The Redis channel (config.feedChannel), also the pub/sub topic; its sequence counter is `<channel>:seq`. */
  channel?: string;
  log?: Log;
  state?: { draining: boolean };
}): Feed {
  const channel = options.channel ?? "agent-registry:feed";
  const sequenceKey = `${channel}:seq`;
  const log = options.log ?? (() => {});
  let lastWarning = 0;
  const warn = (msg: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarning < 30_000) return;
    lastWarning = now;
    log({ time: new Date().toISOString(), level: "warn", msg, error: (error as Error)?.message ?? String(error) });
  };

  let publisher: Redis | undefined;
  let subscriber: Redis | undefined;
  let connecting: Promise<void> | undefined;
  /** The pending publication of the event being dispatched (the event target does not return it). */
  let dispatched: Promise<unknown> | undefined;
  let counter = 0;
  type Topics = Record<string, [FeedEvent]>;
  let pubsub: ReturnType<typeof createPubSub<Topics>>;

  if (options.redisUrl) {
    const redisOptions = {
      lazyConnect: true,
      connectTimeout: 1000,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(times * 250, 5000),
      disconnectTimeout: 200,
    };
    // A publication while Redis is away fails at once (and is logged) rather than waiting in a queue.
    publisher = new Redis(options.redisUrl, { ...redisOptions, enableOfflineQueue: false });
    // The subscriber connects with its first subscription and re-subscribes after a reconnection.
    subscriber = new Redis(options.redisUrl, { ...redisOptions, enableOfflineQueue: true });
    publisher.on("error", (error) => warn("redis unavailable: feed events are not published", error));
    subscriber.on("error", (error) => warn("redis unavailable: feed events are not received", error));
    const client = publisher;
    const publishClient = {
      publish(topic: string, message: string) {
        dispatched = client.eval(PUBLISH_SCRIPT, 1, sequenceKey, topic, message);
        return dispatched;
      },
    };
    const eventTarget = createRedisEventTarget<CustomEvent<FeedEvent>>({
      publishClient: publishClient as unknown as Redis,
      subscribeClient: subscriber,
      serializer: {
        stringify: (event: unknown) => JSON.stringify(event),
        // `<seq> <json>`: the number the script gave the event.
        parse: (message: string) => {
          const space = message.indexOf(" ");
          try {
            return { ...JSON.parse(message.slice(space + 1)), seq: Number(message.slice(0, space)) };
          } catch {
            // Not one of ours (someone else publishing on the channel): dropped, never a crash.
            return null;
          }
        },
      },
    });
    pubsub = createPubSub<Topics>({ eventTarget });
  } else {
    pubsub = createPubSub<Topics>();
  }

  async function publish(event: Omit<FeedEvent, "seq">): Promise<void> {
    if (!publisher) {
      pubsub.publish(channel, { ...event, seq: ++counter });
      return;
    }
    if (publisher.status === "wait") connecting ??= publisher.connect().catch(() => {});
    if (connecting) await connecting;
    try {
      pubsub.publish(channel, event as FeedEvent);
      const pending = dispatched;
      dispatched = undefined;
      await pending;
    } catch (error) {
      warn("redis: cannot publish a feed event", error);
    }
  }

  const stops = new Set<() => void>();
  let watch: NodeJS.Timeout | undefined;
  const watchDrain = () => {
    const state = options.state;
    if (!state || watch) return;
    watch = setInterval(() => {
      if (state.draining) for (const end of [...stops]) end();
      if (stops.size === 0) {
        clearInterval(watch);
        watch = undefined;
      }
    }, 100);
    watch.unref();
  };

  return {
    async announce(db, notes) {
      // Without Redis an event reaches this process's subscribers only: with none, nobody would
      // see it, so nothing is read (a later subscriber's `seq` still increases).
      if (notes.length === 0 || (!publisher && stops.size === 0)) return;
      try {
        await announceNotes(db, notes);
      } catch (error) {
        // Announcing never fails a committed write: the database is the truth.
        warn("the feed could not announce a write", error);
      }
    },

    subscribe(accept, subscribeOptions = {}) {
      return new Repeater<FeedEvent>(async (push, stop) => {
        const source = pubsub.subscribe(channel)[Symbol.asyncIterator]();
        const end = () => stop();
        stops.add(end);
        watchDrain();
        // The subscriber left (or the feed closed): free the listener (and the Redis channel with the last one).
        stop.then(() => {
          stops.delete(end);
          void source.return?.();
        });
        for (;;) {
          const next = await Promise.race([
            source.next(),
            stop.then(() => ({ done: true as const, value: undefined })),
          ]);
          if (next.done) break;
          if (!next.value?.provider) continue;
          const last = subscribeOptions.until?.(next.value) ?? false;
          if (accept(next.value)) await push(next.value);
          if (last) break;
        }
        stop();
      });
    },

    get subscribers() {
      return stops.size;
    },

    endSubscriptions() {
      for (const end of [...stops]) end();
    },

    async close() {
      clearInterval(watch);
      for (const end of [...stops]) end();
      await Promise.all(
        [publisher, subscriber].map(async (client) => {
          if (!client) return;
          if (client.status === "ready") await client.quit().catch(() => client.disconnect());
          else client.disconnect();
        }),
      );
    },
  };

  async function announceNotes(db: Db, notes: readonly FeedNote[]): Promise<void> {
    const providerIds = [...new Set(notes.map((n) => n.providerId))];
    const reviewIds = [...new Set(notes.flatMap((n) => (n.reviewId === undefined ? [] : [n.reviewId])))];
    const [providers, reviews] = await Promise.all([
      summariesByIds(db, providerIds),
      reviewIds.length
        ? db.review.findMany({
            where: { id: { in: reviewIds } },
            select: { id: true, reviewCode: true, kind: true, status: true, priority: true, assignedTo: true },
          })
        : Promise.resolve([]),
    ]);
    const byId = new Map(providers.map((p) => [p.id, { ...p, updatedAt: p.updatedAt.toISOString() }]));
    const reviewById = new Map(reviews.map(({ id, ...r }) => [id, r]));
    const at = new Date().toISOString();
    for (const note of notes) {
      const provider = byId.get(note.providerId);
      if (!provider) continue;
      const review = note.reviewId === undefined ? null : (reviewById.get(note.reviewId) ?? null);
      await publish({ at, kind: note.kind, provider, review, ...(note.tokenIds ? { tokenIds: note.tokenIds } : {}) });
    }
  }
}

/**
 * The feed's Yoga plugin: each mutation runs with an outbox and its notes are published once it has
 * run, before it is answered; `app.dispose()` ends the subscriptions and closes Redis.
 */
const FEED = Symbol.for("agent-registry.feed");

/** The app's feed, from a GraphQL context (put there by `useFeed`). */
export function feedOf(context: object): Feed {
  const feed = (context as Record<symbol, Feed | undefined>)[FEED];
  if (!feed) throw new Error("feed: the app has no feed plugin");
  return feed;
}

export function useFeed(feed: Feed, db: Db): Plugin {
  return {
    onContextBuilding({ extendContext }) {
      extendContext({ [FEED]: feed } as never);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const outbox: FeedNote[] = [];
      setExecuteFn((executeArgs) => withOutbox(outbox, () => executeFn(executeArgs)));
      return {
        async onExecuteDone() {
          await feed.announce(db, outbox);
        },
      };
    },
    async onDispose() {
      await feed.close();
    },
  };
}
