/**
 * The change feed's outbox: what a mutation did, noted by the writes AFTER their transaction has
 * committed, and published by the feed plugin (feed.pubsub.ts) once the whole operation has run.
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

/** What the feed announces. Provider events are public (for listed providers); review events are not. */
export const FEED_KINDS = [
  "PROVIDER_CREATED",
  "PROVIDER_UPDATED",
  "LIFECYCLE_CHANGED",
  "STAGE_CHANGED",
  "REVIEW_OPENED",
  "REVIEW_ASSIGNED",
  "REVIEW_DECIDED",
  "REVIEW_RESUBMITTED",
  "REVIEW_COMMENTED",
  "REVIEW_PRIORITY_CHANGED",
] as const;
/**
 * What a subscriber is shown, plus `TOKENS_REVOKED`, which is never shown: it ends the streams
 * opened with the revoked tokens (revocation takes effect at once, open streams included).
 */
export type FeedKind = (typeof FEED_KINDS)[number] | "TOKENS_REVOKED";

export const PROVIDER_FEED_KINDS: ReadonlySet<FeedKind> = new Set([
  "PROVIDER_CREATED",
  "PROVIDER_UPDATED",
  "LIFECYCLE_CHANGED",
  "STAGE_CHANGED",
]);

/** One noted change: the provider (and review) it concerns; the feed reads their state when it publishes. */
export interface FeedNote {
  kind: FeedKind;
  providerId: number;
  reviewId?: number;
  /** TOKENS_REVOKED: the ids (never secrets) of the tokens revoked. */
  tokenIds?: string[];
}

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

/** The feed notes of a workflow move (review.rules.ts `Move`): its review event, and the stage change. */
export function notesOfMove(
  move: { event: string; stage?: string | undefined },
  target: { providerId: number; reviewId?: number | undefined },
): FeedNote[] {
  const notes: FeedNote[] = [];
  const kind: FeedKind | undefined =
    move.event === "ASSIGNED"
      ? "REVIEW_ASSIGNED"
      : move.event === "RESUBMITTED"
        ? "REVIEW_RESUBMITTED"
        : move.event === "PRIORITY_CHANGED"
          ? "REVIEW_PRIORITY_CHANGED"
          : ["APPROVED", "REJECTED", "CHANGES_REQUESTED"].includes(move.event)
            ? "REVIEW_DECIDED"
            : undefined;
  const review = target.reviewId === undefined ? {} : { reviewId: target.reviewId };
  if (kind && target.reviewId !== undefined) notes.push({ kind, providerId: target.providerId, ...review });
  if (move.stage) notes.push({ kind: "STAGE_CHANGED", providerId: target.providerId, ...review });
  return notes;
}
