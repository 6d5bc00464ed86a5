/**
 * The change feed: the event log (src/events) streamed to subscribers, woken through Redis.
 *
 * - The log is the truth. A stream starts after a seq (its `after`, or the SSE `Last-Event-ID` a
 *   reconnecting client sends) and goes on from there in seq order, each event once: from the
 *   database while it is behind the replica's in-memory tail (event.tail.ts), then from the tail.
 * - Waking: a write notes what it appended once committed (feed.outbox.ts); the plugin pokes this
 *   replica's tail and publishes a note over Redis (REDIS_URL, graphql-yoga's pub/sub through
 *   `@graphql-yoga/redis-event-target`), which pokes every other replica's. Without Redis, or when
 *   a note is lost, the tail's timer finds the events a moment later: a Redis outage delays, never
 *   loses, and never fails a write (it is logged).
 * - Token revocations are not in the log; they travel the same way and end the streams opened with
 *   the revoked tokens at once.
 * - Who sees what is the log's rule (event.rules.ts `visibleTo`), decided per subscriber.
 */
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { getOperationAST } from "graphql";
import { createPubSub, type Plugin } from "graphql-yoga";
import { Redis } from "ioredis";
import type { Db } from "../db/client.ts";
import { createTail, type Tail } from "../events/event.tail.ts";
import { type FeedNote, withOutbox } from "./feed.outbox.ts";
import { type FeedStream, openStream, type StreamOptions } from "./feed.stream.ts";

/** What travels between replicas: a seq appended somewhere, or tokens revoked. */
type Signal = { kind: "APPENDED"; seq: number } | { kind: "TOKENS_REVOKED"; providerId: number; tokenIds: string[] };

type Log = (line: Record<string, unknown>) => void;

/** A subscriber's stream, and what ends it at once: the revocation of the token it was opened with. */
export type FeedStreamOptions = StreamOptions & {
  revoked?: ((signal: { providerId: number; tokenIds: string[] }) => boolean) | undefined;
};

export interface Feed {
  /** Wakes the readers of every replica for what committed writes noted. */
  announce(notes: readonly FeedNote[]): Promise<void>;
  /** The events of the log from `after` on, as the options say, until the subscriber leaves or the feed closes. */
  stream(options: FeedStreamOptions): Promise<FeedStream>;
  /** This replica's tail of the log, following the log's end from the first call on (the webhooks use it). */
  follow(): Promise<Tail>;
  /** How many streams are open (tests, and draining). */
  readonly subscribers: number;
  /** Ends every open stream (their clients reconnect elsewhere, from their last seq). */
  endSubscriptions(): void;
  /** Ends every stream and closes the Redis connections. */
  close(): Promise<void>;
}

/**
 * The feed of an app. `state` is the app's (yoga.ts): while the replica drains, open streams are
 * ended so their clients reconnect to another replica, and the drain is not held up by them.
 */
export function createFeed(options: {
  db: Db;
  redisUrl?: string | undefined;
  /** The Redis channel (config.feedChannel), also the pub/sub topic. */
  channel?: string;
  /** How often the tail looks at the log's end without being woken. */
  pollMs?: number;
  log?: Log;
  state?: { draining: boolean };
}): Feed {
  const { db } = options;
  const channel = options.channel ?? "agent-registry:feed";
  const log = options.log ?? (() => {});
  let lastWarning = 0;
  const warn = (msg: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarning < 30_000) return;
    lastWarning = now;
    log({ time: new Date().toISOString(), level: "warn", msg, error: (error as Error)?.message ?? String(error) });
  };
  const tail = createTail(db, { pollMs: options.pollMs ?? 1000, log });

  let publisher: Redis | undefined;
  let subscriber: Redis | undefined;
  let connecting: Promise<void> | undefined;
  let published: Promise<unknown> | undefined;
  type Topics = Record<string, [Signal]>;
  let pubsub: ReturnType<typeof createPubSub<Topics>>;
  if (options.redisUrl) {
    const redisOptions = {
      lazyConnect: true,
      connectTimeout: 1000,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(times * 250, 5000),
      disconnectTimeout: 200,
    };
    // A note while Redis is away fails at once (and is logged) rather than waiting in a queue.
    publisher = new Redis(options.redisUrl, { ...redisOptions, enableOfflineQueue: false });
    subscriber = new Redis(options.redisUrl, { ...redisOptions, enableOfflineQueue: true });
    publisher.on("error", (error) => warn("redis unavailable: feed notes are not sent", error));
    subscriber.on("error", (error) => warn("redis unavailable: feed notes are not received", error));
    // The event target does not hand back its publication: this keeps it, to await and to catch.
    const client = publisher;
    const publishClient = {
      publish(topic: string, message: string) {
        published = client.publish(topic, message);
        return published;
      },
    };
    const eventTarget = createRedisEventTarget<CustomEvent<Signal>>({
      publishClient: publishClient as unknown as Redis,
      subscribeClient: subscriber,
      serializer: {
        stringify: (signal: unknown) => JSON.stringify(signal),
        // Not one of ours (someone else publishing on the channel): dropped, never a crash.
        parse: (message: string) => {
          try {
            return JSON.parse(message);
          } catch {
            return null;
          }
        },
      },
    });
    pubsub = createPubSub<Topics>({ eventTarget });
  } else {
    pubsub = createPubSub<Topics>();
  }

  /** The open streams, with what ends each on a revocation. */
  const streams = new Map<FeedStream, FeedStreamOptions["revoked"]>();
  let listening: AsyncIterator<Signal> | undefined;
  /** The replica's one subscription to the notes, from the tail's first use to the feed's close. */
  async function listen(): Promise<void> {
    await tail.ready();
    if (listening) return;
    tail.onAppended((events) => {
      for (const stream of streams.keys()) if (stream.live) stream.offer(events);
    });
    listening = pubsub.subscribe(channel)[Symbol.asyncIterator]();
    const source = listening;
    void (async () => {
      for (;;) {
        const next = await source.next().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) return;
        const signal = next.value;
        if (signal?.kind === "APPENDED") tail.poke();
        else if (signal?.kind === "TOKENS_REVOKED") {
          for (const [stream, revoked] of streams) if (revoked?.(signal)) stream.end();
        }
      }
    })();
  }

  async function send(signal: Signal): Promise<void> {
    if (publisher?.status === "wait") connecting ??= publisher.connect().catch(() => {});
    if (connecting) await connecting;
    try {
      pubsub.publish(channel, signal);
      const pending = published;
      published = undefined;
      await pending;
    } catch (error) {
      warn("redis: cannot send a feed note", error);
    }
  }

  const endAll = () => {
    for (const stream of [...streams.keys()]) stream.end();
  };
  let watch: NodeJS.Timeout | undefined;
  const watchDrain = () => {
    const state = options.state;
    if (!state || watch) return;
    watch = setInterval(() => {
      if (state.draining) endAll();
      if (streams.size === 0) {
        clearInterval(watch);
        watch = undefined;
      }
    }, 100);
    watch.unref();
  };

  return {
    async follow() {
      await listen();
      return tail;
    },

    async announce(notes) {
      let seq = 0;
      for (const note of notes) {
        if (note.kind === "APPENDED") {
          tail.committed(note.events);
          for (const event of note.events) seq = Math.max(seq, event.seq);
        } else await send({ kind: "TOKENS_REVOKED", providerId: note.providerId, tokenIds: note.tokenIds });
      }
      if (seq === 0) return;
      // Other replicas' tails: without Redis there are none to wake, or their timers find it.
      if (publisher) await send({ kind: "APPENDED", seq });
    },

    async stream(streamOptions) {
      await listen();
      const stream = openStream(db, tail, streamOptions, (ended) => streams.delete(ended));
      streams.set(stream, streamOptions.revoked);
      watchDrain();
      return stream;
    },

    get subscribers() {
      return streams.size;
    },

    endSubscriptions: endAll,

    async close() {
      clearInterval(watch);
      endAll();
      tail.close();
      await listening?.return?.();
      await Promise.all(
        [publisher, subscriber].map(async (client) => {
          if (!client) return;
          if (client.status === "ready") await client.quit().catch(() => client.disconnect());
          else client.disconnect();
        }),
      );
    },
  };
}

/**
 * The feed's Yoga plugin: each mutation runs with an outbox and what it noted is announced once it
 * has run, before it is answered; `app.dispose()` ends the streams and closes Redis.
 */
const FEED = Symbol.for("agent-registry.feed");

/** The app's feed, from a GraphQL context (put there by `useFeed`). */
export function feedOf(context: object): Feed {
  const feed = (context as Record<symbol, Feed | undefined>)[FEED];
  if (!feed) throw new Error("feed: the app has no feed plugin");
  return feed;
}

export function useFeed(feed: Feed): Plugin {
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
          if (outbox.length > 0) await feed.announce(outbox);
        },
      };
    },
    async onDispose() {
      await feed.close();
    },
  };
}
