/**
 * One subscriber's stream of the log: from its position on, in seq order, each event once.
 *
 * While it is behind the replica's tail it reads (the tail's window, else the database, a page at
 * a time); once caught up it is live, and the tail hands it each new event as it reads it, in the
 * same turn as it moves its head, so nothing falls between the two. A subscriber that stops reading
 * falls back to reading at its own pace once it has a page waiting, so a slow client holds no more
 * than that in memory. A plain iterator rather than a generator or a Repeater: with a thousand
 * subscribers each event passes through a thousand of these, and each step costs one promise.
 */
import type { Db } from "../db/client.ts";
import { type Audience, visibleTo } from "../events/event.rules.ts";
import { type LoggedEvent, readEvents } from "../events/event.store.ts";
import type { Tail } from "../events/event.tail.ts";

/** How many events a stream that is behind reads from the database at a time, and holds at most. */
const PAGE = 500;

export interface StreamOptions {
  /** Start after this seq. */
  after: number;
  audience: Audience;
  providerCode?: string | undefined;
  kinds?: ReadonlySet<string> | undefined;
  /** Ends the stream after an event it has handed out. */
  until?: ((event: LoggedEvent) => boolean) | undefined;
  /** Told each event's seq as it is handed out (the SSE message ids, feed.sse.ts). */
  seen?: ((seq: number) => void) | undefined;
}

export interface FeedStream extends AsyncIterableIterator<LoggedEvent> {
  /** Whether the tail should hand it new events. */
  readonly live: boolean;
  /** New events from the tail (only while live). */
  offer(events: readonly LoggedEvent[]): void;
  /** Ends it: a pending read answers done. */
  end(): void;
}

export function openStream(
  db: Db,
  tail: Tail,
  options: StreamOptions,
  onEnd: (stream: FeedStream) => void,
): FeedStream {
  const { audience, providerCode, kinds } = options;
  const keep = (event: LoggedEvent) =>
    visibleTo(audience, event) &&
    (providerCode === undefined || event.providerCode === providerCode) &&
    (!kinds || kinds.has(event.kind));
  const done: IteratorResult<LoggedEvent> = { done: true, value: undefined };
  const queue: LoggedEvent[] = [];
  /** The highest seq looked at (handed out or not). */
  let last = options.after;
  let live = false;
  let filling = false;
  let ended = false;
  let endAfterQueue = false;
  let pending: ((result: IteratorResult<LoggedEvent>) => void) | undefined;
  let failed: ((error: unknown) => void) | undefined;

  function take(): IteratorResult<LoggedEvent> {
    const event = queue.shift() as LoggedEvent;
    options.seen?.(event.seq);
    if (options.until?.(event)) endAfterQueue = true;
    return { done: false, value: event };
  }

  function deliver(): void {
    if (!pending) return;
    const resolve = pending;
    if (queue.length > 0) {
      pending = undefined;
      failed = undefined;
      resolve(take());
    } else if (ended || endAfterQueue) {
      pending = undefined;
      failed = undefined;
      stream.end();
      resolve(done);
    }
  }

  /** Reads what it is behind on, until caught up with the tail (then live) or a page is waiting. */
  async function fill(): Promise<void> {
    filling = true;
    try {
      while (!ended && !live && queue.length < PAGE) {
        const held = tail.since(last);
        if (held) {
          for (const event of held) if (keep(event)) queue.push(event);
          // Every event up to the tail's head has been looked at; later ones are offered.
          last = Math.max(last, tail.head);
          live = true;
          break;
        }
        // Behind the tail's window: the tail's head is read first, so every event up to it is
        // committed and in this read.
        const head = tail.head;
        const page = await readEvents(db, {
          after: last,
          limit: PAGE,
          audience,
          providerCode,
          kinds: kinds ? [...kinds] : undefined,
        });
        queue.push(...page);
        last = page.length === PAGE ? (page[PAGE - 1] as LoggedEvent).seq : Math.max(page.at(-1)?.seq ?? last, head);
        deliver();
      }
    } catch (error) {
      failed?.(error);
      pending = undefined;
      failed = undefined;
      stream.end();
    } finally {
      filling = false;
    }
    deliver();
  }

  const stream: FeedStream = {
    get live() {
      return live;
    },
    offer(events) {
      for (const event of events) {
        if (event.seq <= last) continue;
        last = event.seq;
        if (keep(event)) queue.push(event);
      }
      // A subscriber this far behind reads at its own pace from here on.
      if (queue.length >= PAGE) live = false;
      deliver();
    },
    end() {
      if (ended) return;
      ended = true;
      live = false;
      queue.length = 0;
      onEnd(stream);
      deliver();
    },
    next() {
      if (queue.length > 0) {
        const result = take();
        if (!live && !filling && !ended) void fill();
        return Promise.resolve(result);
      }
      if (ended || endAfterQueue) {
        stream.end();
        return Promise.resolve(done);
      }
      const waiting = new Promise<IteratorResult<LoggedEvent>>((resolve, reject) => {
        pending = resolve;
        failed = reject;
      });
      // After `pending` is set: what a fill finds at once is handed over at once.
      if (!live && !filling) void fill();
      return waiting;
    },
    return() {
      stream.end();
      return Promise.resolve(done);
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
