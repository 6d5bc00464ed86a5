/**
 * The newest part of the log, held in memory by each replica for its live readers (the feed's
 * streams, the webhooks). One reader follows the log for all of them: when woken (a write here, a
 * note from another replica through Redis) and on a timer (should a note be lost, or no Redis be
 * configured), it reads what was appended after the newest seq it holds. Its window is a gap-free
 * stretch of the log (event.store.ts: the log only grows at its end), so a stream whose position is
 * inside the window is served from memory, and one behind it reads the database until it catches up.
 */
import type { Db } from "../db/client.ts";
import { type LoggedEvent, lastSeq, readEvents } from "./event.store.ts";

/** How many of the newest events are kept in memory. */
const WINDOW = 4096;
/** How many events one read of the log takes. */
const PAGE = 1000;

export interface Tail {
  /** Reads the log's end once, then follows it; waits for that first read. */
  ready(): Promise<void>;
  /** Something was appended (here or on another replica): read the log's end soon. */
  poke(): void;
  /**
   * Events this replica has just committed: held at once when they follow the head (no read of
   * what the write already returned), else the log's end is read.
   */
  committed(events: readonly LoggedEvent[]): void;
  /** The newest seq held. */
  readonly head: number;
  /** The events after `after` (up to `head`), from memory; null when `after` is older than the window. */
  since(after: number): readonly LoggedEvent[] | null;
  /** Calls `listener` with the new events after each read that found some; returns its removal. */
  onAppended(listener: (events: readonly LoggedEvent[]) => void): () => void;
  /** Stops the timer (the app's dispose). */
  close(): void;
}

export function createTail(db: Db, options: { pollMs: number; log?: (line: Record<string, unknown>) => void }): Tail {
  let window: LoggedEvent[] = [];
  /** Every event after `base` and up to `head` is in `window`. */
  let base = 0;
  let head = 0;
  let started: Promise<void> | undefined;
  let following = false;
  let reading: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const listeners = new Set<(events: readonly LoggedEvent[]) => void>();

  /** Takes events that follow the head; listeners hear of them in the same turn. */
  function hold(events: readonly LoggedEvent[]): void {
    window.push(...events);
    head = events[events.length - 1]?.seq ?? head;
    if (window.length > WINDOW) {
      const dropped = window.length - WINDOW;
      base = window[dropped - 1]?.seq ?? base;
      window = window.slice(dropped);
    }
    // In the same turn as `head` moves: a reader that compares its position with `head` and then
    // listens misses nothing.
    for (const listener of [...listeners]) listener(events);
  }

  async function readEnd(): Promise<void> {
    for (;;) {
      const page = await readEvents(db, { after: head, limit: PAGE, audience: { kind: "admin" } });
      if (page.length > 0) hold(page);
      if (page.length < PAGE) break;
    }
  }

  function poke(): void {
    if (!started) return;
    if (reading) {
      again = true;
      return;
    }
    reading = readEnd()
      .catch((error: unknown) =>
        options.log?.({ level: "warn", msg: "the event log could not be read", error: String(error) }),
      )
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          poke();
        }
      });
  }

  return {
    committed(events) {
      // Only between reads: a read under way may return these events too.
      const follows = events.every((event, i) => event.seq === head + 1 + i);
      if (following && !reading && events.length > 0 && follows) hold(events);
      else poke();
    },
    ready() {
      started ??= lastSeq(db).then((seq) => {
        base = seq;
        head = seq;
        following = true;
        timer = setInterval(poke, options.pollMs);
        timer.unref();
      });
      return started;
    },
    poke,
    get head() {
      return head;
    },
    since(after) {
      if (after < base) return null;
      // The window is in seq order: the first event after `after` by binary search.
      let lo = 0;
      let hi = window.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((window[mid] as LoggedEvent).seq <= after) lo = mid + 1;
        else hi = mid;
      }
      return window.slice(lo);
    },
    onAppended(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      clearInterval(timer);
    },
  };
}
