/**
 * The change feed's outbox: what a mutation did, noted by the writes AFTER their transaction has
 * committed, and published by the feed plugin (feed.pubsub.ts) once the whole operation has run.
 * The log (src/events) is written inside the transaction; this only wakes the readers sooner.
 *
 * A write calls `noteFeed` only once `db.$transaction(…)` has resolved, so a rolled-back write is
 * never announced, and nothing but the database is awaited inside a transaction. The outbox of the
 * operation being executed is found through AsyncLocalStorage, so the writes need no context
 * parameter; outside an operation (seeds, scripts) a note goes nowhere.
 *
 * On Node 20 an enabled AsyncLocalStorage runs a hook at every promise the process makes, whatever
 * the request: after the first mutation, every read paid for it (~4% of an uncached profile read).
 * The storage is disabled whenever no mutation is running, which lets Node remove the hook.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { LoggedEvent } from "../events/event.store.ts";

/**
 * What a committed write tells the feed: the events it appended to the log (src/events), or the
 * tokens it revoked, which are not in the log but end the streams opened with them at once.
 */
export type FeedNote =
  | { kind: "APPENDED"; events: readonly LoggedEvent[] }
  | { kind: "TOKENS_REVOKED"; providerId: number; tokenIds: string[] };

const outboxes = new AsyncLocalStorage<FeedNote[]>();

/** How many operations are running with an outbox; at none the storage is disabled. */
let running = 0;
function settled(): void {
  running -= 1;
  if (running === 0) outboxes.disable();
}

/** Runs `fn` with an outbox that collects the notes of whatever it runs (until its promise settles). */
export function withOutbox<T>(outbox: FeedNote[], fn: () => T): T {
  running += 1;
  let result: T;
  try {
    result = outboxes.run(outbox, fn);
  } catch (error) {
    settled();
    throw error;
  }
  if (result instanceof Promise) return result.finally(settled) as T;
  settled();
  return result;
}

/** Notes committed changes for the feed (call after the transaction has resolved, never inside it). */
export function noteFeed(...notes: FeedNote[]): void {
  outboxes.getStore()?.push(...notes);
}

/** Notes the events a committed write appended to the log. */
export function noteAppended(events: readonly LoggedEvent[]): void {
  if (events.length > 0) noteFeed({ kind: "APPENDED", events });
}
